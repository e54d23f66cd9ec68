/* codegen/loader.c — loads compiled kernels with dlopen and calls them
 * through libffi.
 *
 * Kernels have the signature int32_t k(T0 *, T1 *, ...), so what differs
 * between them is only the number of pointer arguments.  One ffi_cif per
 * distinct count is prepared at load time and shared by every kernel with
 * that count; a call only builds the argument array.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1  /* sched_getaffinity, CPU_COUNT */
#endif
#include "codegen/codegen.h"
#include "codegen/cache.h"
#include "codegen/textread.h"
#include "ir/interp.h"
#include "ir/phase.h"

#include <dlfcn.h>
#include <ffi.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A prepared call interface for kernels taking `nargs` pointers. */
typedef struct cg_sig {
    int nargs;
    ffi_cif cif;
    ffi_type **arg_types;   /* nargs x &ffi_type_pointer; must outlive cif */
} cg_sig;

/* An index a kernel checks, as its failure message names it. */
typedef struct cg_index_site {
    char *buf;              /* the buffer's name */
    bool store;
    int dim, ndim;
    int64_t extent;
} cg_index_site;

/* One loaded kernel, with what is needed to explain its failure codes
 * without the module. */
typedef struct cg_kernel {
    char *func_name;
    char *sym;              /* its symbol in the shared object */
    void *fn;
    int sig;                /* index into cg_library.sigs */
    int nparams;
    int nasserts;
    char **assert_msgs;     /* nasserts messages */
    cg_index_site *sites;   /* the indices it checks (cg_unproven_accesses) */
    int nsites;
} cg_kernel;

struct cg_library {
    void *handle;
    char *path;
    cg_kernel *kernels;
    int nkernels;
    cg_sig *sigs;
    int nsigs;
    int *num_threads;       /* the library's tec_num_threads, NULL without parallel loops */
    const double *cast_value;   /* tec_cast_value and tec_cast_to: the cast */
    const int *cast_to;         /* that stopped a kernel; NULL without checked casts */
};

static void oom(diag *d) { diag_error(d, diag_noloc(), "codegen: out of memory"); }

void cg_unload(cg_library *lib)
{
    if (!lib)
        return;
    for (int i = 0; i < lib->nkernels; i++) {
        cg_kernel *k = &lib->kernels[i];
        free(k->func_name);
        free(k->sym);
        for (int j = 0; j < k->nasserts; j++)
            free(k->assert_msgs[j]);
        free(k->assert_msgs);
        for (int j = 0; j < k->nsites; j++)
            free(k->sites[j].buf);
        free(k->sites);
    }
    free(lib->kernels);
    for (int i = 0; i < lib->nsigs; i++)
        free(lib->sigs[i].arg_types);
    free(lib->sigs);
    if (lib->handle)
        dlclose(lib->handle);
    free(lib->path);
    free(lib);
}

/* The index of the prepared interface for `nargs` pointers, preparing it
 * on first use; -1 after a diagnostic. */
static int signature(cg_library *lib, int nargs, diag *d)
{
    for (int i = 0; i < lib->nsigs; i++)
        if (lib->sigs[i].nargs == nargs)
            return i;
    cg_sig *s = realloc(lib->sigs, sizeof *s * (size_t)(lib->nsigs + 1));
    if (!s) {
        oom(d);
        return -1;
    }
    lib->sigs = s;
    cg_sig *g = &lib->sigs[lib->nsigs];
    memset(g, 0, sizeof *g);
    g->nargs = nargs;
    g->arg_types = malloc(sizeof *g->arg_types * (size_t)(nargs ? nargs : 1));
    if (!g->arg_types) {
        oom(d);
        return -1;
    }
    for (int i = 0; i < nargs; i++)
        g->arg_types[i] = &ffi_type_pointer;
    ffi_status st = ffi_prep_cif(&g->cif, FFI_DEFAULT_ABI, (unsigned)nargs, &ffi_type_sint32,
                                 g->arg_types);
    if (st != FFI_OK) {
        diag_internal(d, "codegen", "libffi cannot prepare a call with %d pointer arguments "
                      "(ffi_prep_cif status %d)", nargs, (int)st);
        free(g->arg_types);
        return -1;
    }
    return lib->nsigs++;
}

/* What kernel k needs to be called and to explain its failures, from the
 * module's function `index`: its names, parameter count, assert messages
 * and the indices it checks. */
static bool describe_kernel(cg_kernel *k, const ir_module *m, int index, diag *d)
{
    const ir_func *f = m->funcs[index];
    k->sym = cg_symbol_name(m, index);
    k->func_name = strdup(f->name ? f->name : "?");
    if (!k->sym || !k->func_name) {
        oom(d);
        return false;
    }
    k->nparams = f->nparams;
    int n = cg_assert_count(f);
    k->assert_msgs = calloc((size_t)(n ? n : 1), sizeof *k->assert_msgs);
    if (!k->assert_msgs) {
        oom(d);
        return false;
    }
    for (int j = 0; j < n; j++) {
        k->assert_msgs[j] = strdup(cg_assert_message(f, j + 1));
        if (!k->assert_msgs[j]) {
            k->nasserts = j;
            oom(d);
            return false;
        }
    }
    k->nasserts = n;
    cg_bound_sites bs = cg_unproven_accesses(f);
    k->sites = calloc((size_t)(bs.n ? bs.n : 1), sizeof *k->sites);
    bool ok = !bs.oom && k->sites;
    for (int j = 0; ok && j < bs.n; j++) {
        const cg_bound_site *b = &bs.items[j];
        k->sites[j] = (cg_index_site){strdup(b->buf->name ? b->buf->name : "?"), b->store,
                                      b->dim, b->buf->ndim, b->buf->shape[b->dim]};
        ok = k->sites[j].buf != NULL;
        k->nsites = j + ok;
    }
    free(bs.items);
    if (!ok)
        oom(d);
    return ok;
}

/* Kernel k's function in the library and its call interface. */
static bool bind_kernel(cg_library *lib, cg_kernel *k, diag *d)
{
    dlerror();
    k->fn = dlsym(lib->handle, k->sym);
    if (!k->fn) {
        const char *why = dlerror();
        diag_internal(d, "codegen", "kernel '%s' of @%s is missing from %s: %s", k->sym,
                      k->func_name, lib->path, why ? why : "symbol is NULL");
        return false;
    }
    return (k->sig = signature(lib, k->nparams, d)) >= 0;
}

/* "out-of-range store y[100003]: index 0 must be in [0, 4)", the
 * interpreter's words; the indices of the other dimensions are not known
 * here and show as _. */
static void index_failure(const cg_library *lib, const cg_kernel *k, char *buf, size_t len)
{
    dlerror();
    const int *site = dlsym(lib->handle, "tec_index_site");   /* this thread's copies */
    const int64_t *value = dlsym(lib->handle, "tec_index_value");
    if (!site || !value || *site < 0 || *site >= k->nsites) {
        snprintf(buf, len, "index out of range");
        return;
    }
    const cg_index_site *s = &k->sites[*site];
    size_t at = (size_t)snprintf(buf, len, "out-of-range %s %s[", s->store ? "store" : "load",
                                 s->buf);
    for (int d = 0; d < s->ndim && at < len; d++)
        at += (size_t)(d == s->dim ? snprintf(buf + at, len - at, "%s%lld", d ? ", " : "",
                                              (long long)*value)
                                   : snprintf(buf + at, len - at, "%s_", d ? ", " : ""));
    if (at < len)
        snprintf(buf + at, len - at, "]: index %d must be in [0, %lld)", s->dim,
                 (long long)s->extent);
}

/* Whether libgomp binds its threads to processors (set before it loads). */
static bool bind_openmp_threads;
static const char *openmp_policy = "libgomp's defaults";

void cg_bind_openmp_threads(bool on) { bind_openmp_threads = on; }

const char *cg_openmp_policy(void) { return openmp_policy; }

/* Whether other processes want the processors now: the count of runnable
 * threads of the whole machine (the fourth field of /proc/loadavg, "R/T",
 * which counts the reader too), sampled BUSY_SAMPLES times BUSY_GAP_US
 * apart, exceeds the processors this process may not use (online minus
 * allowed) in at least half the samples.  Instantaneous counts, not the
 * load average: a load average still holds the C compiler tec just ran. */
#define BUSY_SAMPLES 5
#define BUSY_GAP_US 500
static bool machine_busy(void)
{
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    cpu_set_t set;
    long allowed = online;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        allowed = CPU_COUNT(&set);
    if (online < 1)
        return false;
    int busy = 0;
    for (int i = 0; i < BUSY_SAMPLES; i++) {
        if (i)
            usleep(BUSY_GAP_US);
        FILE *f = fopen("/proc/loadavg", "r");
        if (!f)
            return false;
        long running = 0;
        int got = fscanf(f, "%*s %*s %*s %ld/", &running);
        fclose(f);
        if (got != 1)
            return false;
        /* others: everything runnable but this thread */
        if (running - 1 > online - allowed)
            busy++;
    }
    return 2 * busy >= BUSY_SAMPLES;
}

/* Kernels with parallel loops use the OpenMP runtime (libgomp).  It is
 * pinned in the process the first time kernels load (RTLD_NODELETE), so
 * unloading a kernel library never unloads a runtime whose worker threads
 * are alive, and its thread pool is reused by every library loaded later.
 * Where it cannot be found, the kernel library's own dependency loads it. */
void cg_pin_openmp_runtime(void)
{
    static bool done;
    if (done)
        return;
    done = true;
    /* Bound threads (asked for by a caller that runs parallel loops on
     * several threads) stay on their processors unless the user says
     * otherwise: an unbound worker that spins at a barrier can land on its
     * partner's processor and stall a short parallel loop for milliseconds
     * (measured: a 784x1152x128 matmul, 8.0 ms unbound vs 1.4 ms bound on 2
     * threads).  Binding also pins the calling thread to the first
     * processor, so it is not the default: two single-threaded processes
     * would share one processor, and threads that place themselves (the
     * operator scheduler's device workers) would be moved.  Bound threads
     * also wait actively between parallel loops: with libgomp's default
     * (spin a while, then sleep) a profiled ResNet-18 ran 1.5-2% slower
     * than an unprofiled one, its threads sleeping and waking between some
     * layers; spinning, the two take the same time (bench/profile_overhead.sh)
     * and an unprofiled run is as fast as before.
     *   That holds on a quiet machine only.  When other processes compete
     * for the processors, a spinning thread burns the share of the
     * processor its partner needs, and a bound thread cannot move off a
     * busy processor: MobileNetV2 on 2 threads of a loaded 2-core machine
     * took 104-259 ms bound and spinning, 31-45 ms on 1 thread, 10-37 ms on
     * 2 unbound threads that sleep (OMP_WAIT_POLICY=passive).  So when
     * the machine is busy as the runtime loads (machine_busy), the threads
     * are neither bound nor spinning.  libgomp reads both settings when it
     * loads, next; the environment's own settings win. */
    if (bind_openmp_threads) {
        const char *bind = getenv("OMP_PROC_BIND"), *wait = getenv("OMP_WAIT_POLICY");
        if (bind || wait)
            openmp_policy = "OMP_PROC_BIND and OMP_WAIT_POLICY from the environment";
        if (!bind && !wait && machine_busy()) {
            setenv("OMP_PROC_BIND", "false", 0);
            setenv("OMP_WAIT_POLICY", "passive", 0);
            openmp_policy = "unbound, waiting asleep: the machine is busy";
        } else {
            if (!bind && !wait)
                openmp_policy = "bound, waiting spinning";
            setenv("OMP_PROC_BIND", "true", 0);
            setenv("OMP_WAIT_POLICY", "active", 0);
        }
    }
    (void)dlopen("libgomp.so.1", RTLD_NOW | RTLD_GLOBAL | RTLD_NODELETE);
}

static cg_library *load(const char *so_path, const ir_module *m, diag *d);

cg_library *cg_load(const char *so_path, const ir_module *m, diag *d)
{
    ir_phase_push("load");
    cg_library *lib = load(so_path, m, d);
    ir_phase_pop();
    return lib;
}

/* The shared object opened, with room for n kernels; NULL after a
 * diagnostic. */
static cg_library *open_library(const char *so_path, int n, diag *d)
{
    cg_pin_openmp_runtime();
    cg_library *lib = calloc(1, sizeof *lib);
    if (!lib || !(lib->path = strdup(so_path))) {
        free(lib);
        oom(d);
        cg_release_temp(so_path);
        return NULL;
    }
    /* RTLD_NOW: a missing runtime hook is reported here, not as a crash in
     * the middle of a run.  RTLD_LOCAL: kernels of different modules may
     * share symbol names. */
    lib->handle = dlopen(so_path, RTLD_NOW | RTLD_LOCAL);
    /* A cache entry trimmed since cg_compile found it: the file it held open */
    int held = lib->handle ? -1 : cg_cache_held_fd(so_path);
    if (held >= 0) {
        char fd_path[64];
        snprintf(fd_path, sizeof fd_path, "/proc/self/fd/%d", held);
        lib->handle = dlopen(fd_path, RTLD_NOW | RTLD_LOCAL);
    }
    /* A no-cache build can go as soon as it is mapped (or failed to be). */
    cg_release_temp(so_path);
    if (!lib->handle) {
        const char *why = dlerror();
        diag_error(d, diag_noloc(), "cannot load compiled kernels: %s", why ? why : so_path);
        cg_unload(lib);
        return NULL;
    }
    /* Emitted only by modules with parallel loops (an exported int,
     * initially 1): the thread count cg_set_threads writes. */
    dlerror();
    lib->num_threads = dlsym(lib->handle, "tec_num_threads");
    lib->cast_value = dlsym(lib->handle, "tec_cast_value");
    lib->cast_to = dlsym(lib->handle, "tec_cast_to");
    lib->kernels = calloc((size_t)(n > 0 ? n : 1), sizeof *lib->kernels);
    if (!lib->kernels) {
        oom(d);
        cg_unload(lib);
        return NULL;
    }
    return lib;
}

static cg_library *load(const char *so_path, const ir_module *m, diag *d)
{
    cg_library *lib = open_library(so_path, m->nfuncs, d);
    if (!lib)
        return NULL;
    for (int i = 0; i < m->nfuncs; i++) {
        lib->nkernels = i + 1;
        if (!m->funcs[i]) {
            diag_internal(d, "codegen", "function #%d of the module is missing", i);
            cg_unload(lib);
            return NULL;
        }
        if (!describe_kernel(&lib->kernels[i], m, i, d) ||
            !bind_kernel(lib, &lib->kernels[i], d)) {
            cg_unload(lib);
            return NULL;
        }
    }
    return lib;
}

/* ------------------------------------------------------------ kernel table
 *
 * The table is text: "kernels N\n", then per kernel
 *   "k SYM\tNAME\tNPARAMS NASSERTS NSITES\n" -- SYM and NAME as LEN:BYTES --
 * then its NASSERTS messages ("a LEN:BYTES\n") and NSITES checked indices
 * ("s LEN:BUF STORE DIM NDIM EXTENT\n"). */

static bool put_bytes(FILE *f, const char *s)
{
    return fprintf(f, "%zu:", strlen(s)) > 0 && fputs(s, f) >= 0;
}

char *cg_library_table(const cg_library *lib, size_t *len)
{
    char *buf = NULL;
    *len = 0;
    FILE *f = open_memstream(&buf, len);
    if (!f)
        return NULL;
    bool ok = fprintf(f, "kernels %d\n", lib->nkernels) > 0;
    for (int i = 0; ok && i < lib->nkernels; i++) {
        const cg_kernel *k = &lib->kernels[i];
        ok = fputs("k ", f) >= 0 && put_bytes(f, k->sym) && fputc('\t', f) != EOF &&
             put_bytes(f, k->func_name) &&
             fprintf(f, "\t%d %d %d\n", k->nparams, k->nasserts, k->nsites) > 0;
        for (int j = 0; ok && j < k->nasserts; j++)
            ok = fputs("a ", f) >= 0 && put_bytes(f, k->assert_msgs[j]) && fputc('\n', f) != EOF;
        for (int j = 0; ok && j < k->nsites; j++) {
            const cg_index_site *s = &k->sites[j];
            ok = fputs("s ", f) >= 0 && put_bytes(f, s->buf) &&
                 fprintf(f, " %d %d %d %lld\n", (int)s->store, s->dim, s->ndim,
                         (long long)s->extent) > 0;
        }
    }
    if (fclose(f) != 0 || !ok) {
        free(buf);
        return NULL;
    }
    return buf;
}

static bool read_kernel(cg_reader *r, cg_kernel *k)
{
    long long np, na, ns;
    if (!cg_read_lit(r, "k ") || !(k->sym = cg_read_str(r)) || !cg_read_lit(r, "\t") || !(k->func_name = cg_read_str(r)) ||
        !cg_read_lit(r, "\t") || !cg_read_num(r, 0, INT32_MAX, &np) || !cg_read_lit(r, " ") ||
        !cg_read_num(r, 0, r->end - r->p, &na) || !cg_read_lit(r, " ") ||
        !cg_read_num(r, 0, r->end - r->p, &ns) || !cg_read_lit(r, "\n"))
        return false;
    k->nparams = (int)np;
    if (!(k->assert_msgs = calloc((size_t)na + 1, sizeof *k->assert_msgs)))
        return false;
    while (k->nasserts < na) {
        if (!cg_read_lit(r, "a ") || !(k->assert_msgs[k->nasserts] = cg_read_str(r)))
            return false;
        k->nasserts++;
        if (!cg_read_lit(r, "\n"))
            return false;
    }
    if (!(k->sites = calloc((size_t)ns + 1, sizeof *k->sites)))
        return false;
    for (; k->nsites < ns; k->nsites++) {
        cg_index_site *s = &k->sites[k->nsites];
        long long store, dim, ndim, extent;
        if (!cg_read_lit(r, "s ") || !(s->buf = cg_read_str(r)) || !cg_read_lit(r, " ") ||
            !cg_read_num(r, 0, 1, &store) || !cg_read_lit(r, " ") || !cg_read_num(r, 0, 1 << 20, &dim) ||
            !cg_read_lit(r, " ") || !cg_read_num(r, dim + 1, 1 << 20, &ndim) || !cg_read_lit(r, " ") ||
            !cg_read_num(r, 0, INT64_MAX / 2, &extent) || !cg_read_lit(r, "\n")) {
            free(s->buf);
            return false;
        }
        *s = (cg_index_site){s->buf, store != 0, (int)dim, (int)ndim, extent};
    }
    return true;
}

cg_library *cg_load_table(const char *so_path, const char *table, size_t len, diag *d)
{
    ir_phase_push("load");
    cg_reader r = {table, table + len};
    long long n = -1;
    cg_library *lib = NULL;
    if (cg_read_lit(&r, "kernels ") && cg_read_num(&r, 0, (long long)len, &n) && cg_read_lit(&r, "\n"))
        lib = open_library(so_path, (int)n, d);
    bool ok = lib != NULL;
    for (int i = 0; ok && i < n; i++) {
        lib->nkernels = i + 1;
        ok = read_kernel(&r, &lib->kernels[i]) && bind_kernel(lib, &lib->kernels[i], d);
    }
    if (lib && (!ok || r.p != r.end)) {
        if (!d->nerrors)
            diag_internal(d, "codegen", "the kernel table of %s is not well formed", so_path);
        cg_unload(lib);
        lib = NULL;
    } else if (n < 0) {
        diag_internal(d, "codegen", "the kernel table of %s is not well formed", so_path);
    }
    ir_phase_pop();
    return lib;
}

bool cg_set_threads(cg_library *lib, int n)
{
    if (!lib || !lib->num_threads)
        return false;
    *lib->num_threads = n < 1 ? 1 : n > CG_MAX_THREADS ? CG_MAX_THREADS : n;
    return true;
}

bool cg_call(cg_library *lib, int func_index, void *const *data, char *err, size_t errlen)
{
    if (!lib || func_index < 0 || func_index >= lib->nkernels) {
        snprintf(err, errlen, "internal error: codegen: no compiled kernel #%d", func_index);
        return false;
    }
    const cg_kernel *k = &lib->kernels[func_index];
    void *small[16];
    void **args = small;
    if (k->nparams > 16 && !(args = malloc(sizeof *args * (size_t)k->nparams))) {
        snprintf(err, errlen, "in @%s: out of memory", k->func_name);
        return false;
    }
    /* libffi wants the address of each argument value; the values are the
     * storage pointers themselves. */
    for (int i = 0; i < k->nparams; i++)
        args[i] = (void *)&data[i];
    /* A return value narrower than a register is widened to ffi_arg. */
    ffi_arg rc = 0;
    ffi_call(&lib->sigs[k->sig].cif, FFI_FN(k->fn), &rc, args);
    if (args != small)
        free(args);
    int32_t code = (int32_t)rc;
    if (code == 0)
        return true;
    char cast[256];
    const char *detail = code >= 1 && code <= k->nasserts ? k->assert_msgs[code - 1] : NULL;
    if (code == k->nasserts + 4) {
        index_failure(lib, k, cast, sizeof cast);
        detail = cast;
    }
    if (code == k->nasserts + 3 && lib->cast_value && lib->cast_to &&
        *lib->cast_to >= 0 && *lib->cast_to < IR_NDTYPES) {
        ir_cast_failure(*lib->cast_value, (ir_dtype)*lib->cast_to, cast, sizeof cast);
        detail = cast;
    }
    cg_format_failure(k->func_name, k->nasserts, code, detail, err, errlen);
    return false;
}

cg_library *cg_build(const ir_module *m, const cg_options *o, diag *d)
{
    char *src = cg_emit_c(m, o ? o->target : NULL, o && o->unchecked, d);
    if (!src)
        return NULL;
    cg_options with = o ? *o : (cg_options){0};
    with.module = m;
    char *so = cg_compile(src, &with, d);
    free(src);
    if (!so)
        return NULL;
    cg_library *lib = cg_load(so, m, d);
    free(so);
    if (lib)
        cg_set_threads(lib, o && o->target ? o->target->cores : 1);
    return lib;
}
