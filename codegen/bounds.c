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
 * floormod, min, max (an operand of unknown range: its dtype's values, so
 * a clamped gather index is proven) and select, and from the conditions that guard the
 * access: an if, a select arm, the right of && or ||, the statements after
 * an assert.  A condition that bounds one atom (vx - 3 >= 0, 0 <= ids[i] &&
 * ids[i] < 50) narrows that atom; others are ignored.  The form's range is
 * then exact for independent atoms and an over-approximation otherwise,
 * never too narrow: a proof is sound, and what is not proven is checked.
 *
 * Vector IR (passes/vectorize.c) is judged over all its lanes: a loop
 * `lo..hi step S` binds its variable to [lo, lo + S*floor((hi-lo-1)/S)], a
 * ramp(b, s, L) is an atom ranging over b + [min(0, s*(L-1)), max(0,
 * s*(L-1))], a broadcast ranges as its scalar and lanes(x0, ...) over the
 * hull of its lanes; an access proven for every lane needs no check, and
 * one that is not is checked at its first and last lane (codegen).
 * A fact about a load is dropped once its buffer may have been written.
 */
#include "codegen/codegen.h"

#include "ir/arith.h"
#include "ir/vec.h"

#include <stdlib.h>
#include <string.h>

#define BND_MAX 256      /* loops, bindings and facts in scope (beyond: unknown) */
#define BND_TERMS 32     /* atoms of one affine form (beyond: unknown) */
#define BND_DEPTH 256    /* nesting of one index expression (beyond: unknown) */
#define BND_BUDGET 20000 /* steps to judge one expression (beyond: unknown) */

/* Ranges and affine forms are ir/arith.h's: an ir_interval (!known: any
 * value) and an ir_affine c + sum coef[i] * atom[i] (BND_TERMS atoms). */
_Static_assert(BND_TERMS == IR_AFFINE_MAX, "an index's affine form holds BND_TERMS atoms");

/* What holds where an access is: enclosing loops, values of block
 * iteration variables and lets, and facts from guarding conditions. */
typedef struct bnd_env {
    struct { const ir_var *var; ir_interval r; } loops[BND_MAX];
    int nloops;
    /* value != NULL: replace the variable by it; else its range is r */
    struct { const ir_var *var; const ir_expr *value; ir_interval r; } binds[BND_MAX];
    int nbinds;
    /* form (c = 0) lies in r; one atom with coef = 1: a range of that atom */
    struct { ir_affine form; ir_interval r; bool dead; } facts[BND_MAX];
    int nfacts;
    long budget;          /* steps left for the expression being judged */
    bool unreachable;     /* the facts leave an atom of it no value */
    cg_bound_sites *out;
} bnd_env;

static const ir_interval unknown = {0, 0, false};

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

static ir_interval expr_range(bnd_env *v, const ir_expr *x, int depth);

/* The rules of ir_affine_add for an index: integer subexpressions only,
 * within the nesting and step budget; block iteration variables and lets
 * replaced by their values; a product's factor is constant if its range
 * is one value (floordiv(2304, 3) * 12); anything else an atom. */
static bool index_enter(void *ctx, const ir_expr *x, int depth)
{
    bnd_env *v = ctx;
    return depth <= BND_DEPTH && --v->budget >= 0 && ir_dtype_is_int(x->dtype);
}

static const ir_expr *index_value(void *ctx, const ir_var *var)
{
    bnd_env *v = ctx;
    for (int i = v->nbinds - 1; i >= 0; i--)
        if (v->binds[i].var == var)
            return v->binds[i].value;
    return NULL;
}

static bool index_constant(void *ctx, const ir_expr *x, int64_t *c, int depth)
{
    ir_interval r = expr_range(ctx, x, depth);
    *c = r.lo;
    return r.known && r.lo == r.hi;
}

static bool affine_add(bnd_env *v, ir_affine *f, const ir_expr *x, int64_t k, int depth)
{
    ir_affine_rules rules = {.atoms = true, .casts = true, .enter = index_enter,
                             .value = index_value, .constant = index_constant, .ctx = v};
    return ir_affine_add(f, x, k, &rules, depth);
}

/* r, or where r is unknown, every value of dtype t (the integers') */
static ir_interval dtype_range(ir_interval r, ir_dtype t)
{
    if (!r.known && ir_dtype_int_range(t, &r.lo, &r.hi))
        r.known = true;
    return r;
}

/* The range of an atom: its own rules, narrowed by the facts about it. */
static ir_interval atom_range(bnd_env *v, const ir_expr *x, int depth)
{
    ir_interval r = unknown;
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
        r = x->kind == IR_FLOORDIV ? ir_interval_floordiv(expr_range(v, x->a, depth + 1), x->b->ival)
                                   : ir_interval_floormod(expr_range(v, x->a, depth + 1), x->b->ival);
        break;
    case IR_RAMP:      /* the lanes: base + [min(0, s*(L-1)), max(0, s*(L-1))] */
        r = ir_interval_ramp(expr_range(v, x->a, depth + 1), expr_range(v, x->b, depth + 1),
                             x->lanes);
        break;
    case IR_BROADCAST:
        r = expr_range(v, x->a, depth + 1);
        break;
    case IR_LANES:     /* computed lane by lane: the hull of the lanes */
        for (int i = 0; i < x->nargs; i++) {
            ir_interval l = expr_range(v, x->args[i], depth + 1);
            r = i == 0 ? l : ir_interval_join(r, l);
        }
        break;
    case IR_MIN:
    case IR_MAX: {
        /* An operand of unknown range still holds its dtype's values, so
         * a clamp min(max(ids[i], 0), n - 1) of a loaded index is [0, n-1]
         * (a bound at INT64_MIN/MAX stays sound: sums overflow to unknown). */
        ir_interval a = dtype_range(expr_range(v, x->a, depth + 1), x->a->dtype),
                    b = dtype_range(expr_range(v, x->b, depth + 1), x->b->dtype);
        r = x->kind == IR_MIN ? ir_interval_min(a, b) : ir_interval_max(a, b);
        break;
    }
    case IR_SELECT:
    case IR_MUL: {
        ir_interval a = expr_range(v, x->a, depth + 1), b = expr_range(v, x->b, depth + 1);
        r = x->kind == IR_SELECT ? ir_interval_join(a, b) : ir_interval_mul(a, b);
        break;
    }
    default:
        break;
    }
    for (int i = 0; i < v->nfacts; i++) {
        const ir_affine *g = &v->facts[i].form;
        if (!v->facts[i].dead && g->n == 1 && g->coef[0] == 1 && ir_expr_equal(g->atom[0], x))
            r = ir_interval_intersect(r, v->facts[i].r);
    }
    /* Facts that leave no value (a vector chunk's guard that no lane
     * passes, a lane's copy past the loop's end) guard code that never
     * runs: whatever reads the atom there is in range. */
    if (r.known && r.lo > r.hi) {
        v->unreachable = true;
        r.hi = r.lo;
    }
    return r;
}

static ir_interval box_range(bnd_env *v, const ir_affine *f, int depth)
{
    ir_interval r = ir_interval_point(f->c);
    for (int i = 0; i < f->n && r.known; i++)
        if (f->coef[i] != 0)
            r = ir_interval_add(r, ir_interval_scale(f->coef[i], atom_range(v, f->atom[i], depth + 1)));
    return r;
}

/* The range of f: from its atoms' ranges, narrowed by the facts about
 * sums of several atoms that f contains (each a multiple of the sum). */
static ir_interval affine_range(bnd_env *v, const ir_affine *f, int depth)
{
    ir_interval r = box_range(v, f, depth);
    ir_affine rest = *f, next;
    ir_interval acc = ir_interval_point(0);
    bool used = false;
    for (int i = 0; i < v->nfacts; i++) {
        const ir_affine *g = &v->facts[i].form;
        int64_t m;
        if (v->facts[i].dead || g->n < 2 || !ir_affine_split(&rest, g, &m, &next))
            continue;
        ir_interval fr = box_range(v, g, depth);
        for (int j = 0; j < v->nfacts; j++)
            if (!v->facts[j].dead && ir_affine_same_terms(&v->facts[j].form, g))
                fr = ir_interval_intersect(fr, v->facts[j].r);
        if (!(acc = ir_interval_add(acc, ir_interval_scale(m, fr))).known)
            return r;
        rest = next;
        used = true;
    }
    if (!used)
        return r;
    ir_interval tail = box_range(v, &rest, depth);
    if (!(acc = ir_interval_add(acc, ir_interval_scale(1, tail))).known)
        return r;
    return ir_interval_intersect(r, acc);
}

static ir_interval expr_range(bnd_env *v, const ir_expr *x, int depth)
{
    if (depth == 0)
        v->budget = BND_BUDGET;
    ir_affine f = {0};
    if (!affine_add(v, &f, x, 1, depth))
        return unknown;
    return affine_range(v, &f, depth);
}

/* ---------------------------------------------------------------- facts from conditions */

/* Facts are kept with a positive first coefficient, so that a <= x and
 * x < b, said of the same sum either way round, meet (see same_form). */
static void add_fact(bnd_env *v, const ir_affine *form, ir_interval r)
{
    if (v->nfacts < BND_MAX) {
        ir_affine g = *form;
        g.c = 0;
        int n = 0;
        for (int i = 0; i < g.n; i++)
            if (g.coef[i] != 0) {
                g.var[n] = g.var[i];
                g.atom[n] = g.atom[i];
                g.coef[n++] = g.coef[i];
            }
        g.n = n;
        if (n > 0 && g.coef[0] < 0) {
            for (int i = 0; i < n; i++)
                if (g.coef[i] == INT64_MIN)
                    return;
            if (r.hi == INT64_MIN)
                return;
            for (int i = 0; i < n; i++)
                g.coef[i] = -g.coef[i];
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
static ir_interval solve(int64_t k, int64_t m, bool le)
{
    /* with k < 0 the inequality turns over */
    if (k < 0) {
        if (k == INT64_MIN || m == INT64_MIN)
            return unknown;
        k = -k;
        m = -m;
        le = !le;
    }
    int64_t q = ir_floordiv64(m, k), qk;
    if (le)
        return (ir_interval){INT64_MIN, q, true};
    if (__builtin_mul_overflow(q, k, &qk))
        return unknown;
    return (ir_interval){qk == m ? q : q + 1, INT64_MAX, true};
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
    ir_affine f = {0};
    if (!affine_add(v, &f, cond->a, 1, depth + 1) || !affine_add(v, &f, cond->b, -1, depth + 1))
        return;
    int at = -1, natoms = 0;
    for (int i = 0; i < f.n; i++)
        if (f.coef[i] != 0) {
            at = i;
            natoms++;
        }
    if (natoms == 0 || f.c == INT64_MIN || f.c == INT64_MAX || f.c == INT64_MIN + 1)
        return;
    ir_expr_kind k = cond->kind;
    if (!holds)
        k = k == IR_LT ? IR_GE : k == IR_LE ? IR_GT : k == IR_GT ? IR_LE : k == IR_GE ? IR_LT
            : k == IR_EQ ? IR_NE : IR_EQ;
    int64_t c = f.c, ka = natoms == 1 ? f.coef[at] : 1;   /* several: a range of the sum */
    ir_interval r;
    switch (k) {
    case IR_LT: r = solve(ka, -c - 1, true); break;     /* ka*a + c <= -1 */
    case IR_LE: r = solve(ka, -c, true); break;
    case IR_GT: r = solve(ka, 1 - c, false); break;     /* ka*a + c >= 1 */
    case IR_GE: r = solve(ka, -c, false); break;
    case IR_EQ: r = ir_interval_intersect(solve(ka, -c, true), solve(ka, -c, false)); break;
    default: return;
    }
    if (!r.known)
        return;
    if (natoms == 1) {
        ir_affine one = {0};
        ir_affine_add_term(&one, f.atom[at], 1);
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
    cg_bound_site *p = ir_vec_reserve(o->items, o->n, &o->cap, sizeof *p);
    if (!p) {
        o->oom = true;
        return;
    }
    o->items = p;
    o->items[o->n++] = (cg_bound_site){access, buf, dim, store};
}

static void check_access(bnd_env *v, const void *access, const ir_buffer *buf,
                         ir_expr *const *idx, int n, bool store)
{
    if (!buf)
        return;
    for (int d = 0; d < n && d < buf->ndim; d++) {
        v->unreachable = false;
        ir_interval r = expr_range(v, idx[d], 0);
        if (!v->unreachable && (!r.known || r.lo < 0 || r.hi >= buf->shape[d]))
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
        ir_interval lo = expr_range(v, s->lo, 0), hi = expr_range(v, s->hi, 0);
        if (s->nbody > 0)
            ir_stmt_walk(s->body[0], forget_stored, NULL, v);   /* later iterations */
        bool pushed = v->nloops < BND_MAX;
        if (pushed) {
            v->loops[v->nloops].var = s->var;
            v->loops[v->nloops].r = ir_interval_loop(lo, hi, ir_for_step(s));
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
    case IR_S_PREFETCH:   /* its element may lie outside (a hint); loads in its indices may not */
        for (int i = 0; i < s->nargs; i++)
            check_expr(v, s->args[i], 0);
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
