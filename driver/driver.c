/* driver/driver.c — the `tec` command line: one function per mode.
 *
 * main reads the options (driver/options.c) and picks a mode: calibrate
 * the machine, model a topology on the accelerator, or take a program
 * through the pipeline.  A program is read (or imported from ONNX),
 * compiled to an IR module and optimized; then one of the program's modes
 * ends the work: print or write it (--emit), model it (--accel), count it
 * (--no-run), or build it and run it (with --profile, --sched or
 * --repeat).  Every resource of a program's way through lives in one
 * session and is freed in one place.
 *
 * Exit status: 0 success; 1 an error in the user's program or data; 2 a
 * usage error; 70 an internal error (a bug in tec). */
#include "config.h"

#define _XOPEN_SOURCE 700   /* nftw */

#include <errno.h>
#include <ftw.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "accel/cli.h"
#include "codegen/codegen.h"
#include "driver/datadir.h"
#include "driver/options.h"
#include "driver/runcache.h"
#include "frontend/frontend.h"
#include "importer/onnx.h"
#include "ir/diag.h"
#include "ir/phase.h"
#include "ir/ir.h"
#include "passes/passes.h"
#include "runtime/aot.h"
#include "runtime/exec.h"
#include "runtime/profile.h"
#include "runtime/sched.h"
#include "runtime/threads.h"
#include "runtime/weight_set.h"

/* --dump-schedule: each function's automatic schedule as a `schedule`
 * block naming its layer, which a user can paste into the program (a
 * written schedule wins over the automatic one). */
static void dump_schedules(FILE *out, const ir_module *m)
{
    for (int i = 0; i < m->nfuncs; i++) {
        const ir_func *f = m->funcs[i];
        bool at_load = false;   /* prepack's functions: no schedule of their own */
        for (int l = 0; l < m->graph.nloads; l++)
            at_load |= m->graph.loads[l].fn == f;
        if (at_load)
            continue;
        const char *layer = ir_func_attr(f, "layer");
        const char *members = ir_func_attr(f, "members");
        char first[512];
        if (members) {   /* a fused group: its kernel is its first member's */
            snprintf(first, sizeof first, "%s", members);
            char *comma = strchr(first, ',');
            if (comma)
                *comma = 0;
            layer = first;
        }
        const char *text = ir_func_attr(f, "schedule_auto");
        const char *op = ir_func_attr(f, "op");
        if (ir_func_attr(f, "scheduled")) {
            fprintf(out, "# @%s: scheduled by the program\n", f->name);
            continue;
        }
        fprintf(out, "# @%s%s%s\n", f->name, op ? ", op " : "", op ? op : "");
        fprintf(out, "schedule \"%s\" {\n", layer ? layer : f->name);
        for (const char *p = text; p && *p;) {
            const char *nl = strchr(p, '\n');
            int n = nl ? (int)(nl - p) : (int)strlen(p);
            fprintf(out, "    %.*s\n", n, p);
            p = nl ? nl + 1 : p + n;
        }
        fprintf(out, "}\n");
    }
}

/* The op library's folders (driver/datadir.h) after the -I folders. */
static void add_default_includes(options *o, drv_datadirs *dd)
{
    char self[DRV_PATH_MAX];
    ssize_t k = readlink("/proc/self/exe", self, sizeof self - 1);
    if (k > 0)
        self[k] = 0;
    drv_datadirs_find(dd, k > 0 ? self : NULL);
    o->includes = drv_xrealloc(o->includes,
                               sizeof *o->includes * (size_t)(o->nincludes + dd->n + 1));
    for (int i = 0; i < dd->n; i++)
        o->includes[o->nincludes++] = dd->dir[i];
}

static const char *module_base(const char *path)
{
    if (strcmp(path, "-") == 0)
        return "stdin";
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* The accelerator columns of the --profile table (accel/cli.h: one
 * modeled run for the columns, the summary and the accelerator's files). */
static void accel_cells(void *ctx, const ir_func *fn, char cells[][RT_EXTRA_CELL])
{
    acc_cli_session_cells(ctx, fn, cells);
}

/* The profile's table and reports, with the accelerator's columns, then the
 * check of the run's counters against the analysis. */
static void report_profile(rt_profile *prof, const options *o, acc_cli_session *acols,
                           const ir_module *m, diag *d)
{
    (void)m;
    rt_report_options rep = {.table = stdout, .csv = o->report_csv, .json = o->report_json,
                             .trace = o->trace, .plot_dir = o->plot_dir,
                             .columns = o->columns};
    /* The model takes each layer's work from the run's counters. */
    if (acols->loaded && acc_cli_session_model(acols, prof->st, rt_profile_counts(prof), d)) {
        rep.nextra = ACC_CLI_NCOLS;
        rep.extra_titles = acc_cli_column_titles;
        rep.extra_cells = accel_cells;
        rep.extra_ctx = acols;
    }
    if (prof->nruns)
        fputc('\n', stdout);
    rt_profile_report(prof, &rep, d);
    if (acols->modeled)
        acc_cli_session_finish(acols, stdout, d);
    if (prof->nruns)
        rt_profile_check(prof, d);
}

/* A private folder (under $TMPDIR) for an ONNX model's weights and the
 * .npy copies of .pb inputs; removed, with its files, when tec ends. */
static const char *scratch_dir(char **scratch, diag *d)
{
    if (*scratch)
        return *scratch;
    const char *tmp = getenv("TMPDIR");
    char *dir = malloc(strlen(tmp && *tmp ? tmp : "/tmp") + 24);
    sprintf(dir, "%s/tec-onnx-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        diag_error(d, diag_noloc(), "cannot create a folder in %s: %s", tmp && *tmp ? tmp : "/tmp",
                   strerror(errno));
        free(dir);
        return NULL;
    }
    return *scratch = dir;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    remove(path);
    return 0;
}

static void remove_scratch(char *dir)
{
    if (dir)
        nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    free(dir);
}

/* --input NAME=FILE.pb: an ONNX TensorProto, read through a .npy copy in
 * the scratch folder (owned[i] keeps its malloc'ed path). */
static bool convert_pb_inputs(options *o, char **scratch, char **owned, diag *d)
{
    for (int i = 0; i < o->ninputs; i++) {
        if (!drv_ends_with(o->inputs[i].path, ".pb"))
            continue;
        const char *dir = scratch_dir(scratch, d);
        if (!dir)
            return false;
        owned[i] = malloc(strlen(dir) + 32);
        sprintf(owned[i], "%s/input-%d.npy", dir, i);
        if (!fe_onnx_pb_to_npy(o->inputs[i].path, owned[i], d))
            return false;
        o->inputs[i].path = owned[i];
    }
    return true;
}

/* An ONNX model's program and its weights in memory, from the import cache
 * ic (driver/runcache.h) when it has them, else imported and written there
 * (unless the import said anything: its messages are not in the entry). */
static char *import_onnx_cached(options *o, const fe_onnx_options *oo, rt_weight_set *ws,
                                drv_importcache *ic, diag *d)
{
    if (!drv_importcache_applies(o) || !drv_importcache_key(ic, o))
        return fe_onnx_import_weights(o->input_file, oo, ws, d);
    char *text;
    if (drv_importcache_lookup(ic, o, &text, ws))
        return text;
    char *msg = NULL;
    size_t mlen = 0;
    FILE *mem = open_memstream(&msg, &mlen);
    diag id;
    diag_init(&id, mem ? mem : d->out);
    id.max_errors = d->max_errors;
    text = fe_onnx_import_weights(o->input_file, oo, ws, &id);
    if (mem && fclose(mem) == 0 && mlen && d->out)
        fwrite(msg, 1, mlen, d->out);
    d->nerrors += id.nerrors;
    d->ninternal += id.ninternal;
    diag_fini(&id);
    if (text && mem && !mlen)
        drv_importcache_store(ic, o, text, ws);
    free(msg);
    return text;
}

/* An ONNX model as a .te program.  Its weights go to --save-weights; for a
 * run without --weights, into memory (ws), where the run reads them; for a
 * library without --weights, to the scratch folder it reads. */
static char *import_onnx(options *o, char **scratch, rt_weight_set *ws, drv_importcache *ic,
                         diag *d)
{
    fe_onnx_options oo = {o->defines, o->ndefines, o->save_weights, o->inputs, o->ninputs};
    if (o->emit == EMIT_RUN && !o->weights_dir)
        return import_onnx_cached(o, &oo, ws, ic, d);
    char *weights = NULL;
    if ((o->emit == EMIT_RUN || o->emit == EMIT_LIB) && !o->weights_dir) {
        const char *dir = scratch_dir(scratch, d);
        if (!dir)
            return NULL;
        weights = malloc(strlen(dir) + 16);
        sprintf(weights, "%s/weights", dir);
        oo.weights_dir = o->weights_dir = weights;
    }
    char *text = fe_onnx_import(o->input_file, &oo, d);
    if (weights)   /* the run reads it: keep it with the scratch folder */
        o->scratch_weights = weights;
    return text;
}

static int status_of(const diag *d)
{
    return d->ninternal ? EXIT_INTERNAL : d->nerrors ? EXIT_USER : 0;
}

/* --profile's measured runs without --repeat (after a warm-up run). */
enum { PROFILE_RUNS = 5 };

/* ------------------------------------------------ modes without a program */

/* tec --calibrate [FILE]: the machine's roof, measured and cached -- but
 * not when the machine was busy (its runs disagree): a low roof in the
 * cache would put later profiles' layers above it. */
static int mode_calibrate(void)
{
    diag cd;
    diag_init(&cd, stderr);
    rt_calibration cal;
    char why[256];
    if (rt_calibrate(&cal, stderr, &cd)) {
        bool steady = rt_calibration_steady(&cal, why, sizeof why);
        if (!steady)
            diag_warning(&cd, diag_noloc(), "calibration not stored: %s; the machine looks "
                         "busy: run 'tec --calibrate' again when it is idle", why);
        if (!steady || rt_calibration_save(&cal, &cd))
            rt_calibration_print(stdout, &cal);
    }
    int st = status_of(&cd);
    diag_fini(&cd);
    return st;
}

/* tec --topology FILE | --from-report FILE.json --accel CFG. */
static int mode_topology(const options *o)
{
    diag td;
    diag_init(&td, stderr);
    acc_cli_run_topology(&o->accel, stdout, &td);
    int st = status_of(&td);
    diag_fini(&td);
    return st;
}

/* ------------------------------------------------ a program's way through */

/* What a program's way through holds; session_free releases it all. */
typedef struct session {
    options *o;
    diag d;
    const char *display;       /* the input's name in messages */
    lang_kind lang;            /* after import: te, tir */
    bool imported;             /* from ONNX */
    bool tec_policy;           /* tec chose how OpenMP's threads wait (set_openmp_policy) */
    char *text;
    size_t len;
    drv_datadirs datadirs;     /* the op library's folders, include directories */
    ir_module *pre;            /* the frontend's module, when m came from the run cache */
    ir_module *m;
    ir_module *em;             /* m after the emission passes (vectorize): what is printed */
    rt_iface iface;
    rt_shapes *shapes;         /* --profile: shapes as declared */
    char *prof_pipeline;
    char *csrc, *so_path;
    cg_options co;
    char oflags[16];
    cg_library *lib;
    rt_run *run;
    rt_run_options ro;
    rt_sched_options so;
    rt_profile *prof;
    acc_cli_session acols;
    char *scratch, **pb_inputs;
    drv_runcache rc;           /* the run cache's entry for this run (driver/runcache.h) */
    rt_weight_set weights;     /* an imported model's weights, for the run */
    drv_importcache ic;        /* the import cache's entry (its --input names) */
    drv_constcache cc;         /* the consts cache's entry */
} session;

static void session_free(session *s)
{
    acc_cli_session_free(&s->acols);
    rt_profile_free(s->prof);
    rt_shapes_free(s->shapes);
    free(s->prof_pipeline);
    rt_run_free(s->run);
    if (s->lib)
        cg_unload(s->lib);
    free(s->so_path);
    free(s->csrc);
    rt_iface_free(&s->iface);
    ir_module_free(s->em);
    ir_module_free(s->m);
    ir_module_free(s->pre);
    drv_runcache_free(&s->rc);
    free(s->text);
    for (int i = 0; s->pb_inputs && i < s->o->ninputs; i++)
        free(s->pb_inputs[i]);
    free(s->pb_inputs);
    remove_scratch(s->scratch);
    rt_weight_set_free(&s->weights);
    drv_importcache_free(&s->ic);
    drv_constcache_free(&s->cc);
    diag_fini(&s->d);
}

/* Writes text (or the IR, with m) to -o FILE or stdout. */
static void write_output(session *s, const char *text, const ir_module *m)
{
    const char *path = s->o->output_file;
    FILE *out = path ? fopen(path, "w") : stdout;
    if (!out) {
        diag_error(&s->d, diag_noloc(), "cannot write %s: %s", path, strerror(errno));
        return;
    }
    bool ok = true;
    if (m)
        ir_print_module(out, m);
    else
        ok = fputs(text, out) >= 0;
    if ((!ok || (out != stdout && fclose(out) != 0)))
        diag_error(&s->d, diag_noloc(), "cannot write %s: %s", path, strerror(errno));
}

/* The program's text: read, or imported from an ONNX model (whose .pb
 * inputs become .npy files first). */
static bool load_program(session *s)
{
    options *o = s->o;
    s->lang = o->lang;
    if (s->lang == LANG_AUTO)
        s->lang = drv_ends_with(o->input_file, ".tir")    ? LANG_TIR
                  : drv_ends_with(o->input_file, ".onnx") ? LANG_ONNX
                                                          : LANG_TE;
    s->pb_inputs = drv_xrealloc(NULL, sizeof *s->pb_inputs * (size_t)(o->ninputs + 1));
    memset(s->pb_inputs, 0, sizeof *s->pb_inputs * (size_t)(o->ninputs + 1));
    if (!convert_pb_inputs(o, &s->scratch, s->pb_inputs, &s->d))
        return false;
    s->imported = s->lang == LANG_ONNX;
    if (s->imported) {
        s->text = import_onnx(o, &s->scratch, &s->weights, &s->ic, &s->d);
        if (!s->text)
            return false;
        s->len = strlen(s->text);
        s->lang = LANG_TE;
    } else if (!(s->text = fe_read_source(o->input_file, &s->len))) {
        diag_error(&s->d, diag_noloc(), "cannot read %s: %s", s->display, fe_read_error(errno));
        return false;
    }
    return true;
}

/* An imported model's program imports the op library, nn.te, from the
 * include folders (-I, then the installed ones): without it, the import
 * would fail inside the generated program, an internal error.  Tells
 * where it was looked for and how to get it. */
static bool have_op_library(session *s)
{
    options *o = s->o;
    size_t cap = 64, len = 0;
    for (int i = 0; i < o->nincludes; i++)
        cap += strlen(o->includes[i]) + 2;
    char *searched = malloc(cap);
    if (!searched) {
        diag_error(&s->d, diag_noloc(), "out of memory");
        return false;
    }
    searched[0] = 0;
    for (int i = 0; i < o->nincludes; i++) {
        char path[DRV_PATH_MAX + 8];
        snprintf(path, sizeof path, "%s/nn.te", o->includes[i]);
        if (access(path, R_OK) == 0) {
            free(searched);
            return true;
        }
        len += (size_t)snprintf(searched + len, cap - len, "%s%s", i ? ", " : "", o->includes[i]);
    }
    diag_error(&s->d, diag_noloc(), "%s: cannot find tec's op library nn.te, which an imported "
               "ONNX model uses (searched: %s); install tec (`make install`) or name the "
               "folder that holds nn.te with -I DIR", s->display, searched);
    free(searched);
    return false;
}

/* The program as a verified IR module with its interface recorded.  With
 * a run cache key made (a miss), the frontend's dependencies go to the
 * entry, and its messages too (shown as they come). */
static bool build_module(session *s)
{
    options *o = s->o;
    drv_runcache *rc = s->rc.path && !s->pre ? &s->rc : NULL;
    char *msg = NULL;
    size_t mlen = 0;
    FILE *mem = rc && s->d.out ? open_memstream(&msg, &mlen) : NULL;
    FILE *out = s->d.out;
    if (mem)
        s->d.out = mem;
    if (s->lang == LANG_TIR) {
        s->m = ir_parse(s->display, s->text, s->len, &s->d);
    } else if (!s->imported || have_op_library(s)) {
        fe_options fo = {o->includes, o->nincludes, o->defines, o->ndefines, s->imported,
                         rc ? drv_runcache_dep : NULL, rc};
        s->m = fe_compile(s->display, s->text, s->len, &fo, &s->d);
        if (!s->m && s->imported && !s->d.ninternal)
            diag_internal(&s->d, "onnx", "the program imported from %s does not compile (see "
                          "it with --emit=te)", s->display);
    }
    bool ok = s->m && (s->lang == LANG_TIR ? ir_verify_input(s->m, s->display, &s->d)
                                           : ir_verify(s->m, "frontend", &s->d)) &&
              rt_iface_record(s->m, &s->iface, &s->d);
    if (mem) {
        s->d.out = out;
        if (fclose(mem) == 0) {
            fwrite(msg, 1, mlen, out);
            rc->messages = msg;
            rc->nmessages = mlen;
        } else {
            rc->deps_oom = true;   /* the messages are not known: no entry */
        }
    }
    return ok;
}

/* The -O pipeline (or --passes), with instrument last under --profile. */
static bool optimize(session *s)
{
    options *o = s->o;
    char base[256];
    snprintf(base, sizeof base, "%s", module_base(o->input_file));
    char *dot = strrchr(base, '.');
    if (dot && dot != base)
        *dot = 0;
    pass_options po = {
        .dump_ir = o->dump_ir, .dump_out = stderr, .dump_dir = o->dump_dir,
        .base = base, .verify_each = o->verify_each, .target = &o->target,
    };
    const char *pipeline = o->passes ? o->passes : pass_pipeline(o->opt_level);
    if (o->profile) {
        /* Shapes as declared, before flatten; instrument runs last. */
        if (!(s->shapes = rt_shapes_record(s->m))) {
            diag_error(&s->d, diag_noloc(), "out of memory");
            return false;
        }
        if (!strstr(pipeline, "instrument")) {
            size_t n = strlen(pipeline) + 16;
            if (!(s->prof_pipeline = malloc(n))) {
                diag_error(&s->d, diag_noloc(), "out of memory");
                return false;
            }
            snprintf(s->prof_pipeline, n, "%s%sinstrument", pipeline, *pipeline ? "," : "");
            pipeline = s->prof_pipeline;
        }
    }
    if (!pass_run_pipeline(s->m, pipeline, &po, &s->d))
        return false;
    if (o->dump_schedule)
        dump_schedules(stderr, s->m);
    return true;
}

/* The C compiler's options: -O1 below tec -O2 (plain loop nests, quick to
 * build), -O3 from it (bench/models.sh: -O3 kernels ran the zoo 2-19%
 * faster on one thread than -O2 kernels, for 10-20% more compile time). */
static void set_cc_options(session *s)
{
    options *o = s->o;
    snprintf(s->oflags, sizeof s->oflags, "-O%d", o->opt_level < 2 ? 1 : 3);
    s->co = (cg_options){.opt_flags = s->oflags, .verbose = o->verbose, .no_cache = o->no_cache,
                         .target = &o->target, .cc_timeout = o->cc_timeout,
                         .unchecked = o->unchecked, .module = s->m};
}

/* The module the C emitter and --emit=tir print: a copy of s->m after the
 * -O level's emission passes (vectorize), which come after every analysis
 * of s->m (profile, accelerator model, schedulers); --passes adds none. */
static bool lower_for_emit(session *s)
{
    options *o = s->o;
    if (s->em)
        return true;
    pass_options po = {.dump_ir = o->dump_ir, .dump_out = stderr,
                       .verify_each = o->verify_each, .target = &o->target};
    s->em = pass_lower_for_emit(s->m, o->passes ? "" : pass_emit_pipeline(o->opt_level), &po,
                                &s->d);
    s->co.module = s->em;   /* the module the C comes from (its assert messages) */
    return s->em != NULL;
}

/* The module's C source (--emit=c, or a build). */
static bool emit_c(session *s)
{
    options *o = s->o;
    if (!lower_for_emit(s))
        return false;
    if (o->verbose) {
        char line[512];
        cg_target_describe(&o->target, line, sizeof line);
        fprintf(stderr, "tec: target: %s\n", line);
    }
    ir_phase_push("emit C");
    s->csrc = cg_emit_c(s->em, &o->target, o->unchecked, &s->d);
    ir_phase_pop();
    return s->csrc != NULL;
}

/* How OpenMP's threads wait, in words for --verbose. */
static const char *openmp_policy = "libgomp's defaults";

/* OpenMP's threads are not bound to processors and spin a while before
 * they sleep between parallel loops: OMP_PROC_BIND=false and
 * GOMP_SPINCOUNT=TEC_SPINCOUNT (about 0.7 ms), and a run's threads sleep at
 * once while other processes hold the processors (runtime/threads.h) --
 * unless the environment sets OMP_PROC_BIND, OMP_WAIT_POLICY or
 * GOMP_SPINCOUNT; then they are its choice and nothing changes them.  A
 * sleeping thread takes tens of microseconds to wake, at every parallel
 * loop; a spinning one burns the share of a processor its partner needs
 * once other processes compete for it, and a bound one cannot move off a
 * busy processor (bench/results/threads.txt).  Set before anything loads
 * the OpenMP runtime, which reads them once (the caches' checks load
 * kernels too).  Returns whether tec chose. */
#define TEC_SPINCOUNT "10000"
static bool set_openmp_policy(void)
{
    if (getenv("OMP_PROC_BIND") || getenv("OMP_WAIT_POLICY") || getenv("GOMP_SPINCOUNT")) {
        openmp_policy = "OMP_PROC_BIND, OMP_WAIT_POLICY or GOMP_SPINCOUNT from the environment";
        return false;
    }
    setenv("OMP_PROC_BIND", "false", 1);
    setenv("GOMP_SPINCOUNT", TEC_SPINCOUNT, 1);
    openmp_policy = "unbound, spinning " TEC_SPINCOUNT " times before sleeping, asleep at once "
                    "while other processes hold the processors (tec's default)";
    return true;
}

/* The kernels compiled and loaded for this machine's threads. */
static bool build_kernels(session *s)
{
    options *o = s->o;
    char missing[256];
    if (!cg_target_runs_here(&o->target, missing, sizeof missing)) {
        diag_error(&s->d, diag_noloc(), "cannot run kernels built for --target=%s on this "
                   "machine: it lacks %s (use another --target, or build them with "
                   "--emit=so)", o->target.name, missing);
        return false;
    }
    cg_bind_openmp_threads(false);   /* set_openmp_policy decided */
    if (!s->lib) {   /* else it came from the run cache */
        if (!(s->so_path = cg_compile(s->csrc, &s->co, &s->d)) ||
            !(s->lib = cg_load(s->so_path, s->em, &s->d)))
            return false;
        drv_runcache_store(&s->rc, s->m, s->lib, s->so_path, &s->iface);
    }
    if (cg_set_threads(s->lib, o->threads) && o->verbose)
        fprintf(stderr, "tec: parallel loops run on %d thread%s (%s)\n", o->threads,
                o->threads == 1 ? "" : "s",
                strcmp(o->threads_source, "cores") == 0 ? "default: the cores"
                                                        : o->threads_source);
    if (o->verbose)
        fprintf(stderr, "tec: OpenMP threads: %s\n", openmp_policy);
    return true;
}

/* --profile --no-run: the static counts of the module, nothing run. */
static void mode_count(session *s)
{
    rt_profile_options pro = {.repeat = 1, .pad_to = s->o->pad_to, .threads = s->o->threads};
    if ((s->prof = rt_profile_new(s->m, s->shapes, &pro, &s->d)))
        report_profile(s->prof, s->o, &s->acols, s->m, &s->d);
}

/* A run computes the module's outputs: a .tir module without a graph, or
 * whose graph has no output, would run nothing and print nothing (a .te
 * program without an output is refused by the frontend). */
static bool has_output(session *s)
{
    const ir_graph *g = &s->m->graph;
    for (int i = 0; i < g->nbufs; i++)
        if (g->bufs[i]->role == IR_BUF_OUTPUT)
            return true;
    if (g->nbufs == 0 && g->ncalls == 0)
        diag_error(&s->d, diag_noloc(), "%s: the module has no graph, so nothing runs (add a "
                   "`graph { ... }` section that calls its functions, doc/ir.md; --emit=c "
                   "compiles the functions alone)", s->display);
    else
        diag_error(&s->d, diag_noloc(), "%s: the module's graph has no output, so a run "
                   "computes nothing (declare one: `output NAME: TYPE`)", s->display);
    return false;
}

/* A run: compiled (or interpreted), once, --repeat times, profiled or
 * scheduled on devices; then the outputs and the reports. */
static void mode_run(session *s)
{
    options *o = s->o;
    if (!has_output(s))
        return;
    if (!o->interp && !((s->lib || emit_c(s)) && build_kernels(s)))
        return;
    s->ro.lib = s->lib;
    /* a plain run with weights from the import cache or default data: its
     * consts from the consts cache */
    bool consts = !o->interp && !o->profile && !o->sched_on && !o->accel_on &&
                  drv_constcache_key(&s->cc, &s->rc, &s->ic, !s->imported && !o->weights_dir);
    if (consts)
        drv_constcache_use(&s->cc, s->m, &s->weights);
    /* the import cache's small weights: those the run reads */
    if (!drv_importcache_hand_out(&s->ic, s->m, &s->weights)) {
        diag_error(&s->d, diag_noloc(), "out of memory");
        return;
    }
    if (!(s->run = rt_run_new(s->m, &s->iface, &s->ro, &s->d)))
        return;
    if (consts)
        drv_constcache_store(&s->cc, s->m, s->run);
    double median_us = 0;
    if (o->profile) {
        /* the median of several runs, unless --repeat says how many */
        rt_profile_options pro = {.repeat = o->repeat ? o->repeat : PROFILE_RUNS,
                                  .counters = o->counters,
                                  .pad_to = o->pad_to, .threads = o->interp ? 1 : o->threads};
        if (!(s->prof = rt_profile_new(s->m, s->shapes, &pro, &s->d)) ||
            !rt_profile_run(s->prof, s->run, &s->ro, &s->d))
            return;
    } else if (o->sched_on) {
        if (!rt_sched_main(s->m, s->run, &s->ro, &s->so, &o->devices, stdout, &s->d))
            return;
    } else if (o->repeat) {
        if (!rt_time_runs(s->run, &s->ro, o->repeat, &median_us, &s->d))
            return;
    } else if (!rt_run_execute(s->run, &s->ro, &s->d)) {
        return;
    }
    if (o->save_outputs && !rt_run_save_outputs(s->run, o->save_outputs, &s->d))
        return;
    rt_run_print_summary(s->run, stdout);
    if (o->repeat && !o->profile && !o->sched_on)
        printf("time: median of %d runs after a warm-up: %.1f us\n", o->repeat, median_us);
    const rt_threads_state *ts = rt_threads_global();
    if (o->verbose && ts->calls)
        fprintf(stderr, "tec: %lld of %lld calls ran %s (other processes held the "
                "processors)\n", (long long)ts->busy_calls, (long long)ts->calls,
                ts->one_thread ? "on one thread" : "with threads asleep between parallel loops");
    if (o->verbose && ts->one_calls)
        fprintf(stderr, "tec: %lld calls ran on one thread (runs on one thread were faster "
                "than on all)\n", (long long)ts->one_calls);
    if (o->verbose && s->run->spread_runs)
        fprintf(stderr, "tec: %lld runs placed the temps apart, each in bytes of its own (tries, "
                "and runs while that was faster than the memory plan's placement)\n",
                (long long)s->run->spread_runs);
    if (s->prof)
        report_profile(s->prof, o, &s->acols, s->m, &s->d);
}

/* A run whose optimized module and kernels the run cache holds, without
 * the frontend: 1 with s->m (without function bodies unless --profile or
 * --sched analyze them), s->lib, s->so_path and s->iface from the entry,
 * and the frontend's messages shown; 0 on a miss (the entry is written
 * after the kernels are built); -1 after an error.  --profile runs the
 * frontend for the shapes the program declared (kept as s->pre). */
static int from_run_cache(session *s)
{
    options *o = s->o;
    if (!drv_runcache_applies(o))
        return 0;
    set_cc_options(s);
    const char *lang = s->imported ? "onnx" : s->lang == LANG_TIR ? "tir" : "te";
    if (!drv_runcache_key(&s->rc, o, s->display, s->text, s->len, lang, &s->co))
        return 0;
    drv_runcache_hit h;
    if (!drv_runcache_lookup(&s->rc, o->profile || o->sched_on, &h))
        return 0;
    s->lib = h.lib;
    s->so_path = h.so_path;
    if (!o->profile) {
        if (s->d.out && s->rc.nmessages)
            fwrite(s->rc.messages, 1, s->rc.nmessages, s->d.out);
        s->iface = h.iface;
        s->m = h.m;
        return 1;
    }
    rt_iface_free(&h.iface);
    s->pre = h.m;   /* (build_module records nothing for the entry) */
    ir_phase_push("frontend");
    bool built = build_module(s);
    ir_phase_pop();
    ir_module *pre = s->m;
    s->m = s->pre;
    s->pre = pre;
    if (!built)
        return -1;
    if (!(s->shapes = rt_shapes_record(s->pre))) {   /* as optimize() does */
        diag_error(&s->d, diag_noloc(), "out of memory");
        return -1;
    }
    return 1;
}

/* After the passes: the one mode that ends the program's way. */
static void finish_program(session *s)
{
    options *o = s->o;
    if (o->accel_on && !o->profile && o->emit == EMIT_RUN) {
        /* The model needs no run: the workload comes from the IR. */
        acc_cli_run_module(s->m, &o->accel, stdout, &s->d);
        return;
    }
    if (o->accel_on && o->profile && !acc_cli_session_load(&s->acols, &o->accel, &s->d))
        return;
    s->ro = (rt_run_options){o->inputs, o->ninputs, o->weights_dir, NULL,
                             .own_storage = o->sched_on && o->sched != RT_SCHED_SERIAL,
                             .weights = &s->weights,
                             .threads = o->sched_on || !s->tec_policy ? 0 : o->threads};
    s->so = (rt_sched_options){.strategy = o->sched, .runs = o->repeat ? o->repeat : 3,
                               .trace = o->sched_trace, .dump_graph = o->dump_graph};
    set_cc_options(s);
    if (o->no_run && o->sched_on)
        rt_sched_main(s->m, NULL, &s->ro, &s->so, &o->devices, stdout, &s->d);
    else if (o->no_run && o->emit == EMIT_RUN)
        mode_count(s);
    else if (o->emit == EMIT_TIR && lower_for_emit(s))
        write_output(s, NULL, s->em);
    else if (o->emit == EMIT_LIB && lower_for_emit(s))
        rt_aot_write(s->em, &s->iface, o->output_file, o->weights_dir, s->display, &s->co, &s->d);
    else if (o->emit == EMIT_C && emit_c(s))
        write_output(s, s->csrc, NULL);
    else if (o->emit == EMIT_SO && emit_c(s))
        cg_compile_to(s->csrc, o->output_file, &s->co, &s->d);
    else if (o->emit == EMIT_RUN)
        mode_run(s);
}

/* tec [options] FILE: the program from its text to the mode's end. */
static int mode_program(options *o)
{
    session s = {.o = o};
    diag_init(&s.d, stderr);
    s.tec_policy = set_openmp_policy();
    s.display = strcmp(o->input_file, "-") == 0 ? "<stdin>" : o->input_file;
    ir_phase_push(drv_ends_with(o->input_file, ".onnx") ? "import" : "read");
    bool loaded = load_program(&s);
    ir_phase_pop();
    if (loaded) {
        if (o->emit == EMIT_TE) {
            write_output(&s, s.text, NULL);
        } else {
            if (s.lang != LANG_TIR)
                add_default_includes(o, &s.datadirs);
            int cached = from_run_cache(&s);
            bool built = cached != 0;
            if (!cached) {
                ir_phase_push("frontend");
                built = build_module(&s);
                ir_phase_pop();
            }
            if (cached > 0) {
                finish_program(&s);
            } else if (!cached && built && !s.d.nerrors) {
                ir_phase_push("passes");
                bool optimized = optimize(&s);
                ir_phase_pop();
                if (optimized)
                    finish_program(&s);
            }
        }
    }
    int st = status_of(&s.d);
    session_free(&s);
    return st;
}

int main(int argc, char **argv)
{
    options o = {.opt_level = 2};
    int st = drv_parse_args(argc, argv, &o);
    if (st < 0 && o.calibrate) {
        st = mode_calibrate();
        if (st == 0 && o.input_file)
            st = -1;
    }
    if (st < 0 && (o.accel.topology || o.accel.from_report))
        st = mode_topology(&o);
    if (st < 0)
        st = mode_program(&o);
    drv_options_free(&o);
    if (fflush(stdout) != 0 && st == 0) {
        fprintf(stderr, "tec: error: cannot write standard output: %s\n", strerror(errno));
        st = EXIT_USER;
    }
    return st;
}
