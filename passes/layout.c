/* passes/layout.c — layout: store an activation with the border its readers
 * pad it with, so that no reader copies it.
 *
 * The automatic schedule pads the input of every convolution and pooling
 * window (the schedule primitive pad(): a local copy xp of the input with a
 * border of the value its guarded reads default to, filled at the top of
 * the kernel).  For an activation T between two layers that copy is a pass
 * over T in every reader: 15% of a 56x56 3x3 convolution's time on two
 * threads (bench/conv_layout.sh).  This pass stores T itself with the
 * border instead: T's buffer grows by it, the kernel that writes T stores
 * T's elements at the border's offset and fills the border (in its own
 * loops, next to the elements, where it can: border_fill),
 * and each reader's copy goes: its reads of xp read T.
 *
 * A temporary T gets a border when one graph call writes it, every
 * function T is passed to runs in that one call only, and every other call
 * that reads T makes a pad copy of it (below), all filling with the same
 * value, each needing a border no wider than T's dimension.  The border is
 * the union of what the copies need.  A reader that read T in place would
 * find the border in its way (a 1x1 convolution's rows no longer
 * contiguous), so one such reader keeps T as it is.
 *
 * A copy that also stores the dimensions in another order (pad(x, d): an
 * int8 or a depthwise convolution's channels innermost) goes when T is
 * stored in that order, with the border, together with the temporaries
 * that elementwise kernels link it to (channels_last, below): a quantized
 * network's activations then stay channels-last from one convolution to
 * the next.
 *
 * A pad copy of a parameter P is a filled local `alloc xp` whose body is a
 * sequence: first a nest that is xp's only writer, each of whose stores is,
 * in a block whose iteration variables v are exactly the store's indices,
 *     xp[v] = P[v + k]   or   xp[v] = select(bounds test of P[v + k], P[v + k], c)
 * with one offset k and one constant c for all of them (and at least one
 * select); then statements that do not store to xp.  Every element the
 * nest stores is then P extended by c, read at v + k (with a permutation:
 * P's dimension perm[q] at xp's q), so once T holds c in
 * a border at least that wide, a read xp[t] is the read T[t + k + lo] (lo:
 * the border's low side).  pad() builds exactly this; a user schedule that
 * splits or reorders the fill loops keeps it. */
#include <string.h>

#include "ir/arith.h"
#include "passes/passes.h"
#include "passes/ptrset.h"
#include "passes/schedule/schedule.h"

#define MAXD 16

/* ---------------------------------------------------------------- recognising pad copies */

typedef struct pad_copy {
    ir_stmt **slot;        /* where the alloc statement sits */
    ir_buffer *xp;
    int64_t k[MAXD];       /* xp[t] = P extended by fill, at t + k (k per P's dimension) */
    int perm[MAXD];        /* xp's dimension q holds P's dimension perm[q] (pad(x, d)) */
    double fill;
} pad_copy;

typedef struct match_ctx {
    const ir_buffer *p, *xp;
    pad_copy *c;
    bool have_k, have_fill, ok;
} match_ctx;

static bool same_value(double a, double b)
{
    return a == b || (a != a && b != b);
}

/* ld is P[v + k] for the block's iteration variables v, in P's order or
 * permuted (P's dimension d read with the variable of xp's dimension q):
 * records k and the permutation. */
static bool match_load(match_ctx *mc, const ir_stmt *blk, const ir_expr *ld)
{
    if (ld->kind != IR_LOAD || ld->buf != mc->p || ld->nargs != mc->p->ndim ||
        blk->niters != ld->nargs)
        return false;
    int perm[MAXD];
    bool seen[MAXD] = {false};
    for (int d = 0; d < ld->nargs; d++) {
        ir_affine a;
        if (!ir_affine_of(ld->args[d], &a) || a.n != 1 || a.coef[0] != 1)
            return false;
        int q = 0;
        while (q < blk->niters && a.var[0] != blk->iters[q].var)
            q++;
        if (q == blk->niters || seen[q])
            return false;
        seen[q] = true;
        perm[q] = d;
        if (mc->have_k && a.c != mc->c->k[d])
            return false;
        mc->c->k[d] = a.c;
    }
    for (int q = 0; q < ld->nargs; q++)
        if (mc->have_k && perm[q] != mc->c->perm[q])
            return false;
    memcpy(mc->c->perm, perm, sizeof(int) * (size_t)ld->nargs);
    mc->have_k = true;
    return true;
}

static bool match_fill_block(match_ctx *mc, const ir_stmt *b)
{
    const ir_stmt *st = b->nbody == 1 ? b->body[0] : NULL;
    if (b->init || !st || st->kind != IR_S_STORE || st->buf != mc->xp || st->nargs != b->niters ||
        b->niters != mc->xp->ndim)
        return false;
    for (int d = 0; d < b->niters; d++)
        if (st->args[d]->kind != IR_VAR || st->args[d]->var != b->iters[d].var)
            return false;
    const ir_expr *v = st->value;
    if (v->kind == IR_LOAD)
        return match_load(mc, b, v);
    if (v->kind != IR_SELECT || (v->b->kind != IR_FLOAT && v->b->kind != IR_INT) ||
        !match_load(mc, b, v->a) || !sch_is_bounds_test(v->c, v->a))
        return false;
    double c = v->b->kind == IR_FLOAT ? v->b->fval : (double)v->b->ival;
    if (mc->have_fill && !same_value(c, mc->c->fill))
        return false;
    mc->have_fill = true;
    mc->c->fill = c;
    return true;
}

static bool match_fill(const ir_stmt *s, void *p)
{
    match_ctx *mc = p;
    switch (s->kind) {
    case IR_S_SEQ: case IR_S_FOR:
        return mc->ok;
    case IR_S_BLOCK:
        mc->ok = mc->ok && match_fill_block(mc, s);
        return false;
    default:
        mc->ok = false;
        return false;
    }
}

static bool is_pad_copy(ir_stmt *a, const ir_buffer *p, pad_copy *out)
{
    const ir_buffer *xp = a->buf;
    const ir_stmt *body = a->body[0];
    if (!xp->filled || xp->dtype != p->dtype || xp->ndim != p->ndim || xp->ndim > MAXD ||
        !body || body->kind != IR_S_SEQ || body->nbody < 2)
        return false;
    match_ctx mc = {p, xp, out, false, false, true};
    ir_stmt_walk(body->body[0], match_fill, NULL, &mc);
    if (!mc.ok || !mc.have_k || !mc.have_fill)
        return false;
    for (int i = 1; i < body->nbody; i++)
        if (ir_stmt_stores_to(body->body[i], xp))
            return false;
    out->xp = (ir_buffer *)xp;
    return true;
}

/* The first pad copy of p in the statement at *slot. */
static bool find_copy(ir_stmt **slot, const ir_buffer *p, pad_copy *out)
{
    ir_stmt *s = *slot;
    if (!s)
        return false;
    if (s->kind == IR_S_ALLOC && is_pad_copy(s, p, out)) {
        out->slot = slot;
        return true;
    }
    for (int i = 0; i < s->nbody; i++)
        if (find_copy(&s->body[i], p, out))
            return true;
    return find_copy(&s->init, p, out) || find_copy(&s->orelse, p, out);
}

/* ---------------------------------------------------------------- rewriting accesses */

/* Rewrites loads (and stores) of `from` into accesses of `to` at the same
 * indices plus `off`.  Loads get new nodes, so an expression reached twice
 * is not moved twice. */
typedef struct move_ctx {
    ir_module *m;
    const ir_buffer *from;
    ir_buffer *to;
    const int64_t *off;
    const int *perm;       /* or NULL: to's dimension d is from's perm[d] */
} move_ctx;

static ir_expr **moved_index(move_ctx *c, ir_expr *const *idx, int n)
{
    ir_expr **out = ir_alloc(c->m->arena, sizeof *out * (size_t)n);
    for (int d = 0; d < n; d++) {
        ir_expr *e = idx[c->perm ? c->perm[d] : d];
        out[d] = c->off[d] ? ir_binary(c->m, IR_ADD, e, ir_int(c->m, c->off[d])) : e;
    }
    return out;
}

static void move_expr(move_ctx *c, ir_expr **slot)
{
    ir_expr *x = *slot;
    if (!x)
        return;
    for (int i = 0; i < x->nargs; i++)
        move_expr(c, &x->args[i]);
    move_expr(c, &x->a);
    move_expr(c, &x->b);
    move_expr(c, &x->c);
    if (x->kind == IR_LOAD && x->buf == c->from)
        *slot = ir_load(c->m, c->to, moved_index(c, x->args, x->nargs), x->nargs);
}

static void move_stmt(move_ctx *c, ir_stmt *s)
{
    if (!s)
        return;
    for (int i = 0; i < s->nargs; i++)
        move_expr(c, &s->args[i]);
    if (s->kind == IR_S_STORE && s->buf == c->from) {
        s->args = moved_index(c, s->args, s->nargs);
        s->buf = c->to;
    }
    move_expr(c, &s->value);
    move_expr(c, &s->cond);
    move_expr(c, &s->lo);
    move_expr(c, &s->hi);
    for (int i = 0; i < s->niters; i++)
        move_expr(c, &s->iters[i].binding);
    for (int i = 0; i < s->nbody; i++)
        move_stmt(c, s->body[i]);
    move_stmt(c, s->init);
    move_stmt(c, s->orelse);
}

/* Does every access of p have all of p's indices (so it can move)? */
typedef struct index_ctx {
    const ir_buffer *p;
    bool ok;
} index_ctx;

static bool full_index_expr(const ir_expr *x, void *ctx)
{
    index_ctx *c = ctx;
    if (x->kind == IR_LOAD && x->buf == c->p && x->nargs != c->p->ndim)
        c->ok = false;
    return c->ok;
}

static bool full_index_stmt(const ir_stmt *s, void *ctx)
{
    index_ctx *c = ctx;
    if (s->kind == IR_S_STORE && s->buf == c->p && s->nargs != c->p->ndim)
        c->ok = false;
    return c->ok;
}

/* ---------------------------------------------------------------- the border fill */

/* Unused names for the fill's loops: border<i>_<d>. */
static const char *fresh(ir_module *m, const ir_func *f, const char *base)
{
    const char *name = base;
    for (int n = 1; sch_name_used(f, name) || sch_name_used(f, ir_sprintf(m->arena, "v%s", name)); n++)
        name = ir_sprintf(m->arena, "%s_%d", base, n);
    return name;
}

/* The dimension of p whose elements the threads of f share out: the one
 * dimension that every store to p indexes with the variable of a parallel
 * loop around it (through the block bindings and lets between them), or -1
 * when a store runs outside a parallel loop, no dimension or more than one
 * takes its variable, or two stores differ.  A 1x1 convolution parallel
 * over panels of output channels gives its output's channel dimension. */
typedef struct split_ctx {
    const ir_buffer *p;
    const ir_var *tainted[64];   /* the parallel loop's variable, and what depends on it */
    int ntainted;
    int dim;                     /* -2: no store seen yet */
} split_ctx;

static bool tainted_expr(const split_ctx *c, const ir_expr *e)
{
    for (int i = 0; i < c->ntainted; i++)
        if (ir_expr_uses_var(e, c->tainted[i]))
            return true;
    return false;
}

static void taint(split_ctx *c, const ir_var *v, const ir_expr *e)
{
    if (c->ntainted > 0 && c->ntainted < 64 && tainted_expr(c, e))
        c->tainted[c->ntainted++] = v;
}

static void split_walk(split_ctx *c, const ir_stmt *s)
{
    if (!s || c->dim == -1)
        return;
    int saved = c->ntainted;
    switch (s->kind) {
    case IR_S_FOR:
        if (s->for_kind == IR_FOR_PARALLEL && c->ntainted == 0)
            c->tainted[c->ntainted++] = s->var;
        break;
    case IR_S_LET:
        taint(c, s->var, s->value);
        break;
    case IR_S_BLOCK:
        for (int i = 0; i < s->niters; i++)
            if (s->iters[i].binding)
                taint(c, s->iters[i].var, s->iters[i].binding);
        split_walk(c, s->init);
        break;
    case IR_S_STORE:
        if (s->buf == c->p) {
            int dim = -1, n = 0;
            for (int d = 0; d < s->nargs; d++)
                if (tainted_expr(c, s->args[d]))
                    dim = d, n++;
            c->dim = n == 1 && (c->dim == -2 || c->dim == dim) ? dim : -1;
        }
        break;
    case IR_S_IF:
        split_walk(c, s->orelse);
        break;
    default:
        break;
    }
    for (int i = 0; i < s->nbody; i++)
        split_walk(c, s->body[i]);
    c->ntainted = saved;
}

static int thread_split_dim(const ir_func *f, const ir_buffer *p)
{
    split_ctx c = {.p = p, .dim = -2};
    split_walk(&c, f->body);
    return c.dim < 0 ? -1 : c.dim;
}

/* Where a loop of the writer runs along a dimension of p: its iteration v
 * stores p at scale * v + off + b, 0 <= b < scale (one element, or a
 * panel of scale: a loop over panels of output channels). */
typedef struct fill_at {
    ir_var *v;             /* NULL: not a loop's dimension */
    int64_t scale, off;
} fill_at;

/* One slab of p's border, each of its elements set to `fill`: dimension d
 * on one side of the box [lo, lo + n) (side 0 below it, 1 above), every
 * other dimension e at at[e] when at and at[e].v are given (a loop of the
 * writer: the slab goes inside that loop), else inside the box when
 * inside[e], else whole.  Its loops run in p's order,
 * the last one vectorized when 8 or more long; dimension `split`, when not
 * -1, takes the variable `outer` of a loop around the slab that the caller
 * builds, under a test of the slab's part of it when that is not all of
 * it.  NULL when the slab is empty.  *region numbers the slabs of a
 * function (their loops' names). */
static ir_stmt *border_slab(ir_module *m, const ir_func *f, ir_buffer *p, const int64_t *n,
                            const int64_t *lo, double fill, int d, int side, const bool *inside,
                            const fill_at *at, int split, ir_var *outer, int *region)
{
    int nd = p->ndim;
    int64_t from[MAXD], to[MAXD];
    bool fixed[MAXD];
    for (int e = 0; e < nd; e++) {
        fixed[e] = e != d && at && at[e].v;
        from[e] = fixed[e] ? 0 : inside[e] ? lo[e] : 0;
        to[e] = fixed[e] ? at[e].scale : inside[e] ? lo[e] + n[e] : p->shape[e];
    }
    from[d] = side ? lo[d] + n[d] : 0;
    to[d] = side ? p->shape[d] : lo[d];
    if (to[d] <= from[d])
        return NULL;
    int r = (*region)++;
    ir_var *loop[MAXD];
    ir_itervar *iters = ir_alloc(m->arena, sizeof *iters * (size_t)nd);
    ir_expr *idx[MAXD];
    for (int e = 0; e < nd; e++) {
        const char *ln = fresh(m, f, ir_sprintf(m->arena, "border%d_%d", r, e));
        loop[e] = e == split ? outer : fixed[e] && at[e].scale == 1 ? NULL : ir_var_new(m, ln, IR_I64);
        ir_expr *x = loop[e] && !fixed[e] ? ir_varref(m, loop[e]) : NULL;
        if (fixed[e]) {
            /* scale * v + off (+ the panel's loop) */
            x = ir_varref(m, at[e].v);
            if (at[e].scale != 1)
                x = ir_binary(m, IR_MUL, x, ir_int(m, at[e].scale));
            if (at[e].off)
                x = ir_binary(m, IR_ADD, x, ir_int(m, at[e].off));
            if (loop[e])
                x = ir_binary(m, IR_ADD, x, ir_varref(m, loop[e]));
        }
        ir_var *iv = ir_var_new(m, ir_sprintf(m->arena, "v%s", ln), IR_I64);
        iters[e] = (ir_itervar){iv, IR_ITER_SPATIAL, p->shape[e], x};
        idx[e] = ir_varref(m, iv);
    }
    ir_expr *val = ir_dtype_is_float(p->dtype) ? ir_float(m, fill, p->dtype)
                                               : ir_int_typed(m, (int64_t)fill, p->dtype);
    ir_stmt *s = ir_block(m, ir_sprintf(m->arena, "border%d", r), iters, nd, NULL, ir_store(m, p, idx, nd, val));
    for (int e = nd - 1; e >= 0; e--)
        if (e != split && loop[e])
            s = ir_for(m, loop[e], ir_int(m, from[e]), ir_int(m, to[e]),
                       e == nd - 1 && to[e] - from[e] >= 8 ? IR_FOR_VECTORIZED : IR_FOR_SERIAL, s);
    if (split >= 0 && (from[split] > 0 || to[split] < p->shape[split])) {
        /* the slab's part of the split dimension (its border, or the box) */
        ir_expr *in = ir_binary(m, IR_AND, ir_binary(m, IR_GE, ir_varref(m, outer), ir_int(m, from[split])),
                                ir_binary(m, IR_LT, ir_varref(m, outer), ir_int(m, to[split])));
        s = ir_if(m, in, s, NULL);
    }
    return s;
}

/* The fill as nests of its own before the kernel: for each dimension d and
 * side, the slab where d is in the border on that side, the dimensions
 * before d inside the box (their slabs came first) and those after it
 * whole.  When f's threads share p out along a dimension, one parallel
 * loop over it holds all the slabs (each under a test of its part of that
 * dimension when that is not all of it), so that each thread fills the
 * border next to the elements it is about to store: filled by one thread,
 * a line another thread then writes moves between their caches (a 1x1
 * convolution on 14x14 of 320 channels on two threads: 167 -> 135 us
 * alone). */
static ir_stmt *border_fill_before(ir_module *m, const ir_func *f, ir_buffer *p, const int64_t *n,
                                   const int64_t *lo, double fill)
{
    int nd = p->ndim;
    /* (only when the last dimension has a border: otherwise the border's
     * rows are lines of their own, which no store of the elements
     * touches (channels last); nor along that dimension, the slabs'
     * vector loop) */
    int split = lo[nd - 1] > 0 || p->shape[nd - 1] > lo[nd - 1] + n[nd - 1] ? thread_split_dim(f, p) : -1;
    if (split == nd - 1)
        split = -1;
    ir_var *outer = NULL;
    if (split >= 0)
        outer = ir_var_new(m, fresh(m, f, ir_sprintf(m->arena, "border_%d", split)), IR_I64);
    ir_stmt *seq = ir_seq_new(m);
    int region = 0;
    bool inside[MAXD] = {false};
    for (int d = 0; d < nd; d++) {
        for (int side = 0; side < 2; side++) {
            ir_stmt *s = border_slab(m, f, p, n, lo, fill, d, side, inside, NULL, split, outer, &region);
            if (s)
                ir_seq_append(m, seq, s);
        }
        inside[d] = true;
    }
    if (split < 0 || region == 0)
        return seq;
    ir_stmt *par = ir_seq_new(m);
    ir_seq_append(m, par, ir_for(m, outer, ir_int(m, 0), ir_int(m, p->shape[split]), IR_FOR_PARALLEL, seq));
    return par;
}

/* The dimension of p that a loop of the writer walks (its variable v):
 * every store to p below the loop indexes exactly one dimension with v,
 * at v + off, or at scale * v + off + terms of other variables (a panel:
 * f_o * 32 + f_i) with a scale above 1, one scale and off for all of them,
 * through the block bindings and lets between (dim -1: not so; -2: no
 * store seen yet). */
typedef struct walk_ctx {
    const ir_buffer *p;
    const ir_var *v;
    const ir_var *var[128];      /* the bindings and lets in scope */
    const ir_expr *value[128];
    int n;
    int dim;
    int64_t scale, off;
} walk_ctx;

static const ir_expr *walk_value(void *ctx, const ir_var *v)
{
    const walk_ctx *c = ctx;
    for (int i = c->n - 1; i >= 0; i--)
        if (c->var[i] == v)
            return c->value[i];
    return NULL;
}

static void walk_bind(walk_ctx *c, const ir_var *v, const ir_expr *e)
{
    if (c->n == 128)
        c->dim = -1;
    else if (e) {
        c->var[c->n] = v;
        c->value[c->n++] = e;
    }
}

static void walk_store(walk_ctx *c, const ir_stmt *s)
{
    int dim = -1;
    int64_t scale = 0, off = 0;
    for (int d = 0; d < s->nargs; d++) {
        ir_affine a = {0};
        ir_affine_rules r = {.value = walk_value, .ctx = c};
        if (!ir_affine_add(&a, s->args[d], 1, &r, 0)) {
            c->dim = -1;
            return;
        }
        int64_t k = ir_affine_coef(&a, c->v);
        if (k == 0)
            continue;
        bool alone = k > 1 && dim < 0;   /* v + off, nothing else; or a panel */
        if (k == 1 && dim < 0) {
            alone = true;
            for (int i = 0; i < a.n; i++)
                if (a.coef[i] != 0 && a.var[i] != c->v)
                    alone = false;
        }
        if (!alone) {
            c->dim = -1;
            return;
        }
        dim = d;
        scale = k;
        off = a.c;
    }
    if (dim < 0 || (c->dim >= 0 && (c->dim != dim || c->scale != scale || c->off != off)))
        c->dim = -1;
    else
        c->dim = dim, c->scale = scale, c->off = off;
}

static void walk_dim(walk_ctx *c, const ir_stmt *s)
{
    if (!s || c->dim == -1)
        return;
    int saved = c->n;
    switch (s->kind) {
    case IR_S_LET:
        walk_bind(c, s->var, s->value);
        break;
    case IR_S_BLOCK:
        for (int i = 0; i < s->niters; i++)
            walk_bind(c, s->iters[i].var, s->iters[i].binding);
        walk_dim(c, s->init);
        break;
    case IR_S_IF:
        walk_dim(c, s->orelse);
        break;
    case IR_S_STORE:
        if (s->buf == c->p)
            walk_store(c, s);
        break;
    default:
        break;
    }
    for (int i = 0; i < s->nbody; i++)
        walk_dim(c, s->body[i]);
    c->n = saved;
}

/* The loops of the writer that its part of the fill goes into: from f's
 * body down, through sequences (to the one statement that stores p),
 * allocations and lets, each serial or parallel loop L_j whose variable
 * runs over the box of a dimension dim[j] of p that every store below it
 * indexes with that variable alone, or as panels of scale[j] (walk_dim;
 * scale[j] times L_j's trip count is the box), not p's last dimension and
 * not one an outer loop of the chain walks.  An iteration of L_1 .. L_j
 * then stores the part of p where dim[1..j] are at their variables (their
 * panels), and runs once per iteration of the loops outside it: the
 * border of that part, stored there, is stored once and next to the
 * elements it shares lines with.  (Along the last dimension the loop runs
 * along the elements of a line; and a panel of channels-last channels
 * would cut each border pixel, a run of lines the fill before the kernel
 * stores at streaming speed, into strided pieces that each miss: ResNet-18
 * layer4 3x3 on 7x7 of 512 channels in panels of 32, 2-3.5% slower.)
 * A serial loop on the way that is not such a loop (a loop over panels of
 * output channels around a parallel loop over rows) is passed through as
 * a guard: the fill below it runs in its first iteration only, so still
 * once, and on the threads of the parallel loop inside it. */
typedef struct fill_chain {
    int k;
    ir_stmt **slot[MAXD];        /* where L_j sits */
    ir_stmt *loop[MAXD];
    int dim[MAXD];
    int64_t scale[MAXD];         /* L_j's iteration stores a panel of scale along dim[j] */
    int guards[MAXD];            /* how many guard loops are around L_j */
    ir_stmt *guard[MAXD];
    int nguard;
} fill_chain;

static void find_chain(ir_func *f, const ir_buffer *p, const int64_t *n, const int64_t *lo,
                       fill_chain *ch)
{
    bool taken[MAXD] = {false};
    ch->k = 0;
    ch->nguard = 0;
    ir_stmt **slot = &f->body;
    while (*slot && ch->k < MAXD) {
        ir_stmt *s = *slot;
        if (s->kind == IR_S_SEQ) {
            ir_stmt **next = NULL;
            for (int i = 0; i < s->nbody; i++)
                if (ir_stmt_stores_to(s->body[i], p)) {
                    if (next)
                        return;
                    next = &s->body[i];
                }
            slot = next;
            continue;
        }
        if ((s->kind == IR_S_ALLOC || s->kind == IR_S_LET) && s->nbody == 1) {
            slot = &s->body[0];
            continue;
        }
        if (s->kind != IR_S_FOR || s->nbody != 1 || ir_for_step(s) != 1 ||
            (s->for_kind != IR_FOR_SERIAL && s->for_kind != IR_FOR_PARALLEL) ||
            s->lo->kind != IR_INT || s->hi->kind != IR_INT)
            return;
        walk_ctx c = {.p = p, .v = s->var, .dim = -2};
        walk_dim(&c, s->body[0]);
        int d = c.dim;
        if (d < 0 || d == p->ndim - 1 || taken[d] ||
            (s->hi->ival - s->lo->ival) * c.scale != n[d] || s->lo->ival * c.scale + c.off != lo[d]) {
            if (s->for_kind != IR_FOR_SERIAL || s->hi->ival <= s->lo->ival || ch->nguard == MAXD)
                return;
            ch->guard[ch->nguard++] = s;
            slot = &s->body[0];
            continue;
        }
        taken[d] = true;
        ch->slot[ch->k] = slot;
        ch->loop[ch->k] = s;
        ch->guards[ch->k] = ch->nguard;
        ch->scale[ch->k] = c.scale;
        ch->dim[ch->k++] = d;
        slot = &s->body[0];
    }
}

/* Whether a store to p runs under a parallel loop not in the chain (the
 * threads share p out below it: the chain's fill would be one thread's). */
static bool parallel_outside(const ir_stmt *s, const ir_buffer *p, const fill_chain *ch, bool in_par)
{
    if (!s)
        return false;
    if (s->kind == IR_S_FOR && s->for_kind == IR_FOR_PARALLEL) {
        bool mine = false;
        for (int j = 0; j < ch->k; j++)
            mine |= ch->loop[j] == s;
        in_par |= !mine;
    }
    if (s->kind == IR_S_STORE)
        return in_par && s->buf == p;
    for (int i = 0; i < s->nbody; i++)
        if (parallel_outside(s->body[i], p, ch, in_par))
            return true;
    return parallel_outside(s->orelse, p, ch, in_par) || parallel_outside(s->init, p, ch, in_par);
}

/* s under a test that the first n guard loops of ch are in their first
 * iteration (s itself when n is 0 or s is NULL). */
static ir_stmt *guarded(ir_module *m, const fill_chain *ch, int n, ir_stmt *s)
{
    if (!s || n == 0)
        return s;
    ir_expr *cond = NULL;
    for (int i = 0; i < n; i++) {
        ir_expr *first = ir_binary(m, IR_EQ, ir_varref(m, ch->guard[i]->var), ir_int(m, ch->guard[i]->lo->ival));
        cond = cond ? ir_binary(m, IR_AND, cond, first) : first;
    }
    return ir_if(m, cond, s, NULL);
}

static ir_stmt *seq_of(ir_module *m, ir_stmt *a, ir_stmt *b, ir_stmt *c)
{
    ir_stmt *seq = ir_seq_new(m);
    if (a)
        ir_seq_append(m, seq, a);
    ir_seq_append(m, seq, b);
    if (c)
        ir_seq_append(m, seq, c);
    return seq;
}

/* Stores `fill` into every element of p outside the box [lo, lo + n) that
 * f stores (the writer's elements, moved by the border), before f's
 * stores of p end.  No access of f to p reads the border (f's accesses
 * were inside p's shape before it grew), so where the stores go does not
 * change a result, only which cache lines are hot: when f stores p from a
 * chain of loops (find_chain), the border goes into them, each part next
 * to the elements whose lines it shares.  In the loop L_j (dimension d_j):
 * before it, d_j's border below the box, after it the border above, at
 * the outer loops' d_1 .. d_(j-1) and every other dimension whole (when
 * L_j is parallel: inside it, with its first and its last iteration, so
 * that a thread fills them, not one before the threads start); at the top
 * of the innermost one's body, what is outside the box in the other
 * dimensions at the chain's d_1 .. d_k (a row's side columns, before the
 * row); each under the test of the guard loops around its place.  A
 * max pool of VGG-11 (112x112 rows of 64 channels, 2x2 s2) filled its
 * side columns before the kernel, a line each, at one thread 120-160 us
 * of ~1000.  Otherwise, and when a parallel loop not in the chain stores
 * p, the fill is nests of its own before the kernel (border_fill_before). */
static void border_fill(ir_module *m, ir_func *f, ir_buffer *p, const int64_t *n, const int64_t *lo,
                        double fill)
{
    fill_chain ch;
    find_chain(f, p, n, lo, &ch);
    if (ch.k == 0 || parallel_outside(f->body, p, &ch, false)) {
        ir_stmt *seq = border_fill_before(m, f, p, n, lo, fill);
        ir_seq_append(m, seq, f->body);
        f->body = seq;
        return;
    }
    int nd = p->ndim, region = 0;
    fill_at at[MAXD] = {{0}};
    for (int j = 0; j < ch.k; j++)
        at[ch.dim[j]] = (fill_at){ch.loop[j]->var, ch.scale[j],
                                  lo[ch.dim[j]] - ch.scale[j] * ch.loop[j]->lo->ival};
    /* innermost first: a loop's slot may be its outer loop's body, which
     * that loop's own fill then wraps */
    bool inside[MAXD] = {false};
    ir_stmt *rest = ir_seq_new(m);
    for (int d = 0; d < nd; d++) {
        if (at[d].v)
            continue;
        for (int side = 0; side < 2; side++) {
            ir_stmt *s = border_slab(m, f, p, n, lo, fill, d, side, inside, at, -1, NULL, &region);
            if (s)
                ir_seq_append(m, rest, s);
        }
        inside[d] = true;
    }
    ir_stmt *last = ch.loop[ch.k - 1];
    if (rest->nbody > 0)
        last->body[0] = seq_of(m, guarded(m, &ch, ch.guards[ch.k - 1], rest), last->body[0], NULL);
    bool whole[MAXD] = {false};
    for (int j = ch.k - 1; j >= 0; j--) {
        ir_stmt *l = ch.loop[j];
        int d = ch.dim[j];
        /* the outer loops' dimensions at their variables, the rest whole */
        fill_at out[MAXD] = {{0}};
        for (int i = 0; i < j; i++)
            out[ch.dim[i]] = at[ch.dim[i]];
        ir_stmt *below = border_slab(m, f, p, n, lo, fill, d, 0, whole, out, -1, NULL, &region);
        ir_stmt *above = border_slab(m, f, p, n, lo, fill, d, 1, whole, out, -1, NULL, &region);
        if (!below && !above)
            continue;
        if (l->for_kind == IR_FOR_PARALLEL) {
            if (below)
                below = ir_if(m, ir_binary(m, IR_EQ, ir_varref(m, l->var), ir_int(m, l->lo->ival)), below, NULL);
            if (above)
                above = ir_if(m, ir_binary(m, IR_EQ, ir_varref(m, l->var), ir_int(m, l->hi->ival - 1)), above, NULL);
            l->body[0] = seq_of(m, guarded(m, &ch, ch.guards[j], below), l->body[0],
                                guarded(m, &ch, ch.guards[j], above));
        } else {
            *ch.slot[j] = seq_of(m, guarded(m, &ch, ch.guards[j], below), l,
                                 guarded(m, &ch, ch.guards[j], above));
        }
    }
}

/* ---------------------------------------------------------------- the pass */

/* A parameter of a graph call's function that T is passed to. */
typedef struct use {
    ir_func *f;
    ir_buffer *p;          /* the parameter T binds to */
    bool writes;
    bool has_copy;
    pad_copy copy;
    bool drop;             /* the copy goes: T's border holds what it would */
    int call;              /* the graph call */
    bool flat;             /* f sees T with merged dimensions (flat_elementwise) */
    int grouped;           /* the dimension f's byte dot products read T along in
                            * place (grouped_dim), or -1 */
} use;

/* Who passes what, built once: the (call, argument) pairs passing each
 * graph buffer, in call order, and how many calls run each function (2
 * when a load call runs it too), so the pass costs about n log n in the
 * graph's calls, not n^2.  Calls marked in skip (when given) count as
 * gone. */
typedef struct graph_uses {
    const void **bufs;     /* the graph's buffers, sorted by address */
    int nbufs;
    int *start;            /* pairs of bufs[i]: start[i] .. start[i + 1] */
    int *call, *arg;
    const void **funcs;    /* the module's functions, sorted by address */
    int nfuncs;
    int *ncalls;           /* per funcs[i] */
} graph_uses;

static void index_uses(ir_module *m, graph_uses *gu, const bool *skip)
{
    ir_graph *g = &m->graph;
    gu->nbufs = g->nbufs;
    gu->bufs = pass_sorted_ptrs(m, (void *const *)g->bufs, g->nbufs);
    gu->nfuncs = m->nfuncs;
    gu->funcs = pass_sorted_ptrs(m, (void *const *)m->funcs, m->nfuncs);
    gu->ncalls = ir_alloc(m->arena, sizeof *gu->ncalls * (size_t)(m->nfuncs + 1));
    memset(gu->ncalls, 0, sizeof *gu->ncalls * (size_t)(m->nfuncs + 1));
    gu->start = ir_alloc(m->arena, sizeof *gu->start * (size_t)(g->nbufs + 2));
    memset(gu->start, 0, sizeof *gu->start * (size_t)(g->nbufs + 2));
    int total = 0;
    for (int i = 0; i < g->ncalls; i++) {
        if (skip && skip[i])
            continue;
        int f = pass_find_ptr(gu->funcs, gu->nfuncs, g->calls[i].fn);
        if (f >= 0)
            gu->ncalls[f]++;
        for (int a = 0; a < g->calls[i].nargs; a++) {
            int b = pass_find_ptr(gu->bufs, gu->nbufs, g->calls[i].args[a]);
            if (b >= 0) {
                gu->start[b + 2]++;
                total++;
            }
        }
    }
    for (int l = 0; l < g->nloads; l++) {
        int f = pass_find_ptr(gu->funcs, gu->nfuncs, g->loads[l].fn);
        if (f >= 0)
            gu->ncalls[f] = 2;
    }
    for (int b = 0; b < g->nbufs; b++)
        gu->start[b + 2] += gu->start[b + 1];
    gu->call = ir_alloc(m->arena, sizeof *gu->call * (size_t)(total + 1));
    gu->arg = ir_alloc(m->arena, sizeof *gu->arg * (size_t)(total + 1));
    /* start[b + 1] is now where b's pairs begin; filling moves it to where
     * they end, which is start[b + 1] as the index needs it */
    for (int i = 0; i < g->ncalls; i++)
        for (int a = 0; a < g->calls[i].nargs && !(skip && skip[i]); a++) {
            int b = pass_find_ptr(gu->bufs, gu->nbufs, g->calls[i].args[a]);
            if (b >= 0) {
                int k = gu->start[b + 1]++;
                gu->call[k] = i;
                gu->arg[k] = a;
            }
        }
}

static int calls_of(const graph_uses *gu, const ir_func *f)
{
    int i = pass_find_ptr(gu->funcs, gu->nfuncs, f);
    return i < 0 ? 0 : gu->ncalls[i];
}

static bool flat_elementwise(const ir_func *f, const ir_buffer *p);
static int grouped_dim(const ir_func *f, const ir_buffer *p);
static bool same_shape(const ir_buffer *a, const ir_buffer *b);

/* The parameters T is passed to, when T can take a border: one writer,
 * each function called once, every access with all indices (with flat:
 * a function that sees T in another shape - merged dimensions, a fused
 * reshape - may be an elementwise kernel of them, use.flat).  Returns their number, or 0. */
static int uses_flat(const ir_graph *g, const graph_uses *gu, const ir_buffer *t, use *u, int cap,
                     bool flat)
{
    int n = 0, writers = 0;
    int b = pass_find_ptr(gu->bufs, gu->nbufs, t);
    for (int k = b < 0 ? 0 : gu->start[b]; b >= 0 && k < gu->start[b + 1]; k++) {
        const ir_graph_call *c = &g->calls[gu->call[k]];
        int a = gu->arg[k];
        if (calls_of(gu, c->fn) != 1 || n == cap)
            return 0;
        ir_buffer *p = c->fn->params[a];
        index_ctx ic = {p, true};
        ir_stmt_walk(c->fn->body, full_index_stmt, full_index_expr, &ic);
        /* a parameter of another shape (merged dimensions, or T seen
         * through a reshape the function fused) indexes T's storage in
         * its own dimensions, not T's */
        bool merged = !same_shape(p, t);
        if (!ic.ok || (merged && !(flat && flat_elementwise(c->fn, p))))
            return 0;
        u[n] = (use){c->fn, p, ir_stmt_stores_to(c->fn->body, p), false, {0}, false, gu->call[k],
                     merged, -1};
        writers += u[n].writes;
        if (!u[n].writes && !merged)
            u[n].has_copy = find_copy(&c->fn->body, p, &u[n].copy);
        if (!u[n].writes && !merged && !u[n].has_copy)
            u[n].grouped = grouped_dim(c->fn, p);
        n++;
    }
    return writers == 1 ? n : 0;
}

static int uses_of(const ir_graph *g, const graph_uses *gu, const ir_buffer *t, use *u, int cap)
{
    return uses_flat(g, gu, t, u, cap, false);
}

static int64_t *padded_shape(ir_module *m, const ir_buffer *t, const int64_t *lo, const int64_t *hi)
{
    int64_t *shape = ir_alloc(m->arena, sizeof *shape * (size_t)t->ndim);
    for (int d = 0; d < t->ndim; d++)
        shape[d] = t->shape[d] + lo[d] + hi[d];
    return shape;
}

static void give_border(ir_module *m, ir_buffer *t, const use *u, int n, const int64_t *lo,
                        const int64_t *hi, double fill)
{
    int64_t size[MAXD];
    for (int d = 0; d < t->ndim; d++)
        size[d] = t->shape[d];
    for (int i = 0; i < n; i++) {
        ir_buffer *p = u[i].p;
        p->shape = padded_shape(m, p, lo, hi);
        move_ctx mv = {m, p, p, lo, NULL};
        move_stmt(&mv, u[i].f->body);
        if (u[i].drop) {
            /* xp[t] is p[t + k + lo]: reads of xp read p; the fill nest goes */
            const pad_copy *c = &u[i].copy;
            int64_t off[MAXD];
            for (int d = 0; d < t->ndim; d++)
                off[d] = c->k[d] + lo[d];
            ir_stmt *body = (*c->slot)->body[0];
            ir_stmt *rest = ir_seq(m, body->body + 1, body->nbody - 1);
            move_ctx rd = {m, c->xp, p, off, NULL};
            move_stmt(&rd, rest);
            *c->slot = rest;
        }
        if (u[i].writes)
            border_fill(m, u[i].f, p, size, lo, fill);
        sch_update_blocks(m, u[i].f->body);
    }
    t->shape = padded_shape(m, t, lo, hi);
}

/* ---------------------------------------------------------------- channels-last temporaries
 *
 * A pad copy may also store the dimensions in another order: pad(x, d)
 * stores x's dimension d innermost (an int8 convolution's input channels,
 * whose 4 bytes a dot product reads at once: passes/schedule/int8.c).
 * Such a copy of T goes when T itself is stored in that order, with the
 * border: T's dimension perm[q] at T's dimension q, offset by the border.
 * Every access of T (the writer's stores, any reader's loads) reads the
 * same element there, so the program computes the same; what makes it
 * faster is that nothing else reads T across the new order, and so T
 * joins a set of temporaries that change order together:
 *   - the temporaries of an elementwise kernel (a perfect nest around one
 *     block of spatial variables, each bound to a loop, that reads and
 *     stores them at its own index), whose nest is rebuilt in the new
 *     order, its vector loop innermost (a QuantizeLinear between two
 *     convolutions, a residual Add);
 *   - any other kernel may access one only where its innermost loop does
 *     not run along T's last dimension while leaving the new innermost one
 *     (a contraction's write-back vectorized along the output channels
 *     stores contiguously after the change, and strided before);
 * and every temporary of the set has one writer and functions that run
 * once, as for a border.  A set that meets any other access keeps its
 * layout (its copies stay). */

/* Whether every access of f to a parameter of p's shape (p among them)
 * is at one list of indices, the same for all, and every other access is
 * at constant indices (a scale): an elementwise kernel over merged
 * dimensions (passes/schedule/merge.c), which reads and stores element k
 * of each, in whatever order the buffers hold their elements, as long as
 * they all hold them in the same one.  A kernel that also reads another
 * buffer along a dimension (a bias by channel) or works in a local tile
 * (a 1x1 convolution over merged pixels, which writes p at one index too)
 * pairs elements by their place in p's order, not by k. */
typedef struct flat_ctx {
    const ir_func *f;
    const ir_buffer *p;
    ir_expr *const *idx;
    int n;
    bool ok;
} flat_ctx;

static int64_t numel(const ir_buffer *b)
{
    int64_t n = 1;
    for (int d = 0; d < b->ndim; d++)
        if (__builtin_mul_overflow(n, b->shape[d], &n))
            return -1;
    return n;
}

static bool same_shape(const ir_buffer *a, const ir_buffer *b)
{
    if (a->ndim != b->ndim)
        return false;
    for (int d = 0; d < a->ndim; d++)
        if (a->shape[d] != b->shape[d])
            return false;
    return true;
}

static bool constant_indices(ir_expr *const *idx, int n)
{
    for (int d = 0; d < n; d++)
        if (idx[d]->kind != IR_INT)
            return false;
    return true;
}

static void flat_access(flat_ctx *c, const ir_buffer *b, ir_expr *const *idx, int n)
{
    bool param = false;
    for (int i = 0; i < c->f->nparams; i++)
        param |= c->f->params[i] == b;
    if (!param || !same_shape(b, c->p)) {
        c->ok &= constant_indices(idx, n);
        return;
    }
    if (!c->idx) {
        c->idx = idx;
        c->n = n;
        return;
    }
    for (int d = 0; d < n && c->ok; d++)
        c->ok = n == c->n && ir_expr_equal(idx[d], c->idx[d]);
}

static bool flat_expr(const ir_expr *x, void *p)
{
    if (x->kind == IR_LOAD)
        flat_access(p, x->buf, x->args, x->nargs);
    return ((flat_ctx *)p)->ok;
}

static bool flat_stmt(const ir_stmt *s, void *p)
{
    if (s->kind == IR_S_STORE)
        flat_access(p, s->buf, s->args, s->nargs);
    return ((flat_ctx *)p)->ok;
}

static bool flat_elementwise(const ir_func *f, const ir_buffer *p)
{
    flat_ctx c = {f, p, NULL, 0, true};
    ir_stmt_walk(f->body, flat_stmt, flat_expr, &c);
    return c.ok && c.idx;
}

static bool identity(const int *perm, int n)
{
    for (int d = 0; d < n; d++)
        if (perm[d] != d)
            return false;
    return true;
}

/* An elementwise kernel's nest: loops[0..n), outermost first, perfectly
 * nested around block. */
typedef struct ew_nest {
    ir_stmt *loops[MAXD];
    int n;
    ir_stmt *block;
} ew_nest;

static ir_stmt *only(ir_stmt *s)
{
    while (s && s->kind == IR_S_SEQ && s->nbody == 1)
        s = s->body[0];
    return s;
}

static bool ew_of(const ir_func *f, ew_nest *e)
{
    ir_stmt *s = only(f->body);
    e->n = 0;
    for (; s && s->kind == IR_S_FOR; s = only(s->body[0])) {
        if (e->n == MAXD || s->nbody != 1 || ir_for_step(s) != 1 || !ir_expr_is_int(s->lo, 0) ||
            !s->hi || s->hi->kind != IR_INT)
            return false;
        e->loops[e->n++] = s;
    }
    if (!s || s->kind != IR_S_BLOCK || s->init || s->nbody != 1 || !s->body[0] ||
        s->body[0]->kind != IR_S_STORE || s->niters > MAXD)
        return false;
    bool bound[MAXD] = {false};
    for (int i = 0; i < s->niters; i++) {
        const ir_itervar *it = &s->iters[i];
        if (it->kind != IR_ITER_SPATIAL)
            return false;
        if (it->binding->kind == IR_INT)
            continue;
        int k = 0;
        while (k < e->n && (it->binding->kind != IR_VAR || e->loops[k]->var != it->binding->var))
            k++;
        if (k == e->n || bound[k] || e->loops[k]->hi->ival != it->extent)
            return false;
        bound[k] = true;
    }
    for (int k = 0; k < e->n; k++)
        if (!bound[k])
            return false;
    e->block = s;
    return true;
}

/* The accesses of a kernel's parameter p: whether all are at the block's
 * own index (own), whether any runs its innermost loop along p's last
 * dimension but not along dimension chan (bad), and the dimension that
 * the byte loads of p in contractions run their innermost loop along
 * (grouped: that dimension + 1; 0 none, -1 not one for all). */
typedef struct access_ctx {
    const ir_buffer *p;
    int chan;
    const ir_stmt *loop, *blk;
    bool own, bad, any;
    int grouped;
} access_ctx;

static bool uses_loop(const access_ctx *c, const ir_expr *e)
{
    const ir_var *v = c->loop->var;
    if (ir_expr_uses_var(e, v))
        return true;
    for (int i = 0; c->blk && i < c->blk->niters; i++)
        if (ir_expr_uses_var(c->blk->iters[i].binding, v) &&
            ir_expr_uses_var(e, c->blk->iters[i].var))
            return true;
    return false;
}

static void note_access(access_ctx *c, ir_expr *const *args, int n)
{
    c->any = true;
    c->own &= c->blk && ir_block_own_index(c->blk, args, n);
    if (c->loop && n == c->p->ndim && uses_loop(c, args[n - 1]) && !uses_loop(c, args[c->chan]))
        c->bad = true;
}

static bool in_contraction(const ir_stmt *blk)
{
    for (int i = 0; blk && i < blk->niters; i++)
        if (blk->iters[i].kind == IR_ITER_REDUCE)
            return true;
    return false;
}

/* A byte load x of p in a contraction: the one dimension of p its
 * innermost loop runs along (the reduce loop an int8 dot product groups
 * by 4: passes/schedule/int8.c), noted in c->grouped. */
static void note_grouped(access_ctx *c, const ir_expr *x)
{
    if ((x->dtype != IR_I8 && x->dtype != IR_U8) || !c->loop || !in_contraction(c->blk) ||
        c->grouped < 0)
        return;
    int dim = -1, n = 0;
    for (int d = 0; d < x->nargs; d++)
        if (uses_loop(c, x->args[d])) {
            dim = d;
            n++;
        }
    if (n != 1 || dim == x->nargs - 1 || (c->grouped && c->grouped != dim + 1))
        c->grouped = -1;
    else
        c->grouped = dim + 1;
}

static bool access_expr(const ir_expr *x, void *p)
{
    access_ctx *c = p;
    if (x->kind == IR_LOAD && x->buf == c->p) {
        note_access(c, x->args, x->nargs);
        note_grouped(c, x);
    }
    return true;
}

static void scan_access(access_ctx *c, const ir_stmt *s)
{
    if (!s)
        return;
    const ir_stmt *loop = c->loop, *blk = c->blk;
    if (s->kind == IR_S_FOR)
        c->loop = s;
    if (s->kind == IR_S_BLOCK)
        c->blk = s;
    if (s->kind == IR_S_STORE && s->buf == c->p)
        note_access(c, s->args, s->nargs);
    for (int i = 0; i < s->nargs; i++)
        ir_expr_walk(s->args[i], access_expr, c);
    ir_expr *ex[4] = {s->value, s->cond, s->lo, s->hi};
    for (int i = 0; i < 4; i++)
        if (ex[i])
            ir_expr_walk(ex[i], access_expr, c);
    for (int i = 0; i < s->niters; i++)
        ir_expr_walk(s->iters[i].binding, access_expr, c);
    scan_access(c, s->init);
    for (int i = 0; i < s->nbody; i++)
        scan_access(c, s->body[i]);
    scan_access(c, s->orelse);
    c->loop = loop;
    c->blk = blk;
}

/* The dimension of p (not its last) that every byte load of p in f's
 * contractions runs its innermost loop along, reading p in place: an
 * int8 1x1 convolution's input channels, 4 of which each dot product
 * reads, from 4 planes of p unless p stores that dimension innermost;
 * else -1. */
static int grouped_dim(const ir_func *f, const ir_buffer *p)
{
    access_ctx c = {p, 0, NULL, NULL, true, false, false, 0};
    scan_access(&c, f->body);
    return c.grouped > 0 ? c.grouped - 1 : -1;
}

/* The nest of e rebuilt with its loops in the order of the block's
 * iteration variables perm[0], perm[1], ...: the innermost vectorized when
 * a loop was, the outermost parallel when a loop was. */
static void reorder_nest(ir_module *m, ir_func *f, const ew_nest *e, const int *perm)
{
    ir_stmt *order[MAXD];
    int n = 0;
    bool par = false, vec = false;
    for (int k = 0; k < e->n; k++) {
        par |= e->loops[k]->for_kind == IR_FOR_PARALLEL;
        vec |= e->loops[k]->for_kind == IR_FOR_VECTORIZED;
    }
    for (int q = 0; q < e->block->niters; q++) {
        const ir_expr *b = e->block->iters[perm[q]].binding;
        for (int k = 0; k < e->n; k++)
            if (b->kind == IR_VAR && e->loops[k]->var == b->var)
                order[n++] = e->loops[k];
    }
    ir_stmt *s = e->block;
    for (int k = n - 1; k >= 0; k--) {
        ir_for_kind kind = k == n - 1 && vec ? IR_FOR_VECTORIZED
                           : k == 0 && par ? IR_FOR_PARALLEL : IR_FOR_SERIAL;
        s = ir_for(m, order[k]->var, order[k]->lo, order[k]->hi, kind, s);
    }
    f->body = s;
}

enum { CL_TEMPS = 256, CL_USES = 16, CL_EW = 2 * CL_TEMPS };

/* The set of temporaries that change order with a seed (see above), their
 * uses, the elementwise kernels among those and how many of them also
 * access at their own index a buffer outside the set (mixed: they move
 * data across the two orders, as a copy would). */
typedef struct cl_set {
    ir_buffer *t[CL_TEMPS];
    use *u[CL_TEMPS];
    int nu[CL_TEMPS];
    int nt;
    int perm[MAXD];
    ir_func *ew[CL_EW];
    ew_nest nest[CL_EW];
    bool follows[CL_EW];   /* its store is in the set: its nest takes the order */
    int new_, mixed, copies;
    int bad;               /* uses that become slower (a flat kernel's buffers must come) */
} cl_set;

static int cl_find(const cl_set *s, const ir_buffer *t)
{
    for (int i = 0; i < s->nt; i++)
        if (s->t[i] == t)
            return i;
    return -1;
}

/* perm: the order that stores dimension d innermost, the others as they are. */
static void innermost(int *perm, int nd, int d)
{
    for (int q = 0, k = 0; q < nd; q++)
        if (q != d)
            perm[k++] = q;
    perm[nd - 1] = d;
}

/* Whether use u gains from the set's order as a copy in it does: a copy
 * in that order (which goes), or a contraction whose dot products read
 * the dimension the order puts innermost (grouped_dim). */
static bool cl_gains(const cl_set *s, const use *u, int nd)
{
    int perm[MAXD];
    if (u->has_copy)
        return memcmp(u->copy.perm, s->perm, sizeof(int) * (size_t)nd) == 0;
    if (u->grouped < 0)
        return false;
    innermost(perm, nd, u->grouped);
    return memcmp(perm, s->perm, sizeof(int) * (size_t)nd) == 0;
}

/* Whether use u of a temporary keeps its speed in the set's order: a copy
 * in that order (which goes), an elementwise kernel at its own index
 * (*ew: its nest), or any other access that does not run along the last
 * dimension only. */
static bool cl_use_ok(const cl_set *s, const use *u, int nd, ew_nest *e, bool *ew)
{
    *ew = false;
    if (u->flat)
        return true;
    if (u->has_copy)
        return memcmp(u->copy.perm, s->perm, sizeof(int) * (size_t)nd) == 0;
    access_ctx c = {u->p, s->perm[nd - 1], NULL, NULL, true, false, false, 0};
    scan_access(&c, u->f->body);
    if (ew_of(u->f, e) && e->block->niters == nd && c.own) {
        *ew = true;
        return true;
    }
    return !c.bad;
}

/* Adds t when all its uses keep their speed (cl_use_ok). */
static bool cl_add(ir_module *m, const ir_graph *g, const graph_uses *gu, cl_set *s,
                   ir_buffer *t, const bool *taken, bool slow)
{
    if (cl_find(s, t) >= 0)
        return true;
    int b = pass_find_ptr(gu->bufs, gu->nbufs, t);
    int nd = s->nt ? s->t[0]->ndim : t->ndim;
    if (s->nt == CL_TEMPS || t->role != IR_BUF_TEMP || t->in_arena || b < 0 || taken[b] ||
        t->ndim != nd)
        return false;
    use *u = ir_alloc(m->arena, sizeof *u * CL_USES);
    int n = uses_flat(g, gu, t, u, CL_USES, true);
    int bad = 0;
    for (int k = 0; k < n; k++) {
        ew_nest e;
        bool ew;
        bad += !cl_use_ok(s, &u[k], nd, &e, &ew);
    }
    if (!n || (bad && !slow))
        return false;
    s->bad += bad;
    s->t[s->nt] = t;
    s->u[s->nt] = u;
    s->nu[s->nt++] = n;
    return true;
}

/* Grows the set over its elementwise kernels: the other temporaries such
 * a kernel accesses at its own index join it, or the kernel is mixed. */
static bool cl_grow(ir_module *m, const graph_uses *gu, cl_set *s, const bool *taken)
{
    const ir_graph *g = &m->graph;
    int nd = s->t[0]->ndim;
    for (int i = 0; i < s->nt; i++)
        for (int k = 0; k < s->nu[i]; k++) {
            use *u = &s->u[i][k];
            ew_nest e;
            bool ew;
            s->copies += cl_gains(s, u, nd);
            if (u->flat) {
                /* every buffer of its shape must come, in the same order
                 * and without a border (flat[]), or the kernel would pair
                 * other elements (and one of as many elements in another
                 * shape pairs its own way: the set keeps its layout) */
                const ir_graph_call *call = &g->calls[u->call];
                for (int a = 0; a < call->nargs; a++) {
                    const ir_buffer *p = u->f->params[a];
                    if (numel(p) != numel(u->p))
                        continue;
                    if (!same_shape(p, u->p) || !same_shape(call->args[a], s->t[0]) ||
                        !cl_add(m, g, gu, s, call->args[a], taken, true))
                        return false;
                }
                continue;
            }
            if (!cl_use_ok(s, u, nd, &e, &ew) || !ew)
                continue;
            bool known = false;
            for (int j = 0; j < s->new_; j++)
                known |= s->ew[j] == u->f;
            if (known)
                continue;
            if (s->new_ == CL_EW)
                return false;
            const ir_graph_call *call = &g->calls[u->call];
            bool mixed = false;
            for (int a = 0; a < call->nargs; a++) {
                ir_buffer *p = u->f->params[a];
                access_ctx o = {p, s->perm[nd - 1], NULL, NULL, true, false, false, 0};
                scan_access(&o, u->f->body);
                if (!o.any || p->ndim != nd)
                    continue;
                mixed |= !o.own || !cl_add(m, g, gu, s, call->args[a], taken, false);
            }
            const ir_stmt *st = e.block->body[0];
            int w = 0;
            while (w < call->nargs && u->f->params[w] != st->buf)
                w++;
            s->follows[s->new_] = w < call->nargs && cl_find(s, call->args[w]) >= 0;
            s->ew[s->new_] = u->f;
            s->nest[s->new_++] = e;
            s->mixed += mixed;
        }
    /* a mixed kernel moves data across orders as a copy does: worth it
     * when more copies go (or run in order) */
    return s->copies > s->mixed + s->bad;
}

/* Stores the set's temporaries in its order, with the borders their
 * copies need; false (nothing changed) when a border does not fit. */
static bool cl_apply(ir_module *m, cl_set *s)
{
    int nd = s->t[0]->ndim;
    int64_t (*lo)[MAXD] = ir_alloc(m->arena, sizeof *lo * CL_TEMPS);
    int64_t (*hi)[MAXD] = ir_alloc(m->arena, sizeof *hi * CL_TEMPS);
    double fill[CL_TEMPS];
    bool any[CL_TEMPS], flat[CL_TEMPS];
    for (int i = 0; i < s->nt; i++) {
        const ir_buffer *t = s->t[i];
        bool have = false;
        any[i] = flat[i] = false;
        memset(lo[i], 0, sizeof lo[i]);
        memset(hi[i], 0, sizeof hi[i]);
        /* a kernel over merged dimensions pairs element k of each of its
         * buffers: no border (its copies stay, reading T in their order) */
        for (int k = 0; k < s->nu[i]; k++)
            flat[i] |= s->u[i][k].flat;
        for (int k = 0; k < s->nu[i] && !flat[i]; k++) {
            const pad_copy *c = &s->u[i][k].copy;
            if (!s->u[i][k].has_copy || memcmp(c->perm, s->perm, sizeof(int) * (size_t)nd) != 0)
                continue;
            if (have && !same_value(c->fill, fill[i]))
                return false;
            have = true;
            fill[i] = c->fill;
            for (int q = 0; q < nd; q++) {
                int64_t n = t->shape[s->perm[q]], kk = c->k[s->perm[q]], nl, nh;
                nl = kk >= -n && kk <= n ? -kk : n + 1;
                if (__builtin_add_overflow(c->xp->shape[q] - n, kk, &nh))
                    nh = n + 1;
                if (nl > n || nh > n || nl < 0 || nh < 0)
                    return false;
                if (nl > lo[i][q])
                    lo[i][q] = nl;
                if (nh > hi[i][q])
                    hi[i][q] = nh;
                any[i] |= nl > 0 || nh > 0;
            }
        }
        ir_buffer grown = *t;
        int64_t shape[MAXD];
        for (int q = 0; q < nd; q++)
            shape[q] = t->shape[s->perm[q]] + lo[i][q] + hi[i][q];
        grown.shape = shape;
        if (ir_buffer_bytes(&grown) < 0)
            return false;
    }
    for (int j = 0; j < s->new_; j++)
        if (s->follows[j])
            reorder_nest(m, s->ew[j], &s->nest[j], s->perm);
    /* the copies go first: a border fill wraps the writer's body, which
     * may be the slot of a copy of its own input */
    int64_t *shapes[CL_TEMPS];
    for (int i = 0; i < s->nt; i++) {
        ir_buffer *t = s->t[i];
        shapes[i] = ir_alloc(m->arena, sizeof *shapes[i] * (size_t)nd);
        for (int q = 0; q < nd; q++)
            shapes[i][q] = t->shape[s->perm[q]] + lo[i][q] + hi[i][q];
        for (int k = 0; k < s->nu[i]; k++) {
            use *u = &s->u[i][k];
            if (u->flat)
                continue;
            move_ctx mv = {m, u->p, u->p, lo[i], s->perm};
            move_stmt(&mv, u->f->body);
            if (u->has_copy && !flat[i] &&
                memcmp(u->copy.perm, s->perm, sizeof(int) * (size_t)nd) == 0) {
                const pad_copy *c = &u->copy;
                int64_t off[MAXD];
                for (int q = 0; q < nd; q++)
                    off[q] = c->k[s->perm[q]] + lo[i][q];
                ir_stmt *body = (*c->slot)->body[0];
                ir_stmt *rest = ir_seq(m, body->body + 1, body->nbody - 1);
                move_ctx rd = {m, c->xp, u->p, off, NULL};
                move_stmt(&rd, rest);
                *c->slot = rest;
            }
        }
    }
    for (int i = 0; i < s->nt; i++) {
        ir_buffer *t = s->t[i];
        int64_t size[MAXD];
        for (int q = 0; q < nd; q++)
            size[q] = t->shape[s->perm[q]];
        for (int k = 0; k < s->nu[i]; k++) {
            use *u = &s->u[i][k];
            if (u->flat)
                continue;
            u->p->shape = shapes[i];
            if (u->writes && any[i])
                border_fill(m, u->f, u->p, size, lo[i], fill[i]);
        }
        t->shape = shapes[i];
    }
    for (int i = 0; i < s->nt; i++)
        for (int k = 0; k < s->nu[i]; k++)
            sch_update_blocks(m, s->u[i][k].f->body);
    return true;
}

/* Every set that a permuted pad copy seeds, stored in its order; or, with
 * query, none: whether query would be in one (m unchanged). */
static bool channels_last(ir_module *m, const graph_uses *gu, const ir_buffer *query)
{
    ir_graph *g = &m->graph;
    bool *taken = ir_alloc(m->arena, (size_t)gu->nbufs + 1);
    memset(taken, 0, (size_t)gu->nbufs + 1);
    cl_set *s = ir_alloc(m->arena, sizeof *s);
    for (int b = 0; b < g->nbufs; b++) {
        ir_buffer *t = g->bufs[b];
        if (t->role != IR_BUF_TEMP || t->in_arena || t->ndim < 2 || t->ndim > MAXD)
            continue;
        int ib = pass_find_ptr(gu->bufs, gu->nbufs, t);
        if (ib < 0 || taken[ib])
            continue;
        use u[CL_USES];
        int n = uses_flat(g, gu, t, u, CL_USES, true), seed = -1;
        for (int i = 0; i < n && seed < 0; i++)
            if ((u[i].has_copy && !identity(u[i].copy.perm, t->ndim)) || u[i].grouped >= 0)
                seed = i;
        if (seed < 0)
            continue;
        memset(s, 0, sizeof *s);
        if (u[seed].has_copy)
            memcpy(s->perm, u[seed].copy.perm, sizeof(int) * (size_t)t->ndim);
        else
            innermost(s->perm, t->ndim, u[seed].grouped);
        if (!cl_add(m, g, gu, s, t, taken, false) || !cl_grow(m, gu, s, taken))
            continue;
        for (int i = 0; i < s->nt; i++)
            taken[pass_find_ptr(gu->bufs, gu->nbufs, s->t[i])] = true;
        if (query && cl_find(s, query) >= 0)
            return true;
        if (!query)
            cl_apply(m, s);
    }
    return false;
}

bool pass_layout_channels_last(ir_module *m, const ir_buffer *t, const bool *skip)
{
    if (m->graph.has_arena)
        return false;
    graph_uses gu;
    index_uses(m, &gu, skip);
    return channels_last(m, &gu, t);
}

bool pass_layout(ir_module *m, diag *d)
{
    (void)d;
    ir_graph *g = &m->graph;
    if (g->has_arena)
        return true;   /* a memory plan is laid out for the buffers as they are */
    /* how many calls run each function; one a load call runs too is left
     * alone */
    graph_uses gu;
    index_uses(m, &gu, NULL);
    channels_last(m, &gu, NULL);
    for (int b = 0; b < g->nbufs; b++) {
        ir_buffer *t = g->bufs[b];
        if (t->role != IR_BUF_TEMP || t->in_arena || t->ndim < 1 || t->ndim > MAXD)
            continue;
        use u[64];
        int n = uses_of(g, &gu, t, u, 64);
        int first = -1;
        for (int i = 0; i < n && first < 0; i++)
            if (u[i].has_copy && identity(u[i].copy.perm, t->ndim))
                first = i;
        if (first < 0)
            continue;
        /* the border: what the copies need, each side at most as wide as
         * the dimension (wider is no gain, and keeps sizes bounded) */
        double fill = u[first].copy.fill;
        int64_t lo[MAXD] = {0}, hi[MAXD] = {0};
        bool any = false;
        for (int i = 0; i < n; i++) {
            const pad_copy *c = &u[i].copy;
            int64_t need_lo[MAXD], need_hi[MAXD];
            u[i].drop = u[i].has_copy && same_value(c->fill, fill) && identity(c->perm, t->ndim);
            for (int e = 0; e < t->ndim && u[i].drop; e++) {
                int64_t n = t->shape[e], k = c->k[e];
                need_lo[e] = k >= -n && k <= n ? -k : n + 1;
                if (__builtin_add_overflow(c->xp->shape[e] - n, k, &need_hi[e]))
                    need_hi[e] = n + 1;
                u[i].drop = need_lo[e] <= n && need_hi[e] <= n;
            }
            for (int e = 0; e < t->ndim && u[i].drop; e++) {
                if (need_lo[e] > lo[e])
                    lo[e] = need_lo[e];
                if (need_hi[e] > hi[e])
                    hi[e] = need_hi[e];
                any |= need_lo[e] > 0 || need_hi[e] > 0;
            }
        }
        /* only when every reader's copy goes (see the top) */
        for (int i = 0; i < n; i++)
            any &= u[i].writes || u[i].drop;
        ir_buffer grown = *t;
        grown.shape = padded_shape(m, t, lo, hi);
        if (any && ir_buffer_bytes(&grown) < 0)
            continue;
        if (any)
            give_border(m, t, u, n, lo, hi, fill);
    }
    return true;
}

/* ---------------------------------------------------------------- channels-last chains (before the schedule)
 *
 * A 1x1 convolution on NCHW reads, for each output tile, one short row of
 * every input channel's plane (256 planes 12.5 KB apart on a 56x56 map),
 * and a 3x3 one reads its input through a padded copy of the same order;
 * stored channels-last (NHWC), the tile's input is one contiguous run of
 * channels per pixel and its output one contiguous vector store, as ONNX
 * Runtime's channel-blocked layout gives (bench/results/layout_s17.txt:
 * ResNet-50's 56x56 bottleneck block 8% faster at one thread, its 1x1
 * reduction 16%; the whole network's layers 3.5%).  The choice has to be
 * made before the schedule, which
 * tiles each kernel for the order its buffers have, so this pass
 * (`layout-chains`, run before `autoschedule`) stores f32 activations
 * channels-last wherever a whole chain of kernels can take it:
 *
 *   - a chain kernel is a function whose body is loop nests each around
 *     one block, every 4-D access of which is (own) at the block's own
 *     index, or (conv read) an input whose channel index is a reduce
 *     variable no other index uses (a convolution of one group), or (sink
 *     read) one whose channel index is a spatial variable no other index
 *     uses and whose pixel indices use reduce variables only (a global
 *     pool), or (window read) one at the store's image and channel, its
 *     pixels anywhere, in a block reading nothing else but per-channel
 *     parameters (a max or average pool's taps, a Pad layer, a depthwise
 *     convolution with its weights w[c, 0, r, s]), or (slice read) one at the store's index
 *     but for the channel, the store's channel plus a constant (a
 *     concatenation's part); all 4-D buffers f32; an access of none of
 *     these kinds may be one with its buffer channels-last in the
 *     program (CH_NHWC: ch_access), a block failing against its store's
 *     index is classified against that index as NCHW (ch_classify), and
 *     such a program-NHWC buffer is never a member but counts as one
 *     (ConvNeXt's permutes, folded into their readers: its residual
 *     stream goes channels-last between them);
 *   - a temporary T (f32, 4-D, a map of more than one pixel: [N, C, 1, 1]
 *     holds its channels in order either way) is a member when every
 *     function it is passed to is a chain kernel that runs once, sees T
 *     with T's shape and accesses T
 *     in one of those ways, and: the buffers a kernel accesses at its own
 *     index, through a window or as a slice (its output, the other
 *     operands of an elementwise kernel, a pool's input, a concatenation's
 *     parts) are members together or not at all (nothing reads across the
 *     orders),
 *     and a kernel that conv-reads a member writes a member (a
 *     convolution from NHWC to NCHW would store its tile transposed);
 *     channels that fill no whole vectors keep T out where a depthwise
 *     convolution reads it or on a map of more than 16x16 pixels
 *     (ragged_on_large_map).
 *
 * The chain's ends are kernels that read NCHW and write NHWC (the first
 * convolution, after the program's input or a kernel of another kind) or
 * sink-read NHWC (a global pool); any other kernel (a max pool that
 * `separate` split into rows) keeps its buffers as they are.  A depthwise
 * convolution joins when its channels fill whole vectors: channels-last
 * its taps are vectors of channels (auto_window.c's channels-last
 * depthwise schedule; MobileNetV2's and EfficientNet-B0's layers 5-6%
 * faster at one thread, bench/results/dw_s18.txt).  A pool joins a chain: channels-last its taps are
 * whole vectors of channels (ResNet-18's stem max pool 123 -> 94 us at
 * one thread, bench/results/chain_s18.txt), and the ResNets' first
 * stage, whose residual add reads the pool's output, goes channels-last
 * with it.  A concatenation along the channels joins too: channels-last
 * each part is a run of every pixel's channels, which fuse has the part's
 * writer store in place (SqueezeNet's fire modules).
 *
 * Each member is stored T'[n, h, w, c] = T[n, c, h, w] in every function
 * that sees it; a block storing a member lists its iteration variables,
 * and its nest runs its loops, in the new order (reduce loops inside them
 * as before), and a nest reading a member runs the loop of the member's
 * channels innermost (a convolution's taps r, s, c: one run per pixel
 * instead of 3x3 lines 4 KB apart at stride 2 on 512 channels; a global
 * pool's h, w, c, vectorized along the channels; a pool's taps r, s, c).
 * Every access reads the same element, so the results do not change. */

enum { CH_NESTS = 16 };

/* A function's loop nests: loops[0..n) perfectly nested around block,
 * *slot the place of the outermost. */
typedef struct ch_nest {
    ir_stmt **slot;
    ir_stmt *loops[MAXD];
    int n;
    ir_stmt *block;
    bool nhwc;             /* the block stores a channels-last buffer of the
                            * program (ch_classify): its NCHW frame is its
                            * store's index permuted */
} ch_nest;

typedef struct ch_kernel {
    ch_nest nest[CH_NESTS];
    int n;
    ir_buffer *locals[CH_NESTS];
    int nlocals;
} ch_kernel;

static bool ch_collect(ch_kernel *k, ir_stmt **slot)
{
    ir_stmt *s = *slot;
    if (!s)
        return true;
    if (s->kind == IR_S_SEQ) {
        for (int i = 0; i < s->nbody; i++)
            if (!ch_collect(k, &s->body[i]))
                return false;
        return true;
    }
    if (s->kind == IR_S_ALLOC) {
        if (k->nlocals == CH_NESTS)
            return false;
        k->locals[k->nlocals++] = s->buf;
        return ch_collect(k, &s->body[0]);
    }
    if ((s->kind != IR_S_FOR && s->kind != IR_S_BLOCK) || k->n == CH_NESTS)
        return false;
    ch_nest *e = &k->nest[k->n];
    e->slot = slot;
    e->n = 0;
    for (; s && s->kind == IR_S_FOR; s = only(s->body[0])) {
        if (e->n == MAXD || s->nbody != 1 || ir_for_step(s) != 1 || !ir_expr_is_int(s->lo, 0) ||
            !s->hi || s->hi->kind != IR_INT)
            return false;
        e->loops[e->n++] = s;
    }
    if (!s || s->kind != IR_S_BLOCK || s->nbody != 1 || !s->body[0] ||
        s->body[0]->kind != IR_S_STORE || s->niters > MAXD)
        return false;
    e->block = s;
    k->n++;
    return true;
}

static bool ch_kernel_of(ir_func *f, ch_kernel *k)
{
    k->n = k->nlocals = 0;
    return ch_collect(k, &f->body) && k->n > 0;
}

enum { CH_OWN = 1, CH_CONV = 2, CH_SINK = 4, CH_WINDOW = 8, CH_SLICE = 16, CH_CHANNEL = 32,
       CH_OTHER = 64, CH_NHWC = 128 };

static const ir_itervar *ch_iter(const ir_stmt *blk, const ir_expr *e)
{
    for (int i = 0; e && e->kind == IR_VAR && i < blk->niters; i++)
        if (blk->iters[i].var == e->var)
            return &blk->iters[i];
    return NULL;
}

/* Whether e uses only reduce variables of blk (and constants). */
static bool ch_reduce_only(const ir_stmt *blk, const ir_expr *e)
{
    for (int i = 0; i < blk->niters; i++)
        if (blk->iters[i].kind == IR_ITER_SPATIAL && ir_expr_uses_var(e, blk->iters[i].var))
            return false;
    return true;
}

/* Whether blk's access at idx (n indices) reads a per-channel parameter:
 * the indices use no spatial variable but the store's channel (own[1]),
 * which must be one (a depthwise convolution's weights w[c, 0, r, s], a
 * bias b[c]). */
static bool ch_per_channel(const ir_stmt *blk, ir_expr *const *idx, int n, ir_expr *const *own)
{
    if (!own || own[1]->kind != IR_VAR)
        return false;
    for (int i = 0; i < blk->niters; i++)
        if (blk->iters[i].kind == IR_ITER_SPATIAL && blk->iters[i].var != own[1]->var)
            for (int d = 0; d < n; d++)
                if (ir_expr_uses_var(idx[d], blk->iters[i].var))
                    return false;
    return true;
}

/* Whether blk reads no buffer but `b`, the one it stores to and
 * per-channel parameters. */
typedef struct ch_only {
    const ir_stmt *blk;
    const ir_buffer *b;
    ir_expr *const *own;
    bool ok;
} ch_only;

static bool ch_only_expr(const ir_expr *x, void *p)
{
    ch_only *o = p;
    const ir_stmt *st = o->blk->body[0];
    if (x->kind == IR_LOAD && x->buf != o->b && x->buf != st->buf &&
        !ch_per_channel(o->blk, x->args, x->nargs, o->own))
        o->ok = false;
    return o->ok;
}

static bool ch_reads_only(const ir_stmt *blk, const ir_buffer *b, ir_expr *const *own)
{
    ch_only o = {blk, b, own, true};
    ir_stmt_walk(blk, NULL, ch_only_expr, &o);
    return o.ok;
}

/* Whether idx is own but for the channel, own's channel variable plus a
 * constant: a concatenation's read of one of its parts, whose channels
 * map to the output's one to one, as an elementwise kernel's do. */
static bool ch_slice_of(ir_expr *const *idx, ir_expr *const *own)
{
    if (!own || own[1]->kind != IR_VAR)
        return false;
    for (int d = 0; d < 4; d++)
        if (d != 1 && !ir_expr_equal(idx[d], own[d]))
            return false;
    ir_affine a;
    return ir_affine_of(idx[1], &a) && a.n == 1 && a.var[0] == own[1]->var && a.coef[0] == 1;
}

/* How blk accesses the 4-D buffer b at idx (CH_*); own is the store's
 * index.  A window read (a max or average pool's taps, a Pad layer's
 * copy) reads b at the store's image and channel, its pixels anywhere,
 * in a block that reads nothing else: its channels map to the output's
 * one to one, so in either order both run along them (a depthwise
 * convolution reads its weights too, and stays outside). */
static int ch_access_nchw(const ir_stmt *blk, const ir_buffer *b, ir_expr *const *idx,
                          ir_expr *const *own)
{
    bool same = own != NULL;
    for (int d = 0; d < 4 && same; d++)
        same = ir_expr_equal(idx[d], own[d]);
    if (same)
        return CH_OWN;
    if (ch_slice_of(idx, own))
        return CH_SLICE;
    const ir_itervar *c = ch_iter(blk, idx[1]);
    if (!c)
        return b != blk->body[0]->buf && ch_per_channel(blk, idx, 4, own) ? CH_CHANNEL : CH_OTHER;
    for (int d = 0; d < 4; d++)
        if (d != 1 && ir_expr_uses_var(idx[d], c->var))
            return CH_OTHER;
    if (c->kind == IR_ITER_REDUCE)
        return CH_CONV;
    if (ch_reduce_only(blk, idx[2]) && ch_reduce_only(blk, idx[3]))
        return CH_SINK;
    return own && ir_expr_equal(idx[0], own[0]) && ir_expr_equal(idx[1], own[1]) &&
                   b != blk->body[0]->buf && ch_reads_only(blk, b, own)
               ? CH_WINDOW
               : CH_OTHER;
}

/* NCHW -> NHWC: the new dimension q holds the old dimension ch_perm[q]. */
static const int ch_perm[4] = {0, 2, 3, 1};

/* The NHWC index (n, h, w, c) of a buffer as the NCHW one (n, c, h, w). */
static void ch_as_nchw(ir_expr *const *idx, ir_expr **out)
{
    for (int q = 0; q < 4; q++)
        out[ch_perm[q]] = idx[q];
}

/* ch_access_nchw, or, when b is accessed as a buffer already stored
 * channels-last would be (the program's own NHWC tensors around a
 * permute that the importer folded into its reader: b[n, h, w, c] read
 * where an NCHW buffer would be read at [n, c, h, w]), that kind with
 * CH_NHWC: b stays as it is, and the kernel's NCHW buffers, stored
 * channels-last, would then meet it in its order. */
static int ch_access(const ir_stmt *blk, const ir_buffer *b, ir_expr *const *idx,
                     ir_expr *const *own)
{
    int k = ch_access_nchw(blk, b, idx, own);
    if (!(k & CH_OTHER))
        return k;
    ir_expr *v[4];
    ch_as_nchw(idx, v);
    k = ch_access_nchw(blk, b, v, own);
    return k & (CH_OWN | CH_CONV | CH_SINK | CH_WINDOW) ? k | CH_NHWC : CH_OTHER;
}

/* The access kinds of each 4-D buffer in a kernel, by buffer. */
typedef struct ch_uses {
    const ir_buffer *buf[2 * CH_NESTS + 8];
    int kinds[2 * CH_NESTS + 8];
    int n;
    bool ok;
    const ir_stmt *blk;
    ir_expr *const *own;
} ch_uses;

static void ch_note(ch_uses *u, const ir_buffer *b, ir_expr *const *idx, int n)
{
    if (n != 4 && b->ndim != 4)
        return;
    if (n != 4 || b->ndim != 4 || b->dtype != IR_F32) {
        u->ok = false;
        return;
    }
    int i = 0;
    while (i < u->n && u->buf[i] != b)
        i++;
    if (i == u->n) {
        if (u->n == (int)(sizeof u->buf / sizeof u->buf[0])) {
            u->ok = false;
            return;
        }
        u->buf[u->n] = b;
        u->kinds[u->n++] = 0;
    }
    u->kinds[i] |= ch_access(u->blk, b, idx, u->own);
}

static bool ch_note_expr(const ir_expr *x, void *p)
{
    if (x->kind == IR_LOAD)
        ch_note(p, x->buf, x->args, x->nargs);
    return true;
}

static bool ch_note_stmt(const ir_stmt *s, void *p)
{
    if (s->kind == IR_S_STORE)
        ch_note(p, s->buf, s->args, s->nargs);
    return true;
}

/* The index the accesses of e's block are classified against: its
 * store's, or that as NCHW when the block stores a channels-last buffer
 * (buf holds it then); NULL when the store is not 4-D. */
static ir_expr *const *ch_own(const ch_nest *e, ir_expr **buf)
{
    const ir_stmt *st = e->block->body[0];
    if (st->nargs != 4)
        return NULL;
    if (!e->nhwc)
        return st->args;
    ch_as_nchw(st->args, buf);
    return buf;
}

/* Notes the accesses of e's block in its frame; false when one is of none
 * of the chain's kinds (or not f32). */
static bool ch_classify_block(const ch_nest *e, ch_uses *u)
{
    const ir_stmt *blk = e->block, *st = blk->body[0];
    ir_expr *buf[4];
    u->blk = blk;
    u->own = ch_own(e, buf);
    if (st->buf->ndim == 4)
        ch_note(u, st->buf, st->args, st->nargs);
    ir_stmt_walk(blk, ch_note_stmt, ch_note_expr, u);
    for (int i = 0; i < u->n && u->ok; i++)
        u->ok = !(u->kinds[i] & CH_OTHER);
    u->own = NULL;
    return u->ok;
}

/* Every 4-D access of the kernel classified; false when one is of none of
 * the chain's kinds (or not f32).  A block is classified against its
 * store's index, or, failing that, as one storing a channels-last buffer
 * of the program (a LayerNorm that reads an NCHW map through a permute
 * and writes [n, h, w, c]: its reads at the store's index as NCHW are
 * then its own). */
static bool ch_classify(ch_kernel *k, ch_uses *u)
{
    u->n = 0;
    u->ok = true;
    for (int i = 0; i < k->n && u->ok; i++) {
        ch_nest *e = &k->nest[i];
        ch_uses before = *u;
        e->nhwc = false;
        if (ch_classify_block(e, u) || e->block->body[0]->nargs != 4)
            continue;
        *u = before;
        e->nhwc = true;
        ch_classify_block(e, u);
    }
    return u->ok;
}

static int ch_kinds(const ch_uses *u, const ir_buffer *b)
{
    for (int i = 0; i < u->n; i++)
        if (u->buf[i] == b)
            return u->kinds[i];
    return 0;
}

/* The block iteration variable that blk's read of one of perm[0..np)
 * indexes channels with (a conv or sink read), or NULL. */
typedef struct ch_chan {
    const ir_stmt *blk;
    ir_expr *const *own;
    ir_buffer *const *perm;
    int np;
    const ir_var *var;
} ch_chan;

/* A conv, sink or window read of a member, or of a buffer the program
 * stores channels-last (its channels its last index). */
static bool ch_chan_expr(const ir_expr *x, void *p)
{
    ch_chan *c = p;
    if (x->kind != IR_LOAD || x->nargs != 4)
        return true;
    int k = ch_access(c->blk, x->buf, x->args, c->own);
    if (!(k & (CH_CONV | CH_SINK | CH_WINDOW)))
        return true;
    if (k & CH_NHWC)
        c->var = x->args[3]->var;
    for (int q = 0; q < c->np && !(k & CH_NHWC); q++)
        if (x->buf == c->perm[q])
            c->var = x->args[1]->var;
    return true;
}

static const ir_var *ch_channel_var(const ch_nest *e, ir_buffer *const *perm, int np)
{
    ir_expr *buf[4];
    ch_chan c = {e->block, ch_own(e, buf), perm, np, NULL};
    ir_stmt_walk(e->block, NULL, ch_chan_expr, &c);
    return c.var;
}

/* The nest of e in the new order: when its block stores a member at its
 * own index (permuted), the block's first four iteration variables in the
 * member's new order and the loops bound to them outermost, in that order;
 * the loop bound to chan (the channels of a member it reads: the reduction
 * of a convolution, the spatial loop of a global pool) innermost, so that
 * the reads run along the member's rows; the other loops as they were. */
static void ch_reorder_nest(ir_module *m, ch_nest *e, bool permuted, const ir_var *chan)
{
    ir_stmt *blk = e->block;
    const ir_stmt *st = blk->body[0];
    permuted &= blk->niters >= 4 && st->nargs == 4;
    for (int d = 0; d < 4 && permuted; d++) {
        const ir_expr *x = st->args[d];
        bool same = x->kind == IR_VAR && x->var == blk->iters[d].var;
        permuted = same || (blk->iters[d].extent == 1 && ir_expr_is_int(x, 0));
    }
    if (permuted) {
        ir_itervar it[4];
        for (int q = 0; q < 4; q++)
            it[q] = blk->iters[ch_perm[q]];
        memcpy(blk->iters, it, sizeof it);
    }
    /* the loop each iteration variable is bound to */
    int loop_of[MAXD];
    for (int q = 0; q < blk->niters; q++) {
        const ir_expr *b = blk->iters[q].binding;
        loop_of[q] = -1;
        for (int k = 0; k < e->n; k++)
            if (b->kind == IR_VAR && e->loops[k]->var == b->var)
                loop_of[q] = k;
    }
    int last = -1;
    for (int q = 0; q < blk->niters && chan; q++)
        if (blk->iters[q].var == chan)
            last = loop_of[q];
    ir_stmt *order[MAXD];
    bool used[MAXD] = {false};
    int n = 0;
    for (int q = 0; q < 4 && permuted; q++)
        if (loop_of[q] >= 0 && !used[loop_of[q]] && loop_of[q] != last) {
            used[loop_of[q]] = true;
            order[n++] = e->loops[loop_of[q]];
        }
    for (int k = 0; k < e->n; k++)
        if (!used[k] && k != last)
            order[n++] = e->loops[k];
    if (last >= 0)
        order[n++] = e->loops[last];
    ir_stmt *s = blk;
    for (int k = n - 1; k >= 0; k--)
        s = ir_for(m, order[k]->var, order[k]->lo, order[k]->hi, order[k]->for_kind, s);
    *e->slot = s;
}

/* A function of the graph with its parameters' access kinds (when it is a
 * chain kernel, runs once and sees every 4-D argument with its shape). */
typedef struct ch_func {
    ir_func *f;
    bool chain;
    ch_kernel k;
    ch_uses u;
} ch_func;

/* The entry of f in cf, which follows gu's sorted functions; NULL when f
 * is not a chain kernel. */
static ch_func *ch_chain_of(ch_func *cf, const graph_uses *gu, const ir_func *f)
{
    int i = pass_find_ptr(gu->funcs, gu->nfuncs, f);
    return i >= 0 && cf[i].chain ? &cf[i] : NULL;
}

/* Drops from member[] the graph buffers that the call's kernel accesses
 * at its own index, through a window or as a slice, unless all of them
 * are members (a pool from one order to the other would gather its taps
 * a plane apart) and, when it conv-reads a member, its output is one;
 * returns whether any went. */
static bool ch_settle(const ir_graph_call *c, const ch_func *cf, const graph_uses *gu, bool *member)
{
    bool all = true, any_own = false;
    for (int a = 0; a < c->nargs; a++) {
        int kinds = ch_kinds(&cf->u, cf->f->params[a]);
        int b = pass_find_ptr(gu->bufs, gu->nbufs, c->args[a]);
        bool in = (b >= 0 && member[b]) || (kinds & CH_NHWC);
        if (kinds & CH_OWN)
            any_own = true;
        if (kinds & (CH_OWN | CH_WINDOW | CH_SLICE))
            all &= in;
    }
    bool changed = false;
    for (int a = 0; a < c->nargs; a++) {
        int kinds = ch_kinds(&cf->u, cf->f->params[a]);
        int b = pass_find_ptr(gu->bufs, gu->nbufs, c->args[a]);
        if (b < 0 || !member[b])
            continue;
        if (((kinds & (CH_OWN | CH_WINDOW | CH_SLICE)) && !all) ||
            ((kinds & CH_CONV) && (!all || !any_own))) {
            member[b] = false;
            changed = true;
        }
    }
    return changed;
}

/* Stores the member temporaries channels-last in every function that sees
 * them (with the locals a kernel stores at the same index as a member). */
static void ch_apply(ir_module *m, ch_func *cf, const bool *member, const graph_uses *gu)
{
    ir_graph *g = &m->graph;
    static const int64_t zero[4] = {0};
    for (int i = 0; i < g->ncalls; i++) {
        const ir_graph_call *c = &g->calls[i];
        ch_func *h = ch_chain_of(cf, gu, c->fn);
        if (!h)
            continue;
        ir_buffer *perm[MAXD + 2 * CH_NESTS];
        int np = 0;
        bool out = false;
        for (int a = 0; a < c->nargs; a++) {
            int b = pass_find_ptr(gu->bufs, gu->nbufs, c->args[a]);
            if (b < 0 || !member[b])
                continue;
            perm[np++] = c->fn->params[a];
            out |= (ch_kinds(&h->u, c->fn->params[a]) & CH_OWN) != 0;
        }
        if (!np)
            continue;
        /* a kernel writing a member: its locals at its own index follow */
        for (int l = 0; l < h->k.nlocals && out; l++)
            if (ch_kinds(&h->u, h->k.locals[l]) & CH_OWN)
                perm[np++] = h->k.locals[l];
        for (int n = 0; n < h->k.n; n++) {
            const ir_stmt *blk = h->k.nest[n].block;
            bool permuted = false;
            for (int q = 0; q < np; q++)
                permuted |= perm[q] == blk->body[0]->buf;
            ch_reorder_nest(m, &h->k.nest[n], permuted, ch_channel_var(&h->k.nest[n], perm, np));
        }
        for (int q = 0; q < np; q++) {
            ir_buffer *p = perm[q];
            move_ctx mv = {m, p, p, zero, ch_perm};
            move_stmt(&mv, c->fn->body);
            int64_t *shape = ir_alloc(m->arena, sizeof *shape * 4);
            for (int d = 0; d < 4; d++)
                shape[d] = p->shape[ch_perm[d]];
            p->shape = shape;
        }
        sch_update_blocks(m, c->fn->body);
    }
    for (int b = 0; b < g->nbufs; b++) {
        int ib = pass_find_ptr(gu->bufs, gu->nbufs, g->bufs[b]);
        if (ib < 0 || !member[ib])
            continue;
        ir_buffer *t = g->bufs[b];
        int64_t *shape = ir_alloc(m->arena, sizeof *shape * 4);
        for (int d = 0; d < 4; d++)
            shape[d] = t->shape[ch_perm[d]];
        t->shape = shape;
    }
}

/* Whether h reads a per-channel parameter (a depthwise convolution's
 * weights). */
static bool ch_reads_per_channel(const ch_func *h)
{
    for (int p = 0; p < h->f->nparams; p++)
        if (ch_kinds(&h->u, h->f->params[p]) & CH_CHANNEL)
            return true;
    return false;
}

/* Whether T's channels fill no whole vectors (a multiple of the lanes)
 * on a map of more than 16x16 pixels.  Channels-last, a convolution
 * writing T runs its vectors across the channels, and the last one of
 * each pixel is partly empty; channels-first it runs them along the map,
 * whole but for each row's tail.  EfficientNet-B0's 1x1 convolutions to
 * 24 channels on 56x56 and 40 on 28x28 run 2.2-3.7x slower channels-last;
 * on GoogLeNet's 14x14 maps its 24-channel ones and SqueezeNet's 1000
 * classes on 13x13 lose nothing that the chains around them do not win
 * back (bench/results/dw_s18.txt). */
static bool ragged_on_large_map(const ir_buffer *t, int lanes)
{
    return t->shape[1] % lanes && t->shape[2] * t->shape[3] > 256;
}

bool pass_layout_chains(ir_module *m, diag *d)
{
    (void)d;
    ir_graph *g = &m->graph;
    if (g->has_arena || !g->ncalls)
        return true;
    graph_uses gu;
    index_uses(m, &gu, NULL);
    ch_func *cf = ir_alloc(m->arena, sizeof *cf * (size_t)(gu.nfuncs + 1));
    for (int i = 0; i < gu.nfuncs; i++) {
        ch_func *h = &cf[i];
        h->f = (ir_func *)gu.funcs[i];
        h->chain = gu.ncalls[i] == 1 && ch_kernel_of(h->f, &h->k) && ch_classify(&h->k, &h->u);
    }
    /* the candidates: f32 4-D temporaries with one writer, passed whole
     * to chain kernels only */
    cg_target target;
    if (pass_target())
        target = *pass_target();
    else
        cg_target_native(&target);
    int lanes = cg_target_lanes(&target, 4);
    bool *member = ir_alloc(m->arena, (size_t)gu.nbufs + 1);
    memset(member, 0, (size_t)gu.nbufs + 1);
    int ncand = 0;
    for (int b = 0; b < g->nbufs; b++) {
        ir_buffer *t = g->bufs[b];
        /* a one-pixel map ([N, C, 1, 1]: a squeeze-and-excitation's
         * vector) holds its channels in order either way */
        if (t->role != IR_BUF_TEMP || t->in_arena || t->ndim != 4 || t->dtype != IR_F32 ||
            t->shape[2] * t->shape[3] == 1 || ragged_on_large_map(t, lanes))
            continue;
        use u[CL_USES];
        int n = uses_of(g, &gu, t, u, CL_USES);
        bool ok = n > 0;
        for (int i = 0; i < n && ok; i++) {
            const ch_func *h = ch_chain_of(cf, &gu, u[i].f);
            int kinds = h ? ch_kinds(&h->u, u[i].p) : 0;
            /* a per-channel parameter (depthwise weights) keeps its order;
             * a depthwise convolution runs channels-last only on whole
             * vectors of channels (auto_window.c: MobileNetV3's 3x3 on
             * 184 channels of 14x14 ran 3.1x slower channels-last) */
            ok = h && same_shape(u[i].p, t) && kinds != 0 && !(kinds & (CH_CHANNEL | CH_NHWC)) &&
                 !(t->shape[1] % lanes && ch_reads_per_channel(h));
        }
        int ib = pass_find_ptr(gu.bufs, gu.nbufs, t);
        if (ok && ib >= 0) {
            member[ib] = true;
            ncand++;
        }
    }
    if (!ncand)
        return true;
    for (bool changed = true; changed;) {
        changed = false;
        for (int i = 0; i < g->ncalls; i++) {
            const ch_func *h = ch_chain_of(cf, &gu, g->calls[i].fn);
            if (h)
                changed |= ch_settle(&g->calls[i], h, &gu, member);
        }
    }
    ch_apply(m, cf, member, &gu);
    return true;
}
