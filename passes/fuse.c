/* passes/fuse.c — fuse: elementwise layers computed inside the accumulator
 * tile of the layer before them (conv -> batchnorm -> relu), so their
 * inputs never go to memory.
 *
 * A graph call C is fused into the call P that writes its input T when
 *   - C's kernel is one block with only spatial iteration variables that
 *     stores its output at exactly them and reads T only there;
 *   - T is a temporary that P writes and nothing but C reads;
 *   - P's kernel writes T in exactly one place, the write-back of a tile
 *     (a store `T[e] = tile[...]` of a local buffer, which cache_write
 *     makes: the automatic schedule of every contraction has one), or of
 *     an expression of one element of it (`T[e] = tile[...] + bias[f]`,
 *     an epilogue the schedule inlined into the write-back).
 * Then P's kernel updates the tile in place with C's computation, in a loop
 * nest of its own right before the write-back (so the profile still
 * attributes C's FLOPs and parameters to C: the function's `members`,
 * `member_ops` and `block.NAME` attributes), and the write-back stores C's
 * output; C's call goes.  An epilogue of the write-back first moves into a
 * nest of its own before the update (tile = tile + bias, then tile =
 * C(tile)), so the write-back is a plain copy after the first link of a
 * chain.  Chains fuse one link at a time. */
#include <stdio.h>
#include <string.h>

#include "passes/passes.h"

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

/* The elementwise block of C's kernel and the first of its input
 * parameters from index `from` on that it reads only at its own indices,
 * or NULL. */
static const ir_stmt *elementwise(const ir_func *f, int from, int *tparam)
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
    if (!ir_block_own_index(b, st->args, st->nargs) || st->buf->role != IR_BUF_ARG)
        return NULL;
    for (int p = from; p < f->nparams; p++) {
        /* C's result is stored into P's tile: only where the two agree on the
         * element type (a quantize of f32 into u8 stays a kernel of its own). */
        if (f->params[p] == st->buf || f->params[p]->ndim != st->buf->ndim ||
            f->params[p]->dtype != st->buf->dtype)
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
    ir_stmt **cand_nest;            /* while walking: outermost loop below the last SEQ */
    int nstores, nloads;
    const ir_stmt *cur_block;
} wb_ctx;

static void find_wb(wb_ctx *w, ir_stmt **slot, bool in_seq)
{
    ir_stmt *s = *slot;
    if (!s)
        return;
    ir_stmt **saved_nest = w->cand_nest;
    const ir_stmt *saved_block = w->cur_block;
    if (in_seq && s->kind == IR_S_FOR)
        w->cand_nest = slot;
    if (s->kind == IR_S_BLOCK)
        w->cur_block = s;
    if (s->kind == IR_S_STORE && s->buf == w->t) {
        if (w->nstores < WB_MAX) {
            w->store_slot[w->nstores] = slot;
            w->nest_slot[w->nstores] = w->cand_nest;
            w->block[w->nstores] = w->cur_block;
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

/* Replaces loads of `from` by copies of `to`. */
static ir_expr *replace_loads(ir_module *m, const ir_expr *x, const ir_buffer *from, const ir_expr *to)
{
    if (!x)
        return NULL;
    if (x->kind == IR_LOAD && x->buf == from)
        return ir_expr_copy(m, to);
    ir_expr *c = ir_expr_copy(m, x);
    for (int i = 0; i < c->nargs; i++)
        c->args[i] = replace_loads(m, x->args[i], from, to);
    c->a = replace_loads(m, x->a, from, to);
    c->b = replace_loads(m, x->b, from, to);
    c->c = replace_loads(m, x->c, from, to);
    return c;
}

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

/* Whether a graph call other than number `except` (-1: none), or a load
 * call, runs f.  Load calls (prepack's, in a .tir that went through -O2
 * already) run kernels of their own that no run call shares. */
static bool runs_elsewhere(const ir_module *m, const ir_func *f, int except)
{
    for (int c = 0; c < m->graph.ncalls; c++)
        if (c != except && m->graph.calls[c].fn == f)
            return true;
    for (int l = 0; l < m->graph.nloads; l++)
        if (m->graph.loads[l].fn == f)
            return true;
    return false;
}

/* The call that produces C's input T (parameter tp) for C = call ci to
 * run inside it: the one earlier call passing T, which nobody else reads;
 * C's other inputs exist when it runs and nothing in between touches
 * what C reads or writes (yp: C's output parameter).  -1 if none. */
static int fusable_producer(const ir_module *m, int ci, int tp, int yp)
{
    const ir_graph_call *C = &m->graph.calls[ci];
    const ir_func *fc = C->fn;
    const ir_buffer *T = C->args[tp];
    /* the producer: the one earlier call that passes T */
    int pi = -1;
    for (int c = 0; c < ci; c++)
        for (int a = 0; a < m->graph.calls[c].nargs; a++)
            if (m->graph.calls[c].args[a] == T)
                pi = pi == -1 ? c : -2;
    if (pi < 0)
        return -1;
    /* T goes away: nobody else may read it */
    for (int c = 0; c < m->graph.ncalls; c++)
        for (int a = 0; c != pi && c != ci && a < m->graph.calls[c].nargs; a++)
            if (m->graph.calls[c].args[a] == T)
                return -1;
    /* C now runs when P does: its other inputs must exist by then, and
     * what it writes must not be touched in between */
    for (int p = 0; p < fc->nparams; p++) {
        if (p == tp)
            continue;
        ir_buffer *b = C->args[p];
        for (int c = pi; c < ci; c++)
            for (int a = 0; a < m->graph.calls[c].nargs; a++)
                if (m->graph.calls[c].args[a] == b && (c != pi || p == yp))
                    return -1;
        if (p == yp)
            continue;
        if (b->role != IR_BUF_INPUT && b->role != IR_BUF_PARAM && b->role != IR_BUF_CONST) {
            bool before = false;
            for (int c = 0; c < pi && !before; c++)
                for (int a = 0; a < m->graph.calls[c].nargs; a++)
                    before |= m->graph.calls[c].args[a] == b;
            if (!before)
                return -1;
        }
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
    ir_graph_call *C, *P;
    ir_func *fc, *fp;
    const ir_stmt *cb, *cst;        /* C's elementwise block and its store */
    int ci, pi, tp, tpp;            /* the calls; T's parameter in C and in P */
    ir_buffer *pt;                  /* T as P's parameter */
    wb_ctx w;                       /* P's write-backs of T */
    ir_buffer *from[64], *to[64];   /* C's parameters other than T, and P's new ones */
    ir_buffer *newargs[64];         /* the arguments C passes for them */
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
    u->pi = fusable_producer(m, u->ci, u->tp, yp);
    if (u->pi < 0)
        return false;
    u->P = &m->graph.calls[u->pi];
    u->fp = u->P->fn;
    /* P's kernel must serve this call only */
    if (runs_elsewhere(m, u->fp, u->pi) || (u->fc->nparams > 1 && runs_elsewhere(m, u->fc, u->ci)))
        return false;
    u->tpp = -1;
    for (int a = 0; a < u->P->nargs; a++)
        if (u->P->args[a] == T)
            u->tpp = a;
    u->pt = u->fp->params[u->tpp];
    u->clayer = ir_func_attr(u->fc, "layer");
    u->player = ir_func_attr(u->fp, "layer");
    return u->clayer && u->player;
}

/* Whether P writes T only in tile write-backs C's block can update. */
static bool writebacks_fit(fusion *u)
{
    wb_ctx *w = &u->w;
    *w = (wb_ctx){.t = u->pt};
    find_wb(w, &u->fp->body, false);
    if (w->nstores < 1 || w->nstores > WB_MAX || w->nloads)
        return false;
    for (int k = 0; k < w->nstores; k++) {
        const ir_stmt *wst = *w->store_slot[k];
        const ir_expr *tl = tile_load(wst->value);
        if (!w->nest_slot[k] || !w->block[k] || !tl || tl->dtype != u->pt->dtype ||
            wst->nargs != u->cb->niters)
            return false;
        for (int i = 0; i < w->block[k]->niters; i++)
            if (w->block[k]->iters[i].kind != IR_ITER_SPATIAL)
                return false;
    }
    return true;
}

/* C's parameters other than T become new parameters of P's, named after
 * C's layer; so does the name of C's block (every fused layer's block has
 * a name of its own). */
static void map_params(fusion *u)
{
    ir_module *m = u->m;
    u->nmap = 0;
    for (int p = 0; p < u->fc->nparams && u->nmap < 64; p++) {
        if (p == u->tp)
            continue;
        ir_buffer *ob = u->fc->params[p];
        ir_buffer *nb = ir_buffer_new(m, ir_sprintf(m->arena, "%s.%s", u->clayer, ob->name),
                                      ob->dtype, ob->ndim, ob->shape, IR_BUF_ARG);
        u->from[u->nmap] = ob;
        u->newargs[u->nmap] = u->C->args[p];
        u->to[u->nmap++] = nb;
        if (ob == u->cst->buf)
            u->ynew = nb;
    }
    char *bname = ir_sprintf(m->arena, "%s", u->clayer);
    for (char *q = bname; *q; q++)
        if (!((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || (*q >= '0' && *q <= '9')))
            *q = '_';
    u->bname = bname;
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
    const ir_stmt *cb = u->cb;
    ir_var *cv[64];
    ir_expr *ce[64];
    int n = cb->niters < 64 ? cb->niters : 64;
    for (int d = 0; d < n; d++) {
        cv[d] = cb->iters[d].var;
        ce[d] = ust->args[d];
    }
    ir_expr *g = replace_loads(m, u->cst->value, u->fc->params[u->tp], ust->value);
    g = ir_expr_subst(m, g, cv, ce, n);
    rename_bufs(g, u->from, u->to, u->nmap);
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
        ir_func_add_param(m, fp, u->to[i]);
    ir_buffer **args = ir_alloc(m->arena, sizeof *args * (size_t)(fp->nparams + 1));
    k = 0;
    for (int a = 0; a < P->nargs; a++)
        if (a != u->tpp)
            args[k++] = P->args[a];
    for (int i = 0; i < u->nmap; i++)
        args[k++] = u->newargs[i];
    P->args = args;
    P->nargs = k;
    name_group(m, fp, u->player, u->clayer, ir_func_attr(fp, "op"), ir_func_attr(u->fc, "op"));
    for (int c = u->ci + 1; c < m->graph.ncalls; c++)
        m->graph.calls[c - 1] = m->graph.calls[c];
    m->graph.ncalls--;
}

/* Fuses call ci, whose elementwise block is cb, into the call that writes
 * its input number tp; true if it did. */
static bool fuse_into_producer(ir_module *m, int ci, const ir_stmt *cb, int tp)
{
    fusion u = {.m = m, .C = &m->graph.calls[ci], .ci = ci, .cb = cb, .tp = tp,
                .cst = cb->body[0]};
    u.fc = u.C->fn;
    if (!find_producer(&u) || !writebacks_fit(&u))
        return false;
    map_params(&u);
    for (int k = 0; k < u.w.nstores; k++)
        if (!fuse_writeback(&u, k))
            return false;
    rewire_calls(&u);
    return true;
}

/* Fuses call ci into the call that writes one of its inputs, trying each
 * in turn: a residual add joins whichever branch runs last (its other
 * input must exist when that producer runs); true if it did. */
static bool fuse_call(ir_module *m, int ci)
{
    const ir_func *fc = m->graph.calls[ci].fn;
    int tp = -1;
    for (const ir_stmt *cb; (cb = elementwise(fc, tp + 1, &tp));)
        if (fuse_into_producer(m, ci, cb, tp))
            return true;
    return false;
}

bool pass_fuse(ir_module *m, diag *d)
{
    (void)d;
    for (int ci = 0; ci < m->graph.ncalls;)
        if (!fuse_call(m, ci))
            ci++;
    /* kernels no call (run or load) uses any more */
    int k = 0;
    for (int f = 0; f < m->nfuncs; f++)
        if (runs_elsewhere(m, m->funcs[f], -1))
            m->funcs[k++] = m->funcs[f];
    m->nfuncs = k;
    return true;
}
