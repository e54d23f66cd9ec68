/* frontend/kernel.c — index statements: `T[i, j] op= expr`.
 *
 * Analysis of one statement in one def instance (sizes are bound):
 *   1. the left side: a new tensor, plain distinct index variables (or
 *      computed indices, a scatter: the tensor is a declared output);
 *   2. index variables: names bound to nothing; each one's range comes from
 *      every place it is a whole index (all must agree; bare uses inside
 *      the guarded branches of a select do not count), on the left of the
 *      def's output from the declared output type, or from the statement's
 *      `where` clause (which must agree with the others);
 *   3. the right side becomes a typed fe_kexpr; indices are range checked
 *      by interval arithmetic over the variables' ranges, narrowed inside
 *      guarded select branches (out of range needs `else`); indices that
 *      read tensors are checked at run time;
 *   4. the left tensor is defined (its shape is its variables' ranges) and
 *      the statement joins the open stage. */
#include "frontend/kernel.h"

#include "frontend/stage.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One index variable while its statement is analysed. */
typedef struct kvar {
    const char *name;
    bool has_range;
    int64_t lo, extent;    /* the range [lo, lo + extent) */
    const char *src;       /* the tensor that gave the range */
    int src_dim;
    fe_span first;         /* first use */
    bool on_lhs;
    bool guarded_use;      /* a whole index inside a guarded branch */
    const char *weak_src;  /* the first whole use inside a branch of a guard
                              of several variables: the range only when
                              nothing else gives one */
    int weak_dim;
    int64_t weak_ext;
    fe_span weak_at;
    int64_t cur_lo, cur_hi;   /* its values where the expression being built
                                 is evaluated: the range, narrowed inside
                                 the branches of guarded selects */
} kvar;

/* Analysis state of one statement. */
typedef struct kctx {
    fe_ctx *c;
    fe_inst *in;
    const fe_stmt *s;
    fe_stage *st;
    kvar *vars;
    int nvars, capvars;
    bool failed;           /* an error was reported */
    bool poisoned;         /* uses a value that failed before: silent */
    int guarded;           /* collect: inside this many guarded branches */
    int weak;              /* collect: inside this many branches of guards
                              of several variables */
    struct bound *bounds;  /* build: the guards of several variables in
                              force where the expression is evaluated */
    int nbounds, capbounds;
    bool dead;             /* build: inside a branch that is never chosen */
} kctx;

static void kerr(kctx *k, fe_span sp, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void kerr(kctx *k, fe_span sp, const char *fmt, ...)
{
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    fe_error(k->c, sp, "%s", buf);
    k->failed = true;
}

static const char *text(kctx *k, fe_span sp) { return fe_span_text(k->c->a, sp); }

/* ---------------------------------------------------------------- index variables */

static int find_var(kctx *k, const char *name)
{
    for (int i = 0; i < k->nvars; i++)
        if (strcmp(k->vars[i].name, name) == 0)
            return i;
    return -1;
}

static int add_var(kctx *k, const char *name, fe_span at)
{
    int i = find_var(k, name);
    if (i >= 0)
        return i;
    kvar v = {.name = name, .first = at};
    IR_PUSH(k->c->a, k->vars, k->nvars, k->capvars, v);
    return k->nvars - 1;
}

/* Is `name` an index variable (bound to nothing)? */
static bool is_index_name(kctx *k, const char *name)
{
    return !fe_env_find(k->in->env, name);
}

/* A tensor bound to `name`, or NULL (no error reported). */
static fe_tensor *tensor_of(kctx *k, const char *name)
{
    fe_binding *b = fe_env_find(k->in->env, name);
    return b && b->v.kind == FE_V_TENSOR ? b->v.t : NULL;
}

/* var is a whole index of dimension d of tensor `tname` (extent ext). */
static void range_from(kctx *k, int var, const char *tname, int d, int64_t ext, fe_span at)
{
    kvar *v = &k->vars[var];
    if (!v->has_range) {
        v->has_range = true;
        v->extent = ext;
        v->src = tname;
        v->src_dim = d;
        return;
    }
    if (v->extent != ext)
        kerr(k, at, "index '%s' is used for dimension %d of %s (size %lld) and dimension %d of %s (size %lld); the sizes must agree",
             v->name, v->src_dim, v->src, (long long)v->extent, d, tname, (long long)ext);
}

static void collect(kctx *k, const fe_expr *x);

/* ---------------------------------------------------------------- guards */

/* sum c[t]*var[t] + off: a linear form of index variables with
 * compile-time integer coefficients (no zero coefficient, each variable
 * once). */
enum { LIN_MAX = 8 };
typedef struct linear {
    int n;
    const char *var[LIN_MAX];
    int64_t c[LIN_MAX];
    int64_t off;
} linear;

static int64_t floordiv64(int64_t a, int64_t b);

/* r += f * a; false on overflow or too many variables. */
static bool lin_add(linear *r, const linear *a, int64_t f)
{
    int64_t t;
    if (__builtin_mul_overflow(a->off, f, &t) || __builtin_add_overflow(r->off, t, &r->off))
        return false;
    for (int i = 0; i < a->n; i++) {
        if (__builtin_mul_overflow(a->c[i], f, &t))
            return false;
        int j = 0;
        while (j < r->n && strcmp(r->var[j], a->var[i]) != 0)
            j++;
        if (j == r->n) {
            if (r->n == LIN_MAX)
                return false;
            r->var[r->n] = a->var[i];
            r->c[r->n++] = 0;
        }
        if (__builtin_add_overflow(r->c[j], t, &r->c[j]))
            return false;
        if (r->c[j] == 0) {   /* cancelled out */
            r->var[j] = r->var[--r->n];
            r->c[j] = r->c[r->n];
        }
    }
    return true;
}

/* r = a op b for + - and * (by a form without variables); false for other
 * operators, a product of variables, or overflow. */
static bool lin_binary(fe_op op, const linear *a, const linear *b, linear *r)
{
    *r = (linear){0};
    if (op == FE_OP_ADD || op == FE_OP_SUB)
        return lin_add(r, a, 1) && lin_add(r, b, op == FE_OP_SUB ? -1 : 1);
    if (op == FE_OP_MUL && !(a->n && b->n))
        return a->n ? lin_add(r, a, b->off) : lin_add(r, b, a->off);
    return false;
}

/* x as a linear form of index variables, or false (also on overflow).
 * Reports nothing: a condition that is not of this form is just not a
 * guard. */
static bool linear_of(kctx *k, const fe_expr *x, linear *r)
{
    linear a, b;
    *r = (linear){0};
    switch (x->kind) {
    case FE_E_INT:
        r->off = x->ival;
        return true;
    case FE_E_NAME: {
        fe_binding *bd = fe_env_find(k->in->env, x->name);
        if (!bd) {
            *r = (linear){.n = 1, .var = {x->name}, .c = {1}};
            return true;
        }
        if (bd->v.kind != FE_V_INT)
            return false;
        r->off = bd->v.i;
        return true;
    }
    case FE_E_UNARY:
        return x->op == FE_OP_NEG && linear_of(k, x->a, &a) && lin_add(r, &a, -1);
    case FE_E_BINARY:
        break;
    default:
        return false;
    }
    if (!linear_of(k, x->a, &a) || !linear_of(k, x->b, &b))
        return false;
    if (x->op != FE_OP_DIV && x->op != FE_OP_MOD)
        return lin_binary(x->op, &a, &b, r);
    if (a.n || b.n || b.off == 0 || (a.off == INT64_MIN && b.off == -1))
        return false;
    r->off = floordiv64(a.off, b.off);
    return x->op == FE_OP_DIV || (!__builtin_mul_overflow(r->off, b.off, &r->off) &&
                                  !__builtin_sub_overflow(a.off, r->off, &r->off));
}

/* A guard: the condition sum c[t]*var[t] <= m (lin.off is 0) where a
 * branch is chosen. */
typedef struct bound {
    linear lin;
    int64_t m;
} bound;

/* Where the comparison x holds (or, when negate, fails), as a bound:
 * false unless both sides are linear in index variables that do not all
 * cancel out. */
static bool comparison_bound(kctx *k, const fe_expr *x, bool negate, bound *g)
{
    if (x->kind != FE_E_BINARY || x->op < FE_OP_LT || x->op > FE_OP_GE)
        return false;
    linear a, b, d = {0};
    if (!linear_of(k, x->a, &a) || !linear_of(k, x->b, &b) || !lin_add(&d, &a, 1) ||
        !lin_add(&d, &b, -1) || d.n == 0)
        return false;
    fe_op op = x->op;
    if (negate)
        op = op == FE_OP_LT ? FE_OP_GE : op == FE_OP_LE ? FE_OP_GT : op == FE_OP_GT ? FE_OP_LE : FE_OP_LT;
    /* d op 0, as L <= m: d < 0 is d <= -1, d > 0 is -d <= -1, d >= 0 is -d <= 0 */
    int64_t m = op == FE_OP_LT || op == FE_OP_GT ? -1 : 0;
    linear l = {0};
    if (!lin_add(&l, &d, op == FE_OP_LT || op == FE_OP_LE ? 1 : -1) ||
        __builtin_sub_overflow(m, l.off, &g->m))
        return false;
    l.off = 0;
    g->lin = l;
    return true;
}

/* What a select's condition says about each of its branches: every
 * comparison of an `&&` bounds the true branch; a single comparison also
 * bounds the false branch (by its negation). */
typedef struct guard {
    bound t[8];
    int nt;
    bound f;
    bool has_f;
} guard;

static void true_bounds(kctx *k, const fe_expr *x, guard *g)
{
    if (x->kind == FE_E_BINARY && x->op == FE_OP_AND) {
        true_bounds(k, x->a, g);
        true_bounds(k, x->b, g);
    } else if (g->nt < (int)(sizeof g->t / sizeof g->t[0]) && comparison_bound(k, x, false, &g->t[g->nt])) {
        g->nt++;
    }
}

static guard guard_of(kctx *k, const fe_expr *cond)
{
    guard g = {.nt = 0};
    true_bounds(k, cond, &g);
    g.has_f = comparison_bound(k, cond, true, &g.f);
    return g;
}

/* The condition and branches of a select (`c ? a : b` or select(c, a, b)),
 * or false. */
static bool select_parts(const fe_expr *x, const fe_expr **c, const fe_expr **a, const fe_expr **b)
{
    if (x->kind == FE_E_COND) {
        *c = x->c;
        *a = x->a;
        *b = x->b;
        return true;
    }
    if (x->kind == FE_E_CALL && strcmp(x->name, "select") == 0 && x->nargs == 3 && !x->args[0].name &&
        !x->args[1].name && !x->args[2].name) {
        *c = x->args[0].value;
        *a = x->args[1].value;
        *b = x->args[2].value;
        return true;
    }
    return false;
}

/* collect() of one branch of a select: a bare use inside a guarded branch
 * does not define its variable's range; inside a branch of a guard of
 * several variables it does only when nothing else does. */
static void collect_branch(kctx *k, const fe_expr *x, bool guarded, bool weak)
{
    k->guarded += guarded;
    k->weak += weak;
    collect(k, x);
    k->guarded -= guarded;
    k->weak -= weak;
}

/* Finds the index variables of x and their ranges. */
static void collect(kctx *k, const fe_expr *x)
{
    if (!x)
        return;
    const fe_expr *sc, *sa, *sb;
    if (select_parts(x, &sc, &sa, &sb)) {
        /* only guards of one variable make a branch guarded: a guard of
         * several gives none of them a range of its own */
        guard g = guard_of(k, sc);
        bool one = false;
        for (int i = 0; i < g.nt; i++)
            one |= g.t[i].lin.n == 1;
        collect(k, sc);
        collect_branch(k, sa, one, g.nt > 0);
        collect_branch(k, sb, g.has_f && g.f.lin.n == 1, g.has_f);
        return;
    }
    switch (x->kind) {
    case FE_E_NAME:
        if (is_index_name(k, x->name))
            add_var(k, x->name, x->span);
        return;
    case FE_E_ACCESS: {
        fe_binding *b = fe_env_find(k->in->env, x->name);
        if (b && b->v.kind == FE_V_POISON)
            k->poisoned = true;   /* its definition failed: stay quiet */
        fe_tensor *t = tensor_of(k, x->name);
        for (int d = 0; d < x->nidx; d++) {
            const fe_expr *ix = x->idx[d];
            if (ix->kind == FE_E_NAME && is_index_name(k, ix->name)) {
                int v = add_var(k, ix->name, ix->span);
                kvar *kv = &k->vars[v];
                if (k->guarded) {
                    kv->guarded_use = true;
                } else if (k->weak && t && t->ndim == x->nidx) {
                    if (!kv->weak_src) {
                        kv->weak_src = x->name;
                        kv->weak_dim = d;
                        kv->weak_ext = t->shape[d];
                        kv->weak_at = ix->span;
                    }
                } else if (t && t->ndim == x->nidx) {
                    range_from(k, v, x->name, d, t->shape[d], ix->span);
                }
            } else {
                collect(k, ix);
            }
        }
        collect(k, x->dflt);
        return;
    }
    case FE_E_CALL:
        for (int i = 0; i < x->nargs; i++)
            collect(k, x->args[i].value);
        return;
    default:
        collect(k, x->a);
        collect(k, x->b);
        collect(k, x->c);
        return;
    }
}

/* ---------------------------------------------------------------- types */

static fe_kexpr *knew(kctx *k, fe_kkind kind, ir_dtype t, fe_flex flex)
{
    fe_kexpr *e = ir_alloc(k->c->a, sizeof *e);
    e->kind = kind;
    e->dtype = t;
    e->flex = flex;
    return e;
}

/* Gives a flexible expression the dtype t (recursively).  False after an
 * error (a floating-point constant where an integer is needed). */
static bool coerce(kctx *k, fe_kexpr *e, ir_dtype t, const fe_expr *where)
{
    if (!e->flex)
        return true;
    if (e->kind == FE_K_FLOAT && !ir_dtype_is_float(t)) {
        kerr(k, where->span, "'%s' is a floating-point value but %s is needed here; cast it, e.g. %s(...)",
             text(k, where->span), ir_dtype_name(t), ir_dtype_name(t));
        return false;
    }
    if (e->kind == FE_K_CALL && !ir_dtype_is_float(t) && !(e->fn == IR_FN_ABS)) {
        kerr(k, where->span, "'%s' is a floating-point value but %s is needed here; cast it, e.g. %s(...)",
             text(k, where->span), ir_dtype_name(t), ir_dtype_name(t));
        return false;
    }
    int64_t lo, hi;
    if (e->kind == FE_K_INT && ir_dtype_is_int(t) && ir_dtype_int_range(t, &lo, &hi) &&
        (e->ival < lo || e->ival > hi)) {
        kerr(k, where->span, "%lld does not fit in %s", (long long)e->ival, ir_dtype_name(t));
        return false;
    }
    if (e->flex == FE_FLEX_INT && ir_dtype_is_float(t) && e->kind != FE_K_INT && e->kind != FE_K_VAR &&
        e->kind != FE_K_SELECT) {
        /* integer arithmetic keeps its meaning in a float context (7 / 2
         * is 3, as in a let): computed in i64, then converted (a select
         * computes nothing: its branches are converted) */
        fe_kexpr *v = knew(k, e->kind, e->dtype, e->flex);
        *v = *e;
        if (!coerce(k, v, IR_I64, where))
            return false;
        *e = (fe_kexpr){.kind = FE_K_CAST, .dtype = t, .a = v};
        return true;
    }
    e->flex = FE_FLEX_NONE;
    e->dtype = t;
    bool ok = true;
    if (e->kind == FE_K_INT && ir_dtype_is_float(t)) {
        e->kind = FE_K_FLOAT;
        e->fval = (double)e->ival;
    }
    for (int i = 0; i < e->nargs && e->kind == FE_K_CALL; i++)
        ok &= coerce(k, e->args[i], t, where);
    if (e->kind != FE_K_SELECT && e->a)
        ok &= coerce(k, e->a, t, where);
    if (e->b)
        ok &= coerce(k, e->b, t, where);
    if (e->kind == FE_K_SELECT && e->a)
        ok &= coerce(k, e->a, t, where);
    return ok;
}

/* The default dtype of a flexible expression with no context. */
static ir_dtype flex_default(const fe_kexpr *e)
{
    return e->flex == FE_FLEX_FLOAT ? IR_F64 : IR_I64;
}

/* Makes a and b agree: a flexible side takes the other's dtype; two typed
 * sides must be equal. */
static bool unify(kctx *k, const fe_expr *x, const fe_expr *xa, const fe_expr *xb, fe_kexpr *a,
                  fe_kexpr *b)
{
    if (a->flex && b->flex)
        return true;
    if (a->flex)
        return coerce(k, a, b->dtype, xa);
    if (b->flex)
        return coerce(k, b, a->dtype, xb);
    if (a->dtype != b->dtype) {
        ir_dtype want = ir_dtype_is_float(a->dtype) ? a->dtype : b->dtype;
        kerr(k, x->opspan.file ? x->opspan : x->span,
             "mixed dtypes in '%s': '%s' is %s but '%s' is %s; add a cast, e.g. %s(%s)",
             text(k, x->span), text(k, xa->span), ir_dtype_name(a->dtype), text(k, xb->span),
             ir_dtype_name(b->dtype), ir_dtype_name(want),
             text(k, want == a->dtype ? xb->span : xa->span));
        return false;
    }
    return true;
}

static fe_flex join_flex(const fe_kexpr *a, const fe_kexpr *b)
{
    if (!a->flex || !b->flex)
        return FE_FLEX_NONE;
    return a->flex == FE_FLEX_FLOAT || b->flex == FE_FLEX_FLOAT ? FE_FLEX_FLOAT : FE_FLEX_INT;
}

/* i8, u8, i16, f16 and bf16 hold values; a kernel computes in a wider
 * type (C's promotion, made explicit: the width of every product and sum
 * is written in the program). */
static bool is_storage_dtype(ir_dtype t)
{
    return ir_dtype_is_small_int(t) || t == IR_F16 || t == IR_BF16;
}

/* Arithmetic (op) whose result e would have a storage dtype: an error that
 * says how to widen. */
static bool computes(kctx *k, const fe_kexpr *e, const fe_expr *x, const fe_expr *operand,
                     const char *op)
{
    if (e->flex || !is_storage_dtype(e->dtype))
        return true;
    ir_dtype wide = ir_dtype_is_int(e->dtype) ? IR_I32 : IR_F32;
    kerr(k, x->opspan.file ? x->opspan : x->span,
         "'%s' on %s values in '%s': %s is a storage type; compute in a wider type, e.g. %s(%s)",
         op, ir_dtype_name(e->dtype), text(k, x->span), ir_dtype_name(e->dtype),
         ir_dtype_name(wide), text(k, operand->span));
    return false;
}

static bool numeric(kctx *k, const fe_kexpr *e, const fe_expr *x, const char *op)
{
    if (!e->flex && e->dtype == IR_BOOL) {
        kerr(k, x->span, "'%s' is a condition (bool), but '%s' needs a number; use select(cond, a, b) or cast it, e.g. f32(...)",
             text(k, x->span), op);
        return false;
    }
    return true;
}

/* A condition: a bool, or a number compared with 0. */
static fe_kexpr *to_bool(kctx *k, fe_kexpr *e, const fe_expr *x)
{
    if (!e->flex && e->dtype == IR_BOOL)
        return e;
    if (e->flex && !coerce(k, e, flex_default(e), x))
        return NULL;
    fe_kexpr *zero = knew(k, ir_dtype_is_float(e->dtype) ? FE_K_FLOAT : FE_K_INT, e->dtype, FE_FLEX_NONE);
    fe_kexpr *r = knew(k, FE_K_BIN, IR_BOOL, FE_FLEX_NONE);
    r->op = FE_OP_NE;
    r->a = e;
    r->b = zero;
    return r;
}

/* ---------------------------------------------------------------- intervals */

typedef struct ival {
    int64_t lo, hi;
} ival;

typedef enum { IV_OK, IV_UNKNOWN, IV_OVERFLOW } iv_status;

static int64_t floordiv64(int64_t a, int64_t b)
{
    int64_t q = a / b;
    if (a % b != 0 && ((a < 0) != (b < 0)))
        q--;
    return q;
}

/* The range of an integer index expression: exact bounds of every
 * operation on intervals.  UNKNOWN when it reads tensors (checked at run
 * time). */
static iv_status interval(kctx *k, const fe_kexpr *e, ival *r)
{
    ival a, b;
    iv_status s;
    switch (e->kind) {
    case FE_K_INT:
        r->lo = r->hi = e->ival;
        return IV_OK;
    case FE_K_VAR:
        r->lo = k->vars[e->var].cur_lo;
        r->hi = k->vars[e->var].cur_hi;
        return IV_OK;
    case FE_K_CAST:
        if (!ir_dtype_is_int(e->a->dtype))
            return IV_UNKNOWN;
        return interval(k, e->a, r);
    case FE_K_UN:
        if ((s = interval(k, e->a, &a)) != IV_OK)
            return s;
        if (a.lo == INT64_MIN || a.hi == INT64_MIN)
            return IV_OVERFLOW;
        r->lo = -a.hi;
        r->hi = -a.lo;
        return IV_OK;
    case FE_K_SELECT:
        if ((s = interval(k, e->a, &a)) != IV_OK || (s = interval(k, e->b, &b)) != IV_OK)
            return s;
        r->lo = a.lo < b.lo ? a.lo : b.lo;
        r->hi = a.hi > b.hi ? a.hi : b.hi;
        return IV_OK;
    case FE_K_BIN:
        break;
    default:
        return IV_UNKNOWN;
    }
    if ((s = interval(k, e->a, &a)) != IV_OK || (s = interval(k, e->b, &b)) != IV_OK)
        return s;
    if (e->use_irop) {
        bool mx = e->irop == IR_MAX;
        r->lo = mx ? (a.lo > b.lo ? a.lo : b.lo) : (a.lo < b.lo ? a.lo : b.lo);
        r->hi = mx ? (a.hi > b.hi ? a.hi : b.hi) : (a.hi < b.hi ? a.hi : b.hi);
        return IV_OK;
    }
    switch (e->op) {
    case FE_OP_ADD:
        if (__builtin_add_overflow(a.lo, b.lo, &r->lo) || __builtin_add_overflow(a.hi, b.hi, &r->hi))
            return IV_OVERFLOW;
        return IV_OK;
    case FE_OP_SUB:
        if (__builtin_sub_overflow(a.lo, b.hi, &r->lo) || __builtin_sub_overflow(a.hi, b.lo, &r->hi))
            return IV_OVERFLOW;
        return IV_OK;
    case FE_OP_MUL:
    case FE_OP_DIV: {
        if (e->op == FE_OP_DIV && b.lo <= 0 && b.hi >= 0)
            return IV_UNKNOWN;   /* the divisor may be 0: left to run time */
        int64_t p[4];
        int64_t xs[2] = {a.lo, a.hi}, ys[2] = {b.lo, b.hi};
        for (int i = 0; i < 4; i++) {
            int64_t x = xs[i / 2], y = ys[i % 2];
            if (e->op == FE_OP_MUL) {
                if (__builtin_mul_overflow(x, y, &p[i]))
                    return IV_OVERFLOW;
            } else {
                if (x == INT64_MIN && y == -1)
                    return IV_OVERFLOW;
                p[i] = floordiv64(x, y);
            }
        }
        r->lo = r->hi = p[0];
        for (int i = 1; i < 4; i++) {
            if (p[i] < r->lo)
                r->lo = p[i];
            if (p[i] > r->hi)
                r->hi = p[i];
        }
        return IV_OK;
    }
    case FE_OP_MOD:
        if (b.lo > 0) {
            if (a.lo >= 0 && a.hi < b.lo) {
                *r = a;
            } else {
                r->lo = 0;
                r->hi = b.hi - 1;
            }
            return IV_OK;
        }
        if (b.hi < 0) {
            r->lo = b.lo + 1;
            r->hi = 0;
            return IV_OK;
        }
        return IV_UNKNOWN;
    default:
        return IV_UNKNOWN;
    }
}

/* ---------------------------------------------------------------- the right side */

static fe_kexpr *build(kctx *k, const fe_expr *x);

/* An index expression: an i64 value. */
static fe_kexpr *build_index(kctx *k, const fe_expr *x, const char *tname, int d)
{
    fe_kexpr *e = build(k, x);
    if (!e)
        return NULL;
    if (e->flex) {
        if (!coerce(k, e, IR_I64, x))
            return NULL;
        return e;
    }
    if (e->dtype == IR_I64)
        return e;
    if (ir_dtype_is_int(e->dtype)) {
        fe_kexpr *c = knew(k, FE_K_CAST, IR_I64, FE_FLEX_NONE);
        c->a = e;
        return c;
    }
    kerr(k, x->span, "index %d of %s must be an integer, but '%s' is %s", d, tname, text(k, x->span),
         ir_dtype_name(e->dtype));
    return NULL;
}

/* e as a linear form of the statement's index variables, or false. */
static bool klinear_of(kctx *k, const fe_kexpr *e, linear *r)
{
    linear a, b;
    *r = (linear){0};
    switch (e->kind) {
    case FE_K_INT:
        r->off = e->ival;
        return true;
    case FE_K_VAR:
        *r = (linear){.n = 1, .var = {k->vars[e->var].name}, .c = {1}};
        return true;
    case FE_K_CAST:
        return ir_dtype_is_int(e->a->dtype) && klinear_of(k, e->a, r);
    case FE_K_UN:
        return e->op == FE_OP_NEG && klinear_of(k, e->a, &a) && lin_add(r, &a, -1);
    case FE_K_BIN:
        return !e->use_irop && klinear_of(k, e->a, &a) && klinear_of(k, e->b, &b) &&
               lin_binary(e->op, &a, &b, r);
    default:
        return false;
    }
}

/* Tightens the range r of index ix where a guard of several variables is
 * in force and ix is s*L + off for the guard's L <= m: then ix <= s*m + off
 * (s > 0) or ix >= s*m + off (s < 0).  So `i + j < N ? a[i + j] : 0` reads
 * a in range. */
static void refine_by_bounds(kctx *k, const fe_kexpr *ix, ival *r)
{
    linear l;
    if (!k->nbounds || !klinear_of(k, ix, &l))
        return;
    for (int i = 0; i < k->nbounds; i++) {
        const bound *b = &k->bounds[i];
        if (l.n != b->lin.n)
            continue;
        int64_t s = 0, v;
        bool same = true;
        for (int t = 0; t < b->lin.n && same; t++) {
            int j = 0;
            while (j < l.n && strcmp(l.var[j], b->lin.var[t]) != 0)
                j++;
            if (j == l.n || l.c[j] % b->lin.c[t] != 0) {
                same = false;
                break;
            }
            if (t == 0)
                s = l.c[j] / b->lin.c[t];
            same = l.c[j] / b->lin.c[t] == s;
        }
        if (!same || s == 0 || __builtin_mul_overflow(s, b->m, &v) || __builtin_add_overflow(v, l.off, &v))
            continue;
        if (s > 0 && v < r->hi)
            r->hi = v;
        if (s < 0 && v > r->lo)
            r->lo = v;
    }
}

static bool reads_tensor(const fe_kexpr *e)
{
    if (!e)
        return false;
    if (e->kind == FE_K_LOAD)
        return true;
    for (int i = 0; i < e->nargs; i++)
        if (reads_tensor(e->args[i]))
            return true;
    return reads_tensor(e->a) || reads_tensor(e->b) || reads_tensor(e->c);
}

static fe_kexpr *build_access(kctx *k, const fe_expr *x)
{
    fe_binding *b = fe_env_find(k->in->env, x->name);
    if (!b) {
        if (strcmp(x->name, k->s->name) == 0)
            kerr(k, x->span, "'%s' is read on the right of its own definition; each tensor is defined by one statement (use a reduction such as += instead)",
                 x->name);
        else
            kerr(k, x->span, "unknown tensor '%s'%s", x->name, fe_suggest(k->c, k->in->env, x->name));
        return NULL;
    }
    if (b->v.kind == FE_V_POISON) {
        k->poisoned = true;
        return NULL;
    }
    if (b->v.kind != FE_V_TENSOR) {
        kerr(k, x->span, "'%s' is %s (at %s:%d:%d), not a tensor", x->name, fe_bkind_name(b->kind),
             b->loc.file ? b->loc.file->name : "?", b->loc.line, b->loc.col);
        return NULL;
    }
    fe_tensor *t = b->v.t;
    if (x->nidx != t->ndim) {
        kerr(k, x->span, "%s has rank %d (%s) but is read with %d ind%s", x->name, t->ndim,
             fe_shape_str(k->c->a, t->dtype, t->ndim, t->shape), x->nidx, x->nidx == 1 ? "ex" : "ices");
        return NULL;
    }
    if (t->dead || (!fe_storage(t)->buf && t->stage != k->st)) {
        diag_internal(k->c->d, "frontend", "in %s: tensor '%s' is read after its stage was closed",
                      k->in->op, x->name);
        k->c->errors++;
        k->failed = true;
        return NULL;
    }
    fe_kexpr *e = knew(k, FE_K_LOAD, t->dtype, FE_FLEX_NONE);
    e->t = t;
    e->nargs = x->nidx;
    e->args = ir_alloc(k->c->a, sizeof(fe_kexpr *) * (size_t)(x->nidx ? x->nidx : 1));
    e->check = ir_alloc(k->c->a, sizeof(fe_check) * (size_t)(x->nidx ? x->nidx : 1));
    e->idx_text = ir_alloc(k->c->a, sizeof(char *) * (size_t)(x->nidx ? x->nidx : 1));
    e->text = text(k, x->span);
    e->tname = x->name;
    bool ok = true;
    for (int d = 0; d < x->nidx; d++) {
        e->args[d] = build_index(k, x->idx[d], x->name, d);
        e->idx_text[d] = text(k, x->idx[d]->span);
        ok = ok && e->args[d];
    }
    if (x->dflt) {
        e->dflt = build(k, x->dflt);
        if (!e->dflt)
            return NULL;
        if (!e->dflt->flex && e->dflt->dtype != t->dtype) {
            kerr(k, x->dflt->span, "the default '%s' of %s is %s but %s is %s; add a cast, e.g. %s(...)",
                 text(k, x->dflt->span), x->name, ir_dtype_name(e->dflt->dtype), x->name,
                 ir_dtype_name(t->dtype), ir_dtype_name(t->dtype));
            return NULL;
        }
        if (!coerce(k, e->dflt, t->dtype, x->dflt))
            return NULL;
    }
    if (!ok)
        return NULL;
    /* Graph values the stage reads become its function's parameters (a
       view's storage, for a view). */
    fe_tensor *src = fe_storage(t);
    if (src->buf) {
        bool seen = false;
        for (int i = 0; i < k->st->nuses; i++)
            seen |= k->st->uses[i].t == src;
        if (!seen) {
            fe_sarg u = {src, t->view ? t->view->src_name : x->name};
            IR_PUSH(k->c->a, k->st->uses, k->st->nuses, k->st->capuses, u);
        }
    }
    for (int d = 0; d < x->nidx; d++) {
        fe_kexpr *ix = e->args[d];
        if (k->dead) {
            e->check[d] = FE_CHK_NONE;   /* in a branch that is never chosen */
            continue;
        }
        /* Every index, a whole one too, is checked over the values its
           variables take here: their ranges, narrowed in guarded branches. */
        ival r;
        iv_status s = reads_tensor(ix) ? IV_UNKNOWN : interval(k, ix, &r);
        if (s == IV_OK)
            refine_by_bounds(k, ix, &r);
        if (s == IV_OVERFLOW) {
            kerr(k, x->idx[d]->span, "index '%s' of %s may overflow 64 bits", e->idx_text[d], x->name);
            return NULL;
        }
        if (s == IV_UNKNOWN) {
            e->check[d] = x->dflt ? FE_CHK_GUARD : FE_CHK_ASSERT;
            continue;
        }
        if (r.lo >= 0 && r.hi < t->shape[d]) {
            e->check[d] = FE_CHK_NONE;
            continue;
        }
        if (x->dflt) {
            e->check[d] = FE_CHK_GUARD;
            continue;
        }
        kerr(k, x->span,
             "read of %s in %s may fall outside dimension %d (size %lld): index ranges over [%lld, %lld]; add a default, e.g. %s[...] else 0",
             e->text, k->in->op, d, (long long)t->shape[d], (long long)r.lo, (long long)r.hi, x->name);
        return NULL;
    }
    return e;
}

static bool call_arity(kctx *k, const fe_expr *x, int arity)
{
    for (int i = 0; i < x->nargs; i++)
        if (x->args[i].name) {
            kerr(k, x->args[i].span, "%s takes no keyword arguments", x->name);
            return false;
        }
    if (x->nargs != arity) {
        kerr(k, x->span, "%s takes %d argument%s but %d %s given", x->name, arity, arity == 1 ? "" : "s",
             x->nargs, x->nargs == 1 ? "was" : "were");
        return false;
    }
    return true;
}

/* build() of one branch of a select, with the variables narrowed to the
 * values they take when that branch is chosen. */
/* Narrows variable v to its values with c*v <= m. */
static void narrow_var(kctx *k, int v, int64_t c, int64_t m)
{
    kvar *kv = &k->vars[v];
    if (c < 0 && m == INT64_MIN && c == -1)
        return;
    int64_t q = floordiv64(m, c);
    if (c > 0 && q < kv->cur_hi)
        kv->cur_hi = q;                         /* v <= floor(m / c) */
    if (c < 0 && q + (m % c != 0) > kv->cur_lo)
        kv->cur_lo = q + (m % c != 0);          /* v >= ceil(m / c) */
}

/* Puts a guard in force: each of its variables is narrowed to the values
 * it can take given the others' (c_t*v_t <= m - the least the other terms
 * can be); a guard of several variables is also kept whole, for indices
 * that are the same linear form (refine_by_bounds). */
static void apply_bound(kctx *k, const bound *b)
{
    int idx[LIN_MAX];
    for (int t = 0; t < b->lin.n; t++)
        if ((idx[t] = find_var(k, b->lin.var[t])) < 0)
            return;   /* not an index variable of this statement */
    for (int t = 0; t < b->lin.n; t++) {
        int64_t rest = b->m, least;
        bool ok = true;
        for (int u = 0; u < b->lin.n && ok; u++) {
            if (u == t)
                continue;
            const kvar *kv = &k->vars[idx[u]];
            ok = !__builtin_mul_overflow(b->lin.c[u], b->lin.c[u] > 0 ? kv->cur_lo : kv->cur_hi, &least) &&
                 !__builtin_sub_overflow(rest, least, &rest);
        }
        if (ok)
            narrow_var(k, idx[t], b->lin.c[t], rest);
    }
    if (b->lin.n > 1)
        IR_PUSH(k->c->a, k->bounds, k->nbounds, k->capbounds, *b);
    for (int t = 0; t < b->lin.n; t++)
        if (k->vars[idx[t]].cur_lo > k->vars[idx[t]].cur_hi)
            k->dead = true;   /* never chosen: its reads need no checks */
}

static fe_kexpr *build_branch(kctx *k, const fe_expr *x, const bound *g, int ng)
{
    int64_t *saved = ir_alloc(k->c->a, sizeof(int64_t) * 2 * (size_t)(k->nvars ? k->nvars : 1));
    for (int v = 0; v < k->nvars; v++) {
        saved[2 * v] = k->vars[v].cur_lo;
        saved[2 * v + 1] = k->vars[v].cur_hi;
    }
    bool dead = k->dead;
    int nbounds = k->nbounds;
    for (int i = 0; i < ng; i++)
        apply_bound(k, &g[i]);
    fe_kexpr *e = build(k, x);
    for (int v = 0; v < k->nvars; v++) {
        k->vars[v].cur_lo = saved[2 * v];
        k->vars[v].cur_hi = saved[2 * v + 1];
    }
    k->dead = dead;
    k->nbounds = nbounds;
    return e;
}

static fe_kexpr *build_select(kctx *k, const fe_expr *x, const fe_expr *xc, const fe_expr *xa,
                              const fe_expr *xb)
{
    guard g = guard_of(k, xc);
    fe_kexpr *c = build(k, xc);
    fe_kexpr *a = build_branch(k, xa, g.t, g.nt);
    fe_kexpr *b = build_branch(k, xb, &g.f, g.has_f);
    if (!c || !a || !b)
        return NULL;
    if (!(c = to_bool(k, c, xc)) || !unify(k, x, xa, xb, a, b))
        return NULL;
    fe_kexpr *e = knew(k, FE_K_SELECT, a->flex ? b->dtype : a->dtype, join_flex(a, b));
    if (!a->flex)
        e->dtype = a->dtype;
    e->c = c;
    e->a = a;
    e->b = b;
    return e;
}

/* sat_T(x): x clamped to the range of the integer dtype T, then converted
 * (a float is clamped in f64, where every limit up to i32's is exact, and
 * truncated toward zero; NaN clamps to the lower limit, as fmax(NaN, lo)). */
static fe_kexpr *build_saturate(kctx *k, const fe_expr *x, ir_dtype to)
{
    if (!call_arity(k, x, 1))
        return NULL;
    fe_kexpr *a = build(k, x->args[0].value);
    if (!a || !numeric(k, a, x->args[0].value, x->name))
        return NULL;
    if (a->flex && !coerce(k, a, flex_default(a), x->args[0].value))
        return NULL;
    int64_t lo, hi, alo, ahi;
    ir_dtype_int_range(to, &lo, &hi);
    if (ir_dtype_is_float(a->dtype) && a->dtype != IR_F64) {
        fe_kexpr *c = knew(k, FE_K_CAST, IR_F64, FE_FLEX_NONE);
        c->a = a;
        a = c;
    }
    bool is_float = a->dtype == IR_F64;
    if (is_float || !ir_dtype_int_range(a->dtype, &alo, &ahi) || alo < lo || ahi > hi) {
        for (int side = 0; side < 2; side++) {
            fe_kexpr *lim = knew(k, is_float ? FE_K_FLOAT : FE_K_INT, a->dtype, FE_FLEX_NONE);
            int64_t v = side ? hi : lo;
            lim->ival = v;
            /* the f64 nearest the limit inside the range (i64's are not exact) */
            lim->fval = (double)v;
            if (side && lim->fval > (double)v)
                lim->fval = nextafter(lim->fval, 0.0);
            fe_kexpr *m = knew(k, FE_K_BIN, a->dtype, FE_FLEX_NONE);
            m->use_irop = true;
            m->irop = side ? IR_MIN : IR_MAX;
            m->a = a;
            m->b = lim;
            a = m;
        }
    }
    fe_kexpr *e = knew(k, FE_K_CAST, to, FE_FLEX_NONE);
    e->a = a;
    return e;
}

static fe_kexpr *build_call(kctx *k, const fe_expr *x)
{
    int arity;
    ir_dtype sat;
    if (strncmp(x->name, "sat_", 4) == 0 && ir_dtype_parse(x->name + 4, &sat) && ir_dtype_is_int(sat))
        return build_saturate(k, x, sat);
    if (!fe_math_fn(x->name, &arity)) {
        bool is_def = false;
        for (int i = 0; i < k->c->ndefs; i++)
            is_def |= strcmp(k->c->defs[i]->name, x->name) == 0;
        if (is_def)
            kerr(k, x->span, "'%s' is a def: call it in a statement of its own (r = %s(...)) and index the result",
                 x->name, x->name);
        else
            kerr(k, x->span, "unknown function '%s' (the elementwise functions are exp, log, sqrt, rsqrt, tanh, erf, sigmoid, abs, floor, ceil, rint, sin, cos, pow, max, min and select; sat_i8 and the other sat_ casts)",
                 x->name);
        return NULL;
    }
    if (!call_arity(k, x, arity))
        return NULL;
    if (arity == 3)
        return build_select(k, x, x->args[0].value, x->args[1].value, x->args[2].value);
    fe_kexpr *args[2];
    for (int i = 0; i < arity; i++)
        if (!(args[i] = build(k, x->args[i].value)) || !numeric(k, args[i], x->args[i].value, x->name))
            return NULL;
    if (strcmp(x->name, "max") == 0 || strcmp(x->name, "min") == 0) {
        if (!unify(k, x, x->args[0].value, x->args[1].value, args[0], args[1]))
            return NULL;
        fe_kexpr *e = knew(k, FE_K_BIN, args[0]->flex ? args[1]->dtype : args[0]->dtype,
                           join_flex(args[0], args[1]));
        e->use_irop = true;
        e->irop = x->name[1] == 'a' ? IR_MAX : IR_MIN;
        e->a = args[0];
        e->b = args[1];
        return e;
    }
    if (arity == 2 && !unify(k, x, x->args[0].value, x->args[1].value, args[0], args[1]))
        return NULL;
    ir_intrin fn;
    ir_intrin_parse(x->name, &fn);
    fe_kexpr *e = knew(k, FE_K_CALL, args[0]->dtype, FE_FLEX_NONE);
    e->fn = fn;
    e->nargs = arity;
    e->args = ir_alloc(k->c->a, sizeof(fe_kexpr *) * 2);
    e->args[0] = args[0];
    e->args[1] = arity > 1 ? args[1] : NULL;
    bool flex = args[0]->flex && (arity == 1 || args[1]->flex);
    if (flex) {
        /* abs keeps an integer argument's kind; the rest are float math */
        e->flex = fn == IR_FN_ABS && join_flex(args[0], arity > 1 ? args[1] : args[0]) == FE_FLEX_INT
                      ? FE_FLEX_INT
                      : FE_FLEX_FLOAT;
        return e;
    }
    e->dtype = args[0]->flex ? args[1]->dtype : args[0]->dtype;
    if ((!ir_dtype_is_float(e->dtype) && fn != IR_FN_ABS) || is_storage_dtype(e->dtype)) {
        kerr(k, x->span, "%s needs an f32 or f64 argument, but '%s' is %s; cast it, e.g. f32(...)",
             x->name, text(k, x->args[0].value->span), ir_dtype_name(e->dtype));
        return NULL;
    }
    return e;
}

static fe_kexpr *build(kctx *k, const fe_expr *x)
{
    switch (x->kind) {
    case FE_E_INT: {
        fe_kexpr *e = knew(k, FE_K_INT, IR_I64, FE_FLEX_INT);
        e->ival = x->ival;
        return e;
    }
    case FE_E_FLOAT: {
        fe_kexpr *e = knew(k, FE_K_FLOAT, IR_F64, FE_FLEX_FLOAT);
        e->fval = x->fval;
        return e;
    }
    case FE_E_NAME: {
        fe_binding *b = fe_env_find(k->in->env, x->name);
        if (!b) {
            fe_kexpr *e = knew(k, FE_K_VAR, IR_I64, FE_FLEX_INT);
            e->var = find_var(k, x->name);
            return e;
        }
        switch (b->v.kind) {
        case FE_V_INT: {
            fe_kexpr *e = knew(k, FE_K_INT, IR_I64, FE_FLEX_INT);
            e->ival = b->v.i;
            return e;
        }
        case FE_V_FLOAT: {
            fe_kexpr *e = knew(k, FE_K_FLOAT, IR_F64, FE_FLEX_FLOAT);
            e->fval = b->v.f;
            return e;
        }
        case FE_V_POISON:
            k->poisoned = true;
            return NULL;
        case FE_V_TENSOR:
            if (b->v.t->ndim == 0) {
                fe_expr acc = *x;
                acc.kind = FE_E_ACCESS;
                return build_access(k, &acc);
            }
            kerr(k, x->span, "tensor '%s' (%s) must be indexed, e.g. %s[...]", x->name,
                 fe_shape_str(k->c->a, b->v.t->dtype, b->v.t->ndim, b->v.t->shape), x->name);
            return NULL;
        }
        return NULL;
    }
    case FE_E_ACCESS:
        return build_access(k, x);
    case FE_E_CALL:
        return build_call(k, x);
    case FE_E_CAST: {
        fe_kexpr *a = build(k, x->a);
        if (!a)
            return NULL;
        /* a cast converts its operand's value: an operand without a dtype
         * of its own is computed in i64 (integers) or f64, as in a let */
        if (a->flex && !coerce(k, a, flex_default(a), x->a))
            return NULL;
        fe_kexpr *e = knew(k, FE_K_CAST, x->dtype, FE_FLEX_NONE);
        e->a = a;
        return e;
    }
    case FE_E_UNARY: {
        fe_kexpr *a = build(k, x->a);
        if (!a)
            return NULL;
        if (x->op == FE_OP_NOT) {
            if (!(a = to_bool(k, a, x->a)))
                return NULL;
            fe_kexpr *e = knew(k, FE_K_UN, IR_BOOL, FE_FLEX_NONE);
            e->op = FE_OP_NOT;
            e->a = a;
            return e;
        }
        if (!numeric(k, a, x->a, "-"))
            return NULL;
        if (a->kind == FE_K_FLOAT || (a->kind == FE_K_INT && a->ival != INT64_MIN)) {
            a->ival = -a->ival;   /* a negative literal is a constant */
            a->fval = -a->fval;
            return a;
        }
        fe_kexpr *e = knew(k, FE_K_UN, a->dtype, a->flex);
        e->op = FE_OP_NEG;
        e->a = a;
        if (!computes(k, e, x, x->a, "-"))
            return NULL;
        return e;
    }
    case FE_E_COND:
        return build_select(k, x, x->c, x->a, x->b);
    case FE_E_BINARY: {
        fe_kexpr *a = build(k, x->a), *b = build(k, x->b);
        if (!a || !b)
            return NULL;
        fe_op op = x->op;
        if (op == FE_OP_AND || op == FE_OP_OR) {
            /* a number used as a condition means "is not zero" */
            if (!(a = to_bool(k, a, x->a)) || !(b = to_bool(k, b, x->b)))
                return NULL;
            fe_kexpr *e = knew(k, FE_K_BIN, IR_BOOL, FE_FLEX_NONE);
            e->op = op;
            e->a = a;
            e->b = b;
            return e;
        }
        if (!numeric(k, a, x->a, fe_op_text(op)) || !numeric(k, b, x->b, fe_op_text(op)) ||
            !unify(k, x, x->a, x->b, a, b))
            return NULL;
        if (op >= FE_OP_EQ && op <= FE_OP_GE) {
            if (a->flex && b->flex) {
                ir_dtype t = join_flex(a, b) == FE_FLEX_FLOAT ? IR_F64 : IR_I64;
                if (!coerce(k, a, t, x->a) || !coerce(k, b, t, x->b))
                    return NULL;
            }
            fe_kexpr *e = knew(k, FE_K_BIN, IR_BOOL, FE_FLEX_NONE);
            e->op = op;
            e->a = a;
            e->b = b;
            return e;
        }
        fe_kexpr *e = knew(k, FE_K_BIN, a->flex ? b->dtype : a->dtype, join_flex(a, b));
        e->op = op;
        e->a = a;
        e->b = b;
        if (!computes(k, e, x, a->flex ? x->b : x->a, fe_op_text(op)))
            return NULL;
        return e;
    }
    }
    return NULL;
}

/* ---------------------------------------------------------------- the statement */

/* Does the statement write at computed indices (`hist[bin[i]] += 1`,
 * `out[idx[i], j] = v[i, j]`): is some index on its left more than a
 * name? */
static bool is_scatter(const fe_stmt *s)
{
    for (int d = 0; d < s->nidx; d++)
        if (s->idx[d]->kind != FE_E_NAME)
            return true;
    return false;
}

/* Checks the left side; returns false (after an error, or silently for a
 * poisoned name) if the statement cannot define it. */
static bool check_lhs(kctx *k)
{
    const fe_stmt *s = k->s;
    fe_binding *b = fe_env_find(k->in->env, s->name);
    if (b) {
        if (b->v.kind == FE_V_POISON) {
            k->poisoned = true;
            return false;
        }
        switch (b->kind) {
        case FE_B_INPUT:
            kerr(k, s->name_span, "cannot assign to '%s': it is an input of %s", s->name,
                 k->in->def ? k->in->op : "the program");
            break;
        case FE_B_PARAM:
            kerr(k, s->name_span, "cannot assign to param '%s' (params are the layer's weights)", s->name);
            break;
        case FE_B_LOCAL:
        case FE_B_VALUE:
            kerr(k, s->name_span,
                 "tensor '%s' is already defined (at %s:%d:%d); each tensor is defined by exactly one statement",
                 s->name, b->loc.file ? b->loc.file->name : "?", b->loc.line, b->loc.col);
            break;
        default:
            kerr(k, s->name_span, "'%s' is %s (at %s:%d:%d), not a tensor that can be assigned", s->name,
                 fe_bkind_name(b->kind), b->loc.file ? b->loc.file->name : "?", b->loc.line, b->loc.col);
            break;
        }
        return false;
    }
    bool ok = true;
    if (is_scatter(s)) {
        /* a write at computed indices: every variable is a loop variable;
         * one used alone gets the dimension it indexes */
        for (int d = 0; d < s->nidx; d++)
            collect(k, s->idx[d]);
        return true;
    }
    for (int d = 0; d < s->nidx; d++) {
        const fe_expr *ix = s->idx[d];
        fe_binding *ib = fe_env_find(k->in->env, ix->name);
        if (ib) {
            kerr(k, ix->span, "'%s' is %s, so it cannot be an index variable on the left of '%s'", ix->name,
                 fe_bkind_name(ib->kind), s->name);
            ok = false;
            continue;
        }
        if (find_var(k, ix->name) >= 0) {
            kerr(k, ix->span, "index '%s' appears twice on the left of '%s'", ix->name, s->name);
            ok = false;
            continue;
        }
        int v = add_var(k, ix->name, ix->span);
        k->vars[v].on_lhs = true;
    }
    return ok;
}

/* The left side of a write at computed indices, as a LOAD-shaped node
 * (its tensor is set by the caller): each index is range-checked like a
 * read's, at compile time where it can be (a write has no default) and at
 * run time where it reads a tensor. */
static fe_kexpr *build_scatter(kctx *k, const fe_outtype *out)
{
    const fe_stmt *s = k->s;
    fe_kexpr *e = knew(k, FE_K_LOAD, out->dtype, FE_FLEX_NONE);
    e->nargs = s->nidx;
    e->args = ir_alloc(k->c->a, sizeof(fe_kexpr *) * (size_t)(s->nidx ? s->nidx : 1));
    e->check = ir_alloc(k->c->a, sizeof(fe_check) * (size_t)(s->nidx ? s->nidx : 1));
    e->idx_text = ir_alloc(k->c->a, sizeof(char *) * (size_t)(s->nidx ? s->nidx : 1));
    e->tname = s->name;
    e->text = s->name;
    for (int d = 0; d < s->nidx; d++) {
        if (!(e->args[d] = build_index(k, s->idx[d], s->name, d)))
            return NULL;
        e->idx_text[d] = text(k, s->idx[d]->span);
        e->text = ir_sprintf(k->c->a, "%s%s%s", e->text, d ? ", " : "[", e->idx_text[d]);
    }
    e->text = ir_sprintf(k->c->a, "%s]", e->text);
    for (int d = 0; d < s->nidx; d++) {
        ival r;
        iv_status st = reads_tensor(e->args[d]) ? IV_UNKNOWN : interval(k, e->args[d], &r);
        if (st == IV_OVERFLOW) {
            kerr(k, s->idx[d]->span, "index '%s' of %s may overflow 64 bits", e->idx_text[d], s->name);
            return NULL;
        }
        e->check[d] = st == IV_UNKNOWN ? FE_CHK_ASSERT : FE_CHK_NONE;
        if (st == IV_OK && (r.lo < 0 || r.hi >= out->shape[d])) {
            kerr(k, s->idx[d]->span,
                 "write of %s in %s may fall outside dimension %d (size %lld): index ranges over [%lld, %lld]; a write has no default, so the index must stay in range",
                 e->text, k->in->op, d, (long long)out->shape[d], (long long)r.lo, (long long)r.hi);
            return NULL;
        }
    }
    return e;
}

/* A bound of a where range: a compile-time integer. */
static bool range_bound(kctx *k, const fe_expr *x, int64_t *out)
{
    fe_value v;
    int errors = k->c->errors;
    if (!fe_eval(k->c, k->in->env, x, &v)) {
        if (k->c->errors > errors)
            k->failed = true;
        else
            k->poisoned = true;
        return false;
    }
    if (v.kind != FE_V_INT) {
        kerr(k, x->span, "a range bound must be an integer, but '%s' is %s", text(k, x->span),
             fe_float_str(k->c->a, v.f));
        return false;
    }
    *out = v.i;
    return true;
}

/* Gives the variables of the where clause their ranges; one that also has
 * a bare use (or is a dimension of the declared output) must get the same
 * range there. */
static void apply_where(kctx *k)
{
    const fe_stmt *s = k->s;
    for (int i = 0; i < s->nranges; i++) {
        const fe_range *r = s->ranges[i];
        fe_binding *b = fe_env_find(k->in->env, r->name);
        if (b) {
            if (b->v.kind == FE_V_POISON)
                k->poisoned = true;
            else
                kerr(k, r->name_span, "'%s' is %s (at %s:%d:%d), not an index variable; where gives ranges to index variables",
                     r->name, fe_bkind_name(b->kind), b->loc.file ? b->loc.file->name : "?", b->loc.line,
                     b->loc.col);
            continue;
        }
        bool twice = false;
        for (int j = 0; j < i; j++)
            twice |= strcmp(s->ranges[j]->name, r->name) == 0;
        if (twice) {
            kerr(k, r->name_span, "index '%s' is given two ranges in the where clause", r->name);
            continue;
        }
        int v = find_var(k, r->name);
        if (v < 0) {
            kerr(k, r->name_span, "the where clause gives a range to '%s', but the statement does not use it",
                 r->name);
            continue;
        }
        int64_t lo, hi, ext;
        bool ok_lo = range_bound(k, r->lo, &lo), ok_hi = range_bound(k, r->hi, &hi);
        if (!ok_lo || !ok_hi)
            continue;
        if (hi <= lo || __builtin_sub_overflow(hi, lo, &ext)) {
            kerr(k, r->span, "the range %lld..%lld of index '%s' is %s", (long long)lo, (long long)hi,
                 r->name, hi <= lo ? "empty (it runs from lo up to, not including, hi)" : "too large");
            continue;
        }
        kvar *kv = &k->vars[v];
        if (kv->on_lhs && lo != 0) {
            kerr(k, r->span, "index '%s' is on the left of '%s', so its range must start at 0, not %lld",
                 r->name, s->name, (long long)lo);
            continue;
        }
        if (kv->has_range) {
            if (lo != 0 || ext != kv->extent)
                kerr(k, r->span, "index '%s' ranges over %lld..%lld by its where clause but is used for dimension %d of %s (size %lld); the ranges must agree",
                     r->name, (long long)lo, (long long)hi, kv->src_dim, kv->src, (long long)kv->extent);
            continue;
        }
        kv->has_range = true;
        kv->lo = lo;
        kv->extent = ext;
        kv->src = "the where clause";
    }
}

/* The declared type of the def output this statement defines, or NULL. */
static const fe_outtype *output_type(kctx *k)
{
    const fe_def *def = k->in->def;
    for (int j = 0; def && j < def->nouts; j++)
        if (k->in->outs[j].typed && strcmp(k->s->name, def->outs[j].name) == 0)
            return &k->in->outs[j];
    return NULL;
}

/* The dtype statement s stores (its declared output's, else its right
 * side's, else the def's first output's, else f32 or i64), with the right
 * side coerced to it; *rhsp becomes NULL after an error (a condition
 * stored into a non-bool, mixed dtypes, accumulation in a storage type). */
static ir_dtype stmt_dtype(kctx *k, const fe_outtype *out, fe_kexpr **rhsp)
{
    const fe_stmt *s = k->s;
    fe_inst *in = k->in;
    ir_dtype dtype = IR_F32;
    if (out) {
        dtype = out->dtype;
    } else if (!(*rhsp)->flex) {
        dtype = (*rhsp)->dtype;
    } else if (in->outs && in->outs[0].typed) {
        dtype = in->outs[0].dtype;
    } else {
        dtype = (*rhsp)->flex == FE_FLEX_FLOAT ? IR_F32 : IR_I64;
    }
    /* a condition is stored only where a bool tensor was declared */
    bool bool_target = out ? out->dtype == IR_BOOL
                           : in->outs && in->outs[0].typed && in->outs[0].dtype == IR_BOOL;
    if (!(*rhsp)->flex && (*rhsp)->dtype == IR_BOOL && !bool_target) {
        kerr(k, s->value->span, "the right side of '%s' is a condition (bool); use select(cond, a, b) or cast it, e.g. %s(...)",
             s->name, ir_dtype_name(dtype == IR_BOOL ? IR_F32 : dtype));
        *rhsp = NULL;
    } else if (!(*rhsp)->flex && (*rhsp)->dtype != dtype) {
        kerr(k, s->op_span, "mixed dtypes: %s is %s but the right side is %s; add a cast, e.g. %s(...)",
             s->name, ir_dtype_name(dtype), ir_dtype_name((*rhsp)->dtype), ir_dtype_name(dtype));
        *rhsp = NULL;
    } else if (!coerce(k, *rhsp, dtype, s->value)) {
        *rhsp = NULL;
    } else if ((s->op == FE_AS_ADD || s->op == FE_AS_MUL) && is_storage_dtype(dtype)) {
        kerr(k, s->op_span, "'%s' accumulates in %s, a storage type; accumulate in a wider type (e.g. %s) and convert the result",
             s->name, ir_dtype_name(dtype), ir_dtype_is_int(dtype) ? "i32" : "f32");
        *rhsp = NULL;
    }
    return dtype;
}

/* Every index variable of s has a range (else an error that says how to
 * give it one); with `=`, none appears only on the right; each starts at
 * its lowest value. */
static void check_ranges(kctx *k)
{
    const fe_stmt *s = k->s;
    for (int v = 0; v < k->nvars; v++)
        if (!k->vars[v].has_range && k->vars[v].guarded_use) {
            kerr(k, k->vars[v].first,
                 "cannot infer the range of index '%s': it is a whole index only inside guarded branches of a select, which do not define ranges; give it one with `where %s in LO..HI`",
                 k->vars[v].name, k->vars[v].name);
        } else if (!k->vars[v].has_range) {
            kerr(k, k->vars[v].first,
                 "cannot infer the range of index '%s': use it alone as a whole index of some tensor (as in T[%s]), or give it a range with `where %s in LO..HI`",
                 k->vars[v].name, k->vars[v].name, k->vars[v].name);
        }
    if (s->op == FE_AS_SET && !is_scatter(s))
        for (int v = 0; v < k->nvars && !k->failed; v++)
            if (!k->vars[v].on_lhs)
                kerr(k, k->vars[v].first,
                     "index '%s' appears only on the right of '=': use a reduction (+=, max=, ...)",
                     k->vars[v].name);
    for (int v = 0; v < k->nvars; v++) {
        k->vars[v].cur_lo = k->vars[v].lo;
        k->vars[v].cur_hi = k->vars[v].lo + k->vars[v].extent - 1;
    }
}

/* A stage holds at most this many statements.  Each temporary it keeps
 * local is one ALLOC around the rest of its function, so a longer run
 * would nest deeper than the IR's reader takes (200 statements) and than
 * the recursive walks of the passes can afford (10,000 chained statements
 * overflowed the stack).  The next statement opens a new stage; what it
 * reads of the closed one becomes a graph temporary. */
enum { FE_STAGE_STMTS = 64 };

void fe_index_stmt(fe_ctx *c, fe_inst *in, const fe_stmt *s)
{
    if (in->stage && in->stage->nstmts >= FE_STAGE_STMTS && !in->stage->poisoned)
        fe_close_stage(c, in);
    if (!in->stage) {
        in->stage = ir_alloc(c->a, sizeof(fe_stage));
        in->stage->loc = s->span;
    }
    kctx k = {.c = c, .in = in, .s = s, .st = in->stage};
    bool ok = check_lhs(&k);
    const fe_outtype *out = output_type(&k);
    bool scatter = is_scatter(s);
    if (ok && scatter && !out) {
        kerr(&k, s->name_span, "'%s' is written at computed indices, so its shape must be declared: compute it in a def whose output it is, with a type (-> %s: f32[...])",
             s->name, s->name);
        ok = false;
    }
    if (ok && out && s->nidx != out->ndim) {
        const fe_output *o = &in->def->outs[out - in->outs];
        kerr(&k, s->name_span, "%s is declared %s (rank %d) but is assigned with %d ind%s", s->name,
             fe_span_text(c->a, o->type->span), out->ndim, s->nidx, s->nidx == 1 ? "ex" : "ices");
        ok = false;
    }
    for (int d = 0; ok && out && d < s->nidx; d++) {
        /* a variable alone on the left runs over its dimension */
        const fe_expr *ix = s->idx[d];
        int v = scatter ? (ix->kind == FE_E_NAME ? find_var(&k, ix->name) : -1) : d;
        if (v >= 0)
            range_from(&k, v, s->name, d, out->shape[d], ix->span);
    }
    if (ok)
        collect(&k, s->value);
    if (ok)
        apply_where(&k);
    for (int v = 0; ok && v < k.nvars; v++)
        if (!k.vars[v].has_range && k.vars[v].weak_src)
            range_from(&k, v, k.vars[v].weak_src, k.vars[v].weak_dim, k.vars[v].weak_ext,
                       k.vars[v].weak_at);
    if (ok && !k.failed && !k.poisoned)
        check_ranges(&k);
    fe_kexpr *rhs = ok && !k.failed && !k.poisoned ? build(&k, s->value) : NULL;
    fe_kexpr *dst = rhs && scatter ? build_scatter(&k, out) : NULL;
    if (scatter && !dst)
        rhs = NULL;

    ir_dtype dtype = rhs ? stmt_dtype(&k, out, &rhs) : IR_F32;
    int64_t numel = 1;
    bool too_big = false;
    char dims[256] = "";
    for (int d = 0; rhs && d < s->nidx; d++) {
        too_big |= __builtin_mul_overflow(numel, k.vars[d].extent, &numel);
        size_t n = strlen(dims);
        snprintf(dims + n, sizeof dims - n, "%s%lld", d ? ", " : "", (long long)k.vars[d].extent);
    }
    if (too_big) {
        kerr(&k, s->name_span, "%s[%s] would have 2^63 elements or more", s->name, dims);
        rhs = NULL;
    }
    fe_stage *st = in->stage;
    if (!rhs || k.failed || k.poisoned) {
        st->poisoned = true;
        if (!fe_env_find(in->env, s->name)) {
            fe_value pv = {.kind = FE_V_POISON};
            fe_env_bind(c, in->env, s->name, FE_B_LOCAL, pv, s->name_span);
        }
        return;
    }

    /* The statement's variables: left side first, then the reduced ones. */
    fe_kstmt *ks = ir_alloc(c->a, sizeof *ks);
    ks->op = s->op;
    ks->rhs = rhs;
    ks->span = s->span;
    ks->nvars = k.nvars;
    ks->vars = ir_alloc(c->a, sizeof(fe_kvar) * (size_t)(k.nvars ? k.nvars : 1));
    ks->nlhs = s->nidx;
    ks->lhs_vars = ir_alloc(c->a, sizeof(int) * (size_t)(s->nidx ? s->nidx : 1));
    int64_t *shape = ir_alloc(c->a, sizeof(int64_t) * (size_t)(s->nidx ? s->nidx : 1));
    for (int v = 0; v < k.nvars; v++) {
        ks->vars[v].name = k.vars[v].name;
        ks->vars[v].lo = k.vars[v].lo;
        ks->vars[v].extent = k.vars[v].extent;
        ks->vars[v].reduce = !k.vars[v].on_lhs;
    }
    for (int d = 0; d < s->nidx; d++) {
        ks->lhs_vars[d] = d;    /* check_lhs added the left variables first */
        shape[d] = scatter ? out->shape[d] : k.vars[d].extent;
    }
    fe_tensor *t = ir_alloc(c->a, sizeof *t);
    t->name = s->name;
    t->dtype = dtype;
    t->ndim = s->nidx;
    t->shape = shape;
    t->stage = st;
    t->loc = s->name_span;
    ks->lhs = t;
    if (dst) {
        dst->t = t;
        ks->scatter = dst;
    }
    IR_PUSH(c->a, st->stmts, st->nstmts, st->capstmts, ks);
    IR_PUSH(c->a, st->defined, st->ndefined, st->capdefined, t);
    st->end_off = s->span.end;
    fe_value tv = {.kind = FE_V_TENSOR, .t = t};
    fe_env_bind(c, in->env, s->name, FE_B_LOCAL, tv, s->name_span);
}
