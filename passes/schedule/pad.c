/* passes/schedule/pad.c — pad: copy an input buffer once into a local
 * buffer with a border wide enough for every read of the function, filled
 * with the value its guarded reads default to, so that
 *
 *     select(0 <= p*2 + r - 1 && ..., x[c, p*2 + r - 1, ...], 0.0f)
 *
 * becomes the unguarded read xp[c, p*2 + r, ...]: a padded convolution or
 * pooling window without a test in its inner loop.
 *
 * A read is guarded when it is the chosen arm of a select whose condition
 * only says that the read's indices are inside the buffer (conjuncts
 * `e >= 0`, `0 <= e`, `e < n`, `e <= n - 1` on its index expressions) and
 * whose other arm is a constant; all guarded reads must default to the same
 * constant.  Index ranges come from the block iteration variables' extents,
 * so every index must be affine in them.
 *
 * pad(B, .., l) copies at the start of each iteration of loop l only the
 * part of B that the iteration reads: a dimension every read indexes by a
 * variable bound to l itself (a depthwise convolution's or a pooling's
 * channel, with l the channel loop) has one element in the copy, the others
 * their whole padded range; each iteration has a copy of its own, which
 * stays in the cache for the window that reads it (MobileNetV3's 3x3
 * stride-2 depthwise convolution on 64x112x112, one thread: 3.2 MB padded
 * once, 181 us; 51 KB per channel, 127 us).  A dimension every read
 * indexes by a variable bound to a loop around l (not innermost) has one
 * element too, and one every read indexes by c * v + (terms not using l),
 * v bound to l (rows after po, pi = regroup(p, F), l = po), the block of
 * rows the iteration reads, halo included, read at its index - c * v:
 * a copy of a block of rows of one channel (made no faster than the
 * channel's copy of 51 KB on 96x112x112, 3x3 stride 2: the time is in
 * reading x; bench/results/window2_s10.txt).  So does one indexed by
 * c * v + (terms using neither), v bound to a loop around l: a depthwise
 * convolution split over threads by blocks of rows (parallel(po) around
 * the channel loop l) copies a channel's block per channel
 * (bench/results/rowblock_s11.txt).  v may be bound to a sum of such
 * loops: after po, pi = regroup(p, F) and pb, pr = split(po, n), v is
 * bound to n * pb + pr, and pad at pr copies the F rows (and halo) of
 * that iteration, not the whole padded channel at each one
 * (bench/results/place_s26.txt).  When the reads index the
 * copy's innermost dimension with a stride S > 1 (a window of stride 2 at
 * 2*q + s), that dimension is stored deinterleaved, phase by phase (the
 * padded row's even elements, then its odd ones), so that a tap of a row
 * vectorized along q reads one contiguous vector instead of two and a
 * shuffle, and the copy does the shuffling once per element (one thread:
 * a 5x5 depthwise convolution of stride 2 on 144x56x56, 261 to 183 us;
 * 3x3 on 96x112x112, 391 to 330 us; 3x3 max pooling of stride 2 on
 * 64x112x112, 302 to 275 us).  So does a whole copy, pad(B) (a stride-2
 * stem whose tile runs along the map: ResNet's 7x7 3 -> 64 on 224x224,
 * 2328 to 2248 us; EfficientNet-B0's 3x3 3 -> 32, 395 to 369 us). */
#include <string.h>

#include "passes/passes.h"
#include "passes/schedule/schedule.h"

struct read_count {
    const ir_buffer *buf;
    int *n;
};

static bool count_reads(const ir_expr *x, void *q)
{
    struct read_count *r = q;
    if (x->kind == IR_LOAD && x->buf == r->buf)
        (*r->n)++;
    return true;
}

bool sch_is_bounds_test(const ir_expr *c, const ir_expr *ld)
{
    if (c->kind == IR_AND)
        return sch_is_bounds_test(c->a, ld) && sch_is_bounds_test(c->b, ld);
    for (int d = 0; d < ld->nargs; d++) {
        const ir_expr *e = ld->args[d];
        int64_t n = ld->buf->shape[d];
        if (c->kind == IR_GE && ir_expr_equal(c->a, e) && ir_expr_is_int(c->b, 0))
            return true;
        if (c->kind == IR_LE && ir_expr_is_int(c->a, 0) && ir_expr_equal(c->b, e))
            return true;
        if (c->kind == IR_LT && ir_expr_equal(c->a, e) && ir_expr_is_int(c->b, n))
            return true;
        if (c->kind == IR_LE && ir_expr_equal(c->a, e) && ir_expr_is_int(c->b, n - 1))
            return true;
        if (c->kind == IR_GT && ir_expr_is_int(c->a, n) && ir_expr_equal(c->b, e))
            return true;
    }
    return false;
}

typedef struct pad_ctx {
    sch_ctx *c;
    ir_buffer *buf;
    int64_t lo[16], hi[16];
    bool any;
    bool ok;
    bool have_fill;
    double fill;
    ir_var_range ranges[256];   /* of the iteration variables in scope */
    const ir_expr *bind[256];   /* and their bindings */
    ir_iter_kind kind[256];     /* and their kinds */
    int nvars;
    /* a copy whose reads index its innermost dimension
     * with stride S > 1 (the gcd of the coefficients of the spatial
     * variables there; every other term positive) stores that dimension
     * deinterleaved: S phases of Hs elements, padded index t at
     * (t mod S) * Hs + t div S */
    int64_t sgcd;
    bool sbad;
    int64_t S, Hs;
    /* pad at a loop: its variable and the loops around it; per
     * dimension, ONE when every read indexes it by a variable bound to the
     * loop's or (not innermost) to the same loop around it (one element in
     * the copy, fixvar), ROWS when every read is c * v + (terms not using
     * the loop), v bound to the loop's variable or to one loop around it
     * (a block of rows per iteration, wstep = c, whi the block's last
     * padded index), WHOLE when no read uses the loop there, BAD
     * otherwise */
    const ir_var *at;
    const ir_var *rowloop;   /* the loop v is bound to, or v itself when it
                                is bound to a sum of loops (one for all ROWS) */
    const ir_expr *rowbind;  /* v's binding */
    const ir_var *encl[64];
    int nencl;
    int fixed[16];
    const ir_var *fixvar[16];
    int64_t wstep[16], whi[16];
    bool whole_ok[16];   /* every read so far would take the whole range */
    int64_t atext;   /* the trip count of rowloop (of a variable bound to it) */
    /* rewriting */
    ir_buffer *to;
    bool rewrite;
    int perm[16];   /* xp's dimension k is the buffer's dimension perm[k] */
} pad_ctx;

/* Whether x uses an iteration variable in scope that is bound to an
 * expression of the loop variable p->at (or is that variable). */
static bool uses_at(const pad_ctx *p, const ir_expr *x)
{
    if (ir_expr_uses_var(x, p->at))
        return true;
    for (int i = 0; i < p->nvars; i++)
        if (p->bind[i] && ir_expr_uses_var(p->bind[i], p->at) && ir_expr_uses_var(x, p->ranges[i].var))
            return true;
    return false;
}

enum { BAD = -1, WHOLE = 0, ONE = 1, UNSEEN = 2, ROWS = 3 };

static bool encloses(const pad_ctx *p, const ir_var *v)
{
    for (int i = 0; i < p->nencl; i++)
        if (p->encl[i] == v)
            return true;
    return false;
}

/* Whether expression x uses the loop's variable or one of a loop around it. */
static bool uses_at_or_around(const pad_ctx *p, const ir_expr *x)
{
    if (ir_expr_uses_var(x, p->at))
        return true;
    for (int i = 0; i < p->nencl; i++)
        if (ir_expr_uses_var(x, p->encl[i]))
            return true;
    return false;
}

/* Whether x uses a loop around the loop, or an iteration variable in scope
 * bound to an expression of one. */
static bool uses_around(const pad_ctx *p, const ir_expr *x)
{
    for (int i = 0; i < p->nencl; i++) {
        if (ir_expr_uses_var(x, p->encl[i]))
            return true;
        for (int k = 0; k < p->nvars; k++)
            if (p->bind[k] && ir_expr_uses_var(p->bind[k], p->encl[i]) &&
                ir_expr_uses_var(x, p->ranges[k].var))
                return true;
    }
    return false;
}

/* Whether binding b is the loop's variable, that of a loop around it, or
 * a sum of such variables with positive coefficients (a block of rows
 * split again: po, pi = regroup(p, 7) then pb, pr = split(po, 4) binds
 * the rows' block variable to 4 * pb + pr, both around or at pr). */
static bool bound_at_or_around(const pad_ctx *p, const ir_expr *b)
{
    if (b->kind == IR_VAR)
        return b->var == p->at || encloses(p, b->var);
    ir_affine g;
    if (!ir_affine_of(b, &g) || g.n == 0 || g.c != 0)
        return false;
    for (int j = 0; j < g.n; j++)
        if (!g.var[j] || g.coef[j] <= 0 || (g.var[j] != p->at && !encloses(p, g.var[j])))
            return false;
    return true;
}

/* In a read's index f: the coefficient c > 0 of the one iteration variable
 * bound to the loop's own variable or to that of one loop around it, or to
 * a sum of them (bound_at_or_around; *v, the loop's variable in *loop (v
 * itself for a sum), v's binding in *bind, v's extent in *ext), when no
 * other term uses any of them: in one iteration of the loop, the index runs
 * over a block that starts at c * v.  0 otherwise. */
static int64_t rows_step(const pad_ctx *p, const ir_affine *f, const ir_var **v,
                         const ir_var **loop, const ir_expr **bind, int64_t *ext)
{
    int64_t c = 0;
    for (int i = 0; i < f->n; i++) {
        int k = p->nvars - 1;
        while (k >= 0 && (!f->var[i] || p->ranges[k].var != f->var[i]))
            k--;
        if (k < 0 || !p->bind[k])
            return 0;
        if (bound_at_or_around(p, p->bind[k])) {
            if (c || f->coef[i] <= 0)
                return 0;
            c = f->coef[i];
            *v = f->var[i];
            *loop = p->bind[k]->kind == IR_VAR ? p->bind[k]->var : f->var[i];
            *bind = p->bind[k];
            *ext = p->ranges[k].hi + 1;
        } else if (uses_at_or_around(p, p->bind[k])) {
            return 0;
        }
    }
    return c;
}

/* Whether every term of index f is a spatial iteration variable: no tap
 * of a window moves it.  The innermost dimension is a block per iteration
 * (ROWS) only so: a block of channels, `vf_o * 16 + vf_i` after
 * `f_o, f_i = regroup(f, 16)`, read whole by the iteration (a
 * channels-last depthwise convolution's input copied per block of
 * channels at f_o: 16 channels of a 20x20 map, 25 KB, stay in the L1
 * cache for the block's taps, where the whole copy, 614 KB for 384
 * channels, is written to memory and read back: 7x7 on 384x14x14
 * channels-last 75 -> 41-52 us at one thread, bench/results/dwcl_s28.txt);
 * a window's rows along the innermost dimension keep their whole range. */
static bool spatial_only(const pad_ctx *p, const ir_affine *f)
{
    for (int i = 0; i < f->n; i++) {
        int k = p->nvars - 1;
        while (k >= 0 && (!f->var[i] || p->ranges[k].var != f->var[i]))
            k--;
        if (k < 0 || p->kind[k] != IR_ITER_SPATIAL)
            return false;
    }
    return true;
}

/* Dimension d of a read at index x (affine f, padded range lo..hi), for a
 * pad at a loop. */
static void classify_dim(pad_ctx *p, int d, const ir_expr *x, const ir_affine *f, int64_t hi)
{
    int k = WHOLE;   /* how this read indexes the dimension */
    const ir_var *fv = NULL, *v = NULL, *loop = NULL;
    const ir_expr *bind = NULL;
    int64_t c = 0, ext = 0;
    bool innermost = d == p->perm[p->buf->ndim - 1];
    if (x->kind == IR_VAR)
        for (int i = 0; i < p->nvars; i++)
            if (p->ranges[i].var == x->var && p->bind[i] && p->bind[i]->kind == IR_VAR &&
                (p->bind[i]->var == p->at || (!innermost && encloses(p, p->bind[i]->var)))) {
                k = ONE;
                fv = p->bind[i]->var;
            }
    /* (a dimension read at c * v + .., v bound to a loop around this one,
     * has the block of rows that loop's iteration reads, as when v is
     * bound to this loop: a depthwise convolution split by blocks of rows
     * around its channel loop copies a channel's block at the channel) */
    if (k == WHOLE && (uses_at(p, x) || (!innermost && uses_around(p, x)))) {
        k = uses_at(p, x) ? BAD : WHOLE;
        if ((!innermost || spatial_only(p, f)) && (c = rows_step(p, f, &v, &loop, &bind, &ext)) > 0 &&
            (!p->rowloop || p->rowloop == loop)) {
            k = ROWS;
            p->rowloop = loop;
            p->rowbind = bind;
            p->atext = ext;
            hi -= c * (ext - 1);   /* the last padded index at the loop's first iteration */
        } else {
            c = 0;
        }
    }
    /* a read that a whole range would serve as well: not at the loop's
     * own variable (reads that disagree then take the whole range) */
    bool whole_ok = k == WHOLE || (k == ROWS && !ir_expr_uses_var(bind, p->at));
    if (p->fixed[d] == UNSEEN) {   /* the first read */
        p->fixed[d] = k;
        p->fixvar[d] = fv;
        p->wstep[d] = c;
        p->whole_ok[d] = whole_ok;
    } else if (p->fixed[d] != k || p->fixvar[d] != fv || p->wstep[d] != c) {
        p->fixed[d] = p->whole_ok[d] && whole_ok ? WHOLE : BAD;
        p->wstep[d] = 0;
    }
    p->whole_ok[d] = p->whole_ok[d] && whole_ok;
    if (k == ROWS && hi > p->whi[d])
        p->whi[d] = hi;
}

static int64_t gcd64(int64_t a, int64_t b)
{
    while (b) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* A read's index f of the copy's innermost dimension:
 * the gcd of its spatial variables' coefficients joins p->sgcd; a term
 * that is not a variable, a negative coefficient, or no spatial variable
 * at all rules the deinterleaved copy out. */
static void note_stride(pad_ctx *p, const ir_affine *f)
{
    bool spatial = false;
    for (int i = 0; i < f->n; i++) {
        int k = p->nvars - 1;
        while (k >= 0 && (!f->var[i] || p->ranges[k].var != f->var[i]))
            k--;
        if (k < 0 || f->coef[i] <= 0) {
            p->sbad = true;
            return;
        }
        if (p->kind[k] == IR_ITER_SPATIAL) {
            spatial = true;
            p->sgcd = gcd64(p->sgcd, f->coef[i]);
        }
    }
    if (!spatial)
        p->sbad = true;
}

/* The deinterleaved index of padded index t = e - lo = S * A + B, A the
 * terms whose coefficients S divides (with the constant's multiple of S),
 * B the others (each >= 0): (B mod S) * Hs + A + B div S; a B without
 * variables folds to a constant phase. */
static ir_expr *deinterleaved(const pad_ctx *p, const ir_expr *e, int64_t lo)
{
    ir_module *m = p->c->m;
    ir_affine f;
    ir_affine_of(e, &f);   /* (affine: checked when the reads were visited) */
    int64_t S = p->S, cc = f.c - lo;
    int64_t c0 = ((cc % S) + S) % S, c1 = (cc - c0) / S;
    ir_expr *A = ir_int(m, c1), *B = ir_int(m, c0);
    bool bvar = false;
    for (int i = 0; i < f.n; i++) {
        ir_expr *v = ir_varref(m, (ir_var *)f.var[i]);
        if (f.coef[i] % S == 0) {
            A = ir_binary(m, IR_ADD, A, f.coef[i] == S ? v : ir_binary(m, IR_MUL, ir_int(m, f.coef[i] / S), v));
        } else {
            B = ir_binary(m, IR_ADD, B, f.coef[i] == 1 ? v : ir_binary(m, IR_MUL, ir_int(m, f.coef[i]), v));
            bvar = true;
        }
    }
    if (!bvar)
        return ir_binary(m, IR_ADD, A, ir_int(m, c0 * p->Hs));
    ir_expr *phase = ir_binary(m, IR_FLOORMOD, B, ir_int(m, S));
    ir_expr *within = ir_binary(m, IR_FLOORDIV, ir_expr_copy(m, B), ir_int(m, S));
    return ir_binary(m, IR_ADD, ir_binary(m, IR_ADD, ir_binary(m, IR_MUL, phase, ir_int(m, p->Hs)), A), within);
}

/* A read's index e of a ROWS dimension in the copy: e - c * v - lo, the
 * iteration's block of rows starting at c * v. */
static ir_expr *rows_index(const pad_ctx *p, const ir_expr *e, int64_t lo)
{
    ir_module *m = p->c->m;
    ir_affine f;
    ir_affine_of(e, &f);   /* (affine and of one such v: checked when the reads were visited) */
    const ir_var *v = NULL, *loop = NULL;
    const ir_expr *bind = NULL;
    int64_t ext, c = rows_step(p, &f, &v, &loop, &bind, &ext);
    ir_expr *t = ir_binary(m, IR_SUB, ir_expr_copy(m, e),
                           ir_binary(m, IR_MUL, ir_int(m, c), ir_varref(m, (ir_var *)v)));
    return lo ? ir_binary(m, IR_ADD, t, ir_int(m, -lo)) : t;
}

static void visit_expr(pad_ctx *p, ir_expr **slot)
{
    ir_expr *x = *slot;
    if (!x || !p->ok)
        return;
    if (x->kind == IR_SELECT && x->a && x->a->kind == IR_LOAD && x->a->buf == p->buf &&
        (x->b->kind == IR_FLOAT || x->b->kind == IR_INT) && sch_is_bounds_test(x->c, x->a)) {
        double v = x->b->kind == IR_FLOAT ? x->b->fval : (double)x->b->ival;
        if (!p->rewrite) {
            if (p->have_fill && !(v == p->fill || (v != v && p->fill != p->fill))) {
                sch_error(p->c, "cannot pad '%s': its guarded reads default to different values",
                          p->buf->name);
                p->ok = false;
                return;
            }
            p->have_fill = true;
            p->fill = v;
        } else {
            *slot = x = x->a;   /* the border holds the default */
        }
    }
    if (x->kind == IR_LOAD && x->buf == p->buf) {
        if (!p->rewrite) {
            for (int d = 0; d < x->nargs; d++) {
                ir_affine f;
                ir_interval r = ir_affine_of(x->args[d], &f)
                                    ? ir_bounds(x->args[d], p->ranges, p->nvars) : ir_interval_unknown();
                int64_t lo = r.lo, hi = r.hi;
                if (!r.known) {
                    sch_error(p->c, "cannot pad '%s': index %d of a read is not an affine "
                              "expression of iteration variables", p->buf->name, d + 1);
                    p->ok = false;
                    return;
                }
                if (p->at)
                    classify_dim(p, d, x->args[d], &f, hi);
                if (d == p->perm[x->nargs - 1])
                    note_stride(p, &f);
                if (lo < p->lo[d])
                    p->lo[d] = lo;
                if (hi > p->hi[d])
                    p->hi[d] = hi;
            }
            p->any = true;
        } else {
            x->buf = p->to;
            ir_expr *args[16];
            for (int d = 0; d < x->nargs; d++)
                args[d] = p->fixed[d] == ONE ? ir_int(p->c->m, 0)
                          : p->fixed[d] == ROWS ? rows_index(p, x->args[d], p->lo[d])
                          : p->S > 1 && d == p->perm[x->nargs - 1] ? deinterleaved(p, x->args[d], p->lo[d])
                          : p->lo[d] != 0 ? ir_binary(p->c->m, IR_ADD, x->args[d], ir_int(p->c->m, -p->lo[d]))
                                          : x->args[d];
            for (int k = 0; k < x->nargs; k++)
                x->args[k] = args[p->perm[k]];
        }
    }
    for (int i = 0; i < x->nargs; i++)
        visit_expr(p, &x->args[i]);
    visit_expr(p, &x->a);
    visit_expr(p, &x->b);
    visit_expr(p, &x->c);
}

static void visit_stmt(pad_ctx *p, ir_stmt *s)
{
    if (!s || !p->ok)
        return;
    int mark = p->nvars;
    if (s->kind == IR_S_BLOCK)
        for (int i = 0; i < s->niters && p->nvars < 256; i++) {
            p->bind[p->nvars] = s->iters[i].binding;
            p->kind[p->nvars] = s->iters[i].kind;
            p->ranges[p->nvars++] = (ir_var_range){s->iters[i].var, 0, s->iters[i].extent - 1};
        }
    if (s->kind == IR_S_STORE && s->buf == p->buf && !p->rewrite) {
        sch_error(p->c, "cannot pad '%s': the function writes it", p->buf->name);
        p->ok = false;
        return;
    }
    for (int i = 0; i < s->nargs; i++)
        visit_expr(p, &s->args[i]);
    visit_expr(p, &s->value);
    visit_expr(p, &s->cond);
    for (int i = 0; i < s->nbody; i++)
        visit_stmt(p, s->body[i]);
    visit_stmt(p, s->init);
    visit_stmt(p, s->orelse);
    p->nvars = mark;
}

/* The innermost loop of the nest that fills xp (shape `shape`): over
 * [from, to) of the last dimension, named NAME_<last><suffix>, inside the
 * loops `outer` of the other dimensions. */
static ir_stmt *fill_loop(ir_module *m, const pad_ctx *p, ir_buffer *buf, ir_buffer *xp,
                          const char *name, const int64_t *shape, ir_var *const *outer,
                          const char *suffix, int64_t from, int64_t to, int64_t ph)
{
    /* (and one more, bound to the loop's variable, for a ROWS dimension) */
    ir_itervar *iters = ir_alloc(m->arena, sizeof *iters * (size_t)(buf->ndim + 1));
    int niters = buf->ndim;
    ir_var *at_iv = NULL;
    ir_expr *src[16], *dst[16];
    ir_expr *cond = NULL;
    int last = buf->ndim - 1;
    ir_var *inner = ir_var_new(m, ir_sprintf(m->arena, "%s_%d%s", name, last, suffix), IR_I64);
    for (int k = 0; k < buf->ndim; k++) {
        int d = p->perm[k];
        ir_var *loop = k == last ? inner : outer[k];
        ir_var *iv = ir_var_new(m, ir_sprintf(m->arena, "v%s", loop->name), IR_I64);
        iters[k] = (ir_itervar){iv, IR_ITER_SPATIAL, shape[k], ir_varref(m, loop)};
        dst[k] = ir_varref(m, iv);
        if (p->fixed[d] == ONE) {   /* the one element of the iteration of the loop */
            /* (the loop may run past the buffer, whose reads there are
             * guarded: the iteration variable's extent is the loop's, so
             * that the guard below is not simplified away as always true) */
            int64_t ext = p->hi[d] + 1 > buf->shape[d] ? p->hi[d] + 1 : buf->shape[d];
            iters[k] = (ir_itervar){iv, IR_ITER_SPATIAL, ext, ir_varref(m, (ir_var *)p->fixvar[d])};
            dst[k] = ir_int(m, 0);
        }
        src[d] = p->lo[d] ? ir_binary(m, IR_ADD, ir_varref(m, iv), ir_int(m, p->lo[d])) : ir_varref(m, iv);
        if (p->fixed[d] == ROWS) {   /* the iteration's block: from c * (the loop's variable) */
            if (!at_iv) {
                at_iv = ir_var_new(m, ir_sprintf(m->arena, "v%s_at", name), IR_I64);
                iters[niters++] = (ir_itervar){at_iv, IR_ITER_SPATIAL, p->atext, ir_expr_copy(m, p->rowbind)};
            }
            src[d] = ir_binary(m, IR_ADD, src[d], ir_binary(m, IR_MUL, ir_int(m, p->wstep[d]), ir_varref(m, at_iv)));
        }
        if (k == last && p->S > 1) {   /* phase ph: xp[ph * Hs + v] = padded element S * v + ph */
            iters[k].extent = p->Hs;
            dst[k] = ir_binary(m, IR_ADD, ir_varref(m, iv), ir_int(m, ph * p->Hs));
            src[d] = ir_binary(m, IR_ADD, ir_binary(m, IR_MUL, ir_int(m, p->S), ir_varref(m, iv)),
                               ir_int(m, ph + p->lo[d]));
        }
        if (p->lo[d] < 0 || p->hi[d] >= buf->shape[d] || (k == last && p->S > 1) || p->fixed[d] == ROWS) {
            ir_expr *in = ir_binary(m, IR_AND, ir_binary(m, IR_GE, ir_expr_copy(m, src[d]), ir_int(m, 0)),
                                    ir_binary(m, IR_LT, ir_expr_copy(m, src[d]), ir_int(m, buf->shape[d])));
            cond = cond ? ir_binary(m, IR_AND, cond, in) : in;
        }
    }
    ir_expr *val = ir_load(m, buf, src, buf->ndim);
    if (cond) {
        ir_expr *dflt = ir_dtype_is_float(buf->dtype) ? ir_float(m, p->have_fill ? p->fill : 0.0, buf->dtype)
                                                      : ir_int_typed(m, (int64_t)p->fill, buf->dtype);
        val = ir_select(m, cond, val, dflt);
    }
    const char *bname = *suffix ? ir_sprintf(m->arena, "%s%s", name, suffix) : name;
    ir_stmt *blk = ir_block(m, bname, iters, niters, NULL, ir_store(m, xp, dst, buf->ndim, val));
    /* (a row of 7 copies as 4 lanes and 3 scalars: 960 channels of 7x7
     * padded per channel for a 3x3 depthwise convolution, 41 to 35 us on
     * one thread) */
    return ir_for(m, inner, ir_int(m, from), ir_int(m, to),
                  to - from >= 4 ? IR_FOR_VECTORIZED : IR_FOR_SERIAL, blk);
}

/* A copy's rows, when they are long (at least LINE_ROWS cache lines) and
 * padded in front (a window's left border), are widened with more of the
 * border: in front, so that the buffer's own first element lands on a
 * cache line's start, and behind, to whole lines.  The copy then moves
 * aligned vectors (the source's rows are, when their length is a multiple
 * of a line's), and so does a row of outputs whose centre tap reads where
 * the buffer starts.  A 3x3 depthwise convolution along 112-wide rows (32
 * channels, copied per block of 8 rows) ran 140 -> 122 us on one thread,
 * 99 -> 86 on two, with rows of 128 floats from 15 on instead of 114 (the
 * same pitch unshifted, 134); in models, 3x3 depthwise convolutions on
 * 112x112 and 56x56 maps 0.88-0.97 of their time, a 5x5 on 28x28 (its row
 * of 32 widened to 48) 1.11: rows of two lines keep their length
 * (bench/results/padalign_s22.txt).  The widening holds the border's value
 * like the rest of the border: vector reads of a row's last outputs that
 * run past its end (a 28-wide row computed as 32) read it, never memory
 * the copy did not write (which could hold denormals: 7 times slower).
 * Only for a copy per iteration of a loop, which stays in the cache: a
 * whole copy grows by as much in memory (DenseNet-121's 3x3 convolutions
 * on 128x56x56, copied whole, 1.7 -> 2.4 MB, beyond L2: 1.00-1.05 of their
 * time); not for a deinterleaved row (its phases start anywhere) or one
 * without a left border (channels-last copies: their rows are channels,
 * padded at neither end). */
#define LINE_BYTES 64
#define LINE_ROWS 3

static void align_rows(pad_ctx *p)
{
    int d = p->perm[p->buf->ndim - 1];
    int64_t line = LINE_BYTES / ir_dtype_size(p->buf->dtype), front = -p->lo[d];
    int64_t row = p->hi[d] - p->lo[d] + 1;
    if (!p->at || (!p->sbad && p->sgcd > 1) || p->fixed[d] == ONE || p->fixed[d] == ROWS || front <= 0 ||
        line < 2 || row < LINE_ROWS * line)
        return;
    int64_t more = (line - front % line) % line;
    p->lo[d] -= more;
    p->hi[d] = p->lo[d] + (more + row + line - 1) / line * line - 1;
}

/* For a pad at loop `at`: the loop's variable in p->at and its statement in
 * *l, the dimensions classified; false (with the error) when B is read
 * outside the loop, or a dimension is read both by the loop's variable and
 * otherwise. */
static bool pad_at_loop(pad_ctx *p, const char *at, ir_stmt **l)
{
    sch_path lp;
    if (!sch_find_loop(p->c, at, &lp))
        return false;
    *l = *lp.slot[lp.n - 1];
    p->at = (*l)->var;
    for (int k = 0; k < lp.n && p->nencl < 64; k++)
        if ((*lp.slot[k])->kind == IR_S_FOR)
            p->encl[p->nencl++] = (*lp.slot[k])->var;
    for (int k = 0; k < lp.n; k++)
        if ((*lp.slot[k])->kind == IR_S_FOR && (*lp.slot[k])->for_kind == IR_FOR_VECTORIZED) {
            sch_error(p->c, "cannot pad '%s' at loop '%s': %s vectorized", p->buf->name, at,
                      k == lp.n - 1 ? "the loop is" : "it is inside a loop that is");
            return false;
        }
    for (int d = 0; d < p->buf->ndim; d++) {
        p->fixed[d] = UNSEEN;
        p->whi[d] = INT64_MIN;
    }
    int reads[2] = {0, 0};
    const ir_stmt *where[2] = {p->c->f->body, (*l)->body[0]};
    for (int i = 0; i < 2; i++)
        ir_stmt_walk(where[i], NULL, count_reads, &(struct read_count){p->buf, &reads[i]});
    if (reads[0] != reads[1]) {
        sch_error(p->c, "cannot pad '%s' at loop '%s': it is read outside the loop", p->buf->name, at);
        return false;
    }
    visit_stmt(p, p->c->f->body);
    for (int d = 0; p->ok && d < p->buf->ndim; d++)
        if (p->fixed[d] == BAD || (p->fixed[d] == ONE && d == p->perm[p->buf->ndim - 1])) {
            sch_error(p->c, "cannot pad '%s' at loop '%s': dimension %d is read %s", p->buf->name, at,
                      d + 1, p->fixed[d] == BAD ? "at the loop's (or an enclosing loop's) variable and otherwise"
                                             : "at the loop's variable and would be innermost");
            return false;
        }
    return p->ok;
}

bool sch_pad(sch_ctx *c, const char *buffer, int64_t last_dim, const char *at, const char *name)
{
    ir_buffer *buf = NULL;
    for (int i = 0; i < c->f->nparams; i++)
        if (strcmp(c->f->params[i]->name, buffer) == 0)
            buf = c->f->params[i];
    if (!buf) {
        sch_error(c, "pad: no buffer parameter '%s' in @%s", buffer, c->f->name);
        return false;
    }
    if (buf->ndim > 16 || buf->ndim < 1) {
        sch_error(c, "pad: buffer '%s' has %d dimensions (1 to 16 can be padded)", buffer, buf->ndim);
        return false;
    }
    if (sch_name_used(c->f, name)) {
        sch_error(c, "the name '%s' is already used in @%s", name, c->f->name);
        return false;
    }
    if (last_dim >= buf->ndim) {
        sch_error(c, "pad: buffer '%s' has no dimension %lld (it has %d, numbered from 0)", buffer,
                  (long long)last_dim, buf->ndim);
        return false;
    }
    pad_ctx p = {.c = c, .buf = buf, .ok = true};
    for (int d = 0, k = 0; d < buf->ndim; d++) {
        p.lo[d] = 0;
        p.hi[d] = buf->shape[d] - 1;
        if (d != last_dim)
            p.perm[k++] = d;
    }
    p.perm[buf->ndim - 1] = last_dim >= 0 ? (int)last_dim : buf->ndim - 1;
    ir_stmt *l = NULL;
    if (at ? !pad_at_loop(&p, at, &l) : (visit_stmt(&p, c->f->body), !p.ok))
        return false;   /* (pad_at_loop visits the body too) */
    if (!p.any || !p.have_fill) {
        sch_error(c, "pad: @%s has no read of '%s' guarded by its bounds (nothing to pad)",
                  c->f->name, buffer);
        return false;
    }
    align_rows(&p);
    ir_module *m = c->m;
    int64_t shape[16];   /* xp's, in its order */
    for (int k = 0; k < buf->ndim; k++)
        shape[k] = p.fixed[p.perm[k]] == ONE    ? 1
                   : p.fixed[p.perm[k]] == ROWS ? p.whi[p.perm[k]] - p.lo[p.perm[k]] + 1
                                                : p.hi[p.perm[k]] - p.lo[p.perm[k]] + 1;
    /* (only where each phase copies whole vectors: a 14-wide row of stride
     * 2 copied as two phases of 7 scalars costs more than the taps'
     * shuffles it saves) */
    if (!p.sbad && p.sgcd > 1 && buf->shape[p.perm[buf->ndim - 1]] / p.sgcd >= 8) {
        p.S = p.sgcd;
        p.Hs = (shape[buf->ndim - 1] + p.S - 1) / p.S;
        shape[buf->ndim - 1] = p.S * p.Hs;
    }
    ir_buffer *xp = ir_buffer_new(m, name, buf->dtype, buf->ndim, shape, IR_BUF_LOCAL);
    xp->scope = IR_SCOPE_GLOBAL;
    xp->filled = true;   /* the fill loops below store every element, borders included */
    p.rewrite = true;
    p.to = xp;
    visit_stmt(&p, l ? l->body[0] : c->f->body);
    /* the fill: xp[t] = t - border inside ? buf[t - border] : default; the
     * last dimension's loop in three parts (left border, inside, right
     * border), so that simplify drops its test from the inside part, which
     * then copies whole vectors */
    int last = buf->ndim - 1;
    ir_var *outer[16];
    for (int d = 0; d < last; d++)
        outer[d] = ir_var_new(m, ir_sprintf(m->arena, "%s_%d", name, d), IR_I64);
    ir_stmt *nest = ir_seq_new(m);
    static const char *const part_suffix[3] = {"_lo", "", "_hi"};
    /* a deinterleaved copy fills phase by phase, each in three parts */
    int64_t S = p.S > 1 ? p.S : 1, n = p.S > 1 ? p.Hs : shape[last], lo = p.lo[p.perm[last]];
    for (int64_t ph = 0; ph < S; ph++) {
        /* the v whose element S * v + ph + lo lies inside buf */
        int64_t in_lo = (-lo - ph + S - 1) / S, in_hi = (buf->shape[p.perm[last]] - lo - ph + S - 1) / S;
        if (-lo - ph < 0)
            in_lo = 0;
        if (in_lo > n)
            in_lo = n;
        if (in_hi > n)
            in_hi = n;
        if (in_hi < in_lo)
            in_hi = in_lo;
        int64_t part_from[3] = {0, in_lo, in_hi}, part_to[3] = {in_lo, in_hi, n};
        for (int part = 0; part < 3; part++)
            if (part_to[part] > part_from[part])
                ir_seq_append(m, nest, fill_loop(m, &p, buf, xp, name, shape, outer,
                                                 ph ? ir_sprintf(m->arena, "_ph%lld%s", (long long)ph,
                                                                 part_suffix[part])
                                                    : part_suffix[part],
                                                 part_from[part], part_to[part], ph));
    }
    if (nest->nbody == 1)
        nest = nest->body[0];
    for (int d = last - 1; d >= 0; d--)
        if (p.fixed[p.perm[d]] != ONE)
            nest = ir_for(m, outer[d], ir_int(m, 0), ir_int(m, shape[d]), IR_FOR_SERIAL, nest);
    ir_stmt *seq = ir_seq_new(m);
    ir_seq_append(m, seq, nest);
    ir_seq_append(m, seq, l ? l->body[0] : c->f->body);
    if (l)
        l->body[0] = ir_alloc_stmt(m, xp, seq);
    else
        c->f->body = ir_alloc_stmt(m, xp, seq);
    sch_update_blocks(m, c->f->body);
    return true;
}
