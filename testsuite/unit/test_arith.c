/* Unit tests of ir/arith.c: floor division, intervals, affine forms, the
 * floordiv/floormod pairs, against brute force where a property quantifies
 * over values. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/arith.h"
#include "testsuite/unit/test.h"

static ir_module *M;

static ir_expr *I(int64_t v) { return ir_int(M, v); }
static ir_expr *V(ir_var *v) { return ir_varref(M, v); }
static ir_expr *B(ir_expr_kind k, ir_expr *a, ir_expr *b) { return ir_binary(M, k, a, b); }

/* x as the printer writes it (static buffer). */
static const char *text(const ir_expr *x)
{
    static char buf[256];
    char *p = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&p, &n);
    if (!f)
        return "";
    ir_print_expr(f, x);
    fclose(f);
    snprintf(buf, sizeof buf, "%s", p ? p : "");
    free(p);
    return buf;
}

static bool same(ir_interval r, int64_t lo, int64_t hi) { return r.known && r.lo == lo && r.hi == hi; }

static void test_floor_division(void)
{
    for (int64_t a = -20; a <= 20; a++)
        for (int64_t b = -7; b <= 7; b++) {
            if (b == 0)
                continue;
            int64_t q = ir_floordiv64(a, b), r = ir_floormod64(a, b);
            CHECK(q * b + r == a);
            CHECK(b > 0 ? (r >= 0 && r < b) : (r <= 0 && r > b));
        }
    CHECK(ir_floordiv64(INT64_MIN, 2) == INT64_MIN / 2);
    CHECK(ir_floormod64(-1, INT64_MAX) == INT64_MAX - 1);
}

/* Every value of op over the points of a and b lies in the interval. */
static void test_intervals(void)
{
    ir_interval u = ir_interval_unknown();
    CHECK(same(ir_interval_add((ir_interval){1, 3, true}, (ir_interval){-5, 2, true}), -4, 5));
    CHECK(same(ir_interval_sub((ir_interval){1, 3, true}, (ir_interval){-5, 2, true}), -1, 8));
    CHECK(same(ir_interval_mul((ir_interval){-2, 3, true}, (ir_interval){-5, 4, true}), -15, 12));
    CHECK(same(ir_interval_scale(-3, (ir_interval){1, 4, true}), -12, -3));
    CHECK(same(ir_interval_neg((ir_interval){1, 4, true}), -4, -1));
    CHECK(same(ir_interval_min((ir_interval){1, 9, true}, (ir_interval){3, 5, true}), 1, 5));
    CHECK(same(ir_interval_max((ir_interval){1, 9, true}, (ir_interval){3, 5, true}), 3, 9));
    CHECK(same(ir_interval_join((ir_interval){1, 2, true}, (ir_interval){7, 9, true}), 1, 9));
    CHECK(same(ir_interval_intersect((ir_interval){1, 8, true}, (ir_interval){4, 9, true}), 4, 8));
    CHECK(same(ir_interval_intersect(u, (ir_interval){4, 9, true}), 4, 9));
    CHECK(!ir_interval_join(u, (ir_interval){4, 9, true}).known);
    /* overflow is unknown, never a wrapped bound */
    CHECK(!ir_interval_add((ir_interval){0, INT64_MAX, true}, ir_interval_point(1)).known);
    CHECK(!ir_interval_mul((ir_interval){0, INT64_MAX, true}, ir_interval_point(2)).known);
    CHECK(!ir_interval_neg(ir_interval_point(INT64_MIN)).known);
    /* floordiv and floormod by a positive constant, against every point */
    for (int64_t lo = -9; lo <= 9; lo++)
        for (int64_t hi = lo; hi <= 9; hi++)
            for (int64_t c = 1; c <= 5; c++) {
                ir_interval d = ir_interval_floordiv((ir_interval){lo, hi, true}, c);
                ir_interval m = ir_interval_floormod((ir_interval){lo, hi, true}, c);
                for (int64_t x = lo; x <= hi; x++) {
                    CHECK(d.known && d.lo <= ir_floordiv64(x, c) && ir_floordiv64(x, c) <= d.hi);
                    CHECK(m.known && m.lo <= ir_floormod64(x, c) && ir_floormod64(x, c) <= m.hi);
                }
                CHECK(d.lo == ir_floordiv64(lo, c) && d.hi == ir_floordiv64(hi, c));
            }
    CHECK(same(ir_interval_floormod(u, 4), 0, 3));
    CHECK(same(ir_interval_floormod((ir_interval){1, 2, true}, 4), 1, 2));
    CHECK(!ir_interval_floordiv((ir_interval){1, 2, true}, 0).known);
}

/* The lanes of a ramp and the values of a stepped loop's variable, against
 * every point. */
static void test_vector_intervals(void)
{
    for (int64_t s = -3; s <= 3; s++)
        for (int lanes = 1; lanes <= 8; lanes *= 2) {
            ir_interval r = ir_interval_ramp((ir_interval){2, 5, true}, ir_interval_point(s), lanes);
            int64_t lo = INT64_MAX, hi = INT64_MIN;
            for (int64_t b = 2; b <= 5; b++)
                for (int l = 0; l < lanes; l++) {
                    int64_t x = b + s * l;
                    lo = x < lo ? x : lo;
                    hi = x > hi ? x : hi;
                }
            CHECK(same(r, lo, hi));   /* exact: the first and the last lane */
        }
    CHECK(!ir_interval_ramp(ir_interval_unknown(), ir_interval_point(1), 4).known);
    for (int64_t lo = -5; lo <= 5; lo++)
        for (int64_t hi = lo + 1; hi <= 12; hi++)
            for (int64_t step = 1; step <= 6; step++) {
                int64_t last = lo;
                for (int64_t v = lo; v < hi; v += step)
                    last = v;
                CHECK(same(ir_interval_loop(ir_interval_point(lo), ir_interval_point(hi), step), lo,
                           last));
            }
    /* bounds that are ranges: the hull */
    CHECK(same(ir_interval_loop((ir_interval){0, 2, true}, (ir_interval){8, 10, true}, 4), 0, 9));
    CHECK(!ir_interval_loop(ir_interval_unknown(), ir_interval_point(4), 1).known);
    ir_var *j = ir_var_new(M, "j", IR_I64);
    ir_var_range r[1] = {{j, 0, 8}};
    ir_expr *ramp = ir_ramp(M, V(j), I(-2), 4), *bc = ir_broadcast(M, V(j), 4);
    CHECK(same(ir_bounds(ramp, r, 1), -6, 8));
    CHECK(same(ir_bounds(bc, r, 1), 0, 8));
}

static void test_bounds(void)
{
    ir_var *i = ir_var_new(M, "i", IR_I64), *j = ir_var_new(M, "j", IR_I64), *k = ir_var_new(M, "k", IR_I64);
    ir_var_range r[2] = {{i, 0, 15}, {j, 0, 3}};
    /* floordiv(i, 4) * 4 + j - i in [-3 - 3, 3] as intervals see it */
    ir_expr *x = B(IR_SUB, B(IR_ADD, B(IR_MUL, B(IR_FLOORDIV, V(i), I(4)), I(4)), V(j)), V(i));
    CHECK(same(ir_bounds(x, r, 2), -15, 15));
    CHECK(same(ir_bounds(B(IR_FLOORMOD, V(i), I(4)), r, 2), 0, 3));
    CHECK(same(ir_bounds(B(IR_MIN, V(i), V(j)), r, 2), 0, 3));
    CHECK(!ir_bounds(V(k), r, 2).known);
    CHECK(!ir_bounds(B(IR_FLOORDIV, V(i), V(j)), r, 2).known);
    CHECK(ir_always(B(IR_LT, V(j), I(4)), r, 2));
    CHECK(!ir_always(B(IR_LT, V(i), I(15)), r, 2));
    CHECK(ir_always(B(IR_AND, B(IR_GE, V(i), I(0)), B(IR_LE, V(j), V(i))), (ir_var_range[]){{i, 3, 5}, {j, 0, 3}}, 2));
}

static void test_affine(void)
{
    ir_var *i = ir_var_new(M, "i", IR_I64), *j = ir_var_new(M, "j", IR_I64);
    ir_affine f;
    /* 3 * (i + 2) - (j - i) * 2 + 1 = 5i - 2j + 7 */
    ir_expr *x = B(IR_ADD, B(IR_SUB, B(IR_MUL, I(3), B(IR_ADD, V(i), I(2))),
                             B(IR_MUL, B(IR_SUB, V(j), V(i)), I(2))), I(1));
    CHECK(ir_affine_of(x, &f) && f.c == 7 && f.n == 2);
    CHECK(ir_affine_coef(&f, i) == 5 && ir_affine_coef(&f, j) == -2);
    CHECK(strcmp(text(ir_affine_expr(M, &f)), "i * 5 + j * -2 + 7") == 0);
    /* cancelled terms are dropped */
    CHECK(ir_affine_of(B(IR_SUB, B(IR_ADD, V(i), V(j)), V(i)), &f) && f.n == 1 && f.var[0] == j);
    /* not affine in its variables; overflow is not a form */
    CHECK(!ir_affine_of(B(IR_MUL, V(i), V(j)), &f));
    CHECK(!ir_affine_of(B(IR_FLOORDIV, V(i), I(2)), &f));
    CHECK(!ir_affine_of(B(IR_MUL, B(IR_MUL, V(i), I(INT64_MAX)), I(2)), &f));
    /* with atoms: floordiv(i, 2) is a term of its own */
    ir_affine_rules atoms = {.atoms = true};
    ir_affine g = {0};
    ir_expr *h = B(IR_FLOORDIV, V(i), I(2));
    CHECK(ir_affine_add(&g, B(IR_ADD, B(IR_MUL, h, I(3)), V(j)), 1, &atoms, 0) && g.n == 2);
    CHECK(ir_affine_term_coef(&g, B(IR_FLOORDIV, V(i), I(2))) == 3 && ir_affine_coef(&g, j) == 1);
    int64_t k;
    CHECK(ir_affine_var_coef(B(IR_ADD, B(IR_MUL, V(j), I(4)), h), j, &k) && k == 4);
    CHECK(!ir_affine_var_coef(B(IR_ADD, V(i), h), i, &k));          /* i also inside an atom */
    CHECK(ir_affine_var_coef(h, j, &k) && k == 0);
    /* split: 6i + 4j + 1 = 2 * (3i + 2j) + 1 */
    ir_affine a = {0}, b = {0}, rest;
    ir_affine_add_var(&a, i, 6), ir_affine_add_var(&a, j, 4), a.c = 1;
    ir_affine_add_var(&b, i, 3), ir_affine_add_var(&b, j, 2);
    int64_t m;
    CHECK(ir_affine_split(&a, &b, &m, &rest) && m == 2 && ir_affine_coef(&rest, i) == 0 &&
          ir_affine_coef(&rest, j) == 0 && rest.c == 1);
    CHECK(!ir_affine_same_terms(&a, &b));
    ir_affine_add_var(&b, i, 3), ir_affine_add_var(&b, j, 2);
    CHECK(ir_affine_same_terms(&a, &b));
}

static void test_divmod_pairs(void)
{
    ir_var *x = ir_var_new(M, "x", IR_I64), *y = ir_var_new(M, "y", IR_I64);
    int64_t c, a, b;
    CHECK(ir_divmod_pair(B(IR_FLOORDIV, V(x), I(8)), B(IR_FLOORMOD, V(x), I(8)), &c) && c == 8);
    CHECK(!ir_divmod_pair(B(IR_FLOORDIV, V(x), I(8)), B(IR_FLOORMOD, V(x), I(4)), &c));
    CHECK(!ir_divmod_pair(B(IR_FLOORDIV, V(x), I(8)), B(IR_FLOORMOD, V(y), I(8)), &c));
    CHECK(!ir_divmod_pair(B(IR_FLOORDIV, V(x), V(y)), B(IR_FLOORMOD, V(x), V(y)), &c));
    CHECK(ir_divmod_nested_pair(B(IR_FLOORMOD, B(IR_FLOORDIV, V(x), I(4)), I(3)),
                                B(IR_FLOORMOD, V(x), I(4)), &a, &b) && a == 4 && b == 3);
    CHECK(!ir_divmod_nested_pair(B(IR_FLOORMOD, B(IR_FLOORDIV, V(x), I(4)), I(3)),
                                 B(IR_FLOORMOD, V(x), I(2)), &a, &b));
    /* the identities themselves, by brute force */
    for (int64_t v = -50; v <= 50; v++) {
        for (int64_t k = -6; k <= 6; k++)
            if (k != 0)
                CHECK(ir_floordiv64(v, k) * k + ir_floormod64(v, k) == v);
        for (int64_t p = 1; p <= 5; p++)
            for (int64_t q = 1; q <= 5; q++)
                CHECK(ir_floormod64(ir_floordiv64(v, p), q) * p + ir_floormod64(v, p) ==
                      ir_floormod64(v, p * q));
    }
}

int main(void)
{
    M = ir_module_new("test_arith");
    test_floor_division();
    test_intervals();
    test_vector_intervals();
    test_bounds();
    test_affine();
    test_divmod_pairs();
    ir_module_free(M);
    return test_exit("test_arith");
}
