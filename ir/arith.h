/* ir/arith.h — integer arithmetic over the IR: floor division, intervals
 * and affine forms, shared by the schedule primitives (passes/schedule/),
 * the passes and the bounds checks of codegen (codegen/bounds.c).
 *
 * Every operation is exact or says it does not know: an interval whose
 * bound would overflow int64 is unknown, an affine form whose coefficient
 * would overflow is not built.  Nothing here allocates except
 * ir_affine_expr, which builds IR in the module's arena.
 *
 *   ir_interval r = ir_bounds(x, ranges, n);       [lo, hi] of x, or !r.known
 *   ir_affine f;
 *   if (ir_affine_of(x, &f)) ... f.c + sum f.coef[i] * f.var[i] ...
 */
#ifndef TEC_IR_ARITH_H
#define TEC_IR_ARITH_H

#include <stdbool.h>
#include <stdint.h>

#include "ir/ir.h"

/* ---------------------------------------------------------------- floor division */

/* floor(a / b) and a - b * floor(a / b) (the sign of b), b != 0; the IR's
 * floordiv and floormod.  INT64_MIN / -1 is the caller's to avoid. */
int64_t ir_floordiv64(int64_t a, int64_t b);
int64_t ir_floormod64(int64_t a, int64_t b);

/* Whether div is floordiv(x, c) and mod is floormod(x, c) of the same x and
 * the same nonzero integer constant c (then *c is set): the pair for which
 * floordiv(x, c) * c + floormod(x, c) == x. */
bool ir_divmod_pair(const ir_expr *div, const ir_expr *mod, int64_t *c);

/* Whether hi is floormod(floordiv(x, a), b) and lo is floormod(x, a) of
 * the same x, with constants a, b > 0 (then *a and *b are set): the pair
 * for which floormod(floordiv(x, a), b) * a + floormod(x, a) ==
 * floormod(x, a * b). */
bool ir_divmod_nested_pair(const ir_expr *hi, const ir_expr *lo, int64_t *a, int64_t *b);

/* ---------------------------------------------------------------- intervals */

/* The inclusive range [lo, hi] of an integer value; !known: any value. */
typedef struct ir_interval {
    int64_t lo, hi;
    bool known;
} ir_interval;

static inline ir_interval ir_interval_unknown(void) { return (ir_interval){0, 0, false}; }
static inline ir_interval ir_interval_point(int64_t v) { return (ir_interval){v, v, true}; }

/* a ∩ b (an unknown side does not narrow), and the hull of a ∪ b (unknown
 * if either is). */
ir_interval ir_interval_intersect(ir_interval a, ir_interval b);
ir_interval ir_interval_join(ir_interval a, ir_interval b);
/* a + b, a - b, -a, a * b, k * a: unknown if a bound overflows. */
ir_interval ir_interval_add(ir_interval a, ir_interval b);
ir_interval ir_interval_sub(ir_interval a, ir_interval b);
ir_interval ir_interval_neg(ir_interval a);
ir_interval ir_interval_mul(ir_interval a, ir_interval b);
ir_interval ir_interval_scale(int64_t k, ir_interval a);
/* min and max of values in a and b. */
ir_interval ir_interval_min(ir_interval a, ir_interval b);
ir_interval ir_interval_max(ir_interval a, ir_interval b);
/* floordiv and floormod by a constant c > 0 (unknown for c <= 0): the
 * quotient is monotone; the remainder is a itself when a lies in [0, c),
 * else [0, c - 1]. */
ir_interval ir_interval_floordiv(ir_interval a, int64_t c);
ir_interval ir_interval_floormod(ir_interval a, int64_t c);

/* The lanes of ramp(b, s, L), b + s*l for l in [0, L): b + [min(0, s*(L-1)),
 * max(0, s*(L-1))] for s in the interval s (L >= 1). */
ir_interval ir_interval_ramp(ir_interval base, ir_interval stride, int lanes);
/* The values of the variable of a loop `lo..hi step S` (S >= 1) with lo and
 * hi in the given intervals: [lo, lo + S*floor((hi - lo - 1)/S)] when lo and
 * hi are single values and the loop runs, else [lo.lo, hi.hi - 1] (empty,
 * lo > hi, when it never runs: nothing in it is reached). */
ir_interval ir_interval_loop(ir_interval lo, ir_interval hi, int64_t step);

/* A variable's inclusive range. */
typedef struct ir_var_range {
    const ir_var *var;
    int64_t lo, hi;
} ir_var_range;

/* The range of an integer expression whose variables have the ranges r
 * (the first entry naming a variable counts), by interval arithmetic over
 * constants, variables, + - * negation, min, max, floordiv/floormod by
 * a positive constant, and the lanes of ramps and broadcasts; unknown for anything else or a variable without a
 * range. */
ir_interval ir_bounds(const ir_expr *x, const ir_var_range *r, int n);
/* Whether cond (comparisons joined by && and ||) holds for every value of
 * its variables in their ranges; false: not proven. */
bool ir_always(const ir_expr *cond, const ir_var_range *r, int n);

/* ---------------------------------------------------------------- affine forms */

/* c + sum coef[i] * term i, where term i is the variable var[i] or, when
 * var[i] is NULL, the integer subexpression atom[i] taken whole (a
 * floordiv, a load, a product of variables).  atom[i] is also set for a
 * variable that came from an expression (NULL for one added by name). */
#define IR_AFFINE_MAX 32
typedef struct ir_affine {
    int64_t c;
    int n;
    const ir_var *var[IR_AFFINE_MAX];
    const ir_expr *atom[IR_AFFINE_MAX];
    int64_t coef[IR_AFFINE_MAX];
} ir_affine;

/* How ir_affine_add reads an expression beyond + - negation and products
 * with a constant.  All members may be zero. */
typedef struct ir_affine_rules {
    bool atoms;    /* other subexpressions become terms (else: not affine) */
    bool casts;    /* widening integer casts are looked through */
    /* Called on every subexpression before it is read, with its nesting
     * depth; false gives up (a budget, a dtype check). */
    bool (*enter)(void *ctx, const ir_expr *x, int depth);
    /* The value to read instead of variable v, or NULL (v is a term). */
    const ir_expr *(*value)(void *ctx, const ir_var *v);
    /* Whether x has one value (*c); NULL: only integer constants do. */
    bool (*constant)(void *ctx, const ir_expr *x, int64_t *c, int depth);
    void *ctx;
} ir_affine_rules;

/* f += k * x under the rules (depth: x's nesting, 0 at the top); false when
 * x is not affine under them, a coefficient overflows, or f would have
 * more than IR_AFFINE_MAX terms (f is then partly updated). */
bool ir_affine_add(ir_affine *f, const ir_expr *x, int64_t k, const ir_affine_rules *rules,
                   int depth);
/* f += k * term (a variable when x is an IR_VAR, else x whole). */
bool ir_affine_add_term(ir_affine *f, const ir_expr *x, int64_t k);
bool ir_affine_add_var(ir_affine *f, const ir_var *v, int64_t k);
/* x as an affine form of its variables (+, -, negation, products with
 * constants), terms that cancel dropped; false when it is not one or a
 * coefficient overflows. */
bool ir_affine_of(const ir_expr *x, ir_affine *f);
/* The coefficient of variable v, of term x (0 when absent). */
int64_t ir_affine_coef(const ir_affine *f, const ir_var *v);
int64_t ir_affine_term_coef(const ir_affine *f, const ir_expr *x);
/* Whether x is coef * v + (terms without v), other subexpressions taken
 * whole (then *coef is set; 0 when x does not use v). */
bool ir_affine_var_coef(const ir_expr *x, const ir_var *v, int64_t *coef);
/* Whether f and g have the same terms with the same coefficients (the
 * constants aside). */
bool ir_affine_same_terms(const ir_affine *f, const ir_affine *g);
/* f = m * g + rest for a nonzero integer m (g's constant aside), or false. */
bool ir_affine_split(const ir_affine *f, const ir_affine *g, int64_t *m, ir_affine *rest);
/* The expression c + sum coef[i] * term i, in the order of the terms. */
ir_expr *ir_affine_expr(ir_module *m, const ir_affine *f);

#endif
