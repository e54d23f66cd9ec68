/* runtime/exec.c — the graph executor: buffers, and the calls in graph order
 * (runtime/sched.c runs them on several devices). */
#include "runtime/exec.h"
#include "runtime/weight_set.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "codegen/codegen.h"
#include "ir/interp.h"
#include "ir/path.h"
#include "ir/phase.h"
#include "runtime/npy.h"
#include "runtime/random.h"
#include "runtime/threads.h"

static bool is_interface(ir_buf_role r)
{
    return r == IR_BUF_INPUT || r == IR_BUF_PARAM || r == IR_BUF_OUTPUT;
}

bool rt_iface_record(const ir_module *m, rt_iface *out, diag *d)
{
    out->nbufs = 0;
    out->bufs = calloc((size_t)m->graph.nbufs + 1, sizeof *out->bufs);
    if (!out->bufs) {
        diag_error(d, diag_noloc(), "out of memory");
        return false;
    }
    for (int i = 0; i < m->graph.nbufs; i++) {
        const ir_buffer *b = m->graph.bufs[i];
        if (!is_interface(b->role))
            continue;
        if (b->ndim > RT_MAX_DIMS) {
            diag_error(d, diag_noloc(), "buffer %s has %d dimensions; at most %d are supported",
                       b->name, b->ndim, RT_MAX_DIMS);
            rt_iface_free(out);
            return false;
        }
        rt_iface_buf *f = &out->bufs[out->nbufs++];
        f->name = b->name;   /* the module outlives the run */
        f->dtype = b->dtype;
        f->ndim = b->ndim;
        memcpy(f->shape, b->shape, sizeof(int64_t) * (size_t)b->ndim);
        f->role = b->role;
        f->has_init = b->has_init;
        f->init_lo = b->init_lo;
        f->init_hi = b->init_hi;
    }
    return true;
}

void rt_iface_free(rt_iface *f)
{
    free(f->bufs);
    f->bufs = NULL;
    f->nbufs = 0;
}

static const rt_iface_buf *iface_find(const rt_iface *f, const char *name)
{
    for (int i = 0; f && i < f->nbufs; i++)
        if (strcmp(f->bufs[i].name, name) == 0)
            return &f->bufs[i];
    return NULL;
}

/* Reads `path` into a new tensor that must have exactly the declared type. */
static rt_tensor *load_checked(const char *what, const char *name, const char *path,
                               const rt_iface_buf *f, diag *d)
{
    char err[512];
    rt_npy_type want = {f->dtype, f->ndim, {0}}, got;
    memcpy(want.shape, f->shape, sizeof(int64_t) * (size_t)f->ndim);
    rt_tensor *t = rt_npy_read_as(path, &want, &got, err, sizeof err);
    if (!t && err[0]) {
        diag_error(d, diag_noloc(), "%s", err);
    } else if (!t) {
        char *ws = rt_shape_str(f->dtype, f->ndim, f->shape);
        char *gs = rt_shape_str(got.dtype, got.ndim, got.shape);
        diag_error(d, diag_noloc(), "%s %s: %s is %s but the program declares %s",
                   what, name, path, gs, ws);
        free(ws);
        free(gs);
    }
    return t;
}

/* DIR/NAME.npy (malloc'ed), or NULL when out of memory. */
static char *npy_path(const char *dir, const char *name)
{
    size_t n = strlen(name) + sizeof ".npy";
    char *file = malloc(n);
    if (!file)
        return NULL;
    snprintf(file, n, "%s.npy", name);
    char *p = ir_path_join(dir, file);
    free(file);
    return p;
}

/* Why a buffer's name cannot be the NAME of DIR/NAME.npy, or NULL when it
 * can: a name that leaves DIR or hides control characters is refused, never
 * rewritten, so that a file's name is always the tensor's. */
static const char *file_name_problem(const char *name)
{
    if (!*name)
        return "it is empty";
    if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
        return "it names a directory";
    for (const unsigned char *c = (const unsigned char *)name; *c; c++) {
        if (*c == '/')
            return "it contains '/'";
        if (*c < 0x20 || *c == 0x7f)
            return "it contains a control character";
    }
    return NULL;
}

/* Checks that the buffer's name can be a file name in DIR; option is the
 * command-line option that names DIR. */
static bool check_file_name(const char *option, const char *dir, const char *what,
                            const char *name, diag *d)
{
    const char *why = file_name_problem(name);
    if (!why)
        return true;
    char shown[256];   /* the name, its control characters as \xHH */
    size_t n = 0;
    for (const unsigned char *c = (const unsigned char *)name; *c && n + 8 < sizeof shown; c++)
        n += (size_t)snprintf(shown + n, sizeof shown - n, *c < 0x20 || *c == 0x7f ? "\\x%02x"
                              : "%c", *c);
    diag_error(d, diag_noloc(), "%s %s: the %s named \"%s\" cannot be a file name there: %s",
               option, dir, what, shown, why);
    return false;
}

/* (silently ignoring a stray file would hide a renamed layer) */
bool rt_check_weights_dir(const rt_iface *iface, const char *dir, diag *d)
{
    DIR *dp = opendir(dir);
    if (!dp) {
        diag_error(d, diag_noloc(), "--weights %s: %s", dir, strerror(errno));
        return false;
    }
    bool ok = true;
    struct dirent *e;
    while ((e = readdir(dp))) {
        size_t n = strlen(e->d_name);
        if (n <= 4 || strcmp(e->d_name + n - 4, ".npy") != 0)
            continue;
        char *name = strndup(e->d_name, n - 4);
        const rt_iface_buf *f = name ? iface_find(iface, name) : NULL;
        if (!f || f->role != IR_BUF_PARAM) {
            diag_error(d, diag_noloc(), "--weights %s: %s matches no parameter of the program",
                       dir, e->d_name);
            ok = false;
        }
        free(name);
    }
    closedir(dp);
    return ok;
}

static rt_tensor *new_tensor(const ir_buffer *b, const rt_iface_buf *f, diag *d)
{
    char err[256];
    rt_tensor *t = f ? rt_tensor_new(f->dtype, f->ndim, f->shape, err, sizeof err)
                     : rt_tensor_new(b->dtype, b->ndim, b->shape, err, sizeof err);
    if (!t)
        diag_error(d, diag_noloc(), "buffer %s: %s", b->name, err);
    return t;
}

/* The most bytes the placement apart may take (runtime/exec.h). */
#define RT_SPREAD_MAX ((size_t)1 << 29)

/* The memory plan's arena, and a view into it for every placed temp; and
 * where each would lie apart. */
static bool place_in_arena(rt_run *r, diag *d)
{
    const ir_graph *g = &r->m->graph;
    if (!g->has_arena)
        return true;
    if (g->arena_bytes < 0 || (uint64_t)g->arena_bytes > (uint64_t)PTRDIFF_MAX - 64) {
        diag_internal(d, "runtime", "the graph's arena of %lld bytes is too large",
                      (long long)g->arena_bytes);
        return false;
    }
    r->arena_bytes = (size_t)g->arena_bytes;
    r->arena = rt_zalloc(r->arena_bytes);
    r->in_arena = calloc((size_t)r->nbufs + 1, sizeof *r->in_arena);
    r->first_use = calloc((size_t)r->nbufs + 1, sizeof *r->first_use);
    int *last = calloc((size_t)r->nbufs + 1, sizeof *last);
    if (!r->arena || !r->in_arena || !r->first_use || !last) {
        free(last);
        diag_error(d, diag_noloc(), "out of memory allocating the %zu-byte activation arena",
                   r->arena_bytes);
        return false;
    }
    ir_graph_live_ranges(g, r->first_use, last);
    const char *poison = getenv("TEC_POISON_ARENA");
    r->poison = poison && *poison && strcmp(poison, "0") != 0;
    for (int i = 0; i < r->nbufs; i++) {
        const ir_buffer *b = g->bufs[i];
        if (!b->in_arena)
            continue;
        int64_t n = ir_buffer_bytes(b);
        if (b->role != IR_BUF_TEMP || n < 0 || b->arena_offset < 0 ||
            b->arena_offset % 64 != 0 || b->arena_offset > g->arena_bytes ||
            n > g->arena_bytes - b->arena_offset || b->ndim > RT_MAX_DIMS) {
            diag_internal(d, "runtime", "buffer %s is not an aligned temp inside the arena",
                          b->name);
            free(last);
            return false;
        }
        rt_tensor *t = calloc(1, sizeof *t);
        if (!t) {
            diag_error(d, diag_noloc(), "out of memory");
            free(last);
            return false;
        }
        t->dtype = b->dtype;
        t->ndim = b->ndim;
        memcpy(t->shape, b->shape, sizeof(int64_t) * (size_t)b->ndim);
        t->data = (char *)r->arena + b->arena_offset;
        t->nbytes = (size_t)n;
        r->bufs[i] = t;
        r->in_arena[i] = true;
    }
    /* the placement apart: each planned temp after the one before, when
     * they all fit in RT_SPREAD_MAX bytes (tried only on several threads) */
    r->spread_off = calloc((size_t)r->nbufs + 1, sizeof *r->spread_off);
    if (!r->spread_off) {
        diag_error(d, diag_noloc(), "out of memory");
        free(last);
        return false;
    }
    size_t total = 0;
    for (int i = 0; i < r->nbufs && total <= RT_SPREAD_MAX; i++)
        if (r->in_arena[i] && r->first_use[i] >= 0) {
            r->spread_off[i] = (int64_t)total;
            total += (r->bufs[i]->nbytes + 63) / 64 * 64;
        }
    r->spread_bytes = total <= RT_SPREAD_MAX && total > r->arena_bytes ? total : 0;
    /* A pass that changed the calls after memplan could have made two
     * placed temps live together: never run such a plan. */
    for (int i = 0; i < r->nbufs; i++) {
        if (!r->in_arena[i] || r->first_use[i] < 0)
            continue;
        for (int j = i + 1; j < r->nbufs; j++) {
            if (!r->in_arena[j] || r->first_use[j] < 0 || r->first_use[j] > last[i] ||
                r->first_use[i] > last[j])
                continue;
            const rt_tensor *a = r->bufs[i], *b = r->bufs[j];
            if ((char *)a->data < (char *)b->data + b->nbytes &&
                (char *)b->data < (char *)a->data + a->nbytes) {
                diag_internal(d, "runtime", "the memory plan is stale: temps %s and %s are live "
                              "at the same call but share arena bytes (did a pass change the "
                              "graph's calls after memplan?)", g->bufs[i]->name, g->bufs[j]->name);
                free(last);
                return false;
            }
        }
    }
    free(last);
    return true;
}

static bool run_load(rt_run *r, const rt_run_options *o, int l, diag *d);

static bool passes(const ir_graph_call *c, const ir_buffer *b)
{
    for (int a = 0; a < c->nargs; a++)
        if (c->args[a] == b)
            return true;
    return false;
}

/* The load calls, once: they make the consts (packed weights) that every
 * run reads.  A param that no call of a run passes has done its work after
 * the last load call that reads it, and its storage goes then; a const's
 * storage comes when its first load call runs: packed weights take the
 * place of their params instead of doubling the weights' memory. */
/* Before a call on several threads: spinning or asleep at once between
 * parallel loops, as the machine's load says (runtime/threads.h). */
static void threads_before_call(const rt_run_options *o)
{
    if (o->lib && o->threads > 1)
        rt_threads_before_call(o->lib, o->threads);
}

/* Graph call c on several threads, timed (r->call_ns): the threads' policy
 * compares its time with its time the other way of waiting. */
static bool run_call_timed(rt_run *r, const rt_run_options *o, int c, char *err, size_t errlen)
{
    if (!o->lib || o->threads < 2)
        return rt_run_call(r, o, c, err, errlen);
    int busy = rt_threads_before_call(o->lib, o->threads);
    if (!r->call_ns)   /* (out of memory for the times: the waiting decides) */
        return rt_run_call(r, o, c, err, errlen);
    int64_t t0 = rt_threads_now_ns();
    bool ok = rt_run_call(r, o, c, err, errlen);
    int64_t ns = rt_threads_now_ns() - t0;
    int64_t *mine = &r->call_ns[2 * c + busy];
    rt_threads_after_call(ns, r->call_ns[2 * c + !busy]);
    *mine = *mine ? (3 * *mine + ns) / 4 : ns;
    return ok;
}

static bool run_loads(rt_run *r, const rt_run_options *o, diag *d)
{
    const ir_graph *g = &r->m->graph;
    for (int l = 0; l < g->nloads; l++) {
        /* a const's storage, when its first load call needs it */
        for (int a = 0; a < g->loads[l].nargs; a++) {
            int i = ir_graph_buffer_index(g, g->loads[l].args[a]);
            if (i >= 0 && !r->bufs[i] && g->bufs[i]->role == IR_BUF_CONST &&
                !(r->bufs[i] = new_tensor(g->bufs[i], NULL, d)))
                return false;
        }
        threads_before_call(o);
        if (!run_load(r, o, l, d))
            return false;
        for (int i = 0; i < g->nbufs; i++) {
            const ir_buffer *b = g->bufs[i];
            if (b->role != IR_BUF_PARAM || !r->bufs[i] || !passes(&g->loads[l], b))
                continue;
            bool later = false;
            for (int k = l + 1; k < g->nloads && !later; k++)
                later = passes(&g->loads[k], b);
            for (int c = 0; c < g->ncalls && !later; c++)
                later = passes(&g->calls[c], b);
            if (!later) {
                rt_tensor_free(r->bufs[i]);
                r->bufs[i] = NULL;
            }
        }
    }
    return true;
}

rt_tensor *rt_buffer_tensor(const ir_module *m, const rt_iface *iface,
                            const rt_run_options *o, int i, diag *d)
{
    const ir_buffer *b = m->graph.bufs[i];
    const rt_iface_buf *f = iface_find(iface, b->name);
    const char *file = NULL;
    if (b->role == IR_BUF_INPUT)
        for (int k = 0; k < o->ninputs; k++)
            if (strcmp(o->inputs[k].name, b->name) == 0)
                file = o->inputs[k].path;
    if (b->role == IR_BUF_PARAM && o->weights) {
        bool found;
        rt_tensor *t = rt_weight_set_take(o->weights, b->name, f ? f->dtype : b->dtype,
                                          f ? f->ndim : b->ndim, f ? f->shape : b->shape,
                                          &found, d);
        if (found)
            return t;
    }
    if (b->role == IR_BUF_PARAM && o->weights_dir) {
        if (!check_file_name("--weights", o->weights_dir, "parameter", b->name, d))
            return NULL;
        char *path = npy_path(o->weights_dir, b->name);
        struct stat st;
        if (!path) {
            diag_error(d, diag_noloc(), "out of memory");
            return NULL;
        }
        rt_tensor *t = NULL;
        if (stat(path, &st) != 0) {
            char *want = rt_shape_str(b->dtype, f ? f->ndim : b->ndim, f ? f->shape : b->shape);
            diag_error(d, diag_noloc(), "--weights %s: no file for parameter %s (%s): %s",
                       o->weights_dir, b->name, want, path);
            free(want);
        } else {
            t = load_checked("parameter", b->name, path, f, d);
        }
        free(path);
        return t;
    }
    if (file)
        return load_checked("input", b->name, file, f, d);
    rt_tensor *t = new_tensor(b, f, d);
    if (t && f && f->has_init && (b->role == IR_BUF_INPUT || b->role == IR_BUF_PARAM))
        rt_fill_default(t, b->name, f->init_lo, f->init_hi);
    return t;
}

static rt_run *run_new(const ir_module *m, const rt_iface *iface, const rt_run_options *o,
                       diag *d);

rt_run *rt_run_new(const ir_module *m, const rt_iface *iface,
                   const rt_run_options *o, diag *d)
{
    ir_phase_push("run setup");
    rt_run *r = run_new(m, iface, o, d);
    ir_phase_pop();
    return r;
}

static rt_run *run_new(const ir_module *m, const rt_iface *iface, const rt_run_options *o,
                       diag *d)
{
    rt_run *r = calloc(1, sizeof *r);
    if (!r || !(r->bufs = calloc((size_t)m->graph.nbufs + 1, sizeof *r->bufs))) {
        free(r);
        diag_error(d, diag_noloc(), "out of memory");
        return NULL;
    }
    r->m = m;
    r->iface = iface;
    r->nbufs = m->graph.nbufs;
    /* (without it the calls are not timed: the policy has only the waiting) */
    r->call_ns = calloc(2 * (size_t)m->graph.ncalls + 1, sizeof *r->call_ns);
    rt_one_thread_init(&r->one_thread, RT_ONE_GAIN, false);
    rt_one_thread_init(&r->placement, RT_APART_GAIN, true);
    int errors = d->nerrors;

    for (int i = 0; i < o->ninputs; i++) {
        const rt_iface_buf *f = iface_find(iface, o->inputs[i].name);
        if (!f || f->role != IR_BUF_INPUT)
            diag_error(d, diag_noloc(), "--input %s=%s: the program has no input named '%s'",
                       o->inputs[i].name, o->inputs[i].path, o->inputs[i].name);
    }
    if (o->weights_dir && !rt_check_weights_dir(iface, o->weights_dir, d))
        goto fail;
    if (d->nerrors > errors || (!o->own_storage && !place_in_arena(r, d)))
        goto fail;

    /* (temps in the arena have their views; load calls make the consts) */
    ir_phase_push("data");
    for (int i = 0; i < m->graph.nbufs; i++)
        if (!r->bufs[i] && m->graph.bufs[i]->role != IR_BUF_CONST)
            r->bufs[i] = rt_buffer_tensor(m, iface, o, i, d);
    ir_phase_pop();
    if (d->nerrors > errors)
        goto fail;
    for (int i = 0; i < m->graph.nbufs; i++)
        if (m->graph.bufs[i]->role != IR_BUF_CONST &&
            rt_tensor_numel(r->bufs[i]) != ir_buffer_numel(m->graph.bufs[i])) {
            diag_internal(d, "runtime", "buffer %s has %lld elements but the module says %lld",
                          m->graph.bufs[i]->name, (long long)rt_tensor_numel(r->bufs[i]),
                          (long long)ir_buffer_numel(m->graph.bufs[i]));
            goto fail;
        }
    ir_phase_push("load calls");
    bool loaded = run_loads(r, o, d);
    ir_phase_pop();
    if (!loaded)
        goto fail;
    return r;
fail:
    rt_run_free(r);
    return NULL;
}

static int buffer_index(const rt_run *r, const ir_buffer *b)
{
    for (int i = 0; i < r->nbufs; i++)
        if (r->m->graph.bufs[i] == b)
            return i;
    return -1;
}

/* Runs one call: the graph's call c, or (`load`) its load call c, which
 * sees no arena (it holds only temps).  False with "in layer NAME: ..." in
 * err; an internal error's message starts with "internal error: runtime: ". */
static bool run_one(rt_run *r, const rt_run_options *o, const ir_graph_call *call, int c,
                    bool load, char *err, size_t errlen)
{
    const char *what = load ? "load call" : "call";
    if (r->poison && !load)
        for (int i = 0; i < r->nbufs; i++)
            if (r->in_arena[i] && r->first_use[i] == c)
                memset(r->bufs[i]->data, 0xff, r->bufs[i]->nbytes);
    void *data[call->nargs + 1];
    for (int a = 0; a < call->nargs; a++) {
        int bi = buffer_index(r, call->args[a]);
        if (bi < 0) {
            snprintf(err, errlen, "internal error: runtime: %s %d to @%s passes a buffer that "
                     "is not in the graph", what, c, call->fn->name);
            return false;
        }
        if (!r->bufs[bi]) {   /* a const no load call made, or a freed param */
            snprintf(err, errlen, "internal error: runtime: %s %d to @%s passes %s, which has "
                     "no storage", what, c, call->fn->name, call->args[a]->name);
            return false;
        }
        data[a] = r->bufs[bi]->data;
    }
    char why[512] = "";
    bool ok;
    if (o->lib) {
        int fi = -1;
        for (int k = 0; k < r->m->nfuncs; k++)
            if (r->m->funcs[k] == call->fn)
                fi = k;
        ok = cg_call(o->lib, fi, data, why, sizeof why);
    } else {
        ok = ir_interp_func(call->fn, data, why, sizeof why);
    }
    if (!ok) {
        const char *layer = ir_func_attr(call->fn, "layer");
        snprintf(err, errlen, "in layer %s%s: %s", layer ? layer : call->fn->name,
                 load ? " (at load)" : "", why);
    }
    return ok;
}

void rt_report_call_error(const char *err, diag *d)
{
    /* "[in layer L: ]internal error: PART: what" from the runtime, the loader
     * or a kernel: an internal error of PART (exit 70), the layer kept */
    const char *ie = strstr(err, "internal error: ");
    const char *part = ie ? ie + 16 : NULL;
    const char *what = part ? strstr(part, ": ") : NULL;
    if (!what) {
        diag_error(d, diag_noloc(), "%s", err);
        return;
    }
    char name[32];
    snprintf(name, sizeof name, "%.*s", (int)(what - part) < 31 ? (int)(what - part) : 31, part);
    diag_internal(d, name, "%.*s%s", (int)(ie - err), err, what + 2);
}

static bool run_load(rt_run *r, const rt_run_options *o, int l, diag *d)
{
    char err[1024];
    bool ok = run_one(r, o, &r->m->graph.loads[l], l, true, err, sizeof err);
    if (!ok)
        rt_report_call_error(err, d);
    return ok;
}

bool rt_run_call(rt_run *r, const rt_run_options *o, int c, char *err, size_t errlen)
{
    return run_one(r, o, &r->m->graph.calls[c], c, false, err, errlen);
}

/* The bytes of the placement apart, allocated and populated now (the
 * first time); false when they cannot be (then never: spread_bytes 0). */
static bool have_spread(rt_run *r)
{
    if (!r->spread && r->spread_bytes && !(r->spread = rt_zalloc(r->spread_bytes)))
        r->spread_bytes = 0;
    return r->spread != NULL;
}

void rt_run_prepare_repeats(rt_run *r, const rt_run_options *o)
{
    if (o->lib && o->threads > 1)
        have_spread(r);
}

bool rt_run_place_apart(rt_run *r, bool apart)
{
    apart = apart && have_spread(r);
    if (apart == r->apart)
        return apart;
    for (int i = 0; i < r->nbufs; i++)
        if (r->in_arena && r->in_arena[i] && r->first_use[i] >= 0)
            r->bufs[i]->data = apart ? (char *)r->spread + r->spread_off[i]
                                     : (char *)r->arena + r->m->graph.bufs[i]->arena_offset;
    r->apart = apart;
    return apart;
}

/* TEC_THREADS_TRACE=1 in the environment: each run on several threads
 * prints its choices (one thread or all, the temps apart or as planned,
 * asleep because other processes hold the processors) and its time to
 * stderr, to see which runs a series' median is made of. */
static bool trace_runs(void)
{
    static int on = -1;
    if (on < 0) {
        const char *e = getenv("TEC_THREADS_TRACE");
        on = e && *e && strcmp(e, "0") != 0;
    }
    return on;
}

/* TEC_TEMPS_APART in the environment: 1, the runs on all threads place
 * the temps apart whenever they can; 0, never; unset or empty, chosen run
 * by run (runtime/threads.h).  For comparing the two placements in one
 * process state; returns 1, 0 or -1 (chosen). */
static int temps_apart_forced(void)
{
    static int forced = -2;
    if (forced == -2) {
        const char *e = getenv("TEC_TEMPS_APART");
        forced = !e || !*e ? -1 : strcmp(e, "0") != 0;
    }
    return forced;
}

/* Skips s's try of one thread (or of the temps apart) in the next run
 * while the threads' processors are near, where it cannot win
 * (runtime/threads.h); *rtt: the round trip measured in this run, 0 before
 * (measured only for a run that would try). */
static void skip_try_if_near(rt_one_thread *s, int64_t *rtt)
{
    if (!rt_one_thread_try_next(s))
        return;
    if (*rtt == 0)
        *rtt = rt_threads_round_trip_ns();
    if (*rtt > 0 && *rtt < RT_NEAR_NS)
        rt_one_thread_skip_try(s);
}

bool rt_run_execute(rt_run *r, const rt_run_options *o, diag *d)
{
    ir_phase_push("run");
    r->runs++;
    bool ok = true;
    /* on several threads: all of them, or one where runs on one were
     * faster (runtime/threads.h) */
    bool timed = o->lib && o->threads > 1 && r->call_ns;
    bool one = false;
    bool busy = false;
    int64_t rtt = 0;
    if (timed) {
        /* (the look at the machine goes on while runs use one thread) */
        busy = rt_threads_before_call(o->lib, o->threads);
        /* while other processes hold the processors, all threads, asleep:
         * each gets its share of the processors (the choice is made, and
         * tried, among the other runs; runtime/threads.h) */
        if (!busy && !rt_threads_one_thread_now()) {
            skip_try_if_near(&r->one_thread, &rtt);
            one = rt_one_thread_before(&r->one_thread, busy);
        }
    }
    if (one)
        cg_set_threads(o->lib, 1);
    /* on all threads: the temps where the plan puts them, or apart (its
     * times, unlike one thread's, are not kept apart by the way the threads
     * wait: a try would otherwise find no time with the plan when the way
     * changed, as it does on a loaded machine, and end at once); the
     * round trip is not measured while other processes hold the
     * processors: the partner may not run, and the probe would spin */
    int forced = temps_apart_forced();
    if (timed && !one && !busy && r->spread_bytes && forced < 0)
        skip_try_if_near(&r->placement, &rtt);
    bool apart = timed && !one && r->spread_bytes &&
                 (forced < 0 ? rt_one_thread_before(&r->placement, false) : forced == 1);
    rt_run_place_apart(r, apart);
    int64_t t0 = timed ? rt_threads_now_ns() : 0;
    for (int c = 0; c < r->m->graph.ncalls && ok; c++) {
        char err[1024];
        if (one) {
            rt_threads_one_call();
            ok = rt_run_call(r, o, c, err, sizeof err);
        } else {
            ok = run_call_timed(r, o, c, err, sizeof err);
        }
        if (!ok)
            rt_report_call_error(err, d);
    }
    int64_t ns = timed ? rt_threads_now_ns() - t0 : 0;
    if (timed && trace_runs())
        fprintf(stderr, "tec: run %lld: %s, %s%s, %.3f ms (round trip %lld ns)\n",
                (long long)r->runs, one ? "1 thread" : "all threads",
                r->apart ? "temps apart" : "temps as planned", busy ? ", asleep (busy)" : "",
                (double)ns / 1e6, (long long)rtt);
    if (timed && ok && !busy)
        rt_one_thread_after(&r->one_thread, one, ns);
    if (timed && ok && !one && r->spread_bytes && forced < 0) {
        /* the temps apart need RT_APART_GAIN where the threads spin;
         * asleep beside other processes the runs' times vary more than
         * that, and one thread's gain applies (runtime/threads.h) */
        r->placement.gain = busy ? RT_ONE_GAIN : RT_APART_GAIN;
        rt_one_thread_after(&r->placement, r->apart, ns);
    }
    r->spread_runs += r->apart;
    if (one)
        cg_set_threads(o->lib, o->threads);
    if (timed && r->runs == 1) {
        /* the warm-up's call times are cold ones (page faults, caches):
         * not what a later window's calls are compared with (a busy
         * start's first try of spinning, at its end, would win against
         * them) */
        memset(r->call_ns, 0, 2 * (size_t)r->m->graph.ncalls * sizeof *r->call_ns);
    }
    if (timed)
        rt_threads_warmed_up();
    ir_phase_pop();
    return ok;
}

/* Creates dir and its missing parents, as mkdir -p does. */
static bool make_dirs(const char *dir, diag *d)
{
    char failed[PATH_MAX];
    if (ir_make_dirs(dir, 0777, failed, sizeof failed))
        return true;
    if (errno == ENOMEM)
        diag_error(d, diag_noloc(), "out of memory");
    else if (errno == ENOTDIR)
        diag_error(d, diag_noloc(), "--save-outputs %s: %s is not a directory", dir, failed);
    else
        diag_error(d, diag_noloc(), "--save-outputs %s: cannot create %s: %s", dir, failed,
                   strerror(errno));
    return false;
}

/* The tensor as the user sees it: with the declared shape (same storage). */
static rt_tensor logical_view(const rt_run *r, int i)
{
    rt_tensor t = *r->bufs[i];
    const rt_iface_buf *f = iface_find(r->iface, r->m->graph.bufs[i]->name);
    if (f) {
        t.ndim = f->ndim;
        memcpy(t.shape, f->shape, sizeof(int64_t) * (size_t)f->ndim);
    }
    return t;
}

/* All or nothing: every output goes to a temporary file first, and only
 * when all are written are they renamed over DIR/NAME.npy, so a failure
 * leaves the old files as they were. */
bool rt_run_save_outputs(const rt_run *r, const char *dir, diag *d)
{
    int errors = d->nerrors;
    for (int i = 0; i < r->nbufs; i++) {
        const ir_buffer *b = r->m->graph.bufs[i];
        if (b->role == IR_BUF_OUTPUT)
            check_file_name("--save-outputs", dir, "output", b->name, d);
    }
    if (d->nerrors > errors || !make_dirs(dir, d))
        return false;
    char **paths = calloc((size_t)r->nbufs + 1, sizeof *paths);
    char **temps = calloc((size_t)r->nbufs + 1, sizeof *temps);
    bool ok = paths && temps;
    if (!ok)
        diag_error(d, diag_noloc(), "out of memory");
    for (int i = 0; ok && i < r->nbufs; i++) {
        const ir_buffer *b = r->m->graph.bufs[i];
        if (b->role != IR_BUF_OUTPUT)
            continue;
        char err[512];
        rt_tensor t = logical_view(r, i);
        struct stat st;
        if (!(paths[i] = npy_path(dir, b->name))) {
            diag_error(d, diag_noloc(), "out of memory");
            ok = false;
        } else if (lstat(paths[i], &st) == 0 && S_ISDIR(st.st_mode)) {
            diag_error(d, diag_noloc(), "--save-outputs %s: %s is a directory", dir, paths[i]);
            ok = false;
        } else if (!(temps[i] = rt_npy_write_temp(paths[i], &t, err, sizeof err))) {
            diag_error(d, diag_noloc(), "%s", err);
            ok = false;
        }
    }
    for (int i = 0; ok && i < r->nbufs; i++) {
        if (temps[i] && rename(temps[i], paths[i]) != 0) {
            diag_error(d, diag_noloc(), "%s: cannot write: %s", paths[i], strerror(errno));
            ok = false;
            break;
        }
        free(temps[i]);
        temps[i] = NULL;
    }
    for (int i = 0; paths && temps && i < r->nbufs; i++) {
        if (temps[i])
            unlink(temps[i]);   /* not renamed: the run failed */
        free(temps[i]);
        free(paths[i]);
    }
    free(paths);
    free(temps);
    return ok;
}

void rt_run_print_summary(const rt_run *r, FILE *out)
{
    for (int i = 0; i < r->nbufs; i++) {
        const ir_buffer *b = r->m->graph.bufs[i];
        if (b->role != IR_BUF_OUTPUT)
            continue;
        rt_tensor t = logical_view(r, i);
        int64_t n = rt_tensor_numel(&t);
        char *shape = rt_shape_str(t.dtype, t.ndim, t.shape);
        /* up to 4 first values, as many as keep the line within 120 columns */
        int len = fprintf(out, "%s: %s  ", b->name, shape ? shape : "?");
        int64_t shown = 0;
        if (ir_dtype_is_float(t.dtype)) {
            double sum = 0, mn = INFINITY, mx = -INFINITY;
            const float *f = t.dtype == IR_F32 ? t.data : NULL;   /* the usual case, */
            for (int64_t k = 0; k < n; k++) {                     /* without a call each */
                double v = f ? (double)f[k] : rt_tensor_get(&t, k);
                sum += v;
                mn = v < mn ? v : mn;
                mx = v > mx ? v : mx;
            }
            len += fprintf(out, "min %.6g  max %.6g  mean %.6g  first [", mn, mx, sum / (double)n);
            for (; shown < n && shown < 4 && (shown == 0 || len < 104); shown++)
                len += fprintf(out, "%s%.6g", shown ? ", " : "", rt_tensor_get(&t, shown));
        } else {
            /* integers print exactly (339271727, not 3.39272e+08) */
            double sum = 0;
            int64_t mn = INT64_MAX, mx = INT64_MIN;
            for (int64_t k = 0; k < n; k++) {
                int64_t v = rt_tensor_get_int(&t, k);
                sum += (double)v;
                mn = v < mn ? v : mn;
                mx = v > mx ? v : mx;
            }
            len += fprintf(out, "min %lld  max %lld  mean %.6g  first [", (long long)mn,
                           (long long)mx, sum / (double)n);
            for (; shown < n && shown < 4 && (shown == 0 || len < 104); shown++)
                len += fprintf(out, "%s%lld", shown ? ", " : "",
                               (long long)rt_tensor_get_int(&t, shown));
        }
        fprintf(out, "%s]\n", n > shown ? ", ..." : "");
        free(shape);
    }
}

void rt_run_free(rt_run *r)
{
    if (!r)
        return;
    for (int i = 0; i < r->nbufs; i++) {
        if (r->in_arena && r->in_arena[i])
            free(r->bufs[i]);   /* a view: the arena owns the data */
        else
            rt_tensor_free(r->bufs[i]);
    }
    free(r->bufs);
    rt_zfree(r->arena, r->arena_bytes);
    if (r->spread)
        rt_zfree(r->spread, r->spread_bytes);
    free(r->spread_off);
    free(r->in_arena);
    free(r->first_use);
    free(r->call_ns);
    free(r);
}
