/* passes/prepack.c — prepack: what a kernel computes from its weights alone
 * (packed weight panels, folded batchnorm tables) is computed once, when the
 * program is loaded, instead of on every run.
 *
 * A local buffer L qualifies when its `alloc` sits under nothing but loops
 * with constant bounds, sequences, lets and other allocs, and the first statement
 * of the alloc's body that touches L (its *fill*)
 *   - stores to L and nothing else, and never reads L;
 *   - reads only parameters that every graph call binds to a param or a
 *     const that no call of the run stores to (weights, never
 *     activations);
 *   - uses no variable bound outside it except the enclosing loops';
 * and nothing else in the function stores to L.  Then L's contents depend
 * only on the weights and on the enclosing loops the fill uses (its
 * *dependences*: the output-channel block of a weight panel, say), so
 * every instance of L is one slice of a bigger buffer P[deps..., L's
 * dims] that a load function fills once:
 *
 *   - a new function `@F.load.L(weights..., P)` holds the fill inside
 *     loops over the dependences, storing P[dep - lo..., idx];
 *   - F loses the fill and the alloc, reads P[dep - lo..., idx] for
 *     L[idx] through a new parameter, and loses the weight parameters
 *     nothing reads any more;
 *   - every graph call of F gets its own const P and a load call.
 *
 * P may not be much bigger than the weights it is made from (at most twice
 * their bytes, plus a page): a fill that re-reads the same weights for
 * many loop iterations would otherwise multiply memory. */
#include <stdlib.h>
#include <string.h>

#include "passes/passes.h"

#define MAX_DEPTH 64

/* ---------------------------------------------------------------- rewriting accesses */

/* Loads and stores of `from` become accesses of `to` at prefix ++ the old
 * indices (nprefix 0: a rename). */
typedef struct retarget {
    ir_module *m;
    const ir_buffer *from;
    ir_buffer *to;
    ir_expr **prefix;
    int nprefix;
} retarget;

static ir_expr **prefixed(const retarget *r, ir_expr **args, int nargs)
{
    ir_expr **out = ir_alloc(r->m->arena, sizeof *out * (size_t)(r->nprefix + nargs + 1));
    for (int i = 0; i < r->nprefix; i++)
        out[i] = ir_expr_copy(r->m, r->prefix[i]);
    for (int i = 0; i < nargs; i++)
        out[r->nprefix + i] = args[i];
    return out;
}

static void retarget_expr(const retarget *r, ir_expr *x)
{
    if (!x)
        return;
    for (int i = 0; i < x->nargs; i++)
        retarget_expr(r, x->args[i]);
    retarget_expr(r, x->a);
    retarget_expr(r, x->b);
    retarget_expr(r, x->c);
    if (x->kind == IR_LOAD && x->buf == r->from) {
        x->buf = r->to;
        x->args = prefixed(r, x->args, x->nargs);
        x->nargs += r->nprefix;
    }
}

static void retarget_stmt(const retarget *r, ir_stmt *s)
{
    if (!s)
        return;
    for (int i = 0; i < s->nargs; i++)
        retarget_expr(r, s->args[i]);
    retarget_expr(r, s->value);
    retarget_expr(r, s->cond);
    retarget_expr(r, s->lo);
    retarget_expr(r, s->hi);
    for (int i = 0; i < s->niters; i++)
        retarget_expr(r, s->iters[i].binding);
    if (s->kind == IR_S_STORE && s->buf == r->from) {
        s->buf = r->to;
        s->args = prefixed(r, s->args, s->nargs);
        s->nargs += r->nprefix;
    }
    if (s->kind == IR_S_BLOCK) {
        for (int i = 0; i < s->nreads; i++)
            if (s->reads[i] == r->from)
                s->reads[i] = r->to;
        for (int i = 0; i < s->nwrites; i++)
            if (s->writes[i] == r->from)
                s->writes[i] = r->to;
    }
    for (int i = 0; i < s->nbody; i++)
        retarget_stmt(r, s->body[i]);
    retarget_stmt(r, s->init);
    retarget_stmt(r, s->orelse);
}

/* ---------------------------------------------------------------- what a statement touches */

typedef struct touch {
    const ir_buffer *buf;       /* the local */
    bool loads_buf, stores_buf, stores_other, unsupported;
    const ir_buffer **loads;    /* other buffers loaded */
    int nloads;
    const ir_var **bound;       /* variables bound inside */
    int nbound;
    const ir_var **used;        /* variables used */
    int nused;
} touch;

static void add_ptr(const void ***arr, int *n, const void *p)
{
    for (int i = 0; i < *n; i++)
        if ((*arr)[i] == p)
            return;
    const void **a = realloc(*arr, sizeof *a * (size_t)(*n + 1));
    if (!a) {
        ir_out_of_memory();
    }
    a[(*n)++] = p;
    *arr = a;
}

static bool touch_expr(const ir_expr *x, void *p)
{
    touch *t = p;
    if (x->kind == IR_LOAD) {
        if (x->buf == t->buf)
            t->loads_buf = true;
        else
            add_ptr((const void ***)&t->loads, &t->nloads, x->buf);
    }
    if (x->kind == IR_VAR)
        add_ptr((const void ***)&t->used, &t->nused, x->var);
    return true;
}

static bool touch_stmt(const ir_stmt *s, void *p)
{
    touch *t = p;
    switch (s->kind) {
    case IR_S_STORE:
        if (s->buf == t->buf)
            t->stores_buf = true;
        else
            t->stores_other = true;
        break;
    case IR_S_FOR:
    case IR_S_LET:
        add_ptr((const void ***)&t->bound, &t->nbound, s->var);
        break;
    case IR_S_BLOCK:
        for (int i = 0; i < s->niters; i++)
            add_ptr((const void ***)&t->bound, &t->nbound, s->iters[i].var);
        break;
    case IR_S_ALLOC:
    case IR_S_EVAL:
    case IR_S_PREFETCH:   /* a hint about the run's memory: not load-time work */
        t->unsupported = true;
        break;
    default:
        break;
    }
    return true;
}

static void touch_of(const ir_stmt *s, const ir_buffer *buf, touch *t)
{
    *t = (touch){.buf = buf};
    ir_stmt_walk(s, touch_stmt, touch_expr, t);
}

static void touch_free(touch *t)
{
    free(t->loads);
    free(t->bound);
    free(t->used);
}

static bool touches(const ir_stmt *s, const ir_buffer *buf)
{
    touch t;
    touch_of(s, buf, &t);
    bool r = t.loads_buf || t.stores_buf;
    touch_free(&t);
    return r;
}

/* ---------------------------------------------------------------- candidates */

/* One qualifying local: its alloc, the statement list slot of its fill, and
 * the enclosing loops the fill depends on. */
typedef struct candidate {
    ir_stmt **alloc_slot;       /* where the alloc hangs */
    ir_stmt *fill;
    ir_stmt **fill_slot;
    const ir_stmt *deps[MAX_DEPTH];
    int ndeps;
    const ir_buffer **weights;  /* F's parameters the fill reads (malloc'ed) */
    int nweights;
} candidate;

typedef struct func_ctx {
    ir_module *m;
    ir_func *f;
    const bool *constant;       /* [f->nparams]: bound to params/consts in every call */
    const ir_stmt *loops[MAX_DEPTH];
    int nloops;
} func_ctx;

static int param_index(const ir_func *f, const ir_buffer *b)
{
    for (int i = 0; i < f->nparams; i++)
        if (f->params[i] == b)
            return i;
    return -1;
}

/* The slot of the first statement under an alloc that touches its buffer:
 * through nested allocs and into the first sequence. */
static ir_stmt **first_touch(ir_stmt **slot, const ir_buffer *buf)
{
    ir_stmt *s = *slot;
    if (s && s->kind == IR_S_ALLOC)
        return first_touch(&s->body[0], buf);
    if (s && s->kind == IR_S_SEQ) {
        for (int i = 0; i < s->nbody; i++)
            if (touches(s->body[i], buf))
                return &s->body[i];
        return NULL;
    }
    return s && touches(s, buf) ? slot : NULL;
}

/* Does anything in s but `skip` store to buf? */
static bool stored_elsewhere(const ir_stmt *s, const ir_stmt *skip, const ir_buffer *buf)
{
    if (!s || s == skip)
        return false;
    if (s->kind == IR_S_STORE)
        return s->buf == buf;
    for (int i = 0; i < s->nbody; i++)
        if (stored_elsewhere(s->body[i], skip, buf))
            return true;
    return stored_elsewhere(s->init, skip, buf) || stored_elsewhere(s->orelse, skip, buf);
}

static int64_t weight_bytes(const candidate *c)
{
    int64_t n = 0;
    for (int i = 0; i < c->nweights; i++) {
        int64_t b = ir_buffer_bytes(c->weights[i]);
        if (b < 0 || n > INT64_MAX - b)
            return -1;
        n += b;
    }
    return n;
}

/* P's shape: the dependences' extents, then L's. */
static int packed_shape(const candidate *c, const ir_buffer *l, int64_t *shape)
{
    int n = 0;
    for (int i = 0; i < c->ndeps; i++)
        shape[n++] = c->deps[i]->hi->ival - c->deps[i]->lo->ival;
    for (int i = 0; i < l->ndim; i++)
        shape[n++] = l->shape[i];
    return n;
}

static bool small_enough(const candidate *c, const ir_buffer *l)
{
    int64_t wb = weight_bytes(c), pb = ir_buffer_bytes(l);
    if (wb < 0 || pb < 0)
        return false;
    for (int i = 0; i < c->ndeps; i++) {
        int64_t e = c->deps[i]->hi->ival - c->deps[i]->lo->ival;
        if (e > 0 && pb > INT64_MAX / e)
            return false;
        pb *= e;
    }
    return pb <= 2 * wb + 4096;
}

static bool qualifies(func_ctx *fc, ir_stmt **alloc_slot, candidate *c)
{
    ir_stmt *a = *alloc_slot;
    const ir_buffer *l = a->buf;
    ir_stmt **fill_slot = first_touch(&a->body[0], l);
    if (!fill_slot)
        return false;
    touch t;
    touch_of(*fill_slot, l, &t);
    bool ok = t.stores_buf && !t.loads_buf && !t.stores_other && !t.unsupported &&
              !stored_elsewhere(fc->f->body, *fill_slot, l);
    *c = (candidate){.alloc_slot = alloc_slot, .fill = *fill_slot, .fill_slot = fill_slot};
    for (int i = 0; ok && i < t.nloads; i++) {
        int p = param_index(fc->f, t.loads[i]);
        ok = p >= 0 && fc->constant[p];
        if (ok)
            add_ptr((const void ***)&c->weights, &c->nweights, t.loads[i]);
    }
    /* Free variables: only enclosing loops, which become dependences. */
    for (int i = 0; ok && i < t.nused; i++) {
        bool bound = false;
        for (int k = 0; k < t.nbound && !bound; k++)
            bound = t.bound[k] == t.used[i];
        if (bound)
            continue;
        int k = 0;
        while (k < fc->nloops && fc->loops[k]->var != t.used[i])
            k++;
        ok = k < fc->nloops;
    }
    /* dependences in loop order */
    for (int k = 0; ok && k < fc->nloops; k++)
        for (int i = 0; i < t.nused; i++)
            if (t.used[i] == fc->loops[k]->var) {
                c->deps[c->ndeps++] = fc->loops[k];
                break;
            }
    touch_free(&t);
    ok = ok && c->nweights > 0 && l->ndim + c->ndeps <= MAX_DEPTH && small_enough(c, l);
    if (!ok) {
        free(c->weights);
        c->weights = NULL;
    }
    return ok;
}

/* The first qualifying alloc under *slot, reached through sequences, allocs,
 * lets and loops with constant bounds only. */
static bool find(func_ctx *fc, ir_stmt **slot, candidate *c)
{
    ir_stmt *s = *slot;
    if (!s)
        return false;
    switch (s->kind) {
    case IR_S_SEQ:
        for (int i = 0; i < s->nbody; i++)
            if (find(fc, &s->body[i], c))
                return true;
        return false;
    case IR_S_ALLOC:
        return qualifies(fc, slot, c) || find(fc, &s->body[0], c);
    case IR_S_LET:
        /* (a tile's loop bounds; a fill that used the variable would not
         * qualify: it is bound outside the fill but by no loop) */
        return find(fc, &s->body[0], c);
    case IR_S_FOR: {
        if (s->lo->kind != IR_INT || s->hi->kind != IR_INT || s->hi->ival <= s->lo->ival ||
            fc->nloops == MAX_DEPTH)
            return false;
        fc->loops[fc->nloops++] = s;
        bool found = find(fc, &s->body[0], c);
        fc->nloops--;
        return found;
    }
    default:
        return false;
    }
}

/* ---------------------------------------------------------------- the rewrite */

static const char *unique_func_name(ir_module *m, const char *base)
{
    const char *name = base;
    for (int k = 2; ir_module_find_func(m, name); k++)
        name = ir_sprintf(m->arena, "%s%d", base, k);
    return name;
}

static const char *unique_buffer_name(ir_module *m, const char *base)
{
    const char *name = base;
    for (int k = 2; ir_graph_find_buffer(m, name); k++)
        name = ir_sprintf(m->arena, "%s%d", base, k);
    return name;
}

static bool param_named(const ir_func *f, const char *name)
{
    for (int i = 0; i < f->nparams; i++)
        if (strcmp(f->params[i]->name, name) == 0)
            return true;
    return false;
}

/* A name for a new parameter of f: base, or base2, base3, ... */
static const char *fresh_param(ir_module *m, const ir_func *f, const char *base)
{
    const char *name = base;
    for (int k = 2; param_named(f, name); k++)
        name = ir_sprintf(m->arena, "%s%d", base, k);
    return name;
}

/* The load function: for deps { fill, storing P[dep - lo..., idx] }. */
static ir_func *make_load_func(ir_module *m, const ir_func *f, const candidate *c,
                               const ir_buffer *l, ir_buffer **pg)
{
    ir_func *g = ir_func_new(m, unique_func_name(m, ir_sprintf(m->arena, "%s.load.%s",
                                                                f->name, l->name)));
    const char *keys[] = {"layer", "loc"};
    for (int i = 0; i < 2; i++)
        if (ir_func_attr(f, keys[i]))
            ir_func_set_attr(m, g, keys[i], ir_func_attr(f, keys[i]));
    ir_func_set_attr(m, g, "op", "prepack");
    ir_stmt *body = ir_stmt_copy(m, c->fill);
    for (int i = 0; i < c->nweights; i++) {
        const ir_buffer *w = c->weights[i];
        ir_buffer *gw = ir_buffer_new(m, w->name, w->dtype, w->ndim, w->shape, IR_BUF_ARG);
        ir_func_add_param(m, g, gw);
        retarget_stmt(&(retarget){m, w, gw, NULL, 0}, body);
    }
    int64_t shape[2 * MAX_DEPTH];
    int ndim = packed_shape(c, l, shape);
    *pg = ir_buffer_new(m, fresh_param(m, g, l->name), l->dtype, ndim, shape, IR_BUF_ARG);
    ir_func_add_param(m, g, *pg);
    /* fresh loop variables for the dependences */
    ir_var *from[MAX_DEPTH];
    ir_expr *to[MAX_DEPTH], *prefix[MAX_DEPTH];
    ir_var *vars[MAX_DEPTH];
    for (int i = 0; i < c->ndeps; i++) {
        const ir_stmt *d = c->deps[i];
        from[i] = d->var;
        vars[i] = ir_var_new(m, d->var->name, d->var->dtype);
        to[i] = ir_varref(m, vars[i]);
        prefix[i] = d->lo->ival ? ir_binary(m, IR_SUB, ir_varref(m, vars[i]), ir_int(m, d->lo->ival))
                                : ir_varref(m, vars[i]);
    }
    body = ir_stmt_subst(m, body, from, to, c->ndeps);
    retarget_stmt(&(retarget){m, l, *pg, prefix, c->ndeps}, body);
    for (int i = c->ndeps - 1; i >= 0; i--) {
        const ir_stmt *d = c->deps[i];
        ir_for_kind k = d->for_kind == IR_FOR_PARALLEL ? IR_FOR_PARALLEL : IR_FOR_SERIAL;
        body = ir_for(m, vars[i], ir_int(m, d->lo->ival), ir_int(m, d->hi->ival), k, body);
    }
    g->body = body;
    return g;
}

static bool loads_buffer(const ir_stmt *s, const ir_buffer *b)
{
    touch t;
    touch_of(s, NULL, &t);
    bool found = false;
    for (int i = 0; i < t.nloads && !found; i++)
        found = t.loads[i] == b;
    touch_free(&t);
    return found;
}

/* Drops F's parameter k and the matching argument of every call. */
static void drop_param(ir_module *m, ir_func *f, int k)
{
    for (int c = 0; c < m->graph.ncalls; c++) {
        ir_graph_call *call = &m->graph.calls[c];
        if (call->fn != f)
            continue;
        memmove(&call->args[k], &call->args[k + 1], sizeof *call->args * (size_t)(call->nargs - k - 1));
        call->nargs--;
    }
    memmove(&f->params[k], &f->params[k + 1], sizeof *f->params * (size_t)(f->nparams - k - 1));
    f->nparams--;
}

static void append_arg(ir_module *m, ir_graph_call *call, ir_buffer *b)
{
    ir_buffer **args = ir_alloc(m->arena, sizeof *args * (size_t)(call->nargs + 1));
    memcpy(args, call->args, sizeof *args * (size_t)call->nargs);
    args[call->nargs++] = b;
    call->args = args;
}

static bool update_blocks(const ir_stmt *s, void *p)
{
    if (s->kind == IR_S_BLOCK)
        pass_update_block_access(p, (ir_stmt *)s);
    return true;
}

static void apply(ir_module *m, ir_func *f, candidate *c)
{
    ir_stmt *a = *c->alloc_slot;
    const ir_buffer *l = a->buf;
    ir_buffer *pg;
    ir_func *g = make_load_func(m, f, c, l, &pg);

    /* F: no fill, no alloc; L[idx] reads P[dep - lo..., idx]. */
    *c->fill_slot = ir_seq_new(m);
    *c->alloc_slot = a->body[0];
    ir_buffer *pf = ir_buffer_new(m, fresh_param(m, f, l->name), l->dtype, pg->ndim, pg->shape,
                                  IR_BUF_ARG);
    ir_func_add_param(m, f, pf);
    ir_expr *prefix[MAX_DEPTH];
    for (int i = 0; i < c->ndeps; i++) {
        const ir_stmt *d = c->deps[i];
        prefix[i] = d->lo->ival ? ir_binary(m, IR_SUB, ir_varref(m, d->var), ir_int(m, d->lo->ival))
                                : ir_varref(m, d->var);
    }
    retarget_stmt(&(retarget){m, l, pf, prefix, c->ndeps}, f->body);
    ir_stmt_walk(f->body, update_blocks, NULL, m);

    /* the graph: a const and a load call per call of F */
    int wparam[MAX_DEPTH];
    for (int i = 0; i < c->nweights; i++)
        wparam[i] = param_index(f, c->weights[i]);
    for (int k = 0; k < m->graph.ncalls; k++) {
        ir_graph_call *call = &m->graph.calls[k];
        if (call->fn != f)
            continue;
        ir_buffer *args[MAX_DEPTH + 1];
        for (int i = 0; i < c->nweights; i++)
            args[i] = call->args[wparam[i]];
        const char *name = unique_buffer_name(m, ir_sprintf(m->arena, "%s.%s", args[0]->name,
                                                               l->name));
        ir_buffer *p = ir_buffer_new(m, name, l->dtype, pg->ndim, pg->shape, IR_BUF_CONST);
        ir_graph_add_buffer(m, p);
        args[c->nweights] = p;
        ir_graph_add_load(m, g, args, c->nweights + 1);
        append_arg(m, call, p);
    }
    /* weights that only the fill read */
    for (int i = f->nparams - 1; i >= 0; i--)
        for (int w = 0; w < c->nweights; w++)
            if (f->params[i] == c->weights[w] && !loads_buffer(f->body, f->params[i])) {
                drop_param(m, f, i);
                break;
            }
}

/* Does some call of the run store to graph buffer b? */
static bool stored_by_run(const ir_module *m, const ir_buffer *b)
{
    for (int c = 0; c < m->graph.ncalls; c++) {
        const ir_graph_call *call = &m->graph.calls[c];
        for (int j = 0; j < call->nargs && j < call->fn->nparams; j++)
            if (call->args[j] == b && ir_stmt_stores_to(call->fn->body, call->fn->params[j]))
                return true;
    }
    return false;
}

/* Which of F's parameters every call binds to a param or a const that no
 * call of the run stores to (a weight); false when nothing calls F. */
static bool constant_params(const ir_module *m, const ir_func *f, bool *constant)
{
    int ncalls = 0;
    for (int j = 0; j < f->nparams; j++)
        constant[j] = true;
    for (int k = 0; k < m->graph.ncalls; k++) {
        const ir_graph_call *call = &m->graph.calls[k];
        if (call->fn != f)
            continue;
        ncalls++;
        for (int j = 0; j < call->nargs && j < f->nparams; j++)
            constant[j] &= (call->args[j]->role == IR_BUF_PARAM ||
                            call->args[j]->role == IR_BUF_CONST) &&
                           !stored_by_run(m, call->args[j]);
    }
    return ncalls > 0;
}

/* One local at a time: each rewrite removes an alloc and moves parameters. */
static void prepack_func(ir_module *m, ir_func *f)
{
    for (;;) {
        bool *constant = calloc((size_t)f->nparams + 1, sizeof *constant);
        if (!constant) {
            ir_out_of_memory();
        }
        func_ctx fc = {m, f, constant, {0}, 0};
        candidate c;
        bool found = constant_params(m, f, constant) && find(&fc, &f->body, &c);
        if (found && c.nweights <= MAX_DEPTH)
            apply(m, f, &c);
        if (found)
            free(c.weights);
        free(constant);
        if (!found || c.nweights > MAX_DEPTH)
            return;
    }
}

/* ---------------------------------------------------------------- calls of weights alone */

/* ir_stmt_walk's visitor: clears *copies at a store of anything but a
 * load (arithmetic, whose MACs and FLOPs the profile counts in a run). */
static bool copy_store(const ir_stmt *s, void *p)
{
    if (s->kind == IR_S_STORE && (!s->value || s->value->kind != IR_LOAD))
        *(bool *)p = false;
    return true;
}

/* Whether graph call ci copies weights alone: its kernel stores nothing
 * but loads (a copy, a transpose, a gather), it reads no graph buffer but
 * params and consts that no call of the run stores to, and stores to at
 * least one temporary and to nothing but temporaries that no other call
 * stores to (as a concatenation's part would be). */
static bool weights_alone(const ir_module *m, int ci)
{
    const ir_graph_call *c = &m->graph.calls[ci];
    bool copies = true, stores = false;
    ir_stmt_walk(c->fn->body, copy_store, NULL, &copies);
    if (!copies)
        return false;
    for (int j = 0; j < c->nargs && j < c->fn->nparams; j++) {
        const ir_buffer *b = c->args[j];
        if (!ir_stmt_stores_to(c->fn->body, c->fn->params[j])) {
            if ((b->role != IR_BUF_PARAM && b->role != IR_BUF_CONST) || stored_by_run(m, b))
                return false;
            continue;
        }
        if (b->role != IR_BUF_TEMP)
            return false;
        for (int k = 0; k < m->graph.ncalls; k++)
            for (int i = 0; k != ci && i < m->graph.calls[k].nargs && i < m->graph.calls[k].fn->nparams; i++)
                if (m->graph.calls[k].args[i] == b &&
                    ir_stmt_stores_to(m->graph.calls[k].fn->body, m->graph.calls[k].fn->params[i]))
                    return false;
        stores = true;
    }
    return stores;
}

/* A graph call that copies weights alone (weights_alone) stores the same
 * values on every run: it becomes a load call, after every other, and the
 * temporaries it stores become consts (the profile still counts the
 * weights, as the params of the layers that read the consts).  The ONNX importer copies
 * an initializer that several nodes read into a temporary by a kernel of
 * its own (a `constant` def: PyTorch's tied weights, an RNN's weights read
 * by every unrolled step), which ran on every run: a CRNN's LSTM weights
 * 1.0 of its 8.4 ms at one thread, a 4 MB weight read by two matmuls 317
 * of 977 us (bench/results/newmodels_s27.txt). */
static void hoist_weight_calls(ir_module *m)
{
    /* one at a time, in order: a call that reads what an earlier one
     * computed from weights follows it */
    for (int ci = 0; ci < m->graph.ncalls;) {
        if (!weights_alone(m, ci)) {
            ci++;
            continue;
        }
        ir_graph_call c = m->graph.calls[ci];
        for (int j = 0; j < c.nargs && j < c.fn->nparams; j++)
            if (ir_stmt_stores_to(c.fn->body, c.fn->params[j]))
                c.args[j]->role = IR_BUF_CONST;
        ir_graph_add_load(m, c.fn, c.args, c.nargs);
        memmove(&m->graph.calls[ci], &m->graph.calls[ci + 1],
                sizeof *m->graph.calls * (size_t)(m->graph.ncalls - ci - 1));
        m->graph.ncalls--;
    }
}

bool pass_prepack(ir_module *m, diag *d)
{
    (void)d;
    /* the weight copies first: what a kernel reads from the consts they
     * become is packed like any other weight */
    hoist_weight_calls(m);
    int nfuncs = m->nfuncs;   /* the load functions come after */
    for (int i = 0; i < nfuncs; i++)
        prepack_func(m, m->funcs[i]);
    return true;
}
