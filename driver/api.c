/* driver/api.c — libtec's public API (tec.h) over the internal stages. */
#include "config.h"

#define _GNU_SOURCE   /* dladdr */

#include "tec.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/codegen.h"
#include "driver/datadir.h"
#include "frontend/frontend.h"
#include "passes/passes.h"
#include "runtime/exec.h"

struct tec_program {
    ir_module *m;       /* after the -O pipeline: what runs are counted on */
    ir_module *em;      /* m after the emission passes (vector IR): printed, compiled */
    cg_target target;   /* this machine */
    rt_iface iface;
    diag d;
    rt_run *run;
    cg_library *lib;
    double **values;    /* per output, filled on demand */
    int *out_index;     /* graph buffer index of output i */
    int nout;
};

const char *tec_version(void) { return PACKAGE_VERSION; }

tec_program *tec_compile(const char *filename, const char *text, size_t len,
                         int is_tir, int opt_level, FILE *diagnostics)
{
    tec_program *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    diag_init(&p->d, diagnostics ? diagnostics : stderr);
    /* The op library beside this libtec, or where it was installed. */
    Dl_info info;
    char self[PATH_MAX];
    bool found = dladdr((void *)tec_compile, &info) && info.dli_fname &&
                 realpath(info.dli_fname, self);
    drv_datadirs dd;
    drv_datadirs_find(&dd, found ? self : NULL);
    fe_options fo = {dd.dir, dd.n, NULL, 0, false, NULL, NULL};
    p->m = is_tir ? ir_parse(filename, text, len, &p->d)
                  : fe_compile(filename, text, len, &fo, &p->d);
    int level = opt_level < 0 ? 0 : opt_level > 3 ? 3 : opt_level;
    cg_target_native(&p->target);
    pass_options po = {.dump_out = p->d.out, .base = "api", .target = &p->target};
    if (!p->m || !ir_verify(p->m, NULL, &p->d) || !rt_iface_record(p->m, &p->iface, &p->d) ||
        !pass_run_pipeline(p->m, pass_pipeline(level), &po, &p->d) ||
        !(p->em = pass_lower_for_emit(p->m, pass_emit_pipeline(level), &po, &p->d))) {
        tec_free(p);
        return NULL;
    }
    return p;
}

void tec_print_ir(const tec_program *p, FILE *out) { ir_print_module(out, p->em); }

int tec_run(tec_program *p, int interpret)
{
    if (!interpret && !p->lib) {
        /* This machine, with as many threads as tec itself would use
         * (TEC_NUM_THREADS, else every processor this process may use). */
        cg_target t = p->target;
        int threads;
        const char *source;
        char err[256];
        if (!cg_resolve_threads(NULL, &t, &threads, &source, err, sizeof err)) {
            diag_error(&p->d, diag_noloc(), "%s", err);
            return 1;
        }
        cg_options co = {.opt_flags = "-O2", .target = &t, .module = p->em};
        char *src = cg_emit_c(p->em, &t, false, &p->d);
        char *so = src ? cg_compile(src, &co, &p->d) : NULL;
        p->lib = so ? cg_load(so, p->em, &p->d) : NULL;
        free(src);
        free(so);
        if (!p->lib)
            return 1;
        cg_set_threads(p->lib, threads);
    }
    rt_run_free(p->run);
    rt_run_options ro = {.lib = interpret ? NULL : p->lib};
    p->run = rt_run_new(p->m, &p->iface, &ro, &p->d);
    if (!p->run || !rt_run_execute(p->run, &ro, &p->d))
        return 1;
    free(p->out_index);
    p->out_index = calloc((size_t)p->m->graph.nbufs + 1, sizeof *p->out_index);
    p->nout = 0;
    for (int i = 0; p->out_index && i < p->m->graph.nbufs; i++)
        if (p->m->graph.bufs[i]->role == IR_BUF_OUTPUT)
            p->out_index[p->nout++] = i;
    if (p->values)
        for (int i = 0; i < p->m->graph.nbufs; i++)
            free(p->values[i]);
    free(p->values);
    p->values = calloc((size_t)p->m->graph.nbufs + 1, sizeof *p->values);
    return p->out_index && p->values ? 0 : 1;
}

int tec_num_outputs(const tec_program *p) { return p->run ? p->nout : 0; }

const char *tec_output_name(const tec_program *p, int i)
{
    return i >= 0 && i < tec_num_outputs(p) ? p->m->graph.bufs[p->out_index[i]]->name : NULL;
}

int64_t tec_output_numel(const tec_program *p, int i)
{
    return i >= 0 && i < tec_num_outputs(p) ? rt_tensor_numel(p->run->bufs[p->out_index[i]]) : 0;
}

const double *tec_output_values(tec_program *p, int i)
{
    if (i < 0 || i >= tec_num_outputs(p))
        return NULL;
    if (!p->values[i]) {
        const rt_tensor *t = p->run->bufs[p->out_index[i]];
        int64_t n = rt_tensor_numel(t);
        p->values[i] = malloc(sizeof(double) * (size_t)(n ? n : 1));
        for (int64_t k = 0; p->values[i] && k < n; k++)
            p->values[i][k] = rt_tensor_get(t, k);
    }
    return p->values[i];
}

void tec_free(tec_program *p)
{
    if (!p)
        return;
    if (p->values)
        for (int i = 0; i < p->m->graph.nbufs; i++)
            free(p->values[i]);
    free(p->values);
    free(p->out_index);
    rt_run_free(p->run);
    if (p->lib)
        cg_unload(p->lib);
    rt_iface_free(&p->iface);
    ir_module_free(p->em);
    ir_module_free(p->m);
    diag_fini(&p->d);
    free(p);
}
