/* passes/simplify.c — the expression and statement simplifier.
 *
 * What it does, bottom-up over every expression:
 *   - folds constants: integers exactly through GMP (only when the exact
 *     result fits the dtype, so wrapping behaviour is never baked in), f32 and
 *     f64 in their own precision (an f32 result is the float the interpreter
 *     and the generated C would compute);
 *   - applies identities that hold bit for bit (x + 0, x * 1, x * 0 and
 *     x - x only for integers: for floats NaN and -0 break them);
 *   - puts integer sums into a canonical linear form (terms in order of first
 *     appearance, constant last) whenever interval analysis proves the new
 *     form cannot overflow, which folds (x + c1) + c2, cancels x - x and
 *     distributes constant factors over index arithmetic;
 *   - the floordiv/floormod rules, using ranges of loop and block variables;
 *   - decides comparisons from ranges (padding guards that can never fail)
 *     and from what enclosing if/select conditions say about the same
 *     linear combination of variables.
 * And over statements: IF with a known condition, FOR with zero or one
 * iteration, ASSERTs proven true, LETs of constants, and whatever becomes
 * empty on the way.
 *
 * Soundness rules kept throughout:
 *   - expression nodes are never modified (they may be shared); changed
 *     expressions are new nodes;
 *   - no float expression is reassociated or otherwise rewritten unless the
 *     result is bit-identical for every input, NaN and -0 included;
 *   - an integer rewrite that is only true in exact arithmetic (the
 *     floordiv rules, comparisons) is used only where the interval analysis
 *     proves that no operation involved can wrap;
 *   - a rewrite may drop the evaluation of a subexpression (x * 0) but never
 *     adds one that was not there (a select's arms stay lazy).
 */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include <gmp.h>

#include "passes/passes.h"

#include "ir/arith.h"

/* ---------------------------------------------------------------- exact integers */

/* long may be 32 bits (LLP64), so int64 values go through two halves. */
static void z_set_i64(mpz_t z, int64_t v)
{
    if (v >= LONG_MIN && v <= LONG_MAX) {
        mpz_set_si(z, (long)v);
        return;
    }
    uint64_t mag = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    mpz_set_ui(z, (unsigned long)(mag >> 32));
    mpz_mul_2exp(z, z, 32);
    mpz_add_ui(z, z, (unsigned long)(mag & 0xffffffffu));
    if (v < 0)
        mpz_neg(z, z);
}

/* False when z does not fit int64. */
static bool z_get_i64(const mpz_t z, int64_t *out)
{
    if (mpz_sizeinbase(z, 2) > 64)
        return false;
    uint64_t mag = 0;
    size_t count = 0;
    mpz_export(&mag, &count, -1, sizeof mag, 0, 0, z);
    if (count == 0)
        mag = 0;
    if (mpz_sgn(z) >= 0) {
        if (mag > (uint64_t)INT64_MAX)
            return false;
        *out = (int64_t)mag;
    } else {
        if (mag > (uint64_t)INT64_MAX + 1)
            return false;
        *out = mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)mag;
    }
    return true;
}

static bool is_intlike(ir_dtype t) { return ir_dtype_is_int(t) || t == IR_BOOL; }

/* The values a dtype can hold, for the integer-like dtypes. */
static void dtype_bounds(ir_dtype t, int64_t *lo, int64_t *hi)
{
    if (!ir_dtype_int_range(t, lo, hi)) {
        *lo = INT64_MIN;
        *hi = INT64_MAX;
    }
}

static bool z_fits(const mpz_t z, ir_dtype t, int64_t *out)
{
    int64_t v, lo, hi;
    if (!z_get_i64(z, &v))
        return false;
    dtype_bounds(t, &lo, &hi);
    if (v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

/* r = a k b exactly, for the integer binary kinds; false for a zero divisor
 * or a kind that is not integer arithmetic. */
static bool z_binop(ir_expr_kind k, mpz_t r, const mpz_t a, const mpz_t b)
{
    switch (k) {
    case IR_ADD: mpz_add(r, a, b); return true;
    case IR_SUB: mpz_sub(r, a, b); return true;
    case IR_MUL: mpz_mul(r, a, b); return true;
    case IR_FLOORDIV:
        if (mpz_sgn(b) == 0)
            return false;
        mpz_fdiv_q(r, a, b);
        return true;
    case IR_FLOORMOD:
        if (mpz_sgn(b) == 0)
            return false;
        mpz_fdiv_r(r, a, b);   /* has the sign of b, as ir.h defines */
        return true;
    case IR_MIN: mpz_set(r, mpz_cmp(a, b) <= 0 ? a : b); return true;
    case IR_MAX: mpz_set(r, mpz_cmp(a, b) >= 0 ? a : b); return true;
    default: return false;
    }
}

/* *out = a k b when it is defined and the exact result fits dtype t. */
static bool fold_int(ir_expr_kind k, int64_t a, int64_t b, ir_dtype t, int64_t *out)
{
    mpz_t za, zb, r;
    mpz_inits(za, zb, r, NULL);
    z_set_i64(za, a);
    z_set_i64(zb, b);
    bool ok = z_binop(k, r, za, zb) && z_fits(r, t, out);
    mpz_clears(za, zb, r, NULL);
    return ok;
}

bool pass_fold_int(ir_expr_kind k, int64_t a, int64_t b, ir_dtype t, int64_t *out)
{
    return fold_int(k, a, b, t, out);
}

/* ---------------------------------------------------------------- context */

struct lin;

/* What is known inside the statement being simplified: variable var's
 * values lie in [lo, hi], or var is to be replaced by repl everywhere; or
 * (var NULL) a fact from an enclosing condition: the linear combination
 * `fact` (its constant ignored) lies in [lo, hi]. */
typedef struct simp_binding {
    const ir_var *var;
    int64_t lo, hi;
    ir_expr *repl;
    const struct lin *fact;
} simp_binding;

/* The simplifier's state: the module whose arena new nodes go to, and a
 * stack of bindings (inner scopes and refinements on top). */
typedef struct simp_ctx {
    ir_module *m;
    simp_binding *env;
    int nenv, capenv;
} simp_ctx;

static const simp_binding *lookup(const simp_ctx *c, const ir_var *v)
{
    for (int i = c->nenv - 1; i >= 0; i--)
        if (c->env[i].var == v && v)
            return &c->env[i];
    return NULL;
}

static void push_range(simp_ctx *c, const ir_var *v, int64_t lo, int64_t hi)
{
    simp_binding b = {v, lo, hi, NULL, NULL};
    IR_PUSH(c->m->arena, c->env, c->nenv, c->capenv, b);
}

static void push_repl(simp_ctx *c, const ir_var *v, ir_expr *repl)
{
    simp_binding b = {v, 0, 0, repl, NULL};
    IR_PUSH(c->m->arena, c->env, c->nenv, c->capenv, b);
}

static bool has_load(const ir_expr *e);

/* ---------------------------------------------------------------- intervals */

/* The integer values an int-like expression can take, always within its
 * dtype.  nowrap: no integer operation inside it can overflow, so its
 * computed value is its exact mathematical value (needed by the rules that
 * only hold in exact arithmetic). */
typedef struct simp_range {
    int64_t lo, hi;
    bool nowrap;
} simp_range;

static simp_range range_full(ir_dtype t, bool nowrap)
{
    simp_range r = {0, 0, nowrap};
    dtype_bounds(t, &r.lo, &r.hi);
    return r;
}

/* The interval of a k b over the box a x b from its four corners.  Every
 * kind this is called with is monotone in each operand separately on the
 * boxes it is called with, so the extremes are at corners. */
static simp_range range_corners(ir_expr_kind k, ir_dtype t, simp_range a, simp_range b)
{
    mpz_t za[2], zb[2], r, mn, mx;
    mpz_inits(za[0], za[1], zb[0], zb[1], r, mn, mx, NULL);
    z_set_i64(za[0], a.lo);
    z_set_i64(za[1], a.hi);
    z_set_i64(zb[0], b.lo);
    z_set_i64(zb[1], b.hi);
    bool ok = true, first = true;
    for (int i = 0; i < 2 && ok; i++)
        for (int j = 0; j < 2 && ok; j++) {
            ok = z_binop(k, r, za[i], zb[j]);
            if (ok && (first || mpz_cmp(r, mn) < 0))
                mpz_set(mn, r);
            if (ok && (first || mpz_cmp(r, mx) > 0))
                mpz_set(mx, r);
            first = false;
        }
    simp_range out;
    if (ok && z_fits(mn, t, &out.lo) && z_fits(mx, t, &out.hi))
        out.nowrap = a.nowrap && b.nowrap;
    else
        out = range_full(t, false);
    mpz_clears(za[0], za[1], zb[0], zb[1], r, mn, mx, NULL);
    return out;
}

static simp_range range_of(const simp_ctx *c, const ir_expr *e);

static simp_range range_floormod(ir_dtype t, simp_range a, simp_range b)
{
    bool nw = a.nowrap && b.nowrap;
    if (b.lo > 0) {
        int64_t q_lo, q_hi;
        if (b.lo == b.hi && fold_int(IR_FLOORDIV, a.lo, b.lo, IR_I64, &q_lo) &&
            fold_int(IR_FLOORDIV, a.hi, b.lo, IR_I64, &q_hi) && q_lo == q_hi) {
            /* All of a lies in one period: the result is a shifted. */
            int64_t lo, hi;
            if (fold_int(IR_FLOORMOD, a.lo, b.lo, t, &lo) &&
                fold_int(IR_FLOORMOD, a.hi, b.lo, t, &hi))
                return (simp_range){lo, hi, nw};
        }
        simp_range r = {0, b.hi - 1, nw};
        if (a.lo >= 0 && a.hi < r.hi)
            r.hi = a.hi;
        return r;
    }
    if (b.hi < 0) {
        simp_range r = {b.lo + 1, 0, nw};
        if (a.hi <= 0 && a.lo > r.lo)
            r.lo = a.lo;
        return r;
    }
    return range_full(t, nw);
}

static simp_range range_cast(const simp_ctx *c, const ir_expr *e)
{
    ir_dtype t = e->dtype;
    if (t == IR_BOOL || !is_intlike(e->a->dtype))
        return range_full(t, true);   /* an opaque value of the target type */
    simp_range a = range_of(c, e->a);
    int64_t lo, hi;
    dtype_bounds(t, &lo, &hi);
    if (a.lo >= lo && a.hi <= hi)
        return a;
    return range_full(t, false);
}

static simp_range range_of(const simp_ctx *c, const ir_expr *e)
{
    ir_dtype t = e->dtype;
    if (!is_intlike(t))
        return range_full(IR_I64, false);
    switch (e->kind) {
    case IR_INT:
        return (simp_range){e->ival, e->ival, true};
    case IR_VAR: {
        const simp_binding *b = lookup(c, e->var);
        if (b && b->repl)
            return range_of(c, b->repl);
        if (b)
            return (simp_range){b->lo, b->hi, true};
        return range_full(t, true);
    }
    case IR_ADD: case IR_SUB: case IR_MUL: case IR_MIN: case IR_MAX:
        return range_corners(e->kind, t, range_of(c, e->a), range_of(c, e->b));
    case IR_NEG: {
        simp_range zero = {0, 0, true};
        return range_corners(IR_SUB, t, zero, range_of(c, e->a));
    }
    case IR_FLOORDIV: {
        simp_range a = range_of(c, e->a), b = range_of(c, e->b);
        if (b.lo > 0 || b.hi < 0)
            return range_corners(IR_FLOORDIV, t, a, b);
        return range_full(t, a.nowrap && b.nowrap);
    }
    case IR_FLOORMOD:
        return range_floormod(t, range_of(c, e->a), range_of(c, e->b));
    case IR_SELECT: {
        simp_range a = range_of(c, e->a), b = range_of(c, e->b);
        simp_range r = {a.lo < b.lo ? a.lo : b.lo, a.hi > b.hi ? a.hi : b.hi,
                        a.nowrap && b.nowrap};
        return r;
    }
    case IR_CAST:
        return range_cast(c, e);
    default:
        /* loads, calls, comparisons and logic: any value of the dtype */
        return range_full(t, true);
    }
}

/* ---------------------------------------------------------------- linear forms */

/* An integer expression as sum(coef_i * term_i) + k.  Terms are the maximal
 * subexpressions that are not +, -, negation or multiplication by a
 * constant; equal terms are merged. */
#define LIN_MAX 32
typedef struct lin_term {
    ir_expr *e;
    int64_t coef;
} lin_term;

typedef struct lin {
    lin_term t[LIN_MAX];
    int n;
    int64_t k;
    ir_dtype dtype;
    bool ok;           /* false: too many terms or a coefficient overflowed */
} lin;

static void lin_init(lin *L, ir_dtype t)
{
    L->n = 0;
    L->k = 0;
    L->dtype = t;
    L->ok = true;
}

static void lin_add_term(lin *L, ir_expr *e, int64_t coef)
{
    for (int i = 0; i < L->n; i++)
        if (ir_expr_equal(L->t[i].e, e)) {
            if (!fold_int(IR_ADD, L->t[i].coef, coef, IR_I64, &L->t[i].coef))
                L->ok = false;
            return;
        }
    if (L->n == LIN_MAX) {
        L->ok = false;
        return;
    }
    L->t[L->n++] = (lin_term){e, coef};
}

static void lin_add(lin *L, ir_expr *e, int64_t coef)
{
    if (!L->ok || coef == 0)
        return;
    int64_t c2;
    if (e->dtype != L->dtype) {
        lin_add_term(L, e, coef);
        return;
    }
    switch (e->kind) {
    case IR_INT:
        if (!fold_int(IR_MUL, e->ival, coef, IR_I64, &c2) ||
            !fold_int(IR_ADD, L->k, c2, IR_I64, &L->k))
            L->ok = false;
        return;
    case IR_ADD:
        lin_add(L, e->a, coef);
        lin_add(L, e->b, coef);
        return;
    case IR_SUB:
        lin_add(L, e->a, coef);
        if (!fold_int(IR_SUB, 0, coef, IR_I64, &c2))
            L->ok = false;
        else
            lin_add(L, e->b, c2);
        return;
    case IR_NEG:
        if (!fold_int(IR_SUB, 0, coef, IR_I64, &c2))
            L->ok = false;
        else
            lin_add(L, e->a, c2);
        return;
    case IR_MUL:
        if (e->b->kind == IR_INT || e->a->kind == IR_INT) {
            ir_expr *k = e->b->kind == IR_INT ? e->b : e->a;
            ir_expr *x = k == e->b ? e->a : e->b;
            if (!fold_int(IR_MUL, coef, k->ival, IR_I64, &c2))
                L->ok = false;
            else
                lin_add(L, x, c2);
            return;
        }
        break;
    default:
        break;
    }
    lin_add_term(L, e, coef);
}

static ir_expr *mk_int(simp_ctx *c, int64_t v, ir_dtype t) { return ir_int_typed(c->m, v, t); }

static ir_expr *mk_bool(simp_ctx *c, bool v) { return ir_int_typed(c->m, v, IR_BOOL); }

/* x + k, written as x - |k| for negative k. */
static ir_expr *mk_add_const(simp_ctx *c, ir_expr *x, int64_t k)
{
    if (k == 0)
        return x;
    if (k < 0 && k != INT64_MIN)
        return ir_binary(c->m, IR_SUB, x, mk_int(c, -k, x->dtype));
    return ir_binary(c->m, IR_ADD, x, mk_int(c, k, x->dtype));
}

static ir_expr *lin_scaled(simp_ctx *c, ir_expr *e, int64_t mag, ir_dtype t)
{
    return mag == 1 ? e : ir_binary(c->m, IR_MUL, e, mk_int(c, mag, t));
}

/* Builds the expression of L: the first term with a positive coefficient
 * leads, the others follow in order (added or subtracted), the constant
 * comes last.  NULL if a coefficient or the constant does not fit the dtype
 * or cannot be negated. */
static ir_expr *lin_build(simp_ctx *c, const lin *L)
{
    int64_t lo, hi;
    dtype_bounds(L->dtype, &lo, &hi);
    if (L->k < lo || L->k > hi)
        return NULL;
    int lead = -1;
    for (int i = 0; i < L->n && lead < 0; i++)
        if (L->t[i].coef > 0)
            lead = i;
    ir_expr *acc = NULL;
    int64_t k = L->k;
    if (lead >= 0) {
        if (L->t[lead].coef > hi)
            return NULL;
        acc = lin_scaled(c, L->t[lead].e, L->t[lead].coef, L->dtype);
    } else if (k > 0) {
        acc = mk_int(c, k, L->dtype);   /* 7 - j rather than -j + 7 */
        k = 0;
    }
    for (int i = 0; i < L->n; i++) {
        int64_t co = L->t[i].coef;
        if (i == lead || co == 0)
            continue;
        int64_t mag = co;
        if (co < 0 && (co == INT64_MIN || (mag = -co) > hi))
            return NULL;
        if (co > hi)
            return NULL;
        ir_expr *term = lin_scaled(c, L->t[i].e, mag, L->dtype);
        if (co > 0)
            acc = ir_binary(c->m, IR_ADD, acc, term);
        else
            acc = acc ? ir_binary(c->m, IR_SUB, acc, term) : ir_unary(c->m, IR_NEG, term);
    }
    if (!acc)
        return mk_int(c, k, L->dtype);
    return mk_add_const(c, acc, k);
}

/* [lo, hi] of L's exact value, from its terms' ranges. */
static void lin_range(const simp_ctx *c, const lin *L, mpz_t lo, mpz_t hi)
{
    mpz_t a, b, co;
    mpz_inits(a, b, co, NULL);
    z_set_i64(lo, L->k);
    z_set_i64(hi, L->k);
    for (int i = 0; i < L->n; i++) {
        simp_range r = range_of(c, L->t[i].e);
        z_set_i64(co, L->t[i].coef);
        z_set_i64(a, r.lo);
        z_set_i64(b, r.hi);
        mpz_mul(a, a, co);
        mpz_mul(b, b, co);
        if (mpz_cmp(a, b) > 0)
            mpz_swap(a, b);
        mpz_add(lo, lo, a);
        mpz_add(hi, hi, b);
    }
    mpz_clears(a, b, co, NULL);
}

/* The two parts of a split put back together: floordiv(x, c) * (m * c) +
 * floormod(x, c) * m = m * x (exact for every x and nonzero c, also where
 * a product wraps: the sum is x modulo 2^bits and x fits), and of a split
 * of a split: floormod(floordiv(x, a), b) * (m * a) + floormod(x, a) * m =
 * floormod(x, a * b) * m (a, b > 0). */
static bool lin_fold_pair(simp_ctx *c, lin *L, int i, int j)
{
    int64_t k, a, b = 0, lo, hi, want, m = L->t[i].coef;
    bool flat = ir_divmod_pair(L->t[j].e, L->t[i].e, &k);
    if (!flat && ir_divmod_nested_pair(L->t[j].e, L->t[i].e, &a, &b) &&
        !__builtin_mul_overflow(a, b, &want) && ir_dtype_int_range(L->dtype, &lo, &hi) && want <= hi)
        k = a;
    else if (!flat)
        return false;
    if (m == 0 || __builtin_mul_overflow(m, k, &want) || L->t[j].coef != want)
        return false;
    ir_expr *x = L->t[i].e->a;
    L->t[i].coef = L->t[j].coef = 0;
    lin_add(L, flat ? x : ir_binary(c->m, IR_FLOORMOD, x, mk_int(c, k * b, L->dtype)), m);
    return true;
}

static void lin_fold_divmod(simp_ctx *c, lin *L)
{
    for (bool again = true; again && L->ok;) {
        again = false;
        for (int i = 0; i < L->n && !again; i++)
            for (int j = 0; j < L->n && !again; j++)
                again = i != j && lin_fold_pair(c, L, i, j);
    }
}

/* The canonical linear form of an integer +, -, * or negation, if it
 * differs from e and provably cannot overflow (then it equals e for every
 * input: the two agree modulo 2^bits and the new one is exact); else NULL. */
static ir_expr *linear_normalize(simp_ctx *c, ir_expr *e)
{
    lin L;
    lin_init(&L, e->dtype);
    lin_add(&L, e, 1);
    lin_fold_divmod(c, &L);
    if (!L.ok)
        return NULL;
    ir_expr *r = lin_build(c, &L);
    if (!r || ir_expr_equal(r, e))
        return NULL;
    return range_of(c, r).nowrap ? r : NULL;
}

/* ---------------------------------------------------------------- expressions */

static ir_expr *simp_expr(simp_ctx *c, ir_expr *e);

static bool is_const(const ir_expr *e) { return e->kind == IR_INT || e->kind == IR_FLOAT; }

static bool is_float_kind(ir_dtype t) { return t == IR_F32 || t == IR_F64; }

static ir_expr *mk_float(simp_ctx *c, double v, ir_dtype t) { return ir_float(c->m, v, t); }

static bool fconst_is(const ir_expr *e, double v, bool neg_zero)
{
    return e->kind == IR_FLOAT && e->fval == v && (v != 0 || !signbit(e->fval) == !neg_zero);
}

/* e as base + k: x + c and x - c give (x, +-c), anything else (e, 0). */
static ir_expr *split_const(ir_expr *e, int64_t *k)
{
    if (e->kind == IR_ADD && e->b->kind == IR_INT) {
        *k = e->b->ival;
        return e->a;
    }
    if (e->kind == IR_SUB && e->b->kind == IR_INT && e->b->ival != INT64_MIN) {
        *k = -e->b->ival;
        return e->a;
    }
    *k = 0;
    return e;
}

/* Local integer rules for +, -, *, negation that hold under wrapping (used
 * when the linear form's range cannot be proven: e.g. loaded values). */
static ir_expr *int_arith_local(simp_ctx *c, ir_expr *e)
{
    ir_expr *a = e->a, *b = e->b;
    ir_dtype t = e->dtype;
    int64_t v, k1;
    switch (e->kind) {
    case IR_NEG:
        return a->kind == IR_NEG ? a->a : e;
    case IR_ADD:
    case IR_SUB:
        if (ir_expr_is_int(b, 0))
            return a;
        if (e->kind == IR_ADD && ir_expr_is_int(a, 0))
            return b;
        if (e->kind == IR_SUB && ir_expr_equal(a, b))
            return mk_int(c, 0, t);
        if (e->kind == IR_SUB && ir_expr_is_int(a, 0))
            return ir_unary(c->m, IR_NEG, b);
        if (e->kind == IR_ADD && a->kind == IR_INT && b->kind != IR_INT)
            return int_arith_local(c, ir_binary(c->m, IR_ADD, b, a));
        if (b->kind == IR_INT) {
            /* (x + c1) + c2 = x + (c1 + c2), and the same with minus */
            ir_expr *x = split_const(a, &k1);
            if (x != a && fold_int(e->kind, k1, b->ival, t, &v))
                return mk_add_const(c, x, v);
        }
        return e;
    case IR_MUL:
        if (ir_expr_is_int(b, 1))
            return a;
        if (ir_expr_is_int(a, 1))
            return b;
        if (ir_expr_is_int(a, 0) || ir_expr_is_int(b, 0))
            return mk_int(c, 0, t);
        if (a->kind == IR_INT && b->kind != IR_INT)
            return int_arith_local(c, ir_binary(c->m, IR_MUL, b, a));
        /* (x * c1) * c2 = x * (c1 * c2) */
        if (b->kind == IR_INT && a->kind == IR_MUL && a->b->kind == IR_INT &&
            fold_int(IR_MUL, a->b->ival, b->ival, t, &v))
            return ir_binary(c->m, IR_MUL, a->a, mk_int(c, v, t));
        return e;
    default:
        return e;
    }
}

static ir_expr *simp_int_arith(simp_ctx *c, ir_expr *e)
{
    int64_t v;
    if (e->kind == IR_NEG && e->a->kind == IR_INT) {
        if (fold_int(IR_SUB, 0, e->a->ival, e->dtype, &v))
            return mk_int(c, v, e->dtype);
        return e;
    }
    if (e->kind != IR_NEG && e->a->kind == IR_INT && e->b->kind == IR_INT) {
        if (fold_int(e->kind, e->a->ival, e->b->ival, e->dtype, &v))
            return mk_int(c, v, e->dtype);
        return e;   /* the exact result does not fit: leave it alone */
    }
    ir_expr *r = linear_normalize(c, e);
    return r ? r : int_arith_local(c, e);
}

/* One f32 or f64 operation on constants, in the operands' precision. */
static double fold_float(ir_expr_kind k, ir_dtype t, double x, double y)
{
    if (t == IR_F32) {
        float a = (float)x, b = (float)y, r;
        switch (k) {
        case IR_ADD: r = a + b; break;
        case IR_SUB: r = a - b; break;
        case IR_MUL: r = a * b; break;
        case IR_DIV: r = a / b; break;
        default: r = -a; break;   /* IR_NEG */
        }
        return r;
    }
    switch (k) {
    case IR_ADD: return x + y;
    case IR_SUB: return x - y;
    case IR_MUL: return x * y;
    case IR_DIV: return x / y;
    default: return -x;
    }
}

/* A NaN's sign and payload depend on the machine (x86's inf - inf is a
 * negative NaN, ARM's a positive one) and the text form does not keep them,
 * so operations on or giving NaN are left to run time. */
static ir_expr *fold_float_const(simp_ctx *c, ir_expr *e, ir_expr_kind k, double x, double y)
{
    double r = fold_float(k, e->dtype, x, y);
    if (isnan(x) || isnan(y) || isnan(r))
        return e;
    return mk_float(c, r, e->dtype);
}

static ir_expr *simp_float_arith(simp_ctx *c, ir_expr *e)
{
    ir_dtype t = e->dtype;
    if (!is_float_kind(t))
        return e;   /* f16/bf16: rounding after every op is the runtime's */
    ir_expr *a = e->a, *b = e->b;
    if (e->kind == IR_NEG) {
        if (a->kind == IR_FLOAT)
            return fold_float_const(c, e, IR_NEG, a->fval, 0);
        return a->kind == IR_NEG ? a->a : e;   /* negation only flips the sign bit */
    }
    if (a->kind == IR_FLOAT && b->kind == IR_FLOAT)
        return fold_float_const(c, e, e->kind, a->fval, b->fval);
    switch (e->kind) {
    case IR_ADD:
        /* x + -0.0 is x for every x (x + 0.0 is not: -0 + 0 = +0). */
        if (fconst_is(b, 0, true))
            return a;
        if (a->kind == IR_FLOAT && !isnan(a->fval))
            return simp_float_arith(c, ir_binary(c->m, IR_ADD, b, a));
        return e;
    case IR_SUB:
        return fconst_is(b, 0, false) ? a : e;   /* x - 0.0 is x, -0 included */
    case IR_MUL:
        if (fconst_is(b, 1, false))
            return a;
        if (a->kind == IR_FLOAT && !isnan(a->fval))
            return simp_float_arith(c, ir_binary(c->m, IR_MUL, b, a));
        return e;
    case IR_DIV:
        return fconst_is(b, 1, false) ? a : e;
    default:
        return e;
    }
}

/* floordiv(x, c) / floormod(x, c) for a constant c > 0 by range alone. */
static ir_expr *divmod_by_range(simp_ctx *c, ir_expr *e, int64_t cst)
{
    simp_range ra = range_of(c, e->a);
    int64_t qlo, qhi, shift;
    if (!fold_int(IR_FLOORDIV, ra.lo, cst, IR_I64, &qlo) ||
        !fold_int(IR_FLOORDIV, ra.hi, cst, IR_I64, &qhi) || qlo != qhi)
        return e;
    if (e->kind == IR_FLOORDIV)
        return mk_int(c, qlo, e->dtype);
    if (!fold_int(IR_MUL, qlo, cst, IR_I64, &shift) ||
        !fold_int(IR_SUB, 0, shift, e->dtype, &shift))
        return e;
    return mk_add_const(c, e->a, shift);
}

/* floordiv(sum, c) = outer + floordiv(inner, c) where outer collects the
 * terms whose coefficients c divides (and the constant's quotient), and the
 * inner part is dropped when its range lies in one period [s*c, (s+1)*c).
 * floormod keeps only the inner part.  Exact arithmetic: needs nowrap. */
static ir_expr *divmod_linear(simp_ctx *c, ir_expr *e, int64_t cst)
{
    if (!range_of(c, e->a).nowrap)
        return NULL;
    ir_dtype t = e->dtype;
    lin L, outer, inner;
    lin_init(&L, t);
    lin_add(&L, e->a, 1);
    if (!L.ok)
        return NULL;
    lin_init(&outer, t);
    lin_init(&inner, t);
    for (int i = 0; i < L.n; i++) {
        int64_t q = L.t[i].coef / cst;
        if (q * cst == L.t[i].coef)
            lin_add_term(&outer, L.t[i].e, q);
        else
            lin_add_term(&inner, L.t[i].e, L.t[i].coef);
    }
    if (!fold_int(IR_FLOORDIV, L.k, cst, IR_I64, &outer.k) ||
        !fold_int(IR_FLOORMOD, L.k, cst, IR_I64, &inner.k))
        return NULL;
    ir_expr *in = lin_build(c, &inner);
    if (!in)
        return NULL;
    simp_range ri = range_of(c, in);
    int64_t qlo, qhi;
    bool one_period = ri.nowrap && fold_int(IR_FLOORDIV, ri.lo, cst, IR_I64, &qlo) &&
                      fold_int(IR_FLOORDIV, ri.hi, cst, IR_I64, &qhi) && qlo == qhi;
    ir_expr *r;
    if (e->kind == IR_FLOORDIV) {
        if (one_period) {
            if (!fold_int(IR_ADD, outer.k, qlo, IR_I64, &outer.k))
                return NULL;
        } else {
            lin_add_term(&outer, ir_binary(c->m, IR_FLOORDIV, in, mk_int(c, cst, t)), 1);
        }
        r = lin_build(c, &outer);
    } else if (one_period) {
        int64_t shift;
        if (!fold_int(IR_MUL, qlo, cst, IR_I64, &shift) ||
            !fold_int(IR_SUB, inner.k, shift, IR_I64, &inner.k))
            return NULL;
        r = lin_build(c, &inner);
    } else {
        r = ir_binary(c->m, IR_FLOORMOD, in, mk_int(c, cst, t));
    }
    if (!r || !outer.ok || ir_expr_equal(r, e))
        return NULL;
    return range_of(c, r).nowrap ? r : NULL;
}

static ir_expr *simp_divmod(simp_ctx *c, ir_expr *e)
{
    ir_expr *a = e->a, *b = e->b;
    ir_dtype t = e->dtype;
    int64_t v;
    if (!ir_dtype_is_int(t) || b->kind != IR_INT)
        return e;
    if (a->kind == IR_INT) {
        if (fold_int(e->kind, a->ival, b->ival, t, &v))
            return mk_int(c, v, t);
        return e;   /* division by zero stays a run-time error */
    }
    int64_t cst = b->ival;
    if (cst == 1)
        return e->kind == IR_FLOORDIV ? a : mk_int(c, 0, t);
    if (cst <= 0)
        return e;
    /* floordiv(floordiv(x, c1), c2) = floordiv(x, c1*c2) for positive c1, c2;
     * floormod(floormod(x, c1), c2) = floormod(x, c2) when c2 divides c1. */
    if (a->kind == e->kind && a->b->kind == IR_INT && a->b->ival > 0) {
        int64_t c1 = a->b->ival;
        if (e->kind == IR_FLOORDIV && fold_int(IR_MUL, c1, cst, t, &v))
            return simp_divmod(c, ir_binary(c->m, IR_FLOORDIV, a->a, mk_int(c, v, t)));
        if (e->kind == IR_FLOORMOD && c1 % cst == 0)
            return simp_divmod(c, ir_binary(c->m, IR_FLOORMOD, a->a, b));
    }
    ir_expr *r = divmod_linear(c, e, cst);
    return r ? r : divmod_by_range(c, e, cst);
}

static ir_expr *simp_minmax(simp_ctx *c, ir_expr *e)
{
    ir_expr *a = e->a, *b = e->b;
    bool is_min = e->kind == IR_MIN;
    if (ir_expr_equal(a, b))
        return a;
    if (a->kind == IR_FLOAT && b->kind == IR_FLOAT && is_float_kind(e->dtype)) {
        /* Only where every definition of min/max agrees: no NaN, and not
         * +0 against -0. */
        if (isnan(a->fval) || isnan(b->fval) || a->fval == b->fval)
            return e;
        return (a->fval < b->fval) == is_min ? a : b;
    }
    if (!is_intlike(e->dtype))
        return e;
    int64_t v;
    if (a->kind == IR_INT && b->kind == IR_INT && fold_int(e->kind, a->ival, b->ival, e->dtype, &v))
        return mk_int(c, v, e->dtype);
    simp_range ra = range_of(c, a), rb = range_of(c, b);
    if (ra.hi <= rb.lo)
        return is_min ? a : b;
    if (rb.hi <= ra.lo)
        return is_min ? b : a;
    if (a->kind == IR_INT && b->kind != IR_INT)
        return simp_minmax(c, ir_binary(c->m, e->kind, b, a));
    /* min(min(x, c1), c2) = min(x, min(c1, c2)) */
    if (b->kind == IR_INT && a->kind == e->kind && a->b->kind == IR_INT &&
        fold_int(e->kind, a->b->ival, b->ival, e->dtype, &v))
        return ir_binary(c->m, e->kind, a->a, mk_int(c, v, e->dtype));
    return e;
}

static ir_expr_kind cmp_swap(ir_expr_kind k)   /* a k b == b swap(k) a */
{
    switch (k) {
    case IR_LT: return IR_GT;
    case IR_LE: return IR_GE;
    case IR_GT: return IR_LT;
    case IR_GE: return IR_LE;
    default: return k;
    }
}

static ir_expr_kind cmp_negate(ir_expr_kind k)   /* !(a k b) == a negate(k) b, integers */
{
    switch (k) {
    case IR_LT: return IR_GE;
    case IR_LE: return IR_GT;
    case IR_GT: return IR_LE;
    case IR_GE: return IR_LT;
    case IR_EQ: return IR_NE;
    default: return IR_EQ;
    }
}

static bool is_cmp(ir_expr_kind k) { return k >= IR_EQ && k <= IR_GE; }

/* 1 true, 0 false, -1 unknown, for a - b in [lo, hi]. */
static int decide_diff(ir_expr_kind k, const mpz_t lo, const mpz_t hi)
{
    int sl = mpz_sgn(lo), sh = mpz_sgn(hi);
    switch (k) {
    case IR_LT: return sh < 0 ? 1 : sl >= 0 ? 0 : -1;
    case IR_LE: return sh <= 0 ? 1 : sl > 0 ? 0 : -1;
    case IR_GT: return sl > 0 ? 1 : sh <= 0 ? 0 : -1;
    case IR_GE: return sl >= 0 ? 1 : sh < 0 ? 0 : -1;
    case IR_EQ: return sl == 0 && sh == 0 ? 1 : (sl > 0 || sh < 0) ? 0 : -1;
    case IR_NE: return sl == 0 && sh == 0 ? 0 : (sl > 0 || sh < 0) ? 1 : -1;
    default: return -1;
    }
}

/* +1 when L and F have the same terms with the same coefficients, -1 when
 * with opposite ones, 0 otherwise (constants are not compared). */
static int lin_same_terms(const lin *L, const lin *F)
{
    int n = 0, sign = 0;
    for (int i = 0; i < L->n; i++) {
        if (L->t[i].coef == 0)
            continue;
        n++;
        int j = 0;
        while (j < F->n && !ir_expr_equal(F->t[j].e, L->t[i].e))
            j++;
        if (j == F->n)
            return 0;
        int s = F->t[j].coef == L->t[i].coef ? 1 : F->t[j].coef == -L->t[i].coef ? -1 : 0;
        if (s == 0 || (sign && s != sign))
            return 0;
        sign = s;
    }
    int nf = 0;
    for (int j = 0; j < F->n; j++)
        nf += F->t[j].coef != 0;
    return n == nf ? sign : 0;
}

/* Narrows [lo, hi], the range of L's value, with the facts of enclosing
 * conditions about the same combination of terms; true if any applied. */
static bool fact_range(const simp_ctx *c, const lin *L, mpz_t lo, mpz_t hi)
{
    bool any = false;
    mpz_t flo, fhi, k;
    mpz_inits(flo, fhi, k, NULL);
    for (int i = c->nenv - 1; i >= 0; i--) {
        const simp_binding *b = &c->env[i];
        int sign = b->fact ? lin_same_terms(L, b->fact) : 0;
        if (!sign)
            continue;
        /* terms in [b->lo, b->hi]; L = sign * terms + L->k */
        z_set_i64(k, L->k);
        z_set_i64(flo, sign > 0 ? b->lo : b->hi);
        z_set_i64(fhi, sign > 0 ? b->hi : b->lo);
        if (sign < 0) {
            mpz_neg(flo, flo);
            mpz_neg(fhi, fhi);
        }
        mpz_add(flo, flo, k);
        mpz_add(fhi, fhi, k);
        if (mpz_cmp(flo, lo) > 0)
            mpz_set(lo, flo);
        if (mpz_cmp(fhi, hi) < 0)
            mpz_set(hi, fhi);
        any = true;
    }
    mpz_clears(flo, fhi, k, NULL);
    return any;
}

/* Decides an integer comparison from ranges: first the operands' own
 * intervals, then the interval of their exact linear difference (which
 * sees through i + 1 > i). */
static int decide_cmp(simp_ctx *c, ir_expr_kind k, ir_expr *a, ir_expr *b)
{
    simp_range ra = range_of(c, a), rb = range_of(c, b);
    mpz_t lo, hi, t;
    mpz_inits(lo, hi, t, NULL);
    z_set_i64(lo, ra.lo);
    z_set_i64(t, rb.hi);
    mpz_sub(lo, lo, t);
    z_set_i64(hi, ra.hi);
    z_set_i64(t, rb.lo);
    mpz_sub(hi, hi, t);
    int r = decide_diff(k, lo, hi);
    if (r < 0 && ra.nowrap && rb.nowrap && a->dtype == b->dtype) {
        lin D;
        lin_init(&D, a->dtype);
        lin_add(&D, a, 1);
        lin_add(&D, b, -1);
        if (D.ok) {
            lin_range(c, &D, lo, hi);
            r = decide_diff(k, lo, hi);
            if (r < 0 && fact_range(c, &D, lo, hi))
                r = decide_diff(k, lo, hi);
        }
    }
    mpz_clears(lo, hi, t, NULL);
    return r;
}

static bool fold_cmp_values(ir_expr_kind k, double x, double y)
{
    switch (k) {
    case IR_EQ: return x == y;
    case IR_NE: return x != y;
    case IR_LT: return x < y;
    case IR_LE: return x <= y;
    case IR_GT: return x > y;
    default: return x >= y;
    }
}

static bool fold_cmp_ints(ir_expr_kind k, int64_t x, int64_t y)
{
    switch (k) {
    case IR_EQ: return x == y;
    case IR_NE: return x != y;
    case IR_LT: return x < y;
    case IR_LE: return x <= y;
    case IR_GT: return x > y;
    default: return x >= y;
    }
}

static ir_expr *simp_cmp(simp_ctx *c, ir_expr *e)
{
    ir_expr *a = e->a, *b = e->b;
    ir_expr_kind k = e->kind;
    if (a->kind == IR_FLOAT && b->kind == IR_FLOAT && is_float_kind(a->dtype))
        return mk_bool(c, fold_cmp_values(k, a->fval, b->fval));   /* IEEE, like C */
    if (a->kind == IR_INT && b->kind == IR_INT)
        return mk_bool(c, fold_cmp_ints(k, a->ival, b->ival));
    if (is_const(a) && !is_const(b)) {   /* constants to the right */
        k = cmp_swap(k);
        ir_expr *t = a;
        a = b;
        b = t;
        e = ir_binary(c->m, k, a, b);
    }
    if (!is_intlike(a->dtype))
        return e;
    if (a->dtype == IR_BOOL && b->kind == IR_INT && (k == IR_EQ || k == IR_NE))
        return (b->ival != 0) == (k == IR_EQ) ? a : simp_expr(c, ir_unary(c->m, IR_NOT, a));
    if (ir_expr_equal(a, b))
        return mk_bool(c, k == IR_EQ || k == IR_LE || k == IR_GE);
    int d = decide_cmp(c, k, a, b);
    return d < 0 ? e : mk_bool(c, d);
}

static ir_expr *simp_logic(simp_ctx *c, ir_expr *e)
{
    ir_expr *a = e->a, *b = e->b;
    if (e->kind == IR_NOT) {
        if (a->kind == IR_INT)
            return mk_bool(c, a->ival == 0);
        if (a->kind == IR_NOT)
            return a->a;
        /* !(x < y) is x >= y for integers (not for floats: NaN) */
        if (is_cmp(a->kind) && is_intlike(a->a->dtype))
            return ir_binary(c->m, cmp_negate(a->kind), a->a, a->b);
        return e;
    }
    bool is_and = e->kind == IR_AND;
    if (a->kind == IR_INT && b->kind != IR_INT) {
        ir_expr *t = a;
        a = b;
        b = t;
    }
    if (b->kind == IR_INT) {
        if (a->kind == IR_INT)
            return mk_bool(c, is_and ? (a->ival && b->ival) : (a->ival || b->ival));
        /* x && true = x, x && false = false; x || false = x, x || true = true */
        return (b->ival != 0) == is_and ? a : mk_bool(c, !is_and);
    }
    if (ir_expr_equal(a, b))
        return a;
    return e;
}

static ir_expr *simp_cast(simp_ctx *c, ir_expr *e)
{
    ir_expr *a = e->a;
    ir_dtype t = e->dtype;
    if (a->dtype == t)
        return a;   /* a cast to the operand's own type does nothing */
    if (a->kind == IR_INT) {
        int64_t lo, hi;
        if (ir_dtype_is_int(t)) {
            dtype_bounds(t, &lo, &hi);
            return a->ival >= lo && a->ival <= hi ? mk_int(c, a->ival, t) : e;
        }
        if (t == IR_BOOL)   /* 0 and 1 only: wider values depend on the target's bool */
            return a->ival == 0 || a->ival == 1 ? mk_int(c, a->ival, t) : e;
        if (t == IR_F32)
            return mk_float(c, (float)a->ival, t);   /* one rounding, int64 -> float */
        if (t == IR_F64)
            return mk_float(c, (double)a->ival, t);
        return e;
    }
    if (a->kind == IR_FLOAT && is_float_kind(a->dtype) && !isnan(a->fval)) {
        double x = a->fval;
        if (t == IR_F32)
            return mk_float(c, (float)x, t);
        if (t == IR_F64)
            return mk_float(c, x, t);
        if (ir_dtype_is_int(t) && !isnan(x)) {
            double tr = trunc(x);   /* float -> int truncates toward zero */
            int64_t lo, hi;
            dtype_bounds(t, &lo, &hi);   /* -lo and hi + 1 are powers of two: exact */
            bool fits = tr >= (double)lo && tr < (double)hi + 1.0;
            if (fits)
                return mk_int(c, (int64_t)tr, t);
        }
    }
    return e;
}

/* Folds the math intrinsics whose results are exact or correctly rounded by
 * IEEE 754 on every libm; exp, tanh and the others may differ between the
 * compiler's folding and the run-time library, so they are left alone. */
static ir_expr *simp_call(simp_ctx *c, ir_expr *e)
{
    if (e->nargs != 1 || e->args[0]->kind != IR_FLOAT || !is_float_kind(e->dtype))
        return e;
    double x = e->args[0]->fval, r;
    bool f32 = e->dtype == IR_F32;
    float xf = (float)x;
    switch (e->fn) {
    case IR_FN_ABS: r = f32 ? fabsf(xf) : fabs(x); break;
    case IR_FN_FLOOR: r = f32 ? floorf(xf) : floor(x); break;
    case IR_FN_CEIL: r = f32 ? ceilf(xf) : ceil(x); break;
    case IR_FN_RINT: r = f32 ? rintf(xf) : rint(x); break;
    case IR_FN_SQRT: r = f32 ? sqrtf(xf) : sqrt(x); break;
    default: return e;
    }
    return isnan(x) || isnan(r) ? e : mk_float(c, r, e->dtype);
}

static ir_expr *simp_var(simp_ctx *c, ir_expr *e)
{
    const simp_binding *b = lookup(c, e->var);
    if (b && b->repl)
        return b->repl;
    if (b && is_intlike(e->dtype) && b->lo == b->hi && ir_var_lanes(e->var) == 1)
        return mk_int(c, b->lo, e->dtype);
    return e;
}

/* A shallow copy of e with new operands, or e itself if none changed. */
static ir_expr *with_children(simp_ctx *c, ir_expr *e, ir_expr *a, ir_expr *b,
                              ir_expr *cc, ir_expr **args)
{
    bool same = a == e->a && b == e->b && cc == e->c;
    for (int i = 0; i < e->nargs && same; i++)
        same = args[i] == e->args[i];
    if (same)
        return e;
    ir_expr *n = ir_alloc(c->m->arena, sizeof *n);
    *n = *e;
    n->a = a;
    n->b = b;
    n->c = cc;
    n->args = args;
    return n;
}

static int refine(simp_ctx *c, ir_expr *cond, bool truth);

static ir_expr *simp_select(simp_ctx *c, ir_expr *e)
{
    ir_expr *cond = simp_expr(c, e->c);
    if (cond->kind == IR_INT)
        return simp_expr(c, cond->ival ? e->a : e->b);
    /* Each arm is simplified knowing which way the condition went. */
    int mark = c->nenv;
    bool live_a = refine(c, cond, true);
    ir_expr *a = live_a ? simp_expr(c, e->a) : e->a;
    c->nenv = mark;
    bool live_b = refine(c, cond, false);
    ir_expr *b = live_b ? simp_expr(c, e->b) : e->b;
    c->nenv = mark;
    if (!live_a)
        return simp_expr(c, e->b);
    if (!live_b)
        return simp_expr(c, e->a);
    if (ir_expr_equal(a, b))
        return a;
    if (cond->kind == IR_NOT)
        return ir_select(c->m, cond->a, b, a);
    return with_children(c, e, a, b, cond, e->args);
}

static ir_expr *simp_expr(simp_ctx *c, ir_expr *e)
{
    if (!e)
        return NULL;
    if (e->kind == IR_SELECT)
        return simp_select(c, e);
    ir_expr **args = e->args;
    for (int i = 0; i < e->nargs; i++) {
        ir_expr *x = simp_expr(c, e->args[i]);
        if (x != e->args[i] && args == e->args) {
            args = ir_alloc(c->m->arena, sizeof *args * (size_t)e->nargs);
            memcpy(args, e->args, sizeof *args * (size_t)e->nargs);
        }
        args[i] = x;
    }
    ir_expr *n = with_children(c, e, simp_expr(c, e->a), simp_expr(c, e->b), e->c, args);
    if (ir_expr_lanes(n) > 1)
        return n;   /* vector IR: only the scalars inside (ramp bases, indices) */
    switch (n->kind) {
    case IR_VAR:
        return simp_var(c, n);
    case IR_ADD: case IR_SUB: case IR_MUL: case IR_NEG:
        return ir_dtype_is_int(n->dtype) ? simp_int_arith(c, n) : simp_float_arith(c, n);
    case IR_DIV:
        return simp_float_arith(c, n);
    case IR_FLOORDIV: case IR_FLOORMOD:
        return simp_divmod(c, n);
    case IR_MIN: case IR_MAX:
        return simp_minmax(c, n);
    case IR_EQ: case IR_NE: case IR_LT: case IR_LE: case IR_GT: case IR_GE:
        return simp_cmp(c, n);
    case IR_AND: case IR_OR: case IR_NOT:
        return simp_logic(c, n);
    case IR_CAST:
        return simp_cast(c, n);
    case IR_CALL:
        return simp_call(c, n);
    default:
        return n;
    }
}

/* ---------------------------------------------------------------- refinement */

/* Narrows v's range to [lo, hi] on top of what is known; false if the
 * result is empty (the condition that implied it cannot hold). */
static bool narrow(simp_ctx *c, const ir_var *v, int64_t lo, int64_t hi)
{
    const simp_binding *b = lookup(c, v);
    int64_t cur_lo, cur_hi;
    if (b && !b->repl) {
        cur_lo = b->lo;
        cur_hi = b->hi;
    } else {
        dtype_bounds(v->dtype, &cur_lo, &cur_hi);
    }
    if (lo < cur_lo)
        lo = cur_lo;
    if (hi > cur_hi)
        hi = cur_hi;
    if (lo > hi)
        return false;
    push_range(c, v, lo, hi);
    return true;
}

/* Records `D k 0` as a fact about D's terms: they lie in [lo, hi] with the
 * constant moved to the right.  False if that contradicts an earlier fact. */
static bool push_fact(simp_ctx *c, const lin *D, ir_expr_kind k)
{
    int64_t t, lo = INT64_MIN, hi = INT64_MAX;
    /* A store inside the guarded code could change a loaded value. */
    for (int i = 0; i < D->n; i++)
        if (has_load(D->t[i].e))
            return true;
    if (!fold_int(IR_SUB, 0, D->k, IR_I64, &t))
        return true;
    switch (k) {
    case IR_LT: if (t == INT64_MIN) return false; hi = t - 1; break;
    case IR_LE: hi = t; break;
    case IR_GT: if (t == INT64_MAX) return false; lo = t + 1; break;
    case IR_GE: lo = t; break;
    case IR_EQ: lo = hi = t; break;
    default: return true;
    }
    lin *copy = ir_alloc(c->m->arena, sizeof *copy);
    *copy = *D;
    copy->k = 0;
    mpz_t zlo, zhi;
    mpz_inits(zlo, zhi, NULL);
    z_set_i64(zlo, INT64_MIN);
    z_set_i64(zhi, INT64_MAX);
    if (fact_range(c, copy, zlo, zhi)) {   /* intersect with what is known */
        int64_t a, b;
        if (z_get_i64(zlo, &a) && a > lo)
            lo = a;
        if (z_get_i64(zhi, &b) && b < hi)
            hi = b;
    }
    mpz_clears(zlo, zhi, NULL);
    if (lo > hi)
        return false;
    simp_binding b = {NULL, lo, hi, NULL, copy};
    IR_PUSH(c->m->arena, c->env, c->nenv, c->capenv, b);
    return true;
}

/* Records what `cond == truth` says about a variable: conditions of the
 * form coef*v + k OP 0 with coef = +-1 after moving everything to the left
 * (i < n, 0 <= i + r - 1, ...), through && (when true), || (when false) and
 * !.  Returns false when the condition is proven impossible. */
static int refine(simp_ctx *c, ir_expr *cond, bool truth)
{
    if (ir_expr_lanes(cond) > 1)
        return true;   /* a vector condition holds lane by lane: no fact for all */
    if (cond->kind == IR_INT)
        return (cond->ival != 0) == truth;
    if (cond->kind == IR_NOT)
        return refine(c, cond->a, !truth);
    if ((cond->kind == IR_AND && truth) || (cond->kind == IR_OR && !truth))
        return refine(c, cond->a, truth) && refine(c, cond->b, truth);
    if (!is_cmp(cond->kind) || !ir_dtype_is_int(cond->a->dtype) ||
        cond->a->dtype != cond->b->dtype)
        return true;
    ir_expr_kind k = truth ? cond->kind : cmp_negate(cond->kind);
    if (k == IR_NE || !range_of(c, cond->a).nowrap || !range_of(c, cond->b).nowrap)
        return true;
    lin D;
    lin_init(&D, cond->a->dtype);
    lin_add(&D, cond->a, 1);
    lin_add(&D, cond->b, -1);
    if (!D.ok)
        return true;
    int var_term = -1, nterms = 0;
    for (int i = 0; i < D.n; i++) {
        if (D.t[i].coef == 0)
            continue;
        nterms++;
        if (D.t[i].e->kind == IR_VAR && (D.t[i].coef == 1 || D.t[i].coef == -1))
            var_term = i;
    }
    if (nterms == 0)
        return true;   /* no terms: decide_cmp already folded what it could */
    if (nterms > 1 || var_term < 0)
        return push_fact(c, &D, k);
    /* coef*v + k OP 0  ->  v OP' t */
    int64_t t;
    if (D.t[var_term].coef == 1) {
        if (!fold_int(IR_SUB, 0, D.k, IR_I64, &t))
            return true;
    } else {
        t = D.k;
        k = cmp_swap(k);
    }
    const ir_var *v = D.t[var_term].e->var;
    int64_t lo = INT64_MIN, hi = INT64_MAX;
    switch (k) {
    case IR_LT: if (t == INT64_MIN) return false; hi = t - 1; break;
    case IR_LE: hi = t; break;
    case IR_GT: if (t == INT64_MAX) return false; lo = t + 1; break;
    case IR_GE: lo = t; break;
    case IR_EQ: lo = hi = t; break;
    default: return true;
    }
    return narrow(c, v, lo, hi);
}

/* ---------------------------------------------------------------- statements */

static ir_stmt *empty_stmt(simp_ctx *c) { return ir_seq(c->m, NULL, 0); }

static bool has_load(const ir_expr *e);

static bool load_visit(const ir_expr *e, void *p)
{
    if (e->kind == IR_LOAD)
        *(bool *)p = true;
    return !*(bool *)p;
}

static bool has_load(const ir_expr *e)
{
    bool found = false;
    ir_expr_walk(e, load_visit, &found);
    return found;
}

static ir_stmt *simp_stmt(simp_ctx *c, ir_stmt *s);

static ir_stmt *simp_seq(simp_ctx *c, ir_stmt *s)
{
    ir_stmt **out = ir_alloc(c->m->arena, sizeof *out * (size_t)(s->nbody ? s->nbody : 1));
    int n = 0, cap = s->nbody;
    for (int i = 0; i < s->nbody; i++) {
        ir_stmt *r = simp_stmt(c, s->body[i]);
        if (r->kind == IR_S_SEQ) {   /* splice nested sequences */
            for (int j = 0; j < r->nbody; j++)
                if (!pass_is_empty(r->body[j]))
                    IR_PUSH(c->m->arena, out, n, cap, r->body[j]);
        } else {
            IR_PUSH(c->m->arena, out, n, cap, r);
        }
    }
    if (n == 1)
        return out[0];
    s->body = out;
    s->nbody = n;
    s->capbody = cap;
    return s;
}

/* The last value of a loop from lo (a constant) below hi stepping by S:
 * lo + S*floor((hi - 1 - lo) / S). */
static int64_t last_step(int64_t lo, int64_t top, int64_t step)
{
    if (step <= 1 || top <= lo)
        return top;
    uint64_t span = (uint64_t)top - (uint64_t)lo;   /* exact: top > lo */
    return (int64_t)((uint64_t)lo + span / (uint64_t)step * (uint64_t)step);
}

/* The loop's range in the current scope: [lo.lo, hi.hi - 1], and for a
 * loop stepping by S from a constant, its last value below that. */
static ir_stmt *simp_for(simp_ctx *c, ir_stmt *s)
{
    s->lo = simp_expr(c, s->lo);
    s->hi = simp_expr(c, s->hi);
    ir_expr *lt = simp_expr(c, ir_binary(c->m, IR_LT, s->lo, s->hi));
    if (lt->kind == IR_INT && lt->ival == 0)
        return empty_stmt(c);   /* never runs */
    /* one iteration: hi == lo + 1, or lo < hi <= lo + S stepping by S */
    int64_t step = ir_for_step(s);
    ir_expr *one = step == 1 ? simp_expr(c, ir_binary(c->m, IR_EQ, s->hi,
                                                      ir_binary(c->m, IR_ADD, s->lo,
                                                                ir_int(c->m, 1))))
                             : simp_expr(c, ir_binary(c->m, IR_AND, lt,
                                                      ir_binary(c->m, IR_LE, s->hi,
                                                                ir_binary(c->m, IR_ADD, s->lo,
                                                                          ir_int(c->m, step)))));
    int mark = c->nenv;
    ir_stmt *r;
    if (one->kind == IR_INT && one->ival && !has_load(s->lo)) {
        /* Exactly one iteration: the body with var = lo. */
        push_repl(c, s->var, s->lo);
        r = simp_stmt(c, s->body[0]);
    } else {
        simp_range lo = range_of(c, s->lo), hi = range_of(c, s->hi);
        int64_t top = hi.hi == INT64_MIN ? INT64_MIN : hi.hi - 1;
        if (lo.lo == lo.hi)
            top = last_step(lo.lo, top, step);
        push_range(c, s->var, lo.lo, top >= lo.lo ? top : lo.lo);
        s->body[0] = simp_stmt(c, s->body[0]);
        r = pass_is_empty(s->body[0]) ? empty_stmt(c) : s;
    }
    c->nenv = mark;
    return r;
}

static ir_stmt *simp_block(simp_ctx *c, ir_stmt *s)
{
    int mark = c->nenv;
    for (int i = 0; i < s->niters; i++)
        s->iters[i].binding = simp_expr(c, s->iters[i].binding);
    for (int i = 0; i < s->niters; i++) {
        /* The interpreter checks that a binding lies in [0, extent), so both
         * the declared domain and the binding's own range hold inside. */
        ir_itervar *iv = &s->iters[i];
        if (iv->extent <= 0)
            continue;   /* an empty domain: the block can never run */
        simp_range r = range_of(c, iv->binding);
        int64_t lo = r.lo > 0 ? r.lo : 0;
        int64_t hi = r.hi < iv->extent - 1 ? r.hi : iv->extent - 1;
        if (lo > hi) {
            lo = 0;
            hi = iv->extent - 1;
        }
        push_range(c, iv->var, lo, hi);
    }
    if (s->init) {
        s->init = simp_stmt(c, s->init);
        if (pass_is_empty(s->init))
            s->init = NULL;
    }
    s->body[0] = simp_stmt(c, s->body[0]);
    c->nenv = mark;
    if (!s->init && pass_is_empty(s->body[0]))
        return empty_stmt(c);
    pass_update_block_access(c->m, s);
    return s;
}

static ir_stmt *simp_let(simp_ctx *c, ir_stmt *s)
{
    s->value = simp_expr(c, s->value);
    int mark = c->nenv;
    ir_stmt *r;
    if (is_const(s->value) || s->value->kind == IR_VAR) {
        /* Constants and variables are immutable: use them directly. */
        push_repl(c, s->var, s->value);
        r = simp_stmt(c, s->body[0]);
    } else {
        if (is_intlike(s->var->dtype)) {
            simp_range v = range_of(c, s->value);
            push_range(c, s->var, v.lo, v.hi);
        }
        s->body[0] = simp_stmt(c, s->body[0]);
        r = pass_is_empty(s->body[0]) ? empty_stmt(c) : s;
    }
    c->nenv = mark;
    return r;
}

static ir_stmt *simp_if(simp_ctx *c, ir_stmt *s)
{
    s->cond = simp_expr(c, s->cond);
    if (s->cond->kind == IR_INT) {
        if (s->cond->ival)
            return simp_stmt(c, s->body[0]);
        return s->orelse ? simp_stmt(c, s->orelse) : empty_stmt(c);
    }
    int mark = c->nenv;
    bool live_then = refine(c, s->cond, true);
    ir_stmt *then = live_then ? simp_stmt(c, s->body[0]) : empty_stmt(c);
    c->nenv = mark;
    ir_stmt *orelse = NULL;
    if (s->orelse) {
        bool live_else = refine(c, s->cond, false);
        orelse = live_else ? simp_stmt(c, s->orelse) : empty_stmt(c);
        c->nenv = mark;
        if (pass_is_empty(orelse))
            orelse = NULL;
    }
    if (pass_is_empty(then)) {
        if (!orelse)
            return empty_stmt(c);
        s->cond = simp_expr(c, ir_unary(c->m, IR_NOT, s->cond));
        then = orelse;
        orelse = NULL;
    }
    s->body[0] = then;
    s->orelse = orelse;
    return s;
}

static ir_stmt *simp_stmt(simp_ctx *c, ir_stmt *s)
{
    switch (s->kind) {
    case IR_S_SEQ:
        return simp_seq(c, s);
    case IR_S_FOR:
        return simp_for(c, s);
    case IR_S_BLOCK:
        return simp_block(c, s);
    case IR_S_STORE:
        for (int i = 0; i < s->nargs; i++)
            s->args[i] = simp_expr(c, s->args[i]);
        s->value = simp_expr(c, s->value);
        return s;
    case IR_S_PREFETCH:
        for (int i = 0; i < s->nargs; i++)
            s->args[i] = simp_expr(c, s->args[i]);
        return s;
    case IR_S_ALLOC:
        s->body[0] = simp_stmt(c, s->body[0]);
        return pass_is_empty(s->body[0]) ? empty_stmt(c) : s;
    case IR_S_LET:
        return simp_let(c, s);
    case IR_S_IF:
        return simp_if(c, s);
    case IR_S_EVAL:
        s->value = simp_expr(c, s->value);
        return s;
    case IR_S_ASSERT:
        s->cond = simp_expr(c, s->cond);
        return s->cond->kind == IR_INT && s->cond->ival ? empty_stmt(c) : s;
    default:
        return s;
    }
}

/* ---------------------------------------------------------------- entry points */

ir_expr *pass_simplify_expr(ir_module *m, ir_expr *e)
{
    return pass_simplify_expr_in(m, e, 0, NULL, NULL, NULL);
}

ir_expr *pass_simplify_expr_in(ir_module *m, ir_expr *e, int nvars, const ir_var *const *vars,
                               const int64_t *lo, const int64_t *hi)
{
    simp_ctx c = {.m = m};
    for (int i = 0; i < nvars; i++)
        push_range(&c, vars[i], lo[i], hi[i]);
    return simp_expr(&c, e);
}

bool pass_simplify(ir_module *m, diag *d)
{
    (void)d;
    for (int i = 0; i < m->nfuncs; i++) {
        ir_func *f = m->funcs[i];
        if (!f->body)
            continue;
        simp_ctx c = {.m = m};
        f->body = simp_stmt(&c, f->body);
    }
    return true;
}
