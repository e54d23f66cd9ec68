/* codegen/bounds.c — which array accesses of a function the compiled
 * kernel must check at run time.
 *
 * A compiled kernel indexes raw C arrays, so an index outside its
 * dimension writes or reads outside the buffer.  This analysis proves an
 * index in range at compile time where it can, and lists the accesses it
 * cannot prove: codegen wraps exactly those indices in a check (unless
 * --unchecked), and the loader names them when a check fails.
 *
 * An index is written as an affine form  c + sum k_i * a_i  of atoms: loop
 * variables (block iteration variables and integer lets without loads are
 * replaced by their values, so f_o * 8 + f_i - f_o * 8 cancels), and any
 * other integer subexpression (a floordiv, a min, a load) taken whole.  An
 * atom's range comes from its loop's bounds, from the rules for floordiv,
 * floormod, min, max and select, and from the conditions that guard the
 * access: an if, a select arm, the right of && or ||, the statements after
 * an assert.  A condition that bounds one atom (vx - 3 >= 0, 0 <= ids[i] &&
 * ids[i] < 50) narrows that atom; others are ignored.  The form's range is
 * then exact for independent atoms and an over-approximation otherwise,
 * never too narrow: a proof is sound, and what is not proven is checked.
 * A fact about a load is dropped once its buffer may have been written.
 */
#include "codegen/codegen.h"

#include <stdlib.h>
#include <string.h>

#define BND_MAX 256      /* loops, bindings and facts in scope (beyond: unknown) */
#define BND_TERMS 32     /* atoms of one affine form (beyond: unknown) */
#define BND_DEPTH 256    /* nesting of one index expression (beyond: unknown) */
#define BND_BUDGET 20000 /* steps to judge one expression (beyond: unknown) */

/* An inclusive range; !known: any value. */
typedef struct bnd_range {
    int64_t lo, hi;
    bool known;
} bnd_range;

/* c + sum k[i] * atom[i] */
typedef struct bnd_affine {
    int64_t c;
    int n;
    const ir_expr *atom[BND_TERMS];
    int64_t k[BND_TERMS];
} bnd_affine;

/* What holds where an access is: enclosing loops, values of block
 * iteration variables and lets, and facts from guarding conditions. */
typedef struct bnd_env {
    struct { const ir_var *var; bnd_range r; } loops[BND_MAX];
    int nloops;
    /* value != NULL: replace the variable by it; else its range is r */
    struct { const ir_var *var; const ir_expr *value; bnd_range r; } binds[BND_MAX];
    int nbinds;
    /* form (c = 0) lies in r; one atom with k = 1: a range of that atom */
    struct { bnd_affine form; bnd_range r; bool dead; } facts[BND_MAX];
    int nfacts;
    long budget;          /* steps left for the expression being judged */
    cg_bound_sites *out;
} bnd_env;

static const bnd_range unknown = {0, 0, false};

static bnd_range intersect(bnd_range a, bnd_range b)
{
    if (!a.known)
        return b;
    if (!b.known)
        return a;
    return (bnd_range){a.lo > b.lo ? a.lo : b.lo, a.hi < b.hi ? a.hi : b.hi, true};
}

static bnd_range join(bnd_range a, bnd_range b)
{
    if (!a.known || !b.known)
        return unknown;
    return (bnd_range){a.lo < b.lo ? a.lo : b.lo, a.hi > b.hi ? a.hi : b.hi, true};
}

static bool has_load(const ir_expr *x, void *found)
{
    if (x->kind == IR_LOAD)
        *(bool *)found = true;
    return !*(bool *)found;
}

static bool contains_load(const ir_expr *x)
{
    bool found = false;
    if (x)
        ir_expr_walk(x, has_load, &found);
    return found;
}

/* ---------------------------------------------------------------- affine forms */

static bool affine_add(bnd_env *v, bnd_affine *f, const ir_expr *x, int64_t k, int depth);

static bool add_atom(bnd_affine *f, const ir_expr *x, int64_t k)
{
    for (int i = 0; i < f->n; i++)
        if (ir_expr_equal(f->atom[i], x))
            return !__builtin_add_overflow(f->k[i], k, &f->k[i]);
    if (f->n == BND_TERMS)
        return false;
    f->atom[f->n] = x;
    f->k[f->n++] = k;
    return true;
}

static bnd_range expr_range(bnd_env *v, const ir_expr *x, int depth);

/* The value of x, if it has only one (floordiv(2304, 3) * 12). */
static bool constant_of(bnd_env *v, const ir_expr *x, int64_t *c, int depth)
{
    bnd_range r = expr_range(v, x, depth);
    *c = r.lo;
    return r.known && r.lo == r.hi;
}

static bool affine_add(bnd_env *v, bnd_affine *f, const ir_expr *x, int64_t k, int depth)
{
    if (!x || depth > BND_DEPTH || --v->budget < 0 || !ir_dtype_is_int(x->dtype))
        return false;
    int64_t t;
    switch (x->kind) {
    case IR_INT:
        return !__builtin_mul_overflow(k, x->ival, &t) && !__builtin_add_overflow(f->c, t, &f->c);
    case IR_VAR:
        for (int i = v->nbinds - 1; i >= 0; i--)
            if (v->binds[i].var == x->var) {
                if (v->binds[i].value)
                    return affine_add(v, f, v->binds[i].value, k, depth + 1);
                break;
            }
        return add_atom(f, x, k);
    case IR_ADD:
    case IR_SUB:
        return (x->kind == IR_ADD || k != INT64_MIN) && affine_add(v, f, x->a, k, depth + 1) &&
               affine_add(v, f, x->b, x->kind == IR_SUB ? -k : k, depth + 1);
    case IR_NEG:
        return k != INT64_MIN && affine_add(v, f, x->a, -k, depth + 1);
    case IR_MUL:
        if (constant_of(v, x->b, &t, depth + 1))
            return !__builtin_mul_overflow(k, t, &t) && affine_add(v, f, x->a, t, depth + 1);
        if (constant_of(v, x->a, &t, depth + 1))
            return !__builtin_mul_overflow(k, t, &t) && affine_add(v, f, x->b, t, depth + 1);
        return add_atom(f, x, k);
    case IR_CAST:
        /* a widening integer cast keeps the value */
        if (x->a && ir_dtype_is_int(x->a->dtype) &&
            ir_dtype_size(x->a->dtype) <= ir_dtype_size(x->dtype) && x->a->dtype != IR_BOOL)
            return affine_add(v, f, x->a, k, depth + 1);
        return add_atom(f, x, k);
    default:
        return add_atom(f, x, k);
    }
}

static int64_t floor_div(int64_t a, int64_t b)   /* b > 0 */
{
    int64_t q = a / b;
    return a % b != 0 && a < 0 ? q - 1 : q;
}

/* The range of an atom: its own rules, narrowed by the facts about it. */
static bnd_range atom_range(bnd_env *v, const ir_expr *x, int depth)
{
    bnd_range r = unknown, a, b;
    switch (x->kind) {
    case IR_VAR:
        for (int i = v->nloops - 1; i >= 0 && !r.known; i--)
            if (v->loops[i].var == x->var)
                r = v->loops[i].r;
        for (int i = v->nbinds - 1; i >= 0 && !r.known; i--)
            if (v->binds[i].var == x->var)
                r = v->binds[i].r;
        break;
    case IR_FLOORDIV:
    case IR_FLOORMOD:
        if (!x->b || x->b->kind != IR_INT || x->b->ival <= 0)
            break;
        a = expr_range(v, x->a, depth + 1);
        if (x->kind == IR_FLOORDIV && a.known)
            r = (bnd_range){floor_div(a.lo, x->b->ival), floor_div(a.hi, x->b->ival), true};
        else if (x->kind == IR_FLOORMOD)
            r = a.known && a.lo >= 0 && a.hi < x->b->ival ? a
                                                         : (bnd_range){0, x->b->ival - 1, true};
        break;
    case IR_MIN:
    case IR_MAX:
        a = expr_range(v, x->a, depth + 1);
        b = expr_range(v, x->b, depth + 1);
        if (a.known && b.known)
            r = x->kind == IR_MIN ? (bnd_range){a.lo < b.lo ? a.lo : b.lo, a.hi < b.hi ? a.hi : b.hi, true}
                                  : (bnd_range){a.lo > b.lo ? a.lo : b.lo, a.hi > b.hi ? a.hi : b.hi, true};
        break;
    case IR_SELECT:
        r = join(expr_range(v, x->a, depth + 1), expr_range(v, x->b, depth + 1));
        break;
    case IR_MUL:
        a = expr_range(v, x->a, depth + 1);
        b = expr_range(v, x->b, depth + 1);
        if (a.known && b.known) {
            int64_t p[4];
            if (!__builtin_mul_overflow(a.lo, b.lo, &p[0]) && !__builtin_mul_overflow(a.lo, b.hi, &p[1]) &&
                !__builtin_mul_overflow(a.hi, b.lo, &p[2]) && !__builtin_mul_overflow(a.hi, b.hi, &p[3])) {
                r = (bnd_range){p[0], p[0], true};
                for (int i = 1; i < 4; i++)
                    r = join(r, (bnd_range){p[i], p[i], true});
            }
        }
        break;
    default:
        break;
    }
    for (int i = 0; i < v->nfacts; i++) {
        const bnd_affine *g = &v->facts[i].form;
        if (!v->facts[i].dead && g->n == 1 && g->k[0] == 1 && ir_expr_equal(g->atom[0], x))
            r = intersect(r, v->facts[i].r);
    }
    return r;
}

static bnd_range box_range(bnd_env *v, const bnd_affine *f, int depth)
{
    bnd_range r = {f->c, f->c, true};
    for (int i = 0; i < f->n; i++) {
        if (f->k[i] == 0)
            continue;
        bnd_range a = atom_range(v, f->atom[i], depth + 1);
        int64_t p, q;
        if (!a.known || __builtin_mul_overflow(f->k[i], a.lo, &p) ||
            __builtin_mul_overflow(f->k[i], a.hi, &q))
            return unknown;
        if (p > q) {
            int64_t t = p;
            p = q;
            q = t;
        }
        if (__builtin_add_overflow(r.lo, p, &r.lo) || __builtin_add_overflow(r.hi, q, &r.hi))
            return unknown;
    }
    return r;
}

static int64_t coef_of(const bnd_affine *f, const ir_expr *atom)
{
    for (int i = 0; i < f->n; i++)
        if (ir_expr_equal(f->atom[i], atom))
            return f->k[i];
    return 0;
}

static bool same_form(const bnd_affine *f, const bnd_affine *g)
{
    if (f->n != g->n)
        return false;
    for (int i = 0; i < g->n; i++)
        if (coef_of(f, g->atom[i]) != g->k[i])
            return false;
    return true;
}

/* f = m * g + rest for a nonzero m, or false. */
static bool split_off(const bnd_affine *f, const bnd_affine *g, int64_t *m, bnd_affine *rest)
{
    int64_t k = coef_of(f, g->atom[0]);
    if (k == 0 || g->k[0] == 0 || k % g->k[0] != 0)
        return false;
    *m = k / g->k[0];
    *rest = *f;
    for (int i = 0; i < g->n; i++) {
        int64_t want;
        if (__builtin_mul_overflow(*m, g->k[i], &want) || coef_of(f, g->atom[i]) != want)
            return false;
        for (int j = 0; j < rest->n; j++)
            if (ir_expr_equal(rest->atom[j], g->atom[i]))
                rest->k[j] = 0;
    }
    return true;
}

static bool add_scaled(bnd_range *acc, int64_t m, bnd_range r)
{
    int64_t p, q;
    if (!r.known || __builtin_mul_overflow(m, r.lo, &p) || __builtin_mul_overflow(m, r.hi, &q))
        return false;
    if (p > q) {
        int64_t t = p;
        p = q;
        q = t;
    }
    return !__builtin_add_overflow(acc->lo, p, &acc->lo) && !__builtin_add_overflow(acc->hi, q, &acc->hi);
}

/* The range of f: from its atoms' ranges, narrowed by the facts about
 * sums of several atoms that f contains (each a multiple of the sum). */
static bnd_range affine_range(bnd_env *v, const bnd_affine *f, int depth)
{
    bnd_range r = box_range(v, f, depth);
    bnd_affine rest = *f, next;
    bnd_range acc = {0, 0, true};
    bool used = false;
    for (int i = 0; i < v->nfacts; i++) {
        const bnd_affine *g = &v->facts[i].form;
        int64_t m;
        if (v->facts[i].dead || g->n < 2 || !split_off(&rest, g, &m, &next))
            continue;
        bnd_range fr = box_range(v, g, depth);
        for (int j = 0; j < v->nfacts; j++)
            if (!v->facts[j].dead && same_form(&v->facts[j].form, g))
                fr = intersect(fr, v->facts[j].r);
        if (!add_scaled(&acc, m, fr))
            return r;
        rest = next;
        used = true;
    }
    if (!used)
        return r;
    bnd_range tail = box_range(v, &rest, depth);
    if (!add_scaled(&acc, 1, tail))
        return r;
    return intersect(r, acc);
}

static bnd_range expr_range(bnd_env *v, const ir_expr *x, int depth)
{
    if (depth == 0)
        v->budget = BND_BUDGET;
    bnd_affine f = {0};
    if (!affine_add(v, &f, x, 1, depth))
        return unknown;
    return affine_range(v, &f, depth);
}

/* ---------------------------------------------------------------- facts from conditions */

/* Facts are kept with a positive first coefficient, so that a <= x and
 * x < b, said of the same sum either way round, meet (see same_form). */
static void add_fact(bnd_env *v, const bnd_affine *form, bnd_range r)
{
    if (v->nfacts < BND_MAX) {
        bnd_affine g = *form;
        g.c = 0;
        int n = 0;
        for (int i = 0; i < g.n; i++)
            if (g.k[i] != 0) {
                g.atom[n] = g.atom[i];
                g.k[n++] = g.k[i];
            }
        g.n = n;
        if (n > 0 && g.k[0] < 0) {
            for (int i = 0; i < n; i++)
                if (g.k[i] == INT64_MIN)
                    return;
            if (r.hi == INT64_MIN)
                return;
            for (int i = 0; i < n; i++)
                g.k[i] = -g.k[i];
            int64_t lo = r.lo;
            r.lo = -r.hi;
            r.hi = lo == INT64_MIN ? INT64_MAX : -lo;   /* no value exceeds INT64_MAX */
        }
        v->facts[v->nfacts].form = g;
        v->facts[v->nfacts].r = r;
        v->facts[v->nfacts].dead = false;
        v->nfacts++;
    }
}

/* k * a <= m (le) or k * a >= m (!le), k != 0: a range of a. */
static bnd_range solve(int64_t k, int64_t m, bool le)
{
    /* with k < 0 the inequality turns over */
    if (k < 0) {
        if (k == INT64_MIN || m == INT64_MIN)
            return unknown;
        k = -k;
        m = -m;
        le = !le;
    }
    int64_t q = floor_div(m, k), qk;
    if (le)
        return (bnd_range){INT64_MIN, q, true};
    if (__builtin_mul_overflow(q, k, &qk))
        return unknown;
    return (bnd_range){qk == m ? q : q + 1, INT64_MAX, true};
}

/* Adds what `cond == holds` says of single atoms. */
static void assume(bnd_env *v, const ir_expr *cond, bool holds, int depth)
{
    if (!cond || depth > BND_DEPTH)
        return;
    switch (cond->kind) {
    case IR_NOT:
        assume(v, cond->a, !holds, depth + 1);
        return;
    case IR_AND:
    case IR_OR:
        if ((cond->kind == IR_AND) == holds) {   /* both sides hold (or both fail) */
            assume(v, cond->a, holds, depth + 1);
            assume(v, cond->b, holds, depth + 1);
        }
        return;
    case IR_LT: case IR_LE: case IR_GT: case IR_GE: case IR_EQ: case IR_NE:
        break;
    default:
        return;
    }
    /* a - b as c + sum k * atom, compared with 0 */
    v->budget = BND_BUDGET;
    bnd_affine f = {0};
    if (!affine_add(v, &f, cond->a, 1, depth + 1) || !affine_add(v, &f, cond->b, -1, depth + 1))
        return;
    int at = -1, natoms = 0;
    for (int i = 0; i < f.n; i++)
        if (f.k[i] != 0) {
            at = i;
            natoms++;
        }
    if (natoms == 0 || f.c == INT64_MIN || f.c == INT64_MAX || f.c == INT64_MIN + 1)
        return;
    ir_expr_kind k = cond->kind;
    if (!holds)
        k = k == IR_LT ? IR_GE : k == IR_LE ? IR_GT : k == IR_GT ? IR_LE : k == IR_GE ? IR_LT
            : k == IR_EQ ? IR_NE : IR_EQ;
    int64_t c = f.c, ka = natoms == 1 ? f.k[at] : 1;   /* several: a range of the sum */
    bnd_range r;
    switch (k) {
    case IR_LT: r = solve(ka, -c - 1, true); break;     /* ka*a + c <= -1 */
    case IR_LE: r = solve(ka, -c, true); break;
    case IR_GT: r = solve(ka, 1 - c, false); break;     /* ka*a + c >= 1 */
    case IR_GE: r = solve(ka, -c, false); break;
    case IR_EQ: r = intersect(solve(ka, -c, true), solve(ka, -c, false)); break;
    default: return;
    }
    if (!r.known)
        return;
    if (natoms == 1) {
        bnd_affine one = {.n = 1, .atom = {f.atom[at]}, .k = {1}};
        add_fact(v, &one, r);
    } else {
        add_fact(v, &f, r);
    }
}

static bool loads_from(const ir_expr *x, void *p)
{
    const void **q = p;
    if (x->kind == IR_LOAD && x->buf == q[0])
        q[1] = x;
    return q[1] == NULL;
}

/* Facts about loads of b no longer hold once b may have been written. */
static void forget_loads_of(bnd_env *v, const ir_buffer *b)
{
    for (int i = 0; i < v->nfacts; i++)
        for (int j = 0; j < v->facts[i].form.n; j++) {
            const void *q[2] = {b, NULL};
            ir_expr_walk(v->facts[i].form.atom[j], loads_from, q);
            if (q[1])
                v->facts[i].dead = true;
        }
}

static bool forget_stored(const ir_stmt *s, void *p)
{
    if (s->kind == IR_S_STORE)
        forget_loads_of(p, s->buf);
    return true;
}

/* ---------------------------------------------------------------- the walk */

static void add_site(bnd_env *v, const void *access, const ir_buffer *buf, int dim, bool store)
{
    cg_bound_sites *o = v->out;
    if (o->oom)
        return;
    if (o->n == o->cap) {
        int cap = o->cap ? 2 * o->cap : 8;
        cg_bound_site *p = realloc(o->items, sizeof *p * (size_t)cap);
        if (!p) {
            o->oom = true;
            return;
        }
        o->items = p;
        o->cap = cap;
    }
    o->items[o->n++] = (cg_bound_site){access, buf, dim, store};
}

static void check_access(bnd_env *v, const void *access, const ir_buffer *buf,
                         ir_expr *const *idx, int n, bool store)
{
    if (!buf)
        return;
    for (int d = 0; d < n && d < buf->ndim; d++) {
        bnd_range r = expr_range(v, idx[d], 0);
        if (!r.known || r.lo < 0 || r.hi >= buf->shape[d])
            add_site(v, access, buf, d, store);
    }
}

/* The loads of x, each judged under the conditions that guard it. */
static void check_expr(bnd_env *v, const ir_expr *x, int depth)
{
    if (!x || depth > 100000)
        return;
    int n0 = v->nfacts;
    switch (x->kind) {
    case IR_LOAD:
        check_access(v, x, x->buf, x->args, x->nargs, false);
        break;
    case IR_SELECT:
        check_expr(v, x->c, depth + 1);
        assume(v, x->c, true, 0);
        check_expr(v, x->a, depth + 1);
        v->nfacts = n0;
        assume(v, x->c, false, 0);
        check_expr(v, x->b, depth + 1);
        v->nfacts = n0;
        return;
    case IR_AND:
    case IR_OR:
        check_expr(v, x->a, depth + 1);
        assume(v, x->a, x->kind == IR_AND, 0);
        check_expr(v, x->b, depth + 1);
        v->nfacts = n0;
        return;
    default:
        break;
    }
    for (int i = 0; i < x->nargs; i++)
        check_expr(v, x->args[i], depth + 1);
    check_expr(v, x->a, depth + 1);
    check_expr(v, x->b, depth + 1);
    check_expr(v, x->c, depth + 1);
}

static void push_bind(bnd_env *v, const ir_var *var, const ir_expr *value)
{
    if (v->nbinds == BND_MAX)
        return;   /* the variable stays unknown */
    bool subst = value && !contains_load(value);
    v->binds[v->nbinds].var = var;
    v->binds[v->nbinds].value = subst ? value : NULL;
    v->binds[v->nbinds].r = subst ? unknown : expr_range(v, value, 0);
    v->nbinds++;
}

static void check_stmt(bnd_env *v, const ir_stmt *s)
{
    if (!s)
        return;
    int n0 = v->nfacts, b0 = v->nbinds;
    switch (s->kind) {
    case IR_S_SEQ:
        for (int i = 0; i < s->nbody; i++) {
            check_stmt(v, s->body[i]);
            if (s->body[i] && s->body[i]->kind == IR_S_ASSERT)
                assume(v, s->body[i]->cond, true, 0);   /* what follows runs only if it held */
        }
        break;
    case IR_S_FOR: {
        check_expr(v, s->lo, 0);
        check_expr(v, s->hi, 0);
        bnd_range lo = expr_range(v, s->lo, 0), hi = expr_range(v, s->hi, 0);
        if (s->nbody > 0)
            ir_stmt_walk(s->body[0], forget_stored, NULL, v);   /* later iterations */
        bool pushed = v->nloops < BND_MAX;
        if (pushed) {
            v->loops[v->nloops].var = s->var;
            v->loops[v->nloops].r = lo.known && hi.known && hi.hi > INT64_MIN
                                        ? (bnd_range){lo.lo, hi.hi - 1, true} : unknown;
            v->nloops++;
        }
        check_stmt(v, s->nbody > 0 ? s->body[0] : NULL);
        v->nloops -= pushed;
        break;
    }
    case IR_S_BLOCK:
        for (int i = 0; i < s->niters; i++)
            check_expr(v, s->iters[i].binding, 0);
        for (int i = 0; i < s->niters; i++)
            push_bind(v, s->iters[i].var, s->iters[i].binding);
        check_stmt(v, s->init);
        check_stmt(v, s->nbody > 0 ? s->body[0] : NULL);
        break;
    case IR_S_STORE:
        for (int i = 0; i < s->nargs; i++)
            check_expr(v, s->args[i], 0);
        check_expr(v, s->value, 0);
        check_access(v, s, s->buf, s->args, s->nargs, true);
        forget_loads_of(v, s->buf);
        return;
    case IR_S_ALLOC:
        check_stmt(v, s->nbody > 0 ? s->body[0] : NULL);
        break;
    case IR_S_LET:
        check_expr(v, s->value, 0);
        push_bind(v, s->var, s->value);
        check_stmt(v, s->nbody > 0 ? s->body[0] : NULL);
        break;
    case IR_S_IF:
        check_expr(v, s->cond, 0);
        assume(v, s->cond, true, 0);
        check_stmt(v, s->nbody > 0 ? s->body[0] : NULL);
        v->nfacts = n0;
        assume(v, s->cond, false, 0);
        check_stmt(v, s->orelse);
        break;
    case IR_S_EVAL:
        check_expr(v, s->value, 0);
        break;
    case IR_S_ASSERT:
        check_expr(v, s->cond, 0);
        break;
    default:
        break;
    }
    v->nfacts = n0;
    v->nbinds = b0;
}

cg_bound_sites cg_unproven_accesses(const ir_func *f)
{
    cg_bound_sites out = {0};
    bnd_env *v = calloc(1, sizeof *v);
    if (!v) {
        out.oom = true;
        return out;
    }
    v->out = &out;
    check_stmt(v, f->body);
    free(v);
    return out;
}

int cg_bound_site_of(const cg_bound_sites *s, const void *access, int dim)
{
    for (int i = 0; i < s->n; i++)
        if (s->items[i].access == access && s->items[i].dim == dim)
            return i;
    return -1;
}
