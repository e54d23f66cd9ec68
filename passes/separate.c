/* passes/separate.c — a max or min over a k x k window (max and min
 * pooling) as two passes: the maximum of each input row's taps, then the
 * maximum of the rows' maxima.
 *
 *   Y[.., p, q] max= X[.., a*p + r + c, q*stride + s - pad]      (r, s the taps)
 * becomes, per iteration of the loops outside p's (a channel):
 *   T[h, q] max= X[.., h + c, q*stride + s - pad]                 (h in 0..a*(P-1)+K)
 *   Y[.., p, q] max= T[a*p + r, q]
 * so each input row's horizontal maxima are computed once, not once per
 * output row that reads it: a 3x3 window of stride 1 then takes 3 + 3
 * taps per output instead of 9 (bench/results/pool_s13.txt: 58 -> 35 us
 * on 192x28x28 by hand).  T is a local of the channel, as the padded
 * copy of X that autoschedule makes there.
 *
 * Exactness.  The interpreter's max(acc, x) keeps acc unless x is larger
 * (a NaN x never is; acc starts at the init, a constant that is not NaN,
 * and only ever takes a value of x that is not NaN), so the block returns
 * the first largest tap in the order its loops visit them (r outer, s
 * inner: row-major), or the init when no tap exceeds it; -0 and +0 are
 * equal, so the first of them.  Rows first: T[h] is the first largest tap
 * of row h (or the init); the maximum over rows keeps the first row whose
 * T is largest, and that row's T is its first largest tap: the first
 * largest tap in row-major order, bit for bit.  max(x, acc) (ties to the
 * later tap) gives the last largest tap either way; min likewise.  Sums
 * would reassociate, so average pooling is left alone.
 *
 * Which blocks: a reduction whose init is a constant (not NaN), whose body
 * is Y = max(Y, e) or min at the block's own element, with two reduce
 * variables or more: r (the outermost reduce loop, of two taps or more)
 * and the row's taps (s, or s and t of a 3-D window, two taps or more in
 * all), and a spatial variable p such that every subexpression of e
 * that uses p or r is affine with p's and r's coefficients in the ratio
 * a : 1 (or 1 : d), so e reads p and r only through a*p + r (p + d*r):
 * the row.  The row pass of a 3-D window (T[h, q, w] max= over s, t) is
 * a 2-D window under the frame loop h, and splits in turn (S3D's 3x3x3
 * of stride 1: 3 + 3 + 3 taps an output, not 27); that nested split
 * leaves the threads to the channel loop outside, and takes the
 * iteration variables bound outside its nest (the channel) as fixed.
 * Every row from 0 to a*(P-1) + K - 1 must be read (a <= K),
 * so T computes nothing more than the window reads.  The loops from p's
 * inward may be p, r, s and other spatial loops (q, or channels of an
 * NHWC input), the loops outside p's spatial.  Classified from the IR
 * alone, for any k, stride, padding and dtype.  Left alone: windows where
 * splitting saves no taps (a*S + K >= K*S: 3x3 of stride 2 reads 9 taps
 * either way), bytes whose output rows are shorter than a vector (the
 * auto-scheduler runs those channels-last, one vector of channels a tap),
 * functions with a schedule of their own. */
#include "ir/arith.h"
#include "ir/target.h"
#include "passes/passes.h"
#include "passes/schedule/schedule.h"

/* The largest T kept per channel (bytes): it stays in L2 beside X's copy. */
#define SEPARATE_T_MAX (256 * 1024)

typedef struct window {
    ir_module *m;
    ir_func *f;
    const cg_target *target;      /* the machine the code is for */
    ir_stmt *loops[32];
    int n;
    ir_stmt *b;
    const ir_itervar *iter[32];   /* the iteration variable bound to each loop */
    int lp, lr;                   /* the loops of p and r */
    int64_t S;                    /* the taps of each row: the other reduce loops' */
    bool nested;                  /* the row pass of a window split already (no threads) */
    int64_t a, d;                 /* row = a*p + d*r (+ what does not use p or r) */
    ir_expr *e;                   /* the tap */
    bool acc_first;               /* max(Y, e), not max(e, Y) */
} window;

static bool is_var(const ir_expr *x, const ir_var *v) { return x && x->kind == IR_VAR && x->var == v; }

/* Whether every subexpression of x that uses p or r is affine in them as
 * k*(a*p + d*r) + terms of neither. */
static bool row_only(const window *w, const ir_expr *x)
{
    if (!x)
        return true;
    const ir_var *p = w->iter[w->lp]->var, *r = w->iter[w->lr]->var;
    if (!ir_expr_uses_var(x, p) && !ir_expr_uses_var(x, r))
        return true;
    ir_affine f;
    if (ir_affine_of(x, &f))
        return ir_affine_coef(&f, p) * w->d == ir_affine_coef(&f, r) * w->a;
    if (x->kind == IR_VAR)
        return false;
    for (int i = 0; i < x->nargs; i++)
        if (!row_only(w, x->args[i]))
            return false;
    return row_only(w, x->a) && row_only(w, x->b) && row_only(w, x->c);
}

/* The row's coefficients: those of the first index of a load in e that
 * uses r (p's, 0 when p is not there). */
typedef struct row_find {
    const ir_var *r;
    const ir_expr *index;
} row_find;

static bool find_row(const ir_expr *x, void *q)
{
    row_find *rf = q;
    if (x->kind == IR_LOAD)
        for (int i = 0; i < x->nargs && !rf->index; i++)
            if (ir_expr_uses_var(x->args[i], rf->r))
                rf->index = x->args[i];
    return !rf->index;
}

/* Whether iteration variable it of a row pass split already (nested) is
 * bound to a loop around that pass's local (the channel's): fixed for
 * the window, as T is a local of that loop's iteration. */
static bool outside(const window *w, const ir_itervar *it)
{
    if (!w->nested || it->kind != IR_ITER_SPATIAL || it->binding->kind != IR_VAR)
        return false;
    for (int k = 0; k < w->n; k++)
        if (w->loops[k]->var == it->binding->var)
            return false;
    return true;
}

/* Whether store st writes the block's own element: each index a spatial
 * iteration variable or 0, and every spatial variable of more than one
 * iteration one of them, once (but those fixed outside). */
static bool own_element(const window *w, const ir_stmt *b, const ir_stmt *st)
{
    int seen = 0;
    for (int d = 0; d < st->nargs; d++) {
        if (ir_expr_is_int(st->args[d], 0))
            continue;
        if (st->args[d]->kind != IR_VAR)
            return false;
        int found = 0;
        for (int i = 0; i < b->niters; i++)
            found += b->iters[i].var == st->args[d]->var && b->iters[i].kind == IR_ITER_SPATIAL;
        for (int e = 0; e < d; e++)
            found += is_var(st->args[e], st->args[d]->var);
        if (found != 1)
            return false;
        seen++;
    }
    int spatial = 0;
    for (int i = 0; i < b->niters; i++)
        spatial += b->iters[i].kind == IR_ITER_SPATIAL && b->iters[i].extent > 1 && !outside(w, &b->iters[i]);
    return seen >= spatial;
}

/* The window's loops and variables, or false when the block is not one
 * this pass splits. */
static bool classify(window *w)
{
    const ir_stmt *b = w->b, *st = b->nbody == 1 ? b->body[0] : NULL, *in = b->init;
    if (!st || st->kind != IR_S_STORE || !st->value || !in || in->kind != IR_S_STORE ||
        in->buf != st->buf || in->nargs != st->nargs || !own_element(w, b, st))
        return false;
    for (int i = 0; i < st->nargs; i++)
        if (!ir_expr_equal(in->args[i], st->args[i]))
            return false;
    if (!(in->value->kind == IR_INT || (in->value->kind == IR_FLOAT && in->value->fval == in->value->fval)))
        return false;
    const ir_expr *v = st->value;
    if (v->kind != IR_MAX && v->kind != IR_MIN)
        return false;
    const ir_expr *acc = v->a;
    w->acc_first = true;
    if (!(acc->kind == IR_LOAD && acc->buf == st->buf)) {
        acc = v->b;
        w->acc_first = false;
    }
    if (acc->kind != IR_LOAD || acc->buf != st->buf || acc->nargs != st->nargs)
        return false;
    for (int i = 0; i < st->nargs; i++)
        if (!ir_expr_equal(acc->args[i], st->args[i]))
            return false;
    w->e = w->acc_first ? v->b : v->a;
    if (ir_expr_loads(w->e, st->buf))
        return false;
    /* the loops: from 0, unit steps, serial, each bound by one iteration
     * variable of its extent; the others bound to 0 with extent 1 */
    for (int k = 0; k < w->n; k++) {
        const ir_stmt *l = w->loops[k];
        w->iter[k] = NULL;
        if (!ir_expr_is_int(l->lo, 0) || l->hi->kind != IR_INT || ir_for_step(l) != 1 ||
            l->for_kind != IR_FOR_SERIAL)
            return false;
        for (int i = 0; i < b->niters; i++)
            if (is_var(b->iters[i].binding, l->var)) {
                if (w->iter[k] || b->iters[i].extent != l->hi->ival)
                    return false;
                w->iter[k] = &b->iters[i];
            }
        if (!w->iter[k])
            return false;
    }
    int reduces = 0;
    w->lr = -1;
    w->S = 1;
    for (int i = 0; i < b->niters; i++) {
        const ir_itervar *it = &b->iters[i];
        bool loop = false;
        for (int k = 0; k < w->n; k++)
            loop |= w->iter[k] == it;
        if (!loop && !(it->extent == 1 && it->kind == IR_ITER_SPATIAL && ir_expr_is_int(it->binding, 0)) &&
            !outside(w, it))
            return false;
        reduces += it->kind == IR_ITER_REDUCE;
    }
    for (int k = 0; k < w->n; k++)
        if (w->iter[k]->kind == IR_ITER_REDUCE) {
            if (w->lr < 0)
                w->lr = k;
            else
                w->S *= w->iter[k]->extent;
        }
    if (reduces < 2 || w->iter[w->lr]->extent < 2 || w->S < 2)
        return false;
    /* p: the one spatial variable beside r in the row index */
    row_find rf = {w->iter[w->lr]->var, NULL};
    ir_expr_walk(w->e, find_row, &rf);
    ir_affine f;
    if (!rf.index || !ir_affine_of(rf.index, &f))
        return false;
    w->lp = -1;
    for (int k = 0; k < w->n; k++)
        if (w->iter[k]->kind == IR_ITER_SPATIAL && ir_affine_coef(&f, w->iter[k]->var) != 0) {
            if (w->lp >= 0)
                return false;
            w->lp = k;
        }
    if (w->lp < 0 || w->lp > w->lr)
        return false;
    w->a = ir_affine_coef(&f, w->iter[w->lp]->var);
    w->d = ir_affine_coef(&f, w->iter[w->lr]->var);
    int64_t P = w->iter[w->lp]->extent, K = w->iter[w->lr]->extent, S = w->S;
    /* every row in between read: a*p + r covers 0..a*(P-1)+K-1 when a <= K,
     * p + d*r when d <= P */
    if (!((w->d == 1 && w->a >= 1 && w->a <= K) || (w->a == 1 && w->d >= 1 && w->d <= P)))
        return false;
    if (!row_only(w, w->e))
        return false;
    /* taps saved: rows of T per output row (a) times S, plus K, against K*S */
    int64_t rows_per_output = w->d == 1 ? w->a : 1;
    if (rows_per_output * S + K >= K * S)
        return false;
    return true;
}

/* The rows T holds. */
static int64_t t_rows(const window *w)
{
    return w->a * (w->iter[w->lp]->extent - 1) + w->d * (w->iter[w->lr]->extent - 1) + 1;
}

/* T's bytes: its rows times the spatial loops inside p's. */
static int64_t t_bytes(const window *w)
{
    int64_t n = t_rows(w) * ir_dtype_size(w->b->body[0]->buf->dtype);
    for (int k = w->lp + 1; k < w->n; k++)
        if (w->iter[k]->kind == IR_ITER_SPATIAL)
            n *= w->iter[k]->extent;
    return n;
}

/* Bytes whose output rows are shorter than a vector of them run
 * channels-last (passes/schedule/auto_window.c): one vector of channels a
 * tap already, with nothing along rows to share. */
static bool bytes_channels_last(const window *w)
{
    const ir_buffer *Y = w->b->body[0]->buf;
    return ir_dtype_size(Y->dtype) == 1 && Y->shape[Y->ndim - 1] < cg_target_lanes(w->target, 1);
}

static ir_var *fresh_var(window *w, const char *base)
{
    return ir_var_new(w->m, sch_fresh_name(w->m, w->f, base), IR_I64);
}

/* The reduction y = op(y, x) (or op(x, y)) as the original writes it. */
static ir_expr *combine(const window *w, ir_expr *acc, ir_expr *x)
{
    ir_expr_kind k = w->b->body[0]->value->kind;
    return w->acc_first ? ir_binary(w->m, k, acc, x) : ir_binary(w->m, k, x, acc);
}

/* Whether loop k is one of the row's taps (a reduce loop other than r's). */
static bool row_tap(const window *w, int k)
{
    return k != w->lr && w->iter[k]->kind == IR_ITER_REDUCE;
}

static void visit(ir_module *m, ir_func *f, const cg_target *t, ir_stmt **slot, bool nested);

/* Rewrites the nest (its outermost loop in *slot) into the two passes. */
static void split(window *w, ir_stmt **slot)
{
    ir_module *m = w->m;
    const ir_stmt *b = w->b, *st = b->body[0];
    ir_buffer *Y = st->buf;
    const ir_var *p = w->iter[w->lp]->var, *r = w->iter[w->lr]->var;
    /* T: the rows, then the spatial loops inside p's, in order */
    int64_t shape[32];
    int nd = 0;
    shape[nd++] = t_rows(w);
    for (int k = w->lp + 1; k < w->n; k++)
        if (w->iter[k]->kind == IR_ITER_SPATIAL)
            shape[nd++] = w->iter[k]->extent;
    ir_buffer *T = ir_buffer_new(m, sch_fresh_name(m, w->f, ir_sprintf(m->arena, "%s_rows", Y->name)),
                                 Y->dtype, nd, shape, IR_BUF_LOCAL);
    T->scope = IR_SCOPE_GLOBAL;
    T->filled = true;   /* the row pass stores every element (its init) before reading it */

    /* the row pass: loops h (for p's), the inner spatial ones and s, new
     * variables (q_h, s_h); its iteration variables in the block's order,
     * new ones for those loops, the others (bound outside p's loop, or to
     * 0) kept */
    ir_itervar *ti = ir_alloc(m->arena, sizeof *ti * (size_t)b->niters);
    ir_var *from[34];
    ir_expr *to[34];
    int nt = 0, ns = 0;
    ir_var *tloop[32];
    ir_expr *tidx[32];
    int nidx = 0;
    for (int i = 0; i < b->niters; i++) {
        const ir_itervar *it = &b->iters[i];
        int k = w->lp;
        while (k < w->n && w->iter[k] != it)
            k++;
        if (k == w->n) {
            ti[nt++] = *it;
            continue;
        }
        if (k == w->lr)
            continue;
        tloop[k] = fresh_var(w, k == w->lp ? "h" : ir_sprintf(m->arena, "%s_h", w->loops[k]->var->name));
        ir_var *iv = fresh_var(w, ir_sprintf(m->arena, "v%s", tloop[k]->name));
        ti[nt++] = (ir_itervar){iv, it->kind, k == w->lp ? t_rows(w) : it->extent, ir_varref(m, tloop[k])};
        if (k == w->lp) {
            /* p and r read through the row a*p + d*r = h: p = 0, r = h
             * when d is 1, else p = h, r = 0 */
            from[ns] = (ir_var *)p;
            to[ns++] = w->d == 1 ? ir_int(m, 0) : ir_varref(m, iv);
            from[ns] = (ir_var *)r;
            to[ns++] = w->d == 1 ? ir_varref(m, iv) : ir_int(m, 0);
        } else {
            from[ns] = it->var;
            to[ns++] = ir_varref(m, iv);
        }
    }
    /* T's indices: h, then the inner spatial loops' variables in loop order */
    for (int k = w->lp; k < w->n; k++)
        for (int i = 0; i < nt; i++)
            if (k != w->lr && w->iter[k]->kind == IR_ITER_SPATIAL && is_var(ti[i].binding, tloop[k]))
                tidx[nidx++] = ir_varref(m, ti[i].var);
    ir_expr *tap = ir_expr_subst(m, w->e, from, to, ns);
    ir_expr *tacc = ir_load(m, T, tidx, nidx);
    ir_stmt *tbody = ir_store(m, T, tidx, nidx, combine(w, tacc, tap));
    ir_stmt *tinit = ir_store(m, T, tidx, nidx, ir_expr_copy(m, b->init->value));
    ir_stmt *tnest = ir_block(m, sch_fresh_name(m, w->f, ir_sprintf(m->arena, "%s_rows", b->name)), ti, nt,
                              tinit, tbody);
    for (int k = w->n - 1; k >= w->lp; k--)
        if (k != w->lr)
            tnest = ir_for(m, tloop[k], ir_int(m, 0), ir_int(m, k == w->lp ? t_rows(w) : w->iter[k]->extent),
                           IR_FOR_SERIAL, tnest);

    /* the column pass: the block without the row's taps, reading T at row
     * a*p + d*r */
    ir_itervar *yi = ir_alloc(m->arena, sizeof *yi * (size_t)b->niters);
    int ny = 0;
    for (int i = 0; i < b->niters; i++) {
        bool tap = false;
        for (int k = 0; k < w->n; k++)
            tap |= row_tap(w, k) && w->iter[k] == &b->iters[i];
        if (!tap)
            yi[ny++] = b->iters[i];
    }
    ir_expr *ridx[32];
    int nr = 0;
    ridx[nr++] = ir_binary(m, IR_ADD, ir_binary(m, IR_MUL, ir_int(m, w->a), ir_varref(m, (ir_var *)p)),
                           ir_binary(m, IR_MUL, ir_int(m, w->d), ir_varref(m, (ir_var *)r)));
    for (int k = w->lp + 1; k < w->n; k++)
        if (w->iter[k]->kind == IR_ITER_SPATIAL)
            ridx[nr++] = ir_varref(m, w->iter[k]->var);
    ir_expr *yacc = ir_expr_copy(m, w->acc_first ? st->value->a : st->value->b);
    ir_stmt *ybody = ir_store(m, Y, st->args, st->nargs, combine(w, yacc, ir_load(m, T, ridx, nr)));
    ir_stmt *ynest = ir_block(m, b->name, yi, ny, ir_stmt_copy(m, b->init), ybody);
    for (int k = w->n - 1; k >= w->lp; k--)
        if (!row_tap(w, k))
            ynest = ir_for(m, w->loops[k]->var, ir_int(m, 0), ir_expr_copy(m, w->loops[k]->hi), IR_FOR_SERIAL,
                           ynest);

    ir_stmt *passes[2] = {tnest, ynest};
    ir_stmt *seq = ir_seq(m, passes, 2);
    ir_stmt *local = ir_alloc_stmt(m, T, seq);
    if (w->lp == 0)
        *slot = local;
    else
        w->loops[w->lp - 1]->body[0] = local;
    /* the threads: the first loop outside that has an iteration for each
     * (the channels), when the window has the work the auto-scheduler
     * asks of a parallel pooling (auto_window.c's schedule_simple) */
    int64_t work = 1;
    for (int k = 0; k < w->n; k++)
        work *= w->iter[k]->extent;
    int threads = w->target->cores;
    for (int k = 0; k < w->lp && threads > 1 && work >= 16384 && !w->nested; k++)
        if (w->iter[k]->extent >= threads) {
            w->loops[k]->for_kind = IR_FOR_PARALLEL;
            break;
        }
    /* a window of more dimensions (3x3x3): its row pass, a window over the
     * remaining taps, splits in turn */
    visit(m, w->f, w->target, &seq->body[0], true);
}

static void visit(ir_module *m, ir_func *f, const cg_target *t, ir_stmt **slot, bool nested)
{
    ir_stmt *s = *slot;
    if (!s)
        return;
    if (s->kind == IR_S_FOR) {
        window w = {.m = m, .f = f, .target = t, .n = 0, .nested = nested};
        const ir_stmt *x = s;
        while (x && x->kind == IR_S_FOR && x->nbody == 1 && w.n < 32) {
            w.loops[w.n++] = (ir_stmt *)x;
            x = x->body[0];
        }
        if (x && x->kind == IR_S_BLOCK && x->nbody == 1) {
            w.b = (ir_stmt *)x;
            if (classify(&w) && !bytes_channels_last(&w) && t_bytes(&w) <= SEPARATE_T_MAX) {
                split(&w, slot);
                return;
            }
        }
    }
    if (s->kind == IR_S_BLOCK)
        return;
    for (int i = 0; i < s->nbody; i++)
        visit(m, f, t, &s->body[i], nested);
}

bool pass_separate(ir_module *m, diag *d)
{
    (void)d;
    cg_target t;
    if (pass_target())
        t = *pass_target();
    else
        cg_target_native(&t);
    for (int i = 0; i < m->nfuncs; i++) {
        ir_func *f = m->funcs[i];
        if (f->body && !ir_func_attr(f, "scheduled") && !ir_func_attr(f, "schedule_auto"))
            visit(m, f, &t, &f->body, false);
    }
    return true;
}
