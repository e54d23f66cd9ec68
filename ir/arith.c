/* ir/arith.c — floor division, intervals and affine forms (see arith.h). */
#include "ir/arith.h"

/* ---------------------------------------------------------------- floor division */

int64_t ir_floordiv64(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

int64_t ir_floormod64(int64_t a, int64_t b)
{
    int64_t r = a % b;
    return (r != 0 && (r < 0) != (b < 0)) ? r + b : r;
}

bool ir_divmod_pair(const ir_expr *div, const ir_expr *mod, int64_t *c)
{
    if (!div || !mod || div->kind != IR_FLOORDIV || mod->kind != IR_FLOORMOD ||
        !div->b || div->b->kind != IR_INT || div->b->ival == 0 ||
        !ir_expr_equal(div->b, mod->b) || !ir_expr_equal(div->a, mod->a))
        return false;
    *c = div->b->ival;
    return true;
}

bool ir_divmod_nested_pair(const ir_expr *hi, const ir_expr *lo, int64_t *a, int64_t *b)
{
    if (!hi || !lo || hi->kind != IR_FLOORMOD || lo->kind != IR_FLOORMOD || !hi->b ||
        hi->b->kind != IR_INT || hi->b->ival <= 0 || !lo->b || lo->b->kind != IR_INT ||
        lo->b->ival <= 0 || !hi->a || hi->a->kind != IR_FLOORDIV ||
        !ir_expr_equal(hi->a->b, lo->b) || !ir_expr_equal(hi->a->a, lo->a))
        return false;
    *a = lo->b->ival;
    *b = hi->b->ival;
    return true;
}

/* ---------------------------------------------------------------- intervals */

ir_interval ir_interval_intersect(ir_interval a, ir_interval b)
{
    if (!a.known)
        return b;
    if (!b.known)
        return a;
    return (ir_interval){a.lo > b.lo ? a.lo : b.lo, a.hi < b.hi ? a.hi : b.hi, true};
}

ir_interval ir_interval_join(ir_interval a, ir_interval b)
{
    if (!a.known || !b.known)
        return ir_interval_unknown();
    return (ir_interval){a.lo < b.lo ? a.lo : b.lo, a.hi > b.hi ? a.hi : b.hi, true};
}

ir_interval ir_interval_add(ir_interval a, ir_interval b)
{
    ir_interval r = {0, 0, a.known && b.known};
    if (!r.known || __builtin_add_overflow(a.lo, b.lo, &r.lo) ||
        __builtin_add_overflow(a.hi, b.hi, &r.hi))
        return ir_interval_unknown();
    return r;
}

ir_interval ir_interval_sub(ir_interval a, ir_interval b)
{
    ir_interval r = {0, 0, a.known && b.known};
    if (!r.known || __builtin_sub_overflow(a.lo, b.hi, &r.lo) ||
        __builtin_sub_overflow(a.hi, b.lo, &r.hi))
        return ir_interval_unknown();
    return r;
}

ir_interval ir_interval_neg(ir_interval a)
{
    if (!a.known || a.lo == INT64_MIN)
        return ir_interval_unknown();
    return (ir_interval){-a.hi, -a.lo, true};
}

ir_interval ir_interval_mul(ir_interval a, ir_interval b)
{
    int64_t p[4];
    if (!a.known || !b.known || __builtin_mul_overflow(a.lo, b.lo, &p[0]) ||
        __builtin_mul_overflow(a.lo, b.hi, &p[1]) || __builtin_mul_overflow(a.hi, b.lo, &p[2]) ||
        __builtin_mul_overflow(a.hi, b.hi, &p[3]))
        return ir_interval_unknown();
    ir_interval r = ir_interval_point(p[0]);
    for (int i = 1; i < 4; i++)
        r = ir_interval_join(r, ir_interval_point(p[i]));
    return r;
}

ir_interval ir_interval_scale(int64_t k, ir_interval a)
{
    return ir_interval_mul(ir_interval_point(k), a);
}

ir_interval ir_interval_min(ir_interval a, ir_interval b)
{
    if (!a.known || !b.known)
        return ir_interval_unknown();
    return (ir_interval){a.lo < b.lo ? a.lo : b.lo, a.hi < b.hi ? a.hi : b.hi, true};
}

ir_interval ir_interval_max(ir_interval a, ir_interval b)
{
    if (!a.known || !b.known)
        return ir_interval_unknown();
    return (ir_interval){a.lo > b.lo ? a.lo : b.lo, a.hi > b.hi ? a.hi : b.hi, true};
}

ir_interval ir_interval_floordiv(ir_interval a, int64_t c)
{
    if (!a.known || c <= 0)
        return ir_interval_unknown();
    return (ir_interval){ir_floordiv64(a.lo, c), ir_floordiv64(a.hi, c), true};
}

ir_interval ir_interval_floormod(ir_interval a, int64_t c)
{
    if (c <= 0)
        return ir_interval_unknown();
    if (a.known && a.lo >= 0 && a.hi < c)
        return a;
    return (ir_interval){0, c - 1, true};
}

ir_interval ir_interval_ramp(ir_interval base, ir_interval stride, int lanes)
{
    if (lanes <= 1)
        return base;
    ir_interval span = ir_interval_mul(stride, (ir_interval){0, lanes - 1, true});
    return ir_interval_add(base, span);
}

ir_interval ir_interval_loop(ir_interval lo, ir_interval hi, int64_t step)
{
    if (!lo.known || !hi.known || hi.hi == INT64_MIN || step < 1)
        return ir_interval_unknown();
    int64_t n;
    if (step > 1 && lo.lo == lo.hi && hi.lo == hi.hi && !__builtin_sub_overflow(hi.lo, lo.lo, &n) &&
        n > 0)
        return (ir_interval){lo.lo, lo.lo + (n - 1) / step * step, true};
    return (ir_interval){lo.lo, hi.hi - 1, true};
}

ir_interval ir_bounds(const ir_expr *x, const ir_var_range *r, int n)
{
    switch (x->kind) {
    case IR_RAMP:
        return ir_interval_ramp(ir_bounds(x->a, r, n), ir_bounds(x->b, r, n), x->lanes);
    case IR_BROADCAST:
        return ir_bounds(x->a, r, n);
    case IR_INT:
        return ir_interval_point(x->ival);
    case IR_VAR:
        for (int i = 0; i < n; i++)
            if (r[i].var == x->var)
                return (ir_interval){r[i].lo, r[i].hi, true};
        return ir_interval_unknown();
    case IR_NEG:
        return ir_interval_neg(ir_bounds(x->a, r, n));
    case IR_ADD: case IR_SUB: case IR_MUL: case IR_MIN: case IR_MAX:
    case IR_FLOORDIV: case IR_FLOORMOD:
        break;
    default:
        return ir_interval_unknown();
    }
    ir_interval a = ir_bounds(x->a, r, n), b;
    if (!a.known || !(b = ir_bounds(x->b, r, n)).known)
        return ir_interval_unknown();
    switch (x->kind) {
    case IR_ADD: return ir_interval_add(a, b);
    case IR_SUB: return ir_interval_sub(a, b);
    case IR_MUL: return ir_interval_mul(a, b);
    case IR_MIN: return ir_interval_min(a, b);
    case IR_MAX: return ir_interval_max(a, b);
    default:     /* by a positive constant */
        if (b.lo != b.hi)
            return ir_interval_unknown();
        return x->kind == IR_FLOORDIV ? ir_interval_floordiv(a, b.lo) : ir_interval_floormod(a, b.lo);
    }
}

bool ir_always(const ir_expr *cond, const ir_var_range *r, int n)
{
    ir_interval a, b;
    switch (cond->kind) {
    case IR_AND:
        return ir_always(cond->a, r, n) && ir_always(cond->b, r, n);
    case IR_OR:
        return ir_always(cond->a, r, n) || ir_always(cond->b, r, n);
    case IR_LT: case IR_LE: case IR_GT: case IR_GE:
        a = ir_bounds(cond->a, r, n);
        b = ir_bounds(cond->b, r, n);
        if (!a.known || !b.known)
            return false;
        switch (cond->kind) {
        case IR_LT: return a.hi < b.lo;
        case IR_LE: return a.hi <= b.lo;
        case IR_GT: return a.lo > b.hi;
        default: return a.lo >= b.hi;
        }
    default:
        return false;
    }
}

/* ---------------------------------------------------------------- affine forms */

/* Whether term i of f is variable v (v != NULL) or expression x. */
static bool term_is(const ir_affine *f, int i, const ir_var *v, const ir_expr *x)
{
    if (v || f->var[i])
        return f->var[i] == v;
    return ir_expr_equal(f->atom[i], x);
}

static int term_index(const ir_affine *f, const ir_var *v, const ir_expr *x)
{
    for (int i = 0; i < f->n; i++)
        if (term_is(f, i, v, x))
            return i;
    return -1;
}

static bool add_term(ir_affine *f, const ir_var *v, const ir_expr *x, int64_t k)
{
    int i = term_index(f, v, x);
    if (i >= 0)
        return !__builtin_add_overflow(f->coef[i], k, &f->coef[i]);
    if (f->n == IR_AFFINE_MAX)
        return false;
    f->var[f->n] = v;
    f->atom[f->n] = x;
    f->coef[f->n++] = k;
    return true;
}

bool ir_affine_add_term(ir_affine *f, const ir_expr *x, int64_t k)
{
    return add_term(f, x->kind == IR_VAR ? x->var : NULL, x, k);
}

bool ir_affine_add_var(ir_affine *f, const ir_var *v, int64_t k)
{
    return add_term(f, v, NULL, k);
}

static bool constant(const ir_affine_rules *r, const ir_expr *x, int64_t *c, int depth)
{
    if (r->constant)
        return r->constant(r->ctx, x, c, depth);
    *c = x->kind == IR_INT ? x->ival : 0;
    return x->kind == IR_INT;
}

bool ir_affine_add(ir_affine *f, const ir_expr *x, int64_t k, const ir_affine_rules *r, int depth)
{
    static const ir_affine_rules plain;
    if (!r)
        r = &plain;
    if (!x || (r->enter && !r->enter(r->ctx, x, depth)))
        return false;
    int64_t t;
    switch (x->kind) {
    case IR_INT:
        return !__builtin_mul_overflow(k, x->ival, &t) && !__builtin_add_overflow(f->c, t, &f->c);
    case IR_VAR: {
        const ir_expr *v = r->value ? r->value(r->ctx, x->var) : NULL;
        if (v)
            return ir_affine_add(f, v, k, r, depth + 1);
        return ir_affine_add_term(f, x, k);
    }
    case IR_ADD:
    case IR_SUB:
        return (x->kind == IR_ADD || k != INT64_MIN) && ir_affine_add(f, x->a, k, r, depth + 1) &&
               ir_affine_add(f, x->b, x->kind == IR_SUB ? -k : k, r, depth + 1);
    case IR_NEG:
        return k != INT64_MIN && ir_affine_add(f, x->a, -k, r, depth + 1);
    case IR_MUL:
        if (constant(r, x->b, &t, depth + 1))
            return !__builtin_mul_overflow(k, t, &t) && ir_affine_add(f, x->a, t, r, depth + 1);
        if (constant(r, x->a, &t, depth + 1))
            return !__builtin_mul_overflow(k, t, &t) && ir_affine_add(f, x->b, t, r, depth + 1);
        break;
    case IR_CAST:
        if (r->casts && x->a && ir_dtype_is_int(x->a->dtype) &&
            ir_dtype_size(x->a->dtype) <= ir_dtype_size(x->dtype) && x->a->dtype != IR_BOOL)
            return ir_affine_add(f, x->a, k, r, depth + 1);
        break;
    default:
        break;
    }
    return r->atoms && ir_affine_add_term(f, x, k);
}

bool ir_affine_of(const ir_expr *x, ir_affine *f)
{
    f->c = 0;
    f->n = 0;
    if (!ir_affine_add(f, x, 1, NULL, 0))
        return false;
    int n = 0;                  /* drop terms that cancelled */
    for (int i = 0; i < f->n; i++)
        if (f->coef[i] != 0) {
            f->var[n] = f->var[i];
            f->atom[n] = f->atom[i];
            f->coef[n++] = f->coef[i];
        }
    f->n = n;
    return true;
}

int64_t ir_affine_coef(const ir_affine *f, const ir_var *v)
{
    int i = term_index(f, v, NULL);
    return i < 0 ? 0 : f->coef[i];
}

int64_t ir_affine_term_coef(const ir_affine *f, const ir_expr *x)
{
    int i = term_index(f, x->kind == IR_VAR ? x->var : NULL, x);
    return i < 0 ? 0 : f->coef[i];
}

bool ir_affine_var_coef(const ir_expr *x, const ir_var *v, int64_t *coef)
{
    static const ir_affine_rules atoms = {.atoms = true};
    ir_affine f = {0};
    if (!ir_affine_add(&f, x, 1, &atoms, 0))
        return false;
    for (int i = 0; i < f.n; i++)
        if (f.var[i] != v && ir_expr_uses_var(f.atom[i], v))
            return false;
    *coef = ir_affine_coef(&f, v);
    return true;
}

/* The coefficient in f of term i of g. */
static int64_t coef_of(const ir_affine *f, const ir_affine *g, int i)
{
    int j = term_index(f, g->var[i], g->atom[i]);
    return j < 0 ? 0 : f->coef[j];
}

bool ir_affine_same_terms(const ir_affine *f, const ir_affine *g)
{
    if (f->n != g->n)
        return false;
    for (int i = 0; i < g->n; i++)
        if (coef_of(f, g, i) != g->coef[i])
            return false;
    return true;
}

bool ir_affine_split(const ir_affine *f, const ir_affine *g, int64_t *m, ir_affine *rest)
{
    int64_t k = g->n > 0 ? coef_of(f, g, 0) : 0;
    if (k == 0 || g->coef[0] == 0 || k % g->coef[0] != 0)
        return false;
    *m = k / g->coef[0];
    *rest = *f;
    for (int i = 0; i < g->n; i++) {
        int64_t want;
        if (__builtin_mul_overflow(*m, g->coef[i], &want) || coef_of(f, g, i) != want)
            return false;
        for (int j = 0; j < rest->n; j++)
            if (term_is(rest, j, g->var[i], g->atom[i]))
                rest->coef[j] = 0;
    }
    return true;
}

ir_expr *ir_affine_expr(ir_module *m, const ir_affine *f)
{
    ir_expr *x = NULL;
    for (int i = 0; i < f->n; i++) {
        ir_expr *t = f->var[i] ? ir_varref(m, (ir_var *)f->var[i]) : ir_expr_copy(m, f->atom[i]);
        if (f->coef[i] != 1)
            t = ir_binary(m, IR_MUL, t, ir_int(m, f->coef[i]));
        x = x ? ir_binary(m, IR_ADD, x, t) : t;
    }
    if (!x)
        return ir_int(m, f->c);
    if (f->c > 0)
        x = ir_binary(m, IR_ADD, x, ir_int(m, f->c));
    else if (f->c < 0 && f->c != INT64_MIN)
        x = ir_binary(m, IR_SUB, x, ir_int(m, -f->c));
    else if (f->c < 0)
        x = ir_binary(m, IR_ADD, x, ir_int(m, f->c));
    return x;
}
