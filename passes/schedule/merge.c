/* passes/schedule/merge.c — merge: two loops and the buffer dimensions
 * they index become one.
 *
 *   hw = merge(h, w)
 *
 * h must hold only w.  Every block under w binds one iteration variable to
 * h and one to w (vh, vw: both spatial or both reduce, over the loops'
 * whole ranges), and reads and writes every buffer that uses them as two
 * neighbouring dimensions [.., vh, vw, ..] of the loops' extents; nothing
 * else in the blocks uses vh or vw.  Then the buffers' two dimensions
 * become one of H*W elements (the same bytes: row-major, dimension vw is
 * the inner one), the blocks' vh, vw one iteration variable over it, and
 * the loops one loop: an elementwise layer on a 7x7 map runs along 49
 * contiguous elements (all of its 960x7x7 after merging the channels too),
 * a reduction over a map's rows and columns along one row of H*W.
 *
 * fuse() instead keeps the dimensions and indexes them with floordiv and
 * floormod of the fused loop, which no vector runs along.  merge changes
 * the parameters' shapes (not their element counts, which the graph's
 * buffers must match), so each reshaped buffer must be a parameter or a
 * local allocation of the function that no statement outside the merged
 * blocks reads or writes. */
#include <string.h>

#include "passes/passes.h"
#include "passes/schedule/schedule.h"

#define MERGE_MAX 64

typedef struct merge_ctx {
    sch_ctx *c;
    const ir_var *lh, *lw;          /* the loop variables */
    int64_t H, W;
    ir_stmt *blocks[MERGE_MAX];
    const ir_var *vh[MERGE_MAX], *vw[MERGE_MAX];
    int nblocks;
    int cur;                        /* the block being checked or rewritten */
    ir_buffer *bufs[MERGE_MAX];     /* reshaped, at dimension dims[k] */
    int dims[MERGE_MAX];
    int nbufs;
    int64_t loop_uses;              /* references to lh, lw under w */
    bool strict;                    /* second pass: every access of a
                                       reshaped buffer follows the pattern */
    bool ok;
    const char *why;
} merge_ctx;

static bool collect_blocks(const ir_stmt *s, void *p)
{
    merge_ctx *mc = p;
    if (s->kind == IR_S_BLOCK) {
        if (mc->nblocks == MERGE_MAX) {
            mc->ok = false;
            mc->why = "too many blocks";
            return false;
        }
        mc->blocks[mc->nblocks++] = (ir_stmt *)s;
        return false;   /* blocks nested in blocks: their own business */
    }
    return true;
}

static bool count_loop_uses(const ir_expr *x, void *p)
{
    merge_ctx *mc = p;
    if (x->kind == IR_VAR && (x->var == mc->lh || x->var == mc->lw))
        mc->loop_uses++;
    return true;
}

static bool is_var(const ir_expr *x, const ir_var *v) { return x && x->kind == IR_VAR && x->var == v; }

/* Whether the access indices idx of buffer b follow the pattern; records
 * b's dimension.  Indices that do not match must not use vh or vw. */
static void check_access(merge_ctx *mc, ir_buffer *b, ir_expr **idx, int n);

static void check_expr(merge_ctx *mc, const ir_expr *x)
{
    if (!x || !mc->ok)
        return;
    const ir_var *vh = mc->vh[mc->cur], *vw = mc->vw[mc->cur];
    if (x->kind == IR_VAR && (x->var == vh || x->var == vw)) {
        mc->ok = false;
        mc->why = "an iteration variable of the loops is used outside a buffer's index";
        return;
    }
    if (x->kind == IR_LOAD) {
        check_access(mc, x->buf, x->args, x->nargs);
        return;
    }
    for (int i = 0; i < x->nargs; i++)
        check_expr(mc, x->args[i]);
    check_expr(mc, x->a);
    check_expr(mc, x->b);
    check_expr(mc, x->c);
}

static void check_access(merge_ctx *mc, ir_buffer *b, ir_expr **idx, int n)
{
    const ir_var *vh = mc->vh[mc->cur], *vw = mc->vw[mc->cur];
    int d = -1;
    for (int i = 0; i + 1 < n; i++)
        if (is_var(idx[i], vh) && is_var(idx[i + 1], vw))
            d = i;
    for (int i = 0; i < n; i++)
        if (d < 0 || (i != d && i != d + 1))
            check_expr(mc, idx[i]);
    if (d < 0 && mc->strict && mc->ok)
        for (int k = 0; k < mc->nbufs; k++)
            if (mc->bufs[k] == b) {
                mc->ok = false;
                mc->why = "a buffer is indexed by them in one place and not in another";
            }
    if (d < 0 || !mc->ok)
        return;
    if (b->ndim != n || b->shape[d] != mc->H || b->shape[d + 1] != mc->W) {
        mc->ok = false;
        mc->why = "a buffer's dimensions are not the loops' extents";
        return;
    }
    for (int k = 0; k < mc->nbufs; k++)
        if (mc->bufs[k] == b) {
            if (mc->dims[k] != d) {
                mc->ok = false;
                mc->why = "a buffer is indexed by the loops at two places";
            }
            return;
        }
    if (b->role != IR_BUF_ARG && b->role != IR_BUF_LOCAL) {
        mc->ok = false;
        mc->why = "a buffer is neither a parameter nor local";
        return;
    }
    if (mc->nbufs == MERGE_MAX) {
        mc->ok = false;
        mc->why = "too many buffers";
        return;
    }
    mc->bufs[mc->nbufs] = b;
    mc->dims[mc->nbufs++] = d;
}

static void check_stmt(merge_ctx *mc, const ir_stmt *s)
{
    if (!s || !mc->ok)
        return;
    if (s->kind == IR_S_STORE)
        check_access(mc, s->buf, s->args, s->nargs);
    check_expr(mc, s->lo);
    check_expr(mc, s->hi);
    check_expr(mc, s->value);
    check_expr(mc, s->cond);
    for (int i = 0; i < s->nbody; i++)
        check_stmt(mc, s->body[i]);
    check_stmt(mc, s->init);
    check_stmt(mc, s->orelse);
}

/* Accesses of buffer b in the whole function and under the blocks. */
typedef struct count_ctx {
    const ir_buffer *b;
    int64_t n;
} count_ctx;

static bool count_expr(const ir_expr *x, void *p)
{
    count_ctx *cc = p;
    if (x->kind == IR_LOAD && x->buf == cc->b)
        cc->n++;
    return true;
}

static bool count_stmt(const ir_stmt *s, void *p)
{
    count_ctx *cc = p;
    if (s->kind == IR_S_STORE && s->buf == cc->b)
        cc->n++;
    return true;
}

static int64_t accesses(const ir_stmt *s, const ir_buffer *b)
{
    count_ctx cc = {b, 0};
    ir_stmt_walk(s, count_stmt, count_expr, &cc);
    return cc.n;
}

/* ---------------------------------------------------------------- the rewrite */

static int buf_dim(const merge_ctx *mc, const ir_buffer *b)
{
    for (int k = 0; k < mc->nbufs; k++)
        if (mc->bufs[k] == b)
            return mc->dims[k];
    return -1;
}

static ir_expr **merged_index(merge_ctx *mc, ir_expr **idx, int n, int d, ir_var *v, int *nout);

static ir_expr *rewrite_expr(merge_ctx *mc, const ir_expr *x, ir_var *v)
{
    if (!x)
        return NULL;
    ir_expr *c = ir_expr_copy(mc->c->m, x);
    if (x->kind == IR_LOAD) {
        int d = buf_dim(mc, x->buf);
        if (d >= 0) {
            c->args = merged_index(mc, x->args, x->nargs, d, v, &c->nargs);
            return c;
        }
    }
    for (int i = 0; i < x->nargs; i++)
        c->args[i] = rewrite_expr(mc, x->args[i], v);
    c->a = rewrite_expr(mc, x->a, v);
    c->b = rewrite_expr(mc, x->b, v);
    c->c = rewrite_expr(mc, x->c, v);
    return c;
}

static ir_expr **merged_index(merge_ctx *mc, ir_expr **idx, int n, int d, ir_var *v, int *nout)
{
    ir_module *m = mc->c->m;
    ir_expr **out = ir_alloc(m->arena, sizeof *out * (size_t)(n - 1));
    int k = 0;
    for (int i = 0; i < n; i++) {
        if (i == d)
            out[k++] = ir_varref(m, v);
        else if (i != d + 1)
            out[k++] = rewrite_expr(mc, idx[i], v);
    }
    *nout = n - 1;
    return out;
}

static void rewrite_stmt(merge_ctx *mc, ir_stmt *s, ir_var *v)
{
    if (!s)
        return;
    if (s->kind == IR_S_STORE) {
        int d = buf_dim(mc, s->buf);
        if (d >= 0)
            s->args = merged_index(mc, s->args, s->nargs, d, v, &s->nargs);
        else
            for (int i = 0; i < s->nargs; i++)
                s->args[i] = rewrite_expr(mc, s->args[i], v);
    }
    s->lo = rewrite_expr(mc, s->lo, v);
    s->hi = rewrite_expr(mc, s->hi, v);
    s->value = rewrite_expr(mc, s->value, v);
    s->cond = rewrite_expr(mc, s->cond, v);
    for (int i = 0; i < s->nbody; i++)
        rewrite_stmt(mc, s->body[i], v);
    rewrite_stmt(mc, s->init, v);
    rewrite_stmt(mc, s->orelse, v);
}

bool sch_merge(sch_ctx *c, const char *outer, const char *inner, const char *merged)
{
    sch_path p;
    ir_stmt *a, *b;
    if (!sch_loop_pair(c, "merge", outer, inner, &p, &a, &b))
        return false;
    int64_t H = sch_extent(a), W = sch_extent(b);
    if (H < 0 || W < 0 || a->lo->ival != 0 || b->lo->ival != 0 || ir_for_step(a) != 1 ||
        ir_for_step(b) != 1) {
        sch_error(c, "cannot merge '%s' and '%s': they do not count from 0 to a constant", outer,
                  inner);
        return false;
    }
    if (sch_name_used(c->f, merged)) {
        sch_error(c, "the name '%s' is already used in @%s", merged, c->f->name);
        return false;
    }
    merge_ctx mc = {.c = c, .lh = a->var, .lw = b->var, .H = H, .W = W, .ok = true};
    ir_stmt_walk(b->body[0], collect_blocks, NULL, &mc);
    ir_stmt_walk(b->body[0], NULL, count_loop_uses, &mc);
    if (mc.ok && mc.nblocks == 0) {
        mc.ok = false;
        mc.why = "there is no block under them";
    }
    /* each block binds one iteration variable to each loop, and nothing
     * else uses the loop variables */
    for (int k = 0; k < mc.nblocks && mc.ok; k++) {
        const ir_stmt *blk = mc.blocks[k];
        const ir_itervar *ih = NULL, *iw = NULL;
        for (int i = 0; i < blk->niters; i++) {
            if (is_var(blk->iters[i].binding, mc.lh))
                ih = &blk->iters[i];
            if (is_var(blk->iters[i].binding, mc.lw))
                iw = &blk->iters[i];
        }
        if (!ih || !iw || ih->kind != iw->kind || ih->extent != H || iw->extent != W) {
            mc.ok = false;
            mc.why = "a block does not iterate over both loops' whole ranges alike";
            break;
        }
        mc.vh[k] = ih->var;
        mc.vw[k] = iw->var;
        mc.cur = k;
        check_stmt(&mc, blk->init);
        for (int i = 0; i < blk->nbody; i++)
            check_stmt(&mc, blk->body[i]);
    }
    mc.strict = true;
    for (int k = 0; k < mc.nblocks && mc.ok; k++) {
        mc.cur = k;
        check_stmt(&mc, mc.blocks[k]->init);
        for (int i = 0; i < mc.blocks[k]->nbody; i++)
            check_stmt(&mc, mc.blocks[k]->body[i]);
    }
    if (mc.ok && mc.loop_uses != 2 * mc.nblocks) {
        mc.ok = false;
        mc.why = "the loop variables are used outside the blocks' bindings";
    }
    for (int k = 0; k < mc.nbufs && mc.ok; k++) {
        int64_t inside = 0;
        for (int j = 0; j < mc.nblocks; j++)
            inside += accesses(mc.blocks[j], mc.bufs[k]);
        if (accesses(c->f->body, mc.bufs[k]) != inside) {
            mc.ok = false;
            mc.why = "a buffer they index is accessed outside them too";
        }
    }
    if (!mc.ok) {
        sch_error(c, "cannot merge '%s' and '%s': %s", outer, inner, mc.why);
        return false;
    }
    ir_module *m = c->m;
    ir_var *v = ir_var_new(m, merged, a->var->dtype);
    for (int k = 0; k < mc.nblocks; k++) {
        ir_stmt *blk = mc.blocks[k];
        ir_var *bv = ir_var_new(m, sch_fresh_name(m, c->f, ir_sprintf(m->arena, "v%s", merged)),
                                IR_I64);
        ir_itervar *its = ir_alloc(m->arena, sizeof *its * (size_t)(blk->niters - 1));
        int n = 0;
        for (int i = 0; i < blk->niters; i++) {
            if (blk->iters[i].var == mc.vw[k])
                continue;
            its[n] = blk->iters[i];
            if (blk->iters[i].var == mc.vh[k])
                its[n] = (ir_itervar){bv, blk->iters[i].kind, H * W, ir_varref(m, v)};
            n++;
        }
        mc.cur = k;
        rewrite_stmt(&mc, blk->init, bv);
        for (int i = 0; i < blk->nbody; i++)
            rewrite_stmt(&mc, blk->body[i], bv);
        blk->iters = its;
        blk->niters = n;
    }
    for (int k = 0; k < mc.nbufs; k++) {
        ir_buffer *buf = mc.bufs[k];
        int d = mc.dims[k];
        int64_t *shape = ir_alloc(m->arena, sizeof *shape * (size_t)(buf->ndim - 1));
        for (int i = 0, j = 0; i < buf->ndim; i++)
            if (i != d + 1)
                shape[j++] = i == d ? H * W : buf->shape[i];
        buf->shape = shape;
        buf->ndim--;
    }
    *p.slot[p.n - 1] = ir_for(m, v, ir_int(m, 0), ir_int(m, H * W), IR_FOR_SERIAL, b->body[0]);
    sch_update_blocks(m, c->f->body);
    return true;
}
