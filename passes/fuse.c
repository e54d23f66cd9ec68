/* passes/fuse.c — fuse: elementwise layers computed inside the layer
 * before them (conv -> batchnorm -> relu, concat -> batchnorm -> relu), so
 * their inputs never go to memory.
 *
 * A graph call C is fused into the call P that writes its input T when
 *   - C's kernel is one block with only spatial iteration variables that
 *     stores its output at exactly them and reads T only there, T and the
 *     output having the shape of that block's domain;
 *   - T is a temporary that P writes and nothing but C reads;
 *   - P's kernel writes T in blocks of spatial iteration variables only
 *     and never reads it, either
 *     (a) in the write-back of a tile (a store `T[e] = tile[...]` of a
 *         local buffer, which cache_write makes: the automatic schedule of
 *         every contraction has one), or of an expression of one element
 *         of it (`T[e] = tile[...] + bias[f]`, an epilogue the schedule
 *         inlined into the write-back); or
 *     (b) in any other stores (a concatenation, an elementwise layer).
 * In case (a) P's kernel updates the tile in place with C's computation,
 * in a loop nest of its own right before the write-back (so the profile
 * still attributes C's FLOPs and parameters to C: the function's
 * `members`, `member_ops` and `block.NAME` attributes), and the write-back
 * stores C's output.  An epilogue of the write-back first moves into a
 * nest of its own before the update (tile = tile + bias, then tile =
 * C(tile)), so the write-back is a plain copy after the first link of a
 * chain.  In case (b) each store `T[e] = v` becomes `Y[e] = C(v)`.  C's
 * call goes.  Chains fuse one link at a time.  A C whose output narrows T's
 * values to a small integer by a conversion that cannot fail (a
 * QuantizeLinear's clamped rounding of f32 to u8: ir/narrow.h) fuses as in
 * case (b) in both cases: its value cannot live in P's tile, so the
 * write-back computes it, `Y[e] = C(tile[...])` (except in a vectorized
 * write-back that stores its lanes apart and will go on doing so after
 * the layout pass, which it would slow down more than a kernel of its own
 * takes).
 *
 * Then a concatenation goes when the layers before it can write its
 * parts of its output in place (concat_in_place): every call passing one
 * of its inputs passes the output instead, at the input's part.  One
 * whose first parts others concatenate (a dense block's: prefix_concat)
 * is checked before the chain fusions and, if it can go, kept from them
 * with those prefixes; they go with it, their readers reading its first
 * part.  A batchnorm that joined no producer is then folded to a
 * multiply-add with tables (fold_own_batchnorm).
 *
 * Then a call goes whose results no call reads, when its kernel is
 * elementwise and cannot stop with an error (results_unread).
 *
 * P and C may see T with different shapes (merged dimensions): map_index
 * maps the index P stores at to C's iteration point, and C's output and
 * the inputs C reads only at its own index take P's shape of T. */
#include <stdio.h>
#include <string.h>

#include "passes/passes.h"
#include "passes/ptrset.h"
#include "ir/arith.h"
#include "ir/narrow.h"

/* ---------------------------------------------------------------- the consumer */

typedef struct blocks_ctx {
    const ir_stmt *b;
    int n;
} blocks_ctx;

static bool count_blocks(const ir_stmt *s, void *p)
{
    blocks_ctx *c = p;
    if (s->kind == IR_S_BLOCK) {
        c->b = s;
        c->n++;
    }
    return true;
}

typedef struct load_ctx {
    const ir_buffer *t;
    const ir_stmt *b;
    bool ok;
    int n;
} load_ctx;

static bool check_load(const ir_expr *x, void *p)
{
    load_ctx *c = p;
    if (x->kind == IR_LOAD && x->buf == c->t) {
        c->n++;
        c->ok &= ir_block_own_index(c->b, x->args, x->nargs);
    }
    return true;
}

/* Whether buffer t has the shape of block b's iteration domain (C reads
 * and writes every element of it, each once). */
static bool domain_shape(const ir_stmt *b, const ir_buffer *t)
{
    if (t->ndim != b->niters)
        return false;
    for (int d = 0; d < t->ndim; d++)
        if (t->shape[d] != b->iters[d].extent)
            return false;
    return true;
}

/* The block of an elementwise kernel: one block of spatial iteration
 * variables storing its output at exactly them, the output having the
 * shape of its domain; NULL otherwise. */
static const ir_stmt *elementwise_block(const ir_func *f)
{
    blocks_ctx bc = {NULL, 0};
    ir_stmt_walk(f->body, count_blocks, NULL, &bc);
    const ir_stmt *b = bc.b;
    if (bc.n != 1 || b->init || b->nbody < 1 || !b->body[0] || b->body[0]->kind != IR_S_STORE)
        return NULL;
    const ir_stmt *st = b->body[0];
    for (int i = 0; i < b->niters; i++)
        if (b->iters[i].kind != IR_ITER_SPATIAL)
            return NULL;
    if (!ir_block_own_index(b, st->args, st->nargs) || st->buf->role != IR_BUF_ARG ||
        !domain_shape(b, st->buf))
        return NULL;
    return b;
}

/* ir_expr_walk callback: sets widens_ctx.found at a conversion of a load
 * of widens_ctx.t into a floating-point type. */
typedef struct widens_ctx {
    const ir_buffer *t;
    bool found;
} widens_ctx;

static bool finds_widening(const ir_expr *x, void *p)
{
    widens_ctx *c = p;
    if (x->kind == IR_CAST && ir_dtype_is_float(x->dtype) && x->a && x->a->kind == IR_LOAD &&
        x->a->buf == c->t)
        c->found = true;
    return true;
}

/* The elementwise block of C's kernel and the first of its input
 * parameters from index `from` on that it reads only at its own indices,
 * or NULL. */
static const ir_stmt *elementwise(const ir_func *f, int from, int *tparam)
{
    const ir_stmt *b = elementwise_block(f);
    if (!b)
        return NULL;
    const ir_stmt *st = b->body[0];
    for (int p = from; p < f->nparams; p++) {
        /* C's result has T's element type, or narrows it to a small
         * integer by a clamped conversion that cannot fail (a quantize of
         * f32 into u8: ir_narrowing_store), which P's stores of T compute
         * in place (fuse_into_producer) */
        if (f->params[p] == st->buf || !domain_shape(b, f->params[p]) ||
            (f->params[p]->dtype != st->buf->dtype && !ir_narrowing_store(st)))
            continue;
        /* nor does a C that widens integer T to float (a dequantize, with
         * the quantize after it: its value in P's store would convert the
         * rounded f32 to the small integer and back inside one expression,
         * which the vectorizer leaves to scalar code) */
        widens_ctx wc = {f->params[p], false};
        if (!ir_dtype_is_float(f->params[p]->dtype))
            ir_expr_walk(st->value, finds_widening, &wc);
        if (wc.found)
            continue;
        load_ctx lc = {f->params[p], b, true, 0};
        ir_expr_walk(st->value, check_load, &lc);
        if (lc.n > 0 && lc.ok) {
            *tparam = p;
            return b;
        }
    }
    return NULL;
}

/* ---------------------------------------------------------------- the producer's write-back */

/* The stores to t: one write-back, or one per part of a partitioned loop
 * (each a copy of the first). */
#define WB_MAX 8
typedef struct wb_ctx {
    const ir_buffer *t;
    ir_stmt **store_slot[WB_MAX];   /* the stores to t */
    ir_stmt **nest_slot[WB_MAX];    /* the statement holding each one's loop nest, in a SEQ */
    const ir_stmt *block[WB_MAX];
    const ir_var *vec[WB_MAX];      /* the vectorized loop around each one, or NULL */
    ir_stmt **cand_nest;            /* while walking: outermost loop below the last SEQ */
    int nstores, nloads;
    const ir_stmt *cur_block;
    const ir_var *cur_vec;
} wb_ctx;

static void find_wb(wb_ctx *w, ir_stmt **slot, bool in_seq)
{
    ir_stmt *s = *slot;
    if (!s)
        return;
    ir_stmt **saved_nest = w->cand_nest;
    const ir_stmt *saved_block = w->cur_block;
    const ir_var *saved_vec = w->cur_vec;
    if (in_seq && s->kind == IR_S_FOR)
        w->cand_nest = slot;
    if (s->kind == IR_S_FOR && s->for_kind == IR_FOR_VECTORIZED)
        w->cur_vec = s->var;
    if (s->kind == IR_S_BLOCK)
        w->cur_block = s;
    if (s->kind == IR_S_STORE && s->buf == w->t) {
        if (w->nstores < WB_MAX) {
            w->store_slot[w->nstores] = slot;
            w->nest_slot[w->nstores] = w->cand_nest;
            w->block[w->nstores] = w->cur_block;
            w->vec[w->nstores] = w->cur_vec;
        }
        w->nstores++;
    }
    bool l = ir_expr_loads(s->value, w->t) || ir_expr_loads(s->cond, w->t);
    for (int i = 0; i < s->nargs; i++)
        l |= ir_expr_loads(s->args[i], w->t);
    w->nloads += l;
    for (int i = 0; i < s->nbody; i++)
        find_wb(w, &s->body[i], s->kind == IR_S_SEQ);
    find_wb(w, &s->init, false);
    find_wb(w, &s->orelse, false);
    w->cand_nest = saved_nest;
    w->cur_block = saved_block;
    w->cur_vec = saved_vec;
}

/* The write-back's value is an expression of one element of the tile:
 * the tile itself, or the epilogue the schedule inlined into it (a bias,
 * `tile[...] + bias[f]`).  Returns that one load of a local buffer, or
 * NULL when the value reads no local buffer or more than one element of
 * local buffers (updating the tile in place is then not a map of one
 * element to itself). */
typedef struct tile_ctx {
    const ir_expr *load;
    int n;
} tile_ctx;

static bool count_local_loads(const ir_expr *x, void *p)
{
    tile_ctx *c = p;
    if (x->kind == IR_LOAD && x->buf->role == IR_BUF_LOCAL) {
        c->load = x;
        c->n++;
    }
    return true;
}

static ir_expr *tile_load(const ir_expr *v)
{
    tile_ctx c = {NULL, 0};
    ir_expr_walk(v, count_local_loads, &c);
    return c.n == 1 ? (ir_expr *)c.load : NULL;
}

/* ---------------------------------------------------------------- inference batchnorm */

/* A load of a 1-D buffer (a per-channel table). */
static const ir_expr *channel_load(const ir_expr *x)
{
    return x && x->kind == IR_LOAD && x->nargs == 1 && x->buf->ndim == 1 ? x : NULL;
}

/* g = (t - m[e]) / sqrt(v[e] + eps) * w[e] + b[e], inference batchnorm on
 * t, with m, v, w, b loads of the same index e: *m.. set, and t returned. */
static const ir_expr *match_batchnorm(const ir_expr *g, const ir_expr **m, const ir_expr **v,
                                      const ir_expr **w, const ir_expr **b, const ir_expr **eps)
{
    if (!g || g->kind != IR_ADD || !(*b = channel_load(g->b)))
        return NULL;
    const ir_expr *mul = g->a;
    if (mul->kind != IR_MUL || !(*w = channel_load(mul->b)))
        return NULL;
    const ir_expr *div = mul->a;
    if (div->kind != IR_DIV || div->a->kind != IR_SUB || !(*m = channel_load(div->a->b)))
        return NULL;
    const ir_expr *sq = div->b;
    if (sq->kind != IR_CALL || sq->fn != IR_FN_SQRT || sq->nargs != 1 || sq->args[0]->kind != IR_ADD ||
        !(*v = channel_load(sq->args[0]->a)) || sq->args[0]->b->kind != IR_FLOAT)
        return NULL;
    *eps = sq->args[0]->b;
    const ir_expr *e = (*m)->args[0];
    if (!ir_expr_equal((*v)->args[0], e) || !ir_expr_equal((*w)->args[0], e) ||
        !ir_expr_equal((*b)->args[0], e) || (*m)->buf->shape[0] != (*v)->buf->shape[0] ||
        (*m)->buf->shape[0] != (*w)->buf->shape[0] || (*m)->buf->shape[0] != (*b)->buf->shape[0] ||
        (*m)->dtype != div->a->a->dtype)
        return NULL;
    return div->a->a;
}

/* Inference batchnorm folded to one multiply-add per element: a prologue
 * block over the channels computes scale = w / sqrt(v + eps) and shift =
 * b - m * scale into local tables once per call (named after the layer,
 * so the profile charges them to it), and g becomes t * scale[e] +
 * shift[e].  The tables are allocated around the whole function body.
 * The first call (*tables NULL) makes the tables and the prologue; later
 * ones (the other write-backs of a partitioned kernel) use them.  Returns
 * the new g, or g itself when it is not a batchnorm. */
static ir_expr *fold_batchnorm(ir_module *m, ir_func *fp, ir_expr *g, const char *bname,
                               const char *clayer, ir_buffer **tables)
{
    const ir_expr *mean, *var, *w, *b, *eps;
    const ir_expr *t = match_batchnorm(g, &mean, &var, &w, &b, &eps);
    if (!t)
        return g;
    int64_t nc = mean->buf->shape[0];
    ir_dtype dt = mean->dtype;
    if (tables[0])
        goto use;
    ir_buffer *scale = tables[0] =
        ir_buffer_new(m, ir_sprintf(m->arena, "%s_scale", bname), dt, 1, &nc, IR_BUF_LOCAL);
    ir_buffer *shift = tables[1] =
        ir_buffer_new(m, ir_sprintf(m->arena, "%s_shift", bname), dt, 1, &nc, IR_BUF_LOCAL);
    scale->scope = shift->scope = IR_SCOPE_STACK;
    /* The prologue: for c: scale[c] = w[c] / sqrt(v[c] + eps), then for c:
     * shift[c] = b[c] - m[c] * (w[c] / sqrt(v[c] + eps)) — one loop per
     * table, each reading only the batchnorm's parameters, so that prepack
     * makes both at load. */
    ir_stmt *body = ir_seq_new(m);
    ir_buffer *table[2] = {scale, shift};
    for (int k = 0; k < 2; k++) {
        const char *sfx = k ? "_shift" : "";
        ir_var *lc = ir_var_new(m, ir_sprintf(m->arena, "%s_c%s", bname, sfx), IR_I64);
        ir_var *vc = ir_var_new(m, ir_sprintf(m->arena, "v%s_c%s", bname, sfx), IR_I64);
        ir_itervar *it = ir_alloc(m->arena, sizeof *it);
        *it = (ir_itervar){vc, IR_ITER_SPATIAL, nc, ir_varref(m, lc)};
        ir_expr *at[1] = {ir_varref(m, vc)};
        ir_expr *vpe = ir_binary(m, IR_ADD, ir_load(m, var->buf, at, 1), ir_expr_copy(m, eps));
        ir_expr *sq = ir_call(m, IR_FN_SQRT, &vpe, 1);
        ir_expr *val = ir_binary(m, IR_DIV, ir_load(m, w->buf, at, 1), sq);
        if (k)
            val = ir_binary(m, IR_SUB, ir_load(m, b->buf, at, 1),
                            ir_binary(m, IR_MUL, ir_load(m, mean->buf, at, 1), val));
        const char *pname = ir_sprintf(m->arena, "%s_fold%s", bname, sfx);
        ir_stmt *blk = ir_block(m, pname, it, 1, NULL, ir_store(m, table[k], at, 1, val));
        ir_block_update_access(m, blk);
        ir_seq_append(m, body, ir_for(m, lc, ir_int(m, 0), ir_int(m, nc), IR_FOR_SERIAL, blk));
        ir_func_set_attr(m, fp, ir_sprintf(m->arena, "block.%s", pname), clayer);
    }
    ir_seq_append(m, body, fp->body);
    fp->body = ir_alloc_stmt(m, scale, ir_alloc_stmt(m, shift, body));
use:;
    /* t * scale[e] + shift[e] */
    ir_expr *e[1] = {ir_expr_copy(m, mean->args[0])};
    ir_expr *e2[1] = {ir_expr_copy(m, mean->args[0])};
    return ir_binary(m, IR_ADD, ir_binary(m, IR_MUL, ir_expr_copy(m, t), ir_load(m, tables[0], e, 1)),
                     ir_load(m, tables[1], e2, 1));
}

/* ---------------------------------------------------------------- rewriting */

/* Replaces buffer `from` by `to` in loads (parameters of C become P's). */
static void rename_bufs(ir_expr *x, ir_buffer **from, ir_buffer **to, int n)
{
    if (!x)
        return;
    if (x->kind == IR_LOAD)
        for (int i = 0; i < n; i++)
            if (x->buf == from[i]) {
                x->buf = to[i];
                break;
            }
    for (int i = 0; i < x->nargs; i++)
        rename_bufs(x->args[i], from, to, n);
    rename_bufs(x->a, from, to, n);
    rename_bufs(x->b, from, to, n);
    rename_bufs(x->c, from, to, n);
}

/* Fresh copies of every loop and iteration variable in s (names suffixed),
 * so the copy can sit beside the original. */
static ir_stmt *fresh_copy(ir_module *m, const ir_stmt *s, const char *suffix)
{
    ir_var *from[256];
    ir_expr *to[256];
    int n = 0;
    const ir_stmt *stack[256];
    int top = 0;
    stack[top++] = s;
    while (top > 0 && n < 256) {
        const ir_stmt *q = stack[--top];
        if (!q)
            continue;
        if ((q->kind == IR_S_FOR || q->kind == IR_S_LET) && q->var && n < 256) {
            from[n] = q->var;
            to[n++] = ir_varref(m, ir_var_new(m, ir_sprintf(m->arena, "%s%s", q->var->name, suffix),
                                              q->var->dtype));
        }
        if (q->kind == IR_S_BLOCK)
            for (int i = 0; i < q->niters && n < 256; i++) {
                from[n] = q->iters[i].var;
                to[n++] = ir_varref(m, ir_var_new(m, ir_sprintf(m->arena, "%s%s",
                                                                q->iters[i].var->name, suffix),
                                                  IR_I64));
            }
        for (int i = 0; i < q->nbody && top < 255; i++)
            stack[top++] = q->body[i];
        if (top < 255)
            stack[top++] = q->orelse;
    }
    ir_stmt *c = ir_stmt_subst(m, s, from, to, n);
    /* the binders themselves */
    stack[0] = c;
    top = 1;
    while (top > 0) {
        ir_stmt *q = (ir_stmt *)stack[--top];
        if (!q)
            continue;
        for (int k = 0; k < n; k++) {
            if ((q->kind == IR_S_FOR || q->kind == IR_S_LET) && q->var == from[k])
                q->var = to[k]->var;
            if (q->kind == IR_S_BLOCK)
                for (int i = 0; i < q->niters; i++)
                    if (q->iters[i].var == from[k])
                        q->iters[i].var = to[k]->var;
        }
        for (int i = 0; i < q->nbody && top < 255; i++)
            stack[top++] = q->body[i];
        if (top < 255)
            stack[top++] = q->orelse;
    }
    return c;
}

static ir_stmt *find_store(ir_stmt *s, const ir_buffer *b)
{
    if (!s)
        return NULL;
    if (s->kind == IR_S_STORE && s->buf == b)
        return s;
    for (int i = 0; i < s->nbody; i++) {
        ir_stmt *r = find_store(s->body[i], b);
        if (r)
            return r;
    }
    return find_store(s->orelse, b);
}

static ir_stmt *find_block_stmt(ir_stmt *s)
{
    if (!s)
        return NULL;
    if (s->kind == IR_S_BLOCK)
        return s;
    for (int i = 0; i < s->nbody; i++) {
        ir_stmt *r = find_block_stmt(s->body[i]);
        if (r)
            return r;
    }
    return NULL;
}

static void append_attr(ir_module *m, ir_func *f, const char *key, const char *first, const char *add)
{
    const char *old = ir_func_attr(f, key);
    ir_func_set_attr(m, f, key, ir_sprintf(m->arena, "%s,%s", old ? old : first, add));
}

/* ---------------------------------------------------------------- the graph's index */

/* Who passes which graph buffer, and how many calls run each function,
 * built once per pass and kept up to date as calls fuse, so a graph of
 * thousands of calls fuses in time about linear in its size (no rescan of
 * every call per consumer).  Fused consumers' calls are marked dead and
 * leave the call list at the end of the pass. */
typedef struct call_list {
    int *c;                /* call indices, ascending, one per argument passed */
    int n, cap;
} call_list;

typedef struct fuse_index {
    ir_module *m;
    const void **bufs;     /* the graph's buffers, sorted by address */
    call_list *users;      /* users[i]: the calls passing bufs[i] */
    int nbufs;
    const void **funcs;    /* the module's functions, sorted by address */
    int *nruns;            /* live run calls of funcs[i] */
    bool *loaded;          /* a load call runs funcs[i] */
    int nfuncs;
    bool *dead;            /* per run call: fused away */
    bool *kept;            /* per run call: a concatenation to go in place
                              with its prefixes: no consumer joins it */
} fuse_index;

/* Call c passes b (again): c joins b's users in call order. */
static void add_user(fuse_index *ix, const ir_buffer *b, int c)
{
    int i = pass_find_ptr(ix->bufs, ix->nbufs, b);
    if (i < 0)
        return;
    call_list *l = &ix->users[i];
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 4;
        int *grown = ir_alloc(ix->m->arena, sizeof *grown * (size_t)cap);
        if (l->n)
            memcpy(grown, l->c, sizeof *grown * (size_t)l->n);
        l->c = grown;
        l->cap = cap;
    }
    int k = l->n++;
    for (; k > 0 && l->c[k - 1] > c; k--)
        l->c[k] = l->c[k - 1];
    l->c[k] = c;
}

static void index_graph(ir_module *m, fuse_index *ix)
{
    ir_graph *g = &m->graph;
    ix->m = m;
    ix->nbufs = g->nbufs;
    ix->bufs = pass_sorted_ptrs(m, (void *const *)g->bufs, g->nbufs);
    ix->users = ir_alloc(m->arena, sizeof *ix->users * (size_t)(g->nbufs + 1));
    memset(ix->users, 0, sizeof *ix->users * (size_t)(g->nbufs + 1));
    ix->nfuncs = m->nfuncs;
    ix->funcs = pass_sorted_ptrs(m, (void *const *)m->funcs, m->nfuncs);
    ix->nruns = ir_alloc(m->arena, sizeof *ix->nruns * (size_t)(m->nfuncs + 1));
    ix->loaded = ir_alloc(m->arena, sizeof *ix->loaded * (size_t)(m->nfuncs + 1));
    memset(ix->nruns, 0, sizeof *ix->nruns * (size_t)(m->nfuncs + 1));
    memset(ix->loaded, 0, sizeof *ix->loaded * (size_t)(m->nfuncs + 1));
    ix->dead = ir_alloc(m->arena, sizeof *ix->dead * (size_t)(g->ncalls + 1));
    memset(ix->dead, 0, sizeof *ix->dead * (size_t)(g->ncalls + 1));
    ix->kept = ir_alloc(m->arena, sizeof *ix->kept * (size_t)(g->ncalls + 1));
    memset(ix->kept, 0, sizeof *ix->kept * (size_t)(g->ncalls + 1));
    for (int c = 0; c < g->ncalls; c++) {
        int f = pass_find_ptr(ix->funcs, ix->nfuncs, g->calls[c].fn);
        if (f >= 0)
            ix->nruns[f]++;
        for (int a = 0; a < g->calls[c].nargs; a++)
            add_user(ix, g->calls[c].args[a], c);
    }
    for (int l = 0; l < g->nloads; l++) {
        int f = pass_find_ptr(ix->funcs, ix->nfuncs, g->loads[l].fn);
        if (f >= 0)
            ix->loaded[f] = true;
    }
}

/* The live calls passing b (NULL: b is not a graph buffer). */
static const call_list *users_of(const fuse_index *ix, const ir_buffer *b)
{
    int i = pass_find_ptr(ix->bufs, ix->nbufs, b);
    return i < 0 ? NULL : &ix->users[i];
}

/* Whether a graph call other than number `except` (-1: none), or a load
 * call, runs f.  Load calls (prepack's, in a .tir that went through -O2
 * already) run kernels of their own that no run call shares. */
static bool runs_elsewhere(const fuse_index *ix, const ir_func *f, int except)
{
    int i = pass_find_ptr(ix->funcs, ix->nfuncs, f);
    if (i < 0)
        return true;
    int own = except >= 0 && !ix->dead[except] && ix->m->graph.calls[except].fn == f;
    return ix->loaded[i] || ix->nruns[i] - own > 0;
}

/* The call that produces C's input T (parameter tp) for C = call ci to
 * run inside it: the one earlier call passing T, which nobody else reads;
 * C's other inputs exist when it runs and nothing in between touches
 * what C reads or writes (yp: C's output parameter).  -1 if none. */
static int fusable_producer(const fuse_index *ix, int ci, int tp, int yp)
{
    const ir_graph_call *C = &ix->m->graph.calls[ci];
    const ir_func *fc = C->fn;
    const call_list *tu = users_of(ix, C->args[tp]);
    if (!tu)
        return -1;
    /* the producer: the one earlier call that passes T; and T goes away,
     * so nobody else may read it */
    int pi = -1;
    for (int k = 0; k < tu->n; k++) {
        int c = tu->c[k];
        if (ix->dead[c] || c == ci)
            continue;
        if (c > ci || pi != -1)
            return -1;
        pi = c;
    }
    if (pi < 0 || ix->kept[pi])
        return -1;
    /* C now runs when P does: its other inputs must exist by then, and
     * what it writes must not be touched in between */
    for (int p = 0; p < fc->nparams; p++) {
        if (p == tp)
            continue;
        ir_buffer *b = C->args[p];
        const call_list *bu = users_of(ix, b);
        if (!bu)
            return -1;
        bool before = false;
        for (int k = 0; k < bu->n; k++) {
            int c = bu->c[k];
            if (ix->dead[c])
                continue;
            before |= c < pi;
            if (c >= pi && c < ci && (c != pi || p == yp))
                return -1;
        }
        if (p != yp && b->role != IR_BUF_INPUT && b->role != IR_BUF_PARAM &&
            b->role != IR_BUF_CONST && !before)
            return -1;
    }
    return pi;
}

/* fp, now the group of player and clayer, named after its members joined
 * by '+', each after the first without the dotted prefix it shares with the
 * first (layer1.0.conv1+bn1+relu), with their ops. */
static void name_group(ir_module *m, ir_func *fp, const char *player, const char *clayer,
                       const char *pop, const char *cop)
{
    const char *first = ir_func_attr(fp, "members");
    char firstbuf[512];
    snprintf(firstbuf, sizeof firstbuf, "%s", first ? first : player);
    char *comma = strchr(firstbuf, ',');
    if (comma)
        *comma = 0;
    size_t cut = 0;
    for (size_t k = 0; firstbuf[k] && firstbuf[k] == clayer[k]; k++)
        if (clayer[k] == '.')
            cut = k + 1;
    ir_func_set_attr(m, fp, "layer", ir_sprintf(m->arena, "%s+%s", player, clayer + cut));
    append_attr(m, fp, "members", player, clayer);
    append_attr(m, fp, "member_ops", ir_func_attr(fp, "member_ops") ? "" : pop ? pop : "",
                cop ? cop : "");
    ir_func_set_attr(m, fp, "op", "fused");
    ir_func_set_attr(m, fp, "fused", "fuse");
}

/* One fusion of a consumer call C into its producer P, while it is made. */
typedef struct fusion {
    ir_module *m;
    fuse_index *ix;
    ir_graph_call *C, *P;
    ir_func *fc, *fp;
    const ir_stmt *cb, *cst;        /* C's elementwise block and its store */
    int ci, pi, tp, tpp;            /* the calls; T's parameter in C and in P */
    ir_buffer *pt;                  /* T as P's parameter */
    wb_ctx w;                       /* P's write-backs of T */
    ir_buffer *from[64], *to[64];   /* C's parameters other than T, and P's new ones */
    ir_buffer *newargs[64];         /* the arguments C passes for them */
    bool reshaped[64];              /* to[k] has T's shape in P (below) */
    bool shared[64];                /* to[k] is a parameter P has already */
    int nmap;
    ir_buffer *ynew;                /* C's output as P's parameter */
    const char *clayer, *player, *bname;
    ir_buffer *bn_tables[2];
} fusion;

/* Finds P (and checks both calls may fuse): true if they may. */
static bool find_producer(fusion *u)
{
    ir_module *m = u->m;
    ir_buffer *T = u->C->args[u->tp];
    int yp = -1;
    for (int p = 0; p < u->fc->nparams; p++)
        if (u->fc->params[p] == u->cst->buf)
            yp = p;
    if (T->role != IR_BUF_TEMP || yp < 0)
        return false;
    u->pi = fusable_producer(u->ix, u->ci, u->tp, yp);
    if (u->pi < 0)
        return false;
    u->P = &m->graph.calls[u->pi];
    u->fp = u->P->fn;
    /* P's kernel must serve this call only */
    if (runs_elsewhere(u->ix, u->fp, u->pi) ||
        (u->fc->nparams > 1 && runs_elsewhere(u->ix, u->fc, u->ci)))
        return false;
    u->tpp = -1;
    for (int a = 0; a < u->P->nargs; a++)
        if (u->P->args[a] == T)
            u->tpp = a;
    u->pt = u->fp->params[u->tpp];
    /* C reads its other inputs where P stores T: none may be one P writes
     * too (P might store that element only later) */
    for (int p = 0; p < u->fc->nparams; p++)
        for (int a = 0; p != u->tp && p != yp && a < u->P->nargs; a++)
            if (u->P->args[a] == u->C->args[p] && ir_stmt_stores_to(u->fp->body, u->fp->params[a]))
                return false;
    u->clayer = ir_func_attr(u->fc, "layer");
    u->player = ir_func_attr(u->fp, "layer");
    return u->clayer && u->player;
}

/* The parameter of P that already holds graph buffer b with C's view of it
 * (element type and shape as `shape`), or NULL: P's argument other than T,
 * or one of C's parameters mapped before.  C then reads it through that
 * parameter instead of a second one (GELU's x * (1 + erf(x / sqrt 2)): the
 * multiply joins the group of the division, which reads x already; with
 * one parameter for x the group can then join the layer that writes x). */
static ir_buffer *shared_param(const fusion *u, const ir_buffer *b, ir_dtype dt,
                               const ir_buffer *shape)
{
    for (int a = 0; a < u->P->nargs; a++) {
        const ir_buffer *q = u->fp->params[a];
        if (a != u->tpp && u->P->args[a] == b && q->dtype == dt && q->ndim == shape->ndim &&
            !memcmp(q->shape, shape->shape, sizeof *q->shape * (size_t)q->ndim))
            return u->fp->params[a];
    }
    for (int k = 0; k < u->nmap; k++) {
        const ir_buffer *q = u->to[k];
        if (u->newargs[k] == b && q->dtype == dt && q->ndim == shape->ndim &&
            !memcmp(q->shape, shape->shape, sizeof *q->shape * (size_t)q->ndim))
            return u->to[k];
    }
    return NULL;
}

/* C's parameters other than T become new parameters of P's, named after
 * C's layer; so does the name of C's block (every fused layer's block has
 * a name of its own).  One C reads only at its own index with T's shape
 * (C's output, a residual add's other input) takes T's shape in P (the
 * same elements in the same order), and P reads it at the index it
 * stores T at.  False if C's output is not such a one. */
static bool map_params(fusion *u)
{
    ir_module *m = u->m;
    u->nmap = 0;
    u->ynew = NULL;
    for (int p = 0; p < u->fc->nparams && u->nmap < 64; p++) {
        if (p == u->tp)
            continue;
        ir_buffer *ob = u->fc->params[p];
        load_ctx oc = {ob, u->cb, domain_shape(u->cb, ob), 0};
        ir_expr_walk(u->cst->value, check_load, &oc);
        const ir_buffer *shape = oc.ok ? u->pt : ob;
        ir_buffer *nb = shared_param(u, u->C->args[p], ob->dtype, shape);
        u->shared[u->nmap] = nb != NULL;
        if (!nb)
            nb = ir_buffer_new(m, ir_sprintf(m->arena, "%s.%s", u->clayer, ob->name),
                               ob->dtype, shape->ndim, shape->shape, IR_BUF_ARG);
        u->from[u->nmap] = ob;
        u->newargs[u->nmap] = u->C->args[p];
        u->reshaped[u->nmap] = oc.ok;
        u->to[u->nmap++] = nb;
        if (ob == u->cst->buf && oc.ok)
            u->ynew = nb;
    }
    char *bname = ir_sprintf(m->arena, "%s", u->clayer);
    for (char *q = bname; *q; q++)
        if (!((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || (*q >= '0' && *q <= '9')))
            *q = '_';
    u->bname = bname;
    return u->ynew != NULL;
}

/* ---------------------------------------------------------------- C's value where P stores */

/* C's iteration point for the element of T that P stores at idx, P seeing
 * T with shape ps and C with shape cs (np and nc dimensions).  Both list
 * the same elements in the same (row-major) order, so their dimensions
 * group into runs of equal size: a run of one dimension on each side keeps
 * P's index, P's dimensions merged into one of C's give the linear index
 * of the run, and C's dimensions merged in P's one (a schedule's merge())
 * take it apart by floordiv and floormod, simplified in the ranges of P's
 * block b.  False when the shapes do not group (different sizes). */
static bool map_index(ir_module *m, ir_expr *const *idx, const int64_t *ps, int np,
                      const int64_t *cs, int nc, const ir_stmt *b, ir_expr **out)
{
    const ir_var *vars[64];
    int64_t lo[64], hi[64];
    int nv = b->niters < 64 ? b->niters : 64;
    for (int i = 0; i < nv; i++) {
        vars[i] = b->iters[i].var;
        lo[i] = 0;
        hi[i] = b->iters[i].extent - 1;
    }
    int i = 0, j = 0;
    while (i < np || j < nc) {
        int i0 = i, j0 = j;
        int64_t pp = i < np ? ps[i++] : 1, cp = j < nc ? cs[j++] : 1;
        while (pp != cp) {
            if (pp <= 0 || cp <= 0 || (pp < cp ? i >= np : j >= nc))
                return false;
            if (pp < cp)
                pp *= ps[i++];
            else
                cp *= cs[j++];
        }
        if (i - i0 == 1 && j - j0 == 1) {
            out[j0] = ir_expr_copy(m, idx[i0]);
            continue;
        }
        ir_dtype t = i > i0 ? idx[i0]->dtype : IR_I64;
        ir_expr *lin = NULL;
        for (int d = i0; d < i; d++)
            lin = !lin ? ir_expr_copy(m, idx[d])
                       : ir_binary(m, IR_ADD, ir_binary(m, IR_MUL, lin, ir_int_typed(m, ps[d], t)),
                                   ir_expr_copy(m, idx[d]));
        if (!lin)
            lin = ir_int_typed(m, 0, t);
        int64_t stride = cp;
        for (int d = j0; d < j; d++) {
            stride /= cs[d];
            ir_expr *e = lin;
            if (stride != 1)
                e = ir_binary(m, IR_FLOORDIV, e, ir_int_typed(m, stride, t));
            if (d > j0)
                e = ir_binary(m, IR_FLOORMOD, e, ir_int_typed(m, cs[d], t));
            out[d] = pass_simplify_expr_in(m, e, nv, vars, lo, hi);
        }
    }
    return true;
}

static bool finds_divmod(const ir_expr *x, void *p)
{
    *(bool *)p |= x->kind == IR_FLOORDIV || x->kind == IR_FLOORMOD;
    return true;
}

typedef struct uses_ctx {
    const ir_var *v;
    const ir_buffer *t;
    bool used;
    int tloads;
} uses_ctx;

static bool finds_use(const ir_expr *x, void *p)
{
    uses_ctx *c = p;
    c->used |= x->kind == IR_VAR && x->var == c->v;
    c->tloads += x->kind == IR_LOAD && x->buf == c->t;
    return true;
}

/* A fused store's value nests at most this deep: a chain of thousands of
 * elementwise layers becomes one kernel per so many links, not one
 * expression the .tir reader refuses (and a C compiler chokes on). */
#define FUSE_MAX_DEPTH 64

/* The nesting depth of x (stops counting past FUSE_MAX_DEPTH). */
static int expr_depth(const ir_expr *x, int d)
{
    if (!x || d > FUSE_MAX_DEPTH)
        return d;
    int best = d + 1;
    const ir_expr *kids[3] = {x->a, x->b, x->c};
    for (int i = 0; i < 3; i++) {
        int k = expr_depth(kids[i], d + 1);
        best = k > best ? k : best;
    }
    for (int i = 0; i < x->nargs; i++) {
        int k = expr_depth(x->args[i], d + 1);
        best = k > best ? k : best;
    }
    return best;
}

/* x with loads of T replaced by v, and loads of a reshaped parameter (at
 * C's own index) by loads of P's at idx. */
static ir_expr *rewrite_loads(fusion *u, const ir_expr *x, ir_expr *const *idx, const ir_expr *v)
{
    if (!x)
        return NULL;
    ir_module *m = u->m;
    if (x->kind == IR_LOAD && x->buf == u->fc->params[u->tp])
        return ir_expr_copy(m, v);
    if (x->kind == IR_LOAD)
        for (int k = 0; k < u->nmap; k++)
            if (x->buf == u->from[k] && u->reshaped[k]) {
                ir_expr *at[64];
                for (int d = 0; d < u->pt->ndim && d < 64; d++)
                    at[d] = ir_expr_copy(m, idx[d]);
                return ir_load(m, u->to[k], at, u->pt->ndim);
            }
    ir_expr *c = ir_expr_copy(m, x);
    for (int i = 0; i < c->nargs; i++)
        c->args[i] = rewrite_loads(u, x->args[i], idx, v);
    c->a = rewrite_loads(u, x->a, idx, v);
    c->b = rewrite_loads(u, x->b, idx, v);
    c->c = rewrite_loads(u, x->c, idx, v);
    return c;
}

/* C's value computed where P stores the element of T at idx (P's view of
 * T) with value v, in P's block b: loads of T become v, reshaped
 * parameters are read at idx, and everything else of C's at C's iteration
 * point mapped from idx.  NULL when that needs a floordiv or floormod of
 * P's indices (a gather in P's vector loop), or when v, more than one
 * load, would be computed more than once. */
static ir_expr *consumer_value(fusion *u, ir_expr *const *idx, const ir_expr *v, const ir_stmt *b)
{
    ir_module *m = u->m;
    const ir_stmt *cb = u->cb;
    const ir_buffer *ct = u->fc->params[u->tp];
    if (cb->niters > 64 || u->pt->ndim > 64)
        return NULL;
    uses_ctx tc = {NULL, ct, false, 0};
    ir_expr_walk(u->cst->value, finds_use, &tc);
    if (tc.tloads > 1 && v->kind != IR_LOAD && v->kind != IR_VAR && v->kind != IR_INT &&
        v->kind != IR_FLOAT)
        return NULL;
    ir_expr *ce[64];
    if (!map_index(m, idx, u->pt->shape, u->pt->ndim, ct->shape, ct->ndim, b, ce))
        return NULL;
    ir_expr *g = rewrite_loads(u, u->cst->value, idx, v);
    ir_var *cv[64];
    for (int d = 0; d < cb->niters; d++) {
        cv[d] = cb->iters[d].var;
        uses_ctx vc = {cv[d], NULL, false, 0};
        ir_expr_walk(g, finds_use, &vc);
        bool dm = false;
        ir_expr_walk(ce[d], finds_divmod, &dm);
        if (vc.used && dm)
            return NULL;
    }
    g = ir_expr_subst(m, g, cv, ce, cb->niters);
    rename_bufs(g, u->from, u->to, u->nmap);
    return expr_depth(g, 0) <= FUSE_MAX_DEPTH ? g : NULL;
}

/* The stores of T in P, each in a block of spatial iteration variables
 * only (every element once), and no load of T: false if not so. */
static bool scan_stores(fusion *u)
{
    wb_ctx *w = &u->w;
    *w = (wb_ctx){.t = u->pt};
    find_wb(w, &u->fp->body, false);
    if (w->nstores < 1 || w->nstores > WB_MAX || w->nloads)
        return false;
    for (int k = 0; k < w->nstores; k++) {
        const ir_stmt *wst = *w->store_slot[k];
        if (!w->block[k] || w->block[k]->init || wst->nargs != u->pt->ndim ||
            wst->value->dtype != u->pt->dtype)
            return false;
        for (int i = 0; i < w->block[k]->niters; i++)
            if (w->block[k]->iters[i].kind != IR_ITER_SPATIAL)
                return false;
    }
    return true;
}

/* Whether P's stores of T are tile write-backs C's block can update. */
static bool writebacks_fit(fusion *u)
{
    wb_ctx *w = &u->w;
    for (int k = 0; k < w->nstores; k++) {
        const ir_stmt *wst = *w->store_slot[k];
        const ir_expr *tl = tile_load(wst->value);
        if (!w->nest_slot[k] || !tl || tl->dtype != u->pt->dtype ||
            !consumer_value(u, wst->args, tl, w->block[k]))
            return false;
    }
    return true;
}

/* Whether C can be computed in each of P's stores of T itself. */
static bool stores_fit(fusion *u)
{
    for (int k = 0; k < u->w.nstores; k++) {
        const ir_stmt *wst = *u->w.store_slot[k];
        if (!consumer_value(u, wst->args, wst->value, u->w.block[k]))
            return false;
    }
    return true;
}

/* Whether store k of T, a tile's write-back in a vectorized loop, stores
 * its lanes at a distance (an NCHW convolution's tile, its vectors along
 * the channels): its row-major linear index moves by more than one element
 * per iteration of the vector loop. */
static bool strided_writeback(const fusion *u, int k)
{
    const ir_stmt *wst = *u->w.store_slot[k], *b = u->w.block[k];
    const ir_var *lv = u->w.vec[k];
    if (!lv || !b || !tile_load(wst->value))
        return false;
    int64_t lin = 0, stride = 1;
    for (int d = wst->nargs - 1; d >= 0; d--) {
        for (int i = 0; i < b->niters; i++) {
            int64_t c;
            if (!ir_expr_uses_var(b->iters[i].binding, lv))
                continue;
            if (!ir_affine_var_coef(wst->args[d], b->iters[i].var, &c))
                return true;
            lin += c * stride;
        }
        stride *= u->pt->shape[d];
    }
    return lin != 1;
}

/* Computes C in P's stores of T: each `T[e] = v` becomes `Y[e] = C(v)`
 * (one pass over memory for a chain of elementwise layers, a
 * concatenation and the batchnorm after it).  C's work is then the
 * producer's block's. */
static void fuse_stores(fusion *u)
{
    for (int k = 0; k < u->w.nstores; k++) {
        ir_stmt *wst = *u->w.store_slot[k];
        ir_expr *g = consumer_value(u, wst->args, wst->value, u->w.block[k]);
        wst->value = fold_batchnorm(u->m, u->fp, g, u->bname, u->clayer, u->bn_tables);
        wst->buf = u->ynew;
        ir_block_update_access(u->m, (ir_stmt *)u->w.block[k]);
    }
}

/* An epilogue in write-back k (tile + bias) gets a nest of its own that
 * applies it to the tile, a block of the producer's (the profile keeps
 * charging it to P); the update ust and the write-back then read the tile
 * as it is.  Returns that nest, or NULL when the write-back is a copy. */
static ir_stmt *split_epilogue(fusion *u, int k, ir_stmt *ust)
{
    ir_module *m = u->m;
    ir_stmt *wst = *u->w.store_slot[k];
    ir_expr *wtile = tile_load(wst->value);
    if (wtile == wst->value)
        return NULL;
    ir_stmt *epi = fresh_copy(m, *u->w.nest_slot[k], "_e");
    ir_stmt *est = find_store(epi, u->pt);
    ir_stmt *eblk = find_block_stmt(epi);
    ir_expr *etile = tile_load(est->value);
    est->buf = etile->buf;
    est->args = etile->args;
    est->nargs = etile->nargs;
    eblk->name = ir_sprintf(m->arena, "%s_epilogue", u->w.block[k]->name);
    ir_block_update_access(m, eblk);
    ust->value = tile_load(ust->value);
    wst->value = wtile;
    return epi;
}

/* Turns ust (a copy of the write-back, in block ublk) into the in-place
 * update tile = C(tile), the k-th of P's write-backs. */
static void make_update(fusion *u, int k, ir_stmt *ust, ir_stmt *ublk)
{
    ir_module *m = u->m;
    ir_expr *g = consumer_value(u, ust->args, ust->value, ublk);
    g = fold_batchnorm(m, u->fp, g, u->bname, u->clayer, u->bn_tables);
    ir_expr *tile = tile_load(ust->value);   /* tile[...] */
    ust->buf = tile->buf;
    ust->args = tile->args;
    ust->nargs = tile->nargs;
    ust->value = g;
    ublk->name = k == 0 ? u->bname
                 : k == 1 ? ir_sprintf(m->arena, "%s_tail", u->bname)
                          : ir_sprintf(m->arena, "%s_tail_%d", u->bname, k);
    ir_block_update_access(m, ublk);
    ir_func_set_attr(m, u->fp, ir_sprintf(m->arena, "block.%s", ublk->name), u->clayer);
}

/* Rewrites write-back k: [epilogue;] update; write-back of C's output.
 * False (before anything changed, for k = 0) if its copy has no store. */
static bool fuse_writeback(fusion *u, int k)
{
    ir_module *m = u->m;
    ir_stmt *upd = fresh_copy(m, *u->w.nest_slot[k], "_f");
    ir_stmt *ust = find_store(upd, u->pt);
    ir_stmt *ublk = find_block_stmt(upd);
    if (!ust || !ublk)
        return false;   /* the first copy is like the others */
    ir_stmt *epi = split_epilogue(u, k, ust);
    make_update(u, k, ust, ublk);
    (*u->w.store_slot[k])->buf = u->ynew;
    ir_block_update_access(m, (ir_stmt *)u->w.block[k]);
    ir_stmt *seq = ir_seq_new(m);
    if (epi)
        ir_seq_append(m, seq, epi);
    ir_seq_append(m, seq, upd);
    ir_seq_append(m, seq, *u->w.nest_slot[k]);
    *u->w.nest_slot[k] = seq;
    return true;
}

/* P's kernel and call: T's parameter goes, C's others join; C's call goes. */
static void rewire_calls(fusion *u)
{
    ir_module *m = u->m;
    ir_func *fp = u->fp;
    ir_graph_call *P = u->P;
    int k = 0;
    for (int p = 0; p < fp->nparams; p++)
        if (p != u->tpp)
            fp->params[k++] = fp->params[p];
    fp->nparams = k;
    for (int i = 0; i < u->nmap; i++)
        if (!u->shared[i])
            ir_func_add_param(m, fp, u->to[i]);
    ir_buffer **args = ir_alloc(m->arena, sizeof *args * (size_t)(fp->nparams + 1));
    k = 0;
    for (int a = 0; a < P->nargs; a++)
        if (a != u->tpp)
            args[k++] = P->args[a];
    for (int i = 0; i < u->nmap; i++)
        if (!u->shared[i])
            args[k++] = u->newargs[i];
    P->args = args;
    P->nargs = k;
    name_group(m, fp, u->player, u->clayer, ir_func_attr(fp, "op"), ir_func_attr(u->fc, "op"));
    for (int i = 0; i < u->nmap; i++)
        if (!u->shared[i])
            add_user(u->ix, u->newargs[i], u->pi);
    u->ix->dead[u->ci] = true;
    u->ix->nruns[pass_find_ptr(u->ix->funcs, u->ix->nfuncs, u->fc)]--;
}

/* Fuses call ci, whose elementwise block is cb, into the call that writes
 * its input number tp; that call's index if it did, else -1. */
static int fuse_into_producer(fuse_index *ix, int ci, const ir_stmt *cb, int tp)
{
    ir_module *m = ix->m;
    fusion u = {.m = m, .ix = ix, .C = &m->graph.calls[ci], .ci = ci, .cb = cb, .tp = tp,
                .cst = cb->body[0]};
    u.fc = u.C->fn;
    if (!find_producer(&u) || !map_params(&u) || !scan_stores(&u))
        return -1;
    /* a C of another element type than T's (a quantize) cannot live in P's
     * tile: it is computed in the write-back's store itself */
    bool same_type = u.cst->buf->dtype == u.pt->dtype;
    /* ... but not in a write-back that stores its lanes apart: there each
     * lane's byte is a store of its own, and the tile's f32 values stored
     * as they are plus a quantize in vectors of its own take less time
     * (QDQ MobileNetV2's expand convolutions, whose NCHW outputs the
     * depthwise layers after them keep: 142 us lost over the model).
     * Unless the layout pass (after this one) will store T channels-last,
     * the lanes' dimension innermost: the write-back then stores its lanes
     * together, and the quantize in it saves a kernel, a pass over T and,
     * with two threads, a parallel region (QDQ ResNet-50's 45 quantize
     * kernels: 2T 16.5 -> 14.2 ms with far vCPUs, 1T -1.4%;
     * bench/results/int8_s13.txt) */
    for (int k = 0; !same_type && k < u.w.nstores; k++)
        if (strided_writeback(&u, k) && !pass_layout_channels_last(m, u.C->args[u.tp], ix->dead))
            return -1;
    if (same_type && writebacks_fit(&u)) {
        for (int k = 0; k < u.w.nstores; k++)
            if (!fuse_writeback(&u, k))
                return -1;
    } else if (stores_fit(&u)) {
        fuse_stores(&u);
    } else {
        return -1;
    }
    rewire_calls(&u);
    return u.pi;
}

/* Fuses call ci into the call that writes one of its inputs, trying each
 * in turn: a residual add joins whichever branch runs last (its other
 * input must exist when that producer runs); that call's index if it
 * did, else -1. */
static int fuse_call(fuse_index *ix, int ci)
{
    const ir_func *fc = ix->m->graph.calls[ci].fn;
    int tp = -1;
    for (const ir_stmt *cb; (cb = elementwise(fc, tp + 1, &tp));) {
        int pi = fuse_into_producer(ix, ci, cb, tp);
        if (pi >= 0)
            return pi;
    }
    return -1;
}

/* ir_expr_walk callback: clears *(bool *)p at what may stop a kernel with
 * an error (an integer division, a float converted to an integer, a load
 * at an index other than iteration variables and constants). */
static bool may_fail(const ir_expr *x, void *p)
{
    bool fails = ((x->kind == IR_DIV || x->kind == IR_FLOORDIV || x->kind == IR_FLOORMOD) &&
                  !ir_dtype_is_float(x->dtype)) ||
                 (x->kind == IR_CAST && x->a && ir_dtype_is_float(x->a->dtype) &&
                  !ir_dtype_is_float(x->dtype));
    for (int i = 0; x->kind == IR_LOAD && i < x->nargs; i++)
        fails |= x->args[i]->kind != IR_VAR && x->args[i]->kind != IR_INT;
    if (fails)
        *(bool *)p = false;
    return !fails;
}

/* Whether call c may go unrun: an elementwise kernel (one block storing
 * at its own index) that cannot stop with an error, writing only
 * temporaries that no other live call passes, so nothing reads its
 * results (a DequantizeLinear whose only consumer, an integer convolution,
 * reads the quantized values instead). */
static bool results_unread(const fuse_index *ix, int c)
{
    const ir_graph_call *C = &ix->m->graph.calls[c];
    const ir_stmt *b = elementwise_block(C->fn);
    bool safe = b != NULL;
    if (safe)
        ir_expr_walk(b->body[0]->value, may_fail, &safe);
    if (!safe)
        return false;
    bool writes = false;
    for (int a = 0; a < C->nargs && a < C->fn->nparams; a++) {
        if (!ir_stmt_stores_to(C->fn->body, C->fn->params[a]))
            continue;
        writes = true;
        const call_list *u = users_of(ix, C->args[a]);
        if (C->args[a]->role != IR_BUF_TEMP || !u)
            return false;
        for (int k = 0; k < u->n; k++)
            if (u->c[k] != c && !ix->dead[u->c[k]])
                return false;
    }
    return writes;
}

/* ---------------------------------------------------------------- concatenations in place */

/* A concatenation's kernel: one elementwise block storing
 * y[.., v, ..] = select(v < B1, x1[.., v, ..], select(v < B2, x2[.., v - B1, ..],
 * ... xk[.., v - Bk-1, ..])), each input a parameter of its own read once,
 * with y's extents but along dimension d (v's), where it has Bi - Bi-1
 * (lib/nn.te's concat and concat4, the ONNX importer's Concat). */
#define CAT_MAX 64
typedef struct cat_kernel {
    int d;                   /* the dimension concatenated along */
    int n;                   /* inputs */
    int param[CAT_MAX];      /* input i: the kernel's parameter ... */
    int64_t lo[CAT_MAX];     /* ... and where along d its part starts */
    int out;                 /* y's parameter */
} cat_kernel;

/* Whether x loads parameter p of f at the store's index, shifted by -off
 * along dimension d (iteration variable v there; a part of one element
 * may read at 0, as the simplifier leaves it); the parameter in *p. */
static bool cat_load(const ir_func *f, const ir_stmt *st, const ir_expr *x, int d,
                     const ir_var *v, int64_t off, int64_t len, int *p)
{
    if (x->kind != IR_LOAD || x->nargs != st->nargs || x->dtype != st->buf->dtype ||
        ir_expr_lanes(x) != 1)
        return false;
    for (int i = 0; i < x->nargs; i++) {
        const ir_expr *a = x->args[i];
        if (i != d && !ir_expr_equal(a, st->args[i]))
            return false;
        if (i == d && !(len == 1 && ir_expr_is_int(a, 0)) &&
            !(off == 0 ? a->kind == IR_VAR && a->var == v
                        : ((a->kind == IR_SUB && ir_expr_is_int(a->b, off)) ||
                           (a->kind == IR_ADD && ir_expr_is_int(a->b, -off))) &&
                              a->a->kind == IR_VAR && a->a->var == v))
            return false;
    }
    *p = -1;
    for (int k = 0; k < f->nparams; k++)
        if (f->params[k] == x->buf && x->buf != st->buf)
            *p = k;
    return *p >= 0;
}

/* The concatenation f computes, if it is one. */
static bool cat_kernel_of(const ir_func *f, cat_kernel *c)
{
    const ir_stmt *b = elementwise_block(f);
    if (!b)
        return false;
    const ir_stmt *st = b->body[0];
    const ir_expr *e = st->value;
    if (e->kind != IR_SELECT || e->c->kind != IR_LT || e->c->a->kind != IR_VAR)
        return false;
    const ir_var *v = e->c->a->var;
    c->d = -1;
    for (int i = 0; i < st->nargs; i++)
        if (st->args[i]->kind == IR_VAR && st->args[i]->var == v)
            c->d = i;
    if (c->d < 0)
        return false;
    const ir_buffer *y = st->buf;
    int64_t at = 0, end;
    c->n = 0;
    for (;; e = e->b) {
        bool last = e->kind != IR_SELECT;
        if (!last && (e->c->kind != IR_LT || e->c->a->kind != IR_VAR || e->c->a->var != v ||
                      e->c->b->kind != IR_INT))
            return false;
        end = last ? y->shape[c->d] : e->c->b->ival;
        int p;
        if (c->n == CAT_MAX || end <= at || end > y->shape[c->d] ||
            !cat_load(f, st, last ? e : e->a, c->d, v, at, end - at, &p))
            return false;
        const ir_buffer *x = f->params[p];
        if (x->ndim != y->ndim)
            return false;
        for (int i = 0; i < y->ndim; i++)
            if (x->shape[i] != (i == c->d ? end - at : y->shape[i]))
                return false;
        for (int k = 0; k < c->n; k++)
            if (c->param[k] == p)
                return false;
        c->param[c->n] = p;
        c->lo[c->n++] = at;
        at = end;
        if (last)
            break;
    }
    c->out = -1;
    for (int k = 0; k < f->nparams; k++)
        if (f->params[k] == y)
            c->out = k;
    return c->out >= 0 && f->nparams == c->n + 1;
}

/* e with every load of b shifted by off along dimension j (new nodes
 * where it changes: expressions may be shared). */
static ir_expr *shift_loads(ir_module *m, ir_expr *e, const ir_buffer *b, int j, int64_t off)
{
    if (!e || !ir_expr_loads(e, b))
        return e;
    ir_expr *n = ir_alloc(m->arena, sizeof *n);
    *n = *e;
    n->a = shift_loads(m, e->a, b, j, off);
    n->b = shift_loads(m, e->b, b, j, off);
    n->c = shift_loads(m, e->c, b, j, off);
    if (e->nargs > 0) {
        n->args = ir_alloc(m->arena, sizeof *n->args * (size_t)e->nargs);
        for (int i = 0; i < e->nargs; i++)
            n->args[i] = shift_loads(m, e->args[i], b, j, off);
        if (e->kind == IR_LOAD && e->buf == b && off != 0)
            n->args[j] = ir_binary(m, IR_ADD, n->args[j], ir_int(m, off));
    }
    return n;
}

/* Every access to b below s shifted by off along dimension j. */
static void shift_accesses(ir_module *m, ir_stmt *s, const ir_buffer *b, int j, int64_t off)
{
    if (!s)
        return;
    s->lo = shift_loads(m, s->lo, b, j, off);
    s->hi = shift_loads(m, s->hi, b, j, off);
    s->value = shift_loads(m, s->value, b, j, off);
    s->cond = shift_loads(m, s->cond, b, j, off);
    for (int i = 0; i < s->niters; i++)
        s->iters[i].binding = shift_loads(m, s->iters[i].binding, b, j, off);
    if (s->kind == IR_S_STORE) {
        for (int i = 0; i < s->nargs; i++)
            s->args[i] = shift_loads(m, s->args[i], b, j, off);
        if (s->buf == b && off != 0)
            s->args[j] = ir_binary(m, IR_ADD, s->args[j], ir_int(m, off));
    }
    for (int i = 0; i < s->nbody; i++)
        shift_accesses(m, s->body[i], b, j, off);
    shift_accesses(m, s->init, b, j, off);
    shift_accesses(m, s->orelse, b, j, off);
}

/* Where parameter x of a producer, holding the `lo`th slice along
 * dimension d of y, lies in y when x becomes y: x's first dimension j of
 * more than one element grows to cover y, and accesses shift by *off along
 * it.  Needs y's dimensions before d to be of one element each (the slice
 * is one run of y's elements), and the run's start and y's size to be
 * whole multiples of x's elements after j (x may see its elements with
 * other dimensions than the concatenation: merged ones). */
static bool strided_slice(const ir_buffer *x, const ir_buffer *y, int d, int64_t lo, int *j,
                          int64_t *off, int64_t *extent);

static bool slice_dim(const ir_buffer *x, const ir_buffer *y, int d, int64_t lo, int *j,
                      int64_t *off, int64_t *extent)
{
    int64_t inner_y = 1;
    for (int i = 0; i < y->ndim; i++)
        if (i < d && y->shape[i] != 1)
            return strided_slice(x, y, d, lo, j, off, extent);
        else if (i > d)
            inner_y *= y->shape[i];
    *j = 0;
    while (*j < x->ndim - 1 && x->shape[*j] == 1)
        (*j)++;
    if (x->ndim == 0)
        return false;
    int64_t inner = 1;
    for (int i = *j + 1; i < x->ndim; i++)
        inner *= x->shape[i];
    int64_t start = lo * inner_y;
    if (start % inner || ir_buffer_numel(y) % inner)
        return false;
    *off = start / inner;
    *extent = ir_buffer_numel(y) / inner;
    return true;
}

/* The part of y along d that is no run of y's elements (a concatenation
 * of channels-last maps along the channels: layout-chains): x seen with
 * y's dimensions, all of y's extents but along d, grows to y along d and
 * its accesses shift by lo there; its writers then store each pixel's
 * channels at their place in y's. */
static bool strided_slice(const ir_buffer *x, const ir_buffer *y, int d, int64_t lo, int *j,
                          int64_t *off, int64_t *extent)
{
    if (x->ndim != y->ndim)
        return false;
    for (int i = 0; i < y->ndim; i++)
        if (i != d && x->shape[i] != y->shape[i])
            return false;
    *j = d;
    *off = lo;
    *extent = y->shape[d];
    return true;
}

/* The calls a concatenation in place changes: each passes a part of the
 * output (an input, or the output of a prefix concatenation) as its
 * parameter par, which becomes the output, its accesses shifted by off
 * along dimension jdim, which grows to ext. */
#define CAT_USERS 256
typedef struct part_users {
    int n;
    int call[CAT_USERS], par[CAT_USERS], jdim[CAT_USERS];
    int64_t off[CAT_USERS], ext[CAT_USERS];
} part_users;

/* Call c passes x, the part of the concatenation's output yp (its
 * kernel's parameter) that starts at lo along d: it joins pu.  False when
 * it cannot pass the output instead: it passes x twice or another part
 * too (one parameter cannot be two places), another call runs its kernel
 * (whose text changes), or its parameter is no slice of the output. */
static bool add_part_user(const fuse_index *ix, part_users *pu, int c, const ir_buffer *x,
                          const ir_buffer *yp, int d, int64_t lo)
{
    const ir_graph_call *U = &ix->m->graph.calls[c];
    if (pu->n == CAT_USERS || runs_elsewhere(ix, U->fn, c) || U->nargs != U->fn->nparams)
        return false;
    for (int q = 0; q < pu->n; q++)
        if (pu->call[q] == c)
            return false;
    int n = pu->n;
    pu->call[n] = c;
    pu->par[n] = -1;
    for (int a = 0; a < U->nargs; a++)
        if (U->args[a] == x) {
            if (pu->par[n] >= 0)
                return false;
            pu->par[n] = a;
        }
    if (pu->par[n] < 0)
        return false;
    const ir_buffer *px = U->fn->params[pu->par[n]];
    if (px->dtype != yp->dtype || ir_buffer_numel(px) != ir_buffer_numel(x) ||
        !slice_dim(px, yp, d, lo, &pu->jdim[n], &pu->off[n], &pu->ext[n]))
        return false;
    pu->n++;
    return true;
}

/* The elements of concatenation kernel k's output after one along its
 * dimension d, when those before d are of one element each (each part a
 * run of elements); 0 otherwise. */
static int64_t cat_run(const ir_func *f, const cat_kernel *k)
{
    const ir_buffer *y = f->params[k->out];
    int64_t inner = 1;
    for (int i = 0; i < y->ndim; i++)
        if (i < k->d && y->shape[i] != 1)
            return 0;
        else if (i > k->d)
            inner *= y->shape[i];
    return inner;
}

/* Whether call c is a concatenation of the first parts of call f's (fk:
 * its kernel), each part one run of elements: the same buffers at the
 * same elements, so its output is the first run of f's.  A dense block
 * (DenseNet) concatenates its input and every earlier layer's output
 * before each layer, and all of them at its end.  The two kernels may see
 * the parts with other dimensions (merged ones). */
static bool prefix_concat(const fuse_index *ix, int c, int f, const cat_kernel *fk)
{
    const ir_graph_call *P = &ix->m->graph.calls[c], *F = &ix->m->graph.calls[f];
    cat_kernel pk;
    if (c == f || ix->dead[c] || P->nargs != P->fn->nparams || !cat_kernel_of(P->fn, &pk) ||
        pk.n > fk->n)
        return false;
    const ir_buffer *py = P->fn->params[pk.out], *fy = F->fn->params[fk->out];
    int64_t prun = cat_run(P->fn, &pk), frun = cat_run(F->fn, fk);
    if (!prun || !frun || py->dtype != fy->dtype ||
        ir_buffer_numel(py) !=
            (pk.n < fk->n ? fk->lo[pk.n] * frun : ir_buffer_numel(fy)))
        return false;
    for (int i = 0; i < pk.n; i++)
        if (P->args[pk.param[i]] != F->args[fk->param[i]] || pk.lo[i] * prun != fk->lo[i] * frun)
            return false;
    return true;
}

/* Call ci, when it is a concatenation whose every input is a temporary
 * that calls before it write, goes: every call passing an input then
 * passes the output instead and accesses the input's part of it (its
 * parameter becomes the part: its writers write the concatenation in
 * place, its readers read it there).  The output must not be passed before
 * the concatenation, nor written after it; an input not written after it;
 * a call may pass one input, once, and its kernel must serve it alone.
 * With prefixes, only a concatenation that has prefix concatenations
 * (prefix_concat) goes, and they go with it: their readers read the
 * output's first part, which holds their values once its inputs are
 * written (no input may be written after a concatenation passing it), and
 * nothing writes that part later.  True if it went; when only to check
 * (!apply), true if it can go now, and then it and its prefixes are kept
 * from the chain fusions (their consumers stay calls of their own). */
static bool concat_in_place(fuse_index *ix, int ci, bool prefixes, bool apply)
{
    ir_module *m = ix->m;
    ir_graph_call *C = &m->graph.calls[ci];
    cat_kernel k;
    if (ix->dead[ci] || !cat_kernel_of(C->fn, &k) || C->nargs != C->fn->nparams)
        return false;
    ir_buffer *y = C->args[k.out];
    const ir_buffer *yp = C->fn->params[k.out];
    const call_list *yu = users_of(ix, y);
    if (!yu || (y->role != IR_BUF_TEMP && y->role != IR_BUF_OUTPUT))
        return false;
    for (int u = 0; u < yu->n; u++) {
        const ir_graph_call *U = &m->graph.calls[yu->c[u]];
        if (ix->dead[yu->c[u]] || yu->c[u] == ci)
            continue;
        if (yu->c[u] < ci)
            return false;
        for (int a = 0; a < U->nargs && a < U->fn->nparams; a++)
            if (U->args[a] == y && ir_stmt_stores_to(U->fn->body, U->fn->params[a]))
                return false;
    }
    /* the prefix concatenations: each passes the first input */
    int pre[CAT_USERS], npre = 0;
    if (prefixes) {
        const call_list *fu = users_of(ix, C->args[k.param[0]]);
        for (int u = 0; fu && u < fu->n; u++) {
            int c = fu->c[u];
            if ((npre == 0 || pre[npre - 1] != c) && prefix_concat(ix, c, ci, &k)) {
                if (npre == CAT_USERS)
                    return false;
                pre[npre++] = c;
            }
        }
        if (npre == 0)
            return false;
    }
    /* the calls to change: each with its parameter, its shift and extent */
    part_users pu;
    pu.n = 0;
    for (int i = 0; i < k.n; i++) {
        ir_buffer *x = C->args[k.param[i]];
        const call_list *xu = users_of(ix, x);
        if (x->role != IR_BUF_TEMP || !xu || x == y)
            return false;
        bool written = false, concatenated = false;
        for (int u = 0; u < xu->n; u++) {
            int c = xu->c[u], p = 0;
            while (p < npre && pre[p] != c)
                p++;
            if (ix->dead[c])
                continue;
            if (c == ci || p < npre) {
                concatenated = true;
                continue;
            }
            const ir_graph_call *U = &m->graph.calls[c];
            if (!add_part_user(ix, &pu, c, x, yp, k.d, k.lo[i]))
                return false;
            bool stores = ir_stmt_stores_to(U->fn->body, U->fn->params[pu.par[pu.n - 1]]);
            if (stores && concatenated)
                return false;
            written |= stores;
        }
        if (!written)
            return false;
    }
    for (int p = 0; p < npre; p++) {
        const ir_graph_call *P = &m->graph.calls[pre[p]];
        cat_kernel pk;
        cat_kernel_of(P->fn, &pk);
        ir_buffer *py = P->args[pk.out];
        const call_list *pyu = users_of(ix, py);
        if (!pyu || py->role != IR_BUF_TEMP || py == y)
            return false;
        for (int u = 0; u < pyu->n; u++) {
            int c = pyu->c[u];
            if (ix->dead[c] || c == pre[p])
                continue;
            const ir_graph_call *U = &m->graph.calls[c];
            if (c < pre[p] || !add_part_user(ix, &pu, c, py, yp, k.d, 0) ||
                ir_stmt_stores_to(U->fn->body, U->fn->params[pu.par[pu.n - 1]]))
                return false;
        }
    }
    if (!apply) {
        for (int p = 0; p < npre; p++)
            ix->kept[pre[p]] = true;
        ix->kept[ci] = true;
        return true;
    }
    for (int q = 0; q < pu.n; q++) {
        ir_graph_call *U = &m->graph.calls[pu.call[q]];
        ir_buffer *px = U->fn->params[pu.par[q]];
        shift_accesses(m, U->fn->body, px, pu.jdim[q], pu.off[q]);
        int64_t *shape = ir_alloc(m->arena, sizeof *shape * (size_t)px->ndim);
        memcpy(shape, px->shape, sizeof *shape * (size_t)px->ndim);
        shape[pu.jdim[q]] = pu.ext[q];
        px->shape = shape;
        ir_buffer **args = ir_alloc(m->arena, sizeof *args * (size_t)(U->nargs + 1));
        memcpy(args, U->args, sizeof *args * (size_t)U->nargs);
        args[pu.par[q]] = y;
        U->args = args;
        add_user(ix, y, pu.call[q]);
        if (ir_stmt_stores_to(U->fn->body, px))
            ir_func_set_attr(m, U->fn, "writes_into", ir_func_attr(C->fn, "layer"));
    }
    for (int p = 0; p < npre; p++) {
        ix->dead[pre[p]] = true;
        ix->nruns[pass_find_ptr(ix->funcs, ix->nfuncs, m->graph.calls[pre[p]].fn)]--;
    }
    ix->dead[ci] = true;
    ix->nruns[pass_find_ptr(ix->funcs, ix->nfuncs, C->fn)]--;
    return true;
}

/* g with the inference batchnorm in it folded (fold_batchnorm): g itself
 * or an operand, looked for down the operands (a ReLU after it: max(bn,
 * 0)); new nodes on the way to it (expressions may be shared). */
static ir_expr *fold_inner_batchnorm(ir_module *m, ir_func *f, ir_expr *g, const char *bname,
                                     const char *layer, ir_buffer **tables)
{
    if (!g || g->kind == IR_LOAD || tables[0])
        return g;
    ir_expr *h = fold_batchnorm(m, f, g, bname, layer, tables);
    if (h != g)
        return h;
    ir_expr **ops[3] = {&g->a, &g->b, &g->c};
    for (int i = 0; i < 3 + g->nargs; i++) {
        ir_expr *o = i < 3 ? *ops[i] : g->args[i - 3];
        ir_expr *n = fold_inner_batchnorm(m, f, o, bname, layer, tables);
        if (n == o)
            continue;
        h = ir_alloc(m->arena, sizeof *h);
        *h = *g;
        if (i < 3) {
            *(i == 0 ? &h->a : i == 1 ? &h->b : &h->c) = n;
        } else {
            h->args = ir_alloc(m->arena, sizeof *h->args * (size_t)g->nargs);
            memcpy(h->args, g->args, sizeof *h->args * (size_t)g->nargs);
            h->args[i - 3] = n;
        }
        return h;
    }
    return g;
}

/* A batchnorm that joined no producer (its input a concatenation's part
 * in place, or read by other layers too: DenseNet's) folded as in one that
 * did: the division and square root per element become a multiply-add,
 * with the tables made at load (prepack).  Call c's kernel, when it is
 * elementwise and serves c alone. */
static void fold_own_batchnorm(fuse_index *ix, int c)
{
    ir_module *m = ix->m;
    ir_func *f = m->graph.calls[c].fn;
    const ir_stmt *b = elementwise_block(f);
    if (ix->dead[c] || !b || runs_elsewhere(ix, f, c))
        return;
    const char *members = ir_func_attr(f, "members");
    const char *layer = ir_func_attr(f, "layer");
    if (!layer)
        return;
    char *bname = ir_sprintf(m->arena, "%s", members ? members : layer);
    char *comma = strchr(bname, ',');
    if (comma)
        *comma = 0;
    layer = ir_sprintf(m->arena, "%s", bname);
    for (char *q = bname; *q; q++)
        if (!((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || (*q >= '0' && *q <= '9')))
            *q = '_';
    ir_buffer *tables[2] = {NULL, NULL};
    ir_stmt *st = b->body[0];
    st->value = fold_inner_batchnorm(m, f, st->value, bname, layer, tables);
    if (tables[0])
        ir_block_update_access(m, (ir_stmt *)b);
}

/* Elementwise calls whose results nothing reads go, the last first (then
 * one that only they read goes too). */
static void drop_unread(fuse_index *ix)
{
    for (int ci = ix->m->graph.ncalls - 1; ci >= 0; ci--)
        if (!ix->dead[ci] && results_unread(ix, ci)) {
            ix->dead[ci] = true;
            ix->nruns[pass_find_ptr(ix->funcs, ix->nfuncs, ix->m->graph.calls[ci].fn)]--;
        }
}

bool pass_fuse(ir_module *m, diag *d)
{
    (void)d;
    fuse_index ix;
    index_graph(m, &ix);
    /* calls whose results nothing reads go first too: the layout question
     * a fusion asks (pass_layout_channels_last) sees the graph without them */
    drop_unread(&ix);
    /* a concatenation of which others concatenate the first parts (a
     * dense block's) is kept, with them, from the chain fusions, which
     * would take each one's BatchNorm and ReLU into a copy of its own; they
     * go in place after them: then every part is written once, in place,
     * and each of them reads the first part of one buffer, in kernels of
     * one shape (families).  The last first: it has the most prefixes. */
    for (int ci = m->graph.ncalls - 1; ci >= 0; ci--)
        if (!ix.kept[ci])
            concat_in_place(&ix, ci, true, false);
    /* a group that took in a consumer tries its own producer again: that
     * consumer may have been what kept it out (the multiply of GELU's
     * x * (1 + erf(x / sqrt 2)) reads x too, so the division could not
     * join the layer writing x until the multiply joined the division) */
    for (int ci = 0; ci < m->graph.ncalls; ci++)
        for (int c = ci; c >= 0;)
            c = fuse_call(&ix, c);
    /* concatenations whose producers can write their parts in place go */
    for (int ci = m->graph.ncalls - 1; ci >= 0; ci--)
        if (ix.kept[ci])
            concat_in_place(&ix, ci, true, true);
    for (int ci = 0; ci < m->graph.ncalls; ci++)
        concat_in_place(&ix, ci, false, true);
    drop_unread(&ix);
    for (int c = 0; c < m->graph.ncalls; c++)
        fold_own_batchnorm(&ix, c);
    /* the fused consumers' calls go, and kernels no call (run or load)
     * uses any more */
    int k = 0;
    for (int c = 0; c < m->graph.ncalls; c++)
        if (!ix.dead[c])
            m->graph.calls[k++] = m->graph.calls[c];
    m->graph.ncalls = k;
    k = 0;
    for (int f = 0; f < m->nfuncs; f++)
        if (runs_elsewhere(&ix, m->funcs[f], -1))
            m->funcs[k++] = m->funcs[f];
    m->nfuncs = k;
    return true;
}
