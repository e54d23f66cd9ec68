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
 * local allocation of the function.  A block outside the two loops that
 * reads or writes a reshaped buffer must do so at [.., uh, uw, ..], its
 * own iteration variables of two loops of the same extents, one holding
 * only the other: those loops are merged along (the same rules), so every
 * access of the buffer becomes [.., um, ..], the same element (a bias
 * added to a convolution's temporary in a nest of its own, as lib/nn.te's
 * conv2d(has_bias=1) writes it, follows the convolution's merged map). */
#include <string.h>

#include "passes/passes.h"
#include "passes/schedule/schedule.h"

#define MERGE_MAX 64
#define MERGE_PAIRS 8

/* Two loops to merge: the named ones, or a pair merged along with them. */
typedef struct merge_pair {
    sch_path p;                     /* to the outer loop */
    ir_stmt *a, *b;                 /* the outer and the inner loop */
} merge_pair;

typedef struct merge_ctx {
    sch_ctx *c;
    merge_pair pairs[MERGE_PAIRS];
    int npairs;
    const ir_var *lh, *lw;          /* the loop variables of the pair counted */
    int64_t H, W;
    ir_stmt *blocks[MERGE_MAX];
    int pair_of[MERGE_MAX];         /* the pair each block is under */
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
    const ir_buffer *outside;       /* a buffer accessed outside the blocks */
    int outside_dim;
    int bad_pair;                   /* the pair whose blocks failed the check, -1 none */
    ir_stmt *linear[MERGE_MAX];     /* blocks outside the pairs whose accesses of the
                                       reshaped buffers are linearized, not merged along */
    int nlinear;
    bool linearizing;               /* rewriting a linear block */
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
        if (i == d && mc->linearizing)
            out[k++] = ir_binary(m, IR_ADD,
                                 ir_binary(m, IR_MUL, rewrite_expr(mc, idx[d], v), ir_int(m, mc->W)),
                                 rewrite_expr(mc, idx[d + 1], v));
        else if (i == d)
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

/* Whether the pairs' loops, blocks and buffers follow the pattern; on a
 * reshaped buffer accessed outside the blocks, mc->outside names it. */
static bool merge_check(merge_ctx *mc)
{
    mc->nblocks = mc->nbufs = 0;
    mc->loop_uses = 0;
    mc->strict = false;
    mc->ok = true;
    mc->outside = NULL;
    mc->bad_pair = -1;
    for (int k = 0; k < mc->npairs && mc->ok; k++) {
        const ir_stmt *a = mc->pairs[k].a, *b = mc->pairs[k].b;
        if (sch_extent(a) != mc->H || sch_extent(b) != mc->W || a->lo->ival != 0 ||
            b->lo->ival != 0 || ir_for_step(a) != 1 || ir_for_step(b) != 1) {
            mc->ok = false;
            mc->bad_pair = k;
            mc->why = k ? "a block outside them accesses a buffer they index through other loops"
                        : "they do not count from 0 to a constant";
            return false;
        }
        int first = mc->nblocks;
        mc->lh = a->var;
        mc->lw = b->var;
        ir_stmt_walk(b->body[0], collect_blocks, NULL, mc);
        ir_stmt_walk(b->body[0], NULL, count_loop_uses, mc);
        for (int j = first; j < mc->nblocks; j++)
            mc->pair_of[j] = k;
        if (mc->ok && mc->nblocks == first) {
            mc->ok = false;
            mc->why = "there is no block under them";
        }
    }
    /* each block binds one iteration variable to each loop of its pair,
     * and nothing else uses the loop variables */
    for (int k = 0; k < mc->nblocks && mc->ok; k++) {
        const ir_stmt *blk = mc->blocks[k];
        const merge_pair *pr = &mc->pairs[mc->pair_of[k]];
        const ir_itervar *ih = NULL, *iw = NULL;
        for (int i = 0; i < blk->niters; i++) {
            if (is_var(blk->iters[i].binding, pr->a->var))
                ih = &blk->iters[i];
            if (is_var(blk->iters[i].binding, pr->b->var))
                iw = &blk->iters[i];
        }
        if (!ih || !iw || ih->kind != iw->kind || ih->extent != mc->H || iw->extent != mc->W) {
            mc->ok = false;
            mc->why = "a block does not iterate over both loops' whole ranges alike";
            mc->bad_pair = mc->pair_of[k];
            break;
        }
        mc->vh[k] = ih->var;
        mc->vw[k] = iw->var;
        mc->cur = k;
        check_stmt(mc, blk->init);
        for (int i = 0; i < blk->nbody; i++)
            check_stmt(mc, blk->body[i]);
        if (!mc->ok)
            mc->bad_pair = mc->pair_of[k];
    }
    mc->strict = true;
    for (int k = 0; k < mc->nblocks && mc->ok; k++) {
        mc->cur = k;
        check_stmt(mc, mc->blocks[k]->init);
        for (int i = 0; i < mc->blocks[k]->nbody; i++)
            check_stmt(mc, mc->blocks[k]->body[i]);
    }
    if (mc->ok && mc->loop_uses != 2 * mc->nblocks) {
        mc->ok = false;
        mc->why = "the loop variables are used outside the blocks' bindings";
    }
    for (int k = 0; k < mc->nbufs && mc->ok; k++) {
        int64_t inside = 0;
        for (int j = 0; j < mc->nblocks; j++)
            inside += accesses(mc->blocks[j], mc->bufs[k]);
        for (int j = 0; j < mc->nlinear; j++)
            inside += accesses(mc->linear[j], mc->bufs[k]);
        if (accesses(mc->c->f->body, mc->bufs[k]) != inside) {
            mc->ok = false;
            mc->why = "a buffer they index is accessed outside them too";
            mc->outside = mc->bufs[k];
            mc->outside_dim = mc->dims[k];
        }
    }
    return mc->ok;
}

/* A block outside the pairs' blocks that accesses buffer b, and the index
 * of its first access of b. */
typedef struct outside_ctx {
    const merge_ctx *mc;
    const ir_buffer *b;
    const ir_stmt *block;
    ir_expr **idx;
    int nidx;
} outside_ctx;

static bool find_access_expr(const ir_expr *x, void *p)
{
    outside_ctx *oc = p;
    if (!oc->idx && x->kind == IR_LOAD && x->buf == oc->b) {
        oc->idx = x->args;
        oc->nidx = x->nargs;
    }
    return !oc->idx;
}

static bool find_access_stmt(const ir_stmt *s, void *p)
{
    outside_ctx *oc = p;
    if (!oc->idx && s->kind == IR_S_STORE && s->buf == oc->b) {
        oc->idx = s->args;
        oc->nidx = s->nargs;
    }
    return !oc->idx;
}

static bool find_outside_block(const ir_stmt *s, void *p)
{
    outside_ctx *oc = p;
    if (oc->block)
        return false;
    if (s->kind != IR_S_BLOCK)
        return true;
    for (int k = 0; k < oc->mc->nblocks; k++)
        if (oc->mc->blocks[k] == s)
            return false;
    for (int k = 0; k < oc->mc->nlinear; k++)
        if (oc->mc->linear[k] == s)
            return false;
    if (accesses(s, oc->b) > 0) {
        oc->block = s;
        ir_stmt_walk(s, find_access_stmt, find_access_expr, oc);
    }
    return false;
}

/* The loop an iteration variable of block blk used as index x is bound
 * to, or NULL. */
static const ir_var *bound_loop(const ir_stmt *blk, const ir_expr *x)
{
    if (!x || x->kind != IR_VAR)
        return NULL;
    for (int i = 0; i < blk->niters; i++)
        if (blk->iters[i].var == x->var && blk->iters[i].binding &&
            blk->iters[i].binding->kind == IR_VAR)
            return blk->iters[i].binding->var;
    return NULL;
}

/* Adds the loops through which a block outside the pairs accesses
 * mc->outside at its merged dimensions; false (mc->why) when there are
 * none. */
static bool add_outside_pair(merge_ctx *mc)
{
    outside_ctx oc = {.mc = mc, .b = mc->outside};
    ir_stmt_walk(mc->c->f->body, find_outside_block, NULL, &oc);
    int d = mc->outside_dim;
    const ir_var *lh = NULL, *lw = NULL;
    if (oc.block && oc.idx && oc.nidx == mc->outside->ndim) {
        lh = bound_loop(oc.block, oc.idx[d]);
        lw = bound_loop(oc.block, oc.idx[d + 1]);
    }
    if (!lh || !lw || mc->npairs == MERGE_PAIRS)
        return false;
    for (int k = 0; k < mc->npairs; k++)
        if (mc->pairs[k].a->var == lh)
            return false;
    merge_pair *pr = &mc->pairs[mc->npairs];
    if (!sch_find_loop(mc->c, lh->name, &pr->p))
        return false;
    pr->a = *pr->p.slot[pr->p.n - 1];
    pr->b = pr->a->nbody == 1 ? pr->a->body[0] : NULL;
    if (!pr->b || pr->b->kind != IR_S_FOR || pr->b->var != lw || pr->b->nbody != 1) {
        mc->why = "a buffer they index is accessed outside them, not by two loops one holding the other";
        return false;
    }
    mc->npairs++;
    return true;
}

/* The blocks of the last pair, one merged along because a block outside
 * the named loops accesses a reshaped buffer, cannot be merged (their loop
 * variables serve other indices too: a copy xs[c, p, q] = x[c, 2p, 2q] of
 * a strided 1x1 convolution's input, cache_read's, is read along the
 * merged map but reads x at twice its rows and columns): the pair is
 * dropped and those blocks keep their loops, indexing each reshaped buffer
 * at [.., uh * W + uw, ..] instead, the same element.  False when there
 * is no room or no block to linearize. */
static bool linearize_pair(merge_ctx *mc)
{
    int k = mc->npairs - 1, before = mc->nlinear;
    for (int j = 0; j < mc->nblocks; j++)
        if (mc->pair_of[j] == k) {
            if (mc->nlinear == MERGE_MAX)
                return false;
            mc->linear[mc->nlinear++] = mc->blocks[j];
        }
    /* (no block of the pair was reached, its loops' extents differ: the
     * pair would be found again, so the merge fails as it stands) */
    if (mc->nlinear == before)
        return false;
    mc->npairs--;
    return true;
}

bool sch_merge(sch_ctx *c, const char *outer, const char *inner, const char *merged)
{
    merge_ctx mc = {.c = c, .npairs = 1};
    merge_pair *first = &mc.pairs[0];
    if (!sch_loop_pair(c, "merge", outer, inner, &first->p, &first->a, &first->b))
        return false;
    mc.H = sch_extent(first->a);
    mc.W = sch_extent(first->b);
    if (mc.H < 0 || mc.W < 0) {
        sch_error(c, "cannot merge '%s' and '%s': they do not count from 0 to a constant", outer,
                  inner);
        return false;
    }
    if (sch_name_used(c->f, merged)) {
        sch_error(c, "the name '%s' is already used in @%s", merged, c->f->name);
        return false;
    }
    while (!merge_check(&mc) && mc.nlinear < MERGE_MAX) {
        if (mc.bad_pair > 0 && mc.bad_pair == mc.npairs - 1) {
            if (!linearize_pair(&mc))
                break;
            continue;
        }
        if (!mc.outside || !add_outside_pair(&mc))
            break;
    }
    if (!mc.ok) {
        sch_error(c, "cannot merge '%s' and '%s': %s", outer, inner, mc.why);
        return false;
    }
    ir_module *m = c->m;
    int64_t H = mc.H, W = mc.W;
    ir_var *vars[MERGE_PAIRS];
    for (int k = 0; k < mc.npairs; k++)
        vars[k] = ir_var_new(m, k ? sch_fresh_name(m, c->f, ir_sprintf(m->arena, "%s_%d", merged, k))
                                  : merged,
                             mc.pairs[k].a->var->dtype);
    for (int k = 0; k < mc.nblocks; k++) {
        ir_stmt *blk = mc.blocks[k];
        const char *vm = ir_sprintf(m->arena, "v%s", vars[mc.pair_of[k]]->name);
        ir_var *bv = ir_var_new(m, sch_fresh_name(m, c->f, vm), IR_I64);
        ir_itervar *its = ir_alloc(m->arena, sizeof *its * (size_t)(blk->niters - 1));
        int n = 0;
        for (int i = 0; i < blk->niters; i++) {
            if (blk->iters[i].var == mc.vw[k])
                continue;
            its[n] = blk->iters[i];
            if (blk->iters[i].var == mc.vh[k])
                its[n] = (ir_itervar){bv, blk->iters[i].kind, H * W,
                                      ir_varref(m, vars[mc.pair_of[k]])};
            n++;
        }
        mc.cur = k;
        rewrite_stmt(&mc, blk->init, bv);
        for (int i = 0; i < blk->nbody; i++)
            rewrite_stmt(&mc, blk->body[i], bv);
        blk->iters = its;
        blk->niters = n;
    }
    mc.linearizing = true;
    for (int k = 0; k < mc.nlinear; k++)
        rewrite_stmt(&mc, mc.linear[k], NULL);
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
    for (int k = 0; k < mc.npairs; k++) {
        merge_pair *pr = &mc.pairs[k];
        *pr->p.slot[pr->p.n - 1] =
            ir_for(m, vars[k], ir_int(m, 0), ir_int(m, H * W), IR_FOR_SERIAL, pr->b->body[0]);
    }
    sch_update_blocks(m, c->f->body);
    return true;
}
