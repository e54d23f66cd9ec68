/* runtime/exec.c — the graph executor: buffers, and the calls in graph order
 * (runtime/sched.c runs them on several devices). */
#include "runtime/exec.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "codegen/codegen.h"
#include "ir/interp.h"
#include "runtime/npy.h"
#include "runtime/random.h"

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

static bool same_shape(const rt_tensor *t, ir_dtype dt, int ndim, const int64_t *shape)
{
    if (t->dtype != dt || t->ndim != ndim)
        return false;
    for (int i = 0; i < ndim; i++)
        if (t->shape[i] != shape[i])
            return false;
    return true;
}

/* Reads `path` into a new tensor that must have exactly the declared type. */
static rt_tensor *load_checked(const char *what, const char *name, const char *path,
                               const rt_iface_buf *f, diag *d)
{
    char err[512];
    rt_tensor *t = rt_npy_read(path, err, sizeof err);
    if (!t) {
        diag_error(d, diag_noloc(), "%s", err);
        return NULL;
    }
    if (!same_shape(t, f->dtype, f->ndim, f->shape)) {
        char *want = rt_shape_str(f->dtype, f->ndim, f->shape);
        char *got = rt_shape_str(t->dtype, t->ndim, t->shape);
        diag_error(d, diag_noloc(), "%s %s: %s is %s but the program declares %s",
                   what, name, path, got, want);
        free(want);
        free(got);
        rt_tensor_free(t);
        return NULL;
    }
    return t;
}

static char *path_join(const char *dir, const char *name, const char *ext)
{
    size_t n = strlen(dir) + strlen(name) + strlen(ext) + 2;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s/%s%s", dir, name, ext);
    return p;
}

/* Every NAME.npy in the weights directory must be a parameter: a stray file
 * usually means a renamed layer, and silently ignoring it would hide that. */
static bool check_extra_weights(const rt_run *r, const char *dir, diag *d)
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
        const rt_iface_buf *f = name ? iface_find(r->iface, name) : NULL;
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

/* The memory plan's arena, and a view into it for every placed temp. */
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
    size_t alloc = (r->arena_bytes + 63) / 64 * 64;
    r->arena = aligned_alloc(64, alloc ? alloc : 64);
    r->in_arena = calloc((size_t)r->nbufs + 1, sizeof *r->in_arena);
    r->first_use = calloc((size_t)r->nbufs + 1, sizeof *r->first_use);
    int *last = calloc((size_t)r->nbufs + 1, sizeof *last);
    if (!r->arena || !r->in_arena || !r->first_use || !last) {
        free(last);
        diag_error(d, diag_noloc(), "out of memory allocating the %zu-byte activation arena",
                   r->arena_bytes);
        return false;
    }
    memset(r->arena, 0, alloc ? alloc : 64);
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

rt_run *rt_run_new(const ir_module *m, const rt_iface *iface,
                   const rt_run_options *o, diag *d)
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
    int errors = d->nerrors;

    for (int i = 0; i < o->ninputs; i++) {
        const rt_iface_buf *f = iface_find(iface, o->inputs[i].name);
        if (!f || f->role != IR_BUF_INPUT)
            diag_error(d, diag_noloc(), "--input %s=%s: the program has no input named '%s'",
                       o->inputs[i].name, o->inputs[i].path, o->inputs[i].name);
    }
    if (o->weights_dir && !check_extra_weights(r, o->weights_dir, d))
        goto fail;
    if (d->nerrors > errors || (!o->own_storage && !place_in_arena(r, d)))
        goto fail;

    for (int i = 0; i < m->graph.nbufs; i++) {
        const ir_buffer *b = m->graph.bufs[i];
        if (r->bufs[i])   /* in the arena */
            continue;
        const rt_iface_buf *f = iface_find(iface, b->name);
        const char *file = NULL;
        char *owned = NULL;
        if (b->role == IR_BUF_INPUT)
            for (int k = 0; k < o->ninputs; k++)
                if (strcmp(o->inputs[k].name, b->name) == 0)
                    file = o->inputs[k].path;
        if (b->role == IR_BUF_PARAM && o->weights_dir) {
            file = owned = path_join(o->weights_dir, b->name, ".npy");
            struct stat st;
            if (file && stat(file, &st) != 0) {
                char *want = rt_shape_str(b->dtype, f ? f->ndim : b->ndim, f ? f->shape : b->shape);
                diag_error(d, diag_noloc(), "--weights %s: no file for parameter %s (%s): %s",
                           o->weights_dir, b->name, want, file);
                free(want);
                free(owned);
                continue;
            }
        }
        if (file) {
            r->bufs[i] = load_checked(b->role == IR_BUF_INPUT ? "input" : "parameter",
                                      b->name, file, f, d);
            free(owned);
            continue;
        }
        r->bufs[i] = new_tensor(b, f, d);
        if (r->bufs[i] && f && f->has_init &&
            (b->role == IR_BUF_INPUT || b->role == IR_BUF_PARAM))
            rt_fill_default(r->bufs[i], b->name, f->init_lo, f->init_hi);
    }
    if (d->nerrors > errors)
        goto fail;
    for (int i = 0; i < m->graph.nbufs; i++)
        if (rt_tensor_numel(r->bufs[i]) != ir_buffer_numel(m->graph.bufs[i])) {
            diag_internal(d, "runtime", "buffer %s has %lld elements but the module says %lld",
                          m->graph.bufs[i]->name, (long long)rt_tensor_numel(r->bufs[i]),
                          (long long)ir_buffer_numel(m->graph.bufs[i]));
            goto fail;
        }
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

bool rt_run_call(rt_run *r, const rt_run_options *o, int c, char *err, size_t errlen)
{
    const ir_graph_call *call = &r->m->graph.calls[c];
    if (r->poison)
        for (int i = 0; i < r->nbufs; i++)
            if (r->in_arena[i] && r->first_use[i] == c)
                memset(r->bufs[i]->data, 0xff, r->bufs[i]->nbytes);
    void *data[call->nargs + 1];
    for (int a = 0; a < call->nargs; a++) {
        int bi = buffer_index(r, call->args[a]);
        if (bi < 0) {
            snprintf(err, errlen, "internal error: runtime: call %d to @%s passes a buffer that "
                     "is not in the graph", c, call->fn->name);
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
        snprintf(err, errlen, "in layer %s: %s", layer ? layer : call->fn->name, why);
    }
    return ok;
}

bool rt_run_execute(rt_run *r, const rt_run_options *o, diag *d)
{
    for (int c = 0; c < r->m->graph.ncalls; c++) {
        char err[1024];
        if (!rt_run_call(r, o, c, err, sizeof err)) {
            if (strncmp(err, "internal error: runtime: ", 25) == 0)
                diag_internal(d, "runtime", "%s", err + 25);
            else
                diag_error(d, diag_noloc(), "%s", err);
            return false;
        }
    }
    return true;
}

static bool make_dir(const char *dir, diag *d)
{
    if (mkdir(dir, 0777) == 0 || errno == EEXIST) {
        struct stat st;
        if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
            return true;
        diag_error(d, diag_noloc(), "--save-outputs %s: not a directory", dir);
        return false;
    }
    diag_error(d, diag_noloc(), "--save-outputs %s: %s", dir, strerror(errno));
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

bool rt_run_save_outputs(const rt_run *r, const char *dir, diag *d)
{
    if (!make_dir(dir, d))
        return false;
    for (int i = 0; i < r->nbufs; i++) {
        const ir_buffer *b = r->m->graph.bufs[i];
        if (b->role != IR_BUF_OUTPUT)
            continue;
        char *path = path_join(dir, b->name, ".npy");
        char err[512];
        rt_tensor t = logical_view(r, i);
        bool ok = path && rt_npy_write(path, &t, err, sizeof err);
        if (!ok)
            diag_error(d, diag_noloc(), "%s", path ? err : "out of memory");
        free(path);
        if (!ok)
            return false;
    }
    return true;
}

void rt_run_print_summary(const rt_run *r, FILE *out)
{
    for (int i = 0; i < r->nbufs; i++) {
        const ir_buffer *b = r->m->graph.bufs[i];
        if (b->role != IR_BUF_OUTPUT)
            continue;
        rt_tensor t = logical_view(r, i);
        int64_t n = rt_tensor_numel(&t);
        double sum = 0, mn = INFINITY, mx = -INFINITY;
        for (int64_t k = 0; k < n; k++) {
            double v = rt_tensor_get(&t, k);
            sum += v;
            mn = v < mn ? v : mn;
            mx = v > mx ? v : mx;
        }
        char *shape = rt_shape_str(t.dtype, t.ndim, t.shape);
        fprintf(out, "%s: %s  min %.6g  max %.6g  mean %.6g  first [", b->name,
                shape ? shape : "?", mn, mx, sum / (double)n);
        for (int64_t k = 0; k < n && k < 4; k++)
            fprintf(out, "%s%.6g", k ? ", " : "", rt_tensor_get(&t, k));
        fprintf(out, "%s]\n", n > 4 ? ", ..." : "");
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
    free(r->arena);
    free(r->in_arena);
    free(r->first_use);
    free(r);
}
