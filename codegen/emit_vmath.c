/* codegen/emit_vmath.c — the vector math of generated C: which vector
 * function computes a math intrinsic on a vector (tec's own inline
 * polynomials for f32 exp, tanh, erf and sigmoid, glibc's libmvec for the
 * rest), and the text of tec's own, written into the prelude of a file whose
 * kernels call them (emit_prelude.c).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "codegen/emit_c.h"

#include <stdio.h>
#include <string.h>

/* exp, tanh and erf of f32 vectors, inline, so a fused activation costs a
 * few multiply-adds per vector instead of a call to libmvec that spills
 * every live vector register around it.  Written with GCC vector
 * extensions ($N lanes, $V the natural vector type, $M its integer lanes),
 * so they serve every vector width; cg_emit_vmath_f32 uses AVX-512's
 * instructions instead where the target has them.  Maximum errors, measured
 * against double-precision references on a million inputs from 1e-40 to
 * 120 of both signs and the edges (testsuite/cli/vmath_accuracy.sh checks
 * the bounds in its comment, both variants):
 *   exp   Cody-Waite reduction x = n ln2 + r, |r| <= ln2/2, a degree-7
 *         polynomial for e^r (Cephes' coefficients), 2^n applied by
 *         scaling: 1 ulp; inf above 88.72, NaN stays NaN, and 0 below ln
 *         FLT_MIN = -87.33654 (from the float under it, -87.3365479: the
 *         results under 2^-126 flushed, 1.2e-38 absolute at most; the
 *         generic variant computes them at that float): a subnormal result costs a microcode assist
 *         in the scaling and in every multiply or add that reads it, and
 *         an attention's mask (-100 in Swin-T's shifted windows) makes a
 *         softmax's exponentials subnormal by the thousand: ViT-B/16's
 *         softmax with half its scores at -100 took 3770 us instead of
 *         230 on one thread (bench/results/rows_s26.txt);
 *   tanh  |x| < 0.625: x + x^3 P(x^2) (Cephes' degree-4 P), else
 *         1 - 2 / (exp(2|x|) + 1) with the sign of x: 1.6 ulp; +-inf give +-1;
 *   erf   one branch-free rational function x P(x^2) / Q(x^2), P and Q of
 *         degree 5, Q(0) = 1, on x clamped to +-3.92 (1 - erf(3.92) =
 *         3.0e-8, half the spacing of f32 below 1); coefficients fitted
 *         for the least maximum absolute error (tools/fit_erf.py: 1.0e-7
 *         in exact arithmetic); in f32 3.7e-7 absolute and 6.1 ulp over
 *         every float in the AVX-512 variant (bench/vmath_sweep.sh sweeps
 *         only the 16 lanes of an AVX-512 target; the generic variant is
 *         sampled, on the million inputs above, by
 *         testsuite/cli/vmath_accuracy.sh at x86-64-v3; Abramowitz and Stegun's
 *         7.1.26 with a series below 0.5, used before: 3.9e-7 and 6.6 ulp
 *         in twice the time, two branches and an exp); the result
 *         clamped to +-1, which it reaches (+-inf give +-1: GELU's
 *         x (1 + erf(x / sqrt 2)) is NaN at -inf, as in the C library's),
 *         NaN stays NaN.
 * All are far within the 1e-4 the tests allow against the interpreter's
 * libm (glibc's libmvec, used before, has 2.5 ulp for exp and 4 for erf). */
static const char vmath_f32_text[] =
    "typedef int32_t tec_nmf32x$N __attribute__((vector_size($B)));\n"
    "static inline $V tec_vsel_f32x$N($M m, $V a, $V b) { return ($V)((m & ($M)a) | (~m & ($M)b)); }\n"
    "static inline $V tec_vexp_f32x$N($V x)\n"
    "{\n"
    "    x = tec_vsel_f32x$N(x < -87.3365478515625f, ($V){} - 87.3365478515625f, x);\n"
    "    x = tec_vsel_f32x$N(x > 89.0f, ($V){} + 89.0f, x);\n"
    "    $V z = x * 1.44269504088896341f + 12582912.0f;   /* n in the low bits */\n"
    "    $V n = z - 12582912.0f;\n"
    "    $V r = x - n * 0.693359375f;\n"
    "    r = r - n * -2.12194440e-4f;\n"
    "    $V p = ($V){} + 1.9875691500e-4f;\n"
    "    p = p * r + 1.3981999507e-3f;\n"
    "    p = p * r + 8.3334519073e-3f;\n"
    "    p = p * r + 4.1665795894e-2f;\n"
    "    p = p * r + 1.6666665459e-1f;\n"
    "    p = p * r + 5.0000001201e-1f;\n"
    "    $V e = p * (r * r) + r + 1.0f;\n"
    "    $M k = ($M)z - 0x4B400000, k1 = k >> 1, k2 = k - k1;\n"
    "    e = e * ($V)((k1 + 127) << 23) * ($V)((k2 + 127) << 23);\n"
    "    return tec_vsel_f32x$N(x <= -87.3365478515625f, ($V){}, e);   /* no subnormal results */\n"
    "}\n"
    "static inline $V tec_vtanh_f32x$N($V x)\n"
    "{\n"
    "    $M sign = ($M)x & (int32_t)0x80000000;\n"
    "    $V a = ($V)(($M)x ^ sign), z = a * a;\n"
    "    $V p = ($V){} - 5.70498872745e-3f;\n"
    "    p = p * z + 2.06390887954e-2f;\n"
    "    p = p * z - 5.37397155531e-2f;\n"
    "    p = p * z + 1.33314422036e-1f;\n"
    "    p = p * z - 3.33332819422e-1f;\n"
    "    $V small = a + a * z * p;\n"
    "    $V big = 1.0f - 2.0f / (tec_vexp_f32x$N(a + a) + 1.0f);\n"
    "    return ($V)(($M)tec_vsel_f32x$N(a < 0.625f, small, big) | sign);\n"
    "}\n"
    "static inline $V tec_verf_f32x$N($V x)\n"
    "{\n"
    "    x = tec_vsel_f32x$N(x < -3.92f, ($V){} - 3.92f, x);\n"
    "    x = tec_vsel_f32x$N(x > 3.92f, ($V){} + 3.92f, x);\n"
    "    $V z = x * x;\n"
    "    $V p = ($V){} + 2.173971143e-06f;\n"
    "    p = p * z + 2.854388353e-04f;\n"
    "    p = p * z + 3.533069889e-03f;\n"
    "    p = p * z + 5.205053715e-02f;\n"
    "    p = p * z + 1.842138053e-01f;\n"
    "    p = p * z + 1.128379162f;\n"
    "    $V q = ($V){} + 3.940301229e-05f;\n"
    "    q = q * z + 1.116920050e-03f;\n"
    "    q = q * z + 1.449886301e-02f;\n"
    "    q = q * z + 1.116592627e-01f;\n"
    "    q = q * z + 4.965883552e-01f;\n"
    "    q = q * z + 1.0f;\n"
    "    $V r = x * p / q;\n"
    "    r = tec_vsel_f32x$N(r > 1.0f, ($V){} + 1.0f, r);\n"
    "    return tec_vsel_f32x$N(r < -1.0f, ($V){} - 1.0f, r);\n"
    "}\n";

/* The same with AVX-512 instructions where the target has them ($P the
 * intrinsics' prefix, $R the register type): min/max clamps that keep NaN
 * (x86's min returns its second operand when one is NaN), vscalefps to
 * apply 2^n (rounding once into the subnormal range), and a reciprocal
 * estimate refined by one Newton step instead of a division (its error,
 * 2^-28, is below f32's rounding).  exp is the softmax's cost (ViT-B/16:
 * 13 vectors a row of 197), so it counts its operations: n rounded by
 * adding and subtracting 1.5 * 2^23 (a multiply-add and a subtraction:
 * 2 operations where vrndscaleps alone is 2 and its multiply one more),
 * and no clamp below: a lane at or under -87.34 is zeroed by the scaling's
 * mask whatever its polynomial gave (NaN or inf from -1e38 or -inf): 17 -> 14
 * operations, the softmax 0.90 of its time alone (bench/results/vecred_s27.txt). */
static const char vmath_f32_avx512_text[] =
    "static inline $V tec_vexp_f32x$N($V v)\n"
    "{\n"
    "    $R x = $P_min_ps($P_set1_ps(89.0f), ($R)v);\n"
    "    $R n = $P_sub_ps($P_fmadd_ps(x, $P_set1_ps(1.44269504088896341f), $P_set1_ps(12582912.0f)), $P_set1_ps(12582912.0f));\n"
    "    $R r = $P_fnmadd_ps(n, $P_set1_ps(0.693359375f), x);\n"
    "    r = $P_fnmadd_ps(n, $P_set1_ps(-2.12194440e-4f), r);\n"
    "    $R p = $P_set1_ps(1.9875691500e-4f);\n"
    "    p = $P_fmadd_ps(p, r, $P_set1_ps(1.3981999507e-3f));\n"
    "    p = $P_fmadd_ps(p, r, $P_set1_ps(8.3334519073e-3f));\n"
    "    p = $P_fmadd_ps(p, r, $P_set1_ps(4.1665795894e-2f));\n"
    "    p = $P_fmadd_ps(p, r, $P_set1_ps(1.6666665459e-1f));\n"
    "    p = $P_fmadd_ps(p, r, $P_set1_ps(5.0000001201e-1f));\n"
    "    $R e = $P_add_ps($P_fmadd_ps(p, $P_mul_ps(r, r), r), $P_set1_ps(1.0f));\n"
    "    /* no subnormal results: 0 at and below the float under ln FLT_MIN (NaN kept) */\n"
    "    return ($V)$P_maskz_scalef_ps($P_cmp_ps_mask(x, $P_set1_ps(-87.3365478515625f), _CMP_NLE_UQ), e, n);\n"
    "}\n"
    "static inline $R tec_vrcp_f32x$N($R d)\n"
    "{\n"
    "    $R y = $P_rcp14_ps(d);\n"
    "    return $P_mul_ps(y, $P_fnmadd_ps(d, y, $P_set1_ps(2.0f)));\n"
    "}\n"
    "static inline $V tec_vtanh_f32x$N($V v)\n"
    "{\n"
    "    $R x = ($R)v, sign = $P_and_ps(x, $P_set1_ps(-0.0f)), a = $P_andnot_ps($P_set1_ps(-0.0f), x);\n"
    "    $R z = $P_mul_ps(a, a);\n"
    "    $R p = $P_set1_ps(-5.70498872745e-3f);\n"
    "    p = $P_fmadd_ps(p, z, $P_set1_ps(2.06390887954e-2f));\n"
    "    p = $P_fmadd_ps(p, z, $P_set1_ps(-5.37397155531e-2f));\n"
    "    p = $P_fmadd_ps(p, z, $P_set1_ps(1.33314422036e-1f));\n"
    "    p = $P_fmadd_ps(p, z, $P_set1_ps(-3.33332819422e-1f));\n"
    "    $R small = $P_fmadd_ps($P_mul_ps(a, z), p, a);\n"
    "    $R a10 = $P_min_ps($P_set1_ps(10.0f), a);   /* tanh(x) rounds to 1 from 9.011 */\n"
    "    $R d = $P_add_ps(($R)tec_vexp_f32x$N(($V)$P_add_ps(a10, a10)), $P_set1_ps(1.0f));\n"
    "    $R big = $P_fnmadd_ps($P_set1_ps(2.0f), tec_vrcp_f32x$N(d), $P_set1_ps(1.0f));\n"
    "    return ($V)$P_or_ps($P_mask_blend_ps($P_cmp_ps_mask(a, $P_set1_ps(0.625f), _CMP_LT_OQ), big, small), sign);\n"
    "}\n"
    "static inline $V tec_verf_f32x$N($V v)\n"
    "{\n"
    "    $R x = $P_max_ps($P_set1_ps(-3.92f), $P_min_ps($P_set1_ps(3.92f), ($R)v));\n"
    "    $R z = $P_mul_ps(x, x);\n"
    "    $R p = $P_set1_ps(2.173971143e-06f);\n"
    "    p = $P_fmadd_ps(p, z, $P_set1_ps(2.854388353e-04f));\n"
    "    p = $P_fmadd_ps(p, z, $P_set1_ps(3.533069889e-03f));\n"
    "    p = $P_fmadd_ps(p, z, $P_set1_ps(5.205053715e-02f));\n"
    "    p = $P_fmadd_ps(p, z, $P_set1_ps(1.842138053e-01f));\n"
    "    p = $P_fmadd_ps(p, z, $P_set1_ps(1.128379162f));\n"
    "    $R q = $P_set1_ps(3.940301229e-05f);\n"
    "    q = $P_fmadd_ps(q, z, $P_set1_ps(1.116920050e-03f));\n"
    "    q = $P_fmadd_ps(q, z, $P_set1_ps(1.449886301e-02f));\n"
    "    q = $P_fmadd_ps(q, z, $P_set1_ps(1.116592627e-01f));\n"
    "    q = $P_fmadd_ps(q, z, $P_set1_ps(4.965883552e-01f));\n"
    "    q = $P_fmadd_ps(q, z, $P_set1_ps(1.0f));\n"
    "    $R r = $P_div_ps($P_mul_ps(x, p), q);\n"
    "    return ($V)$P_max_ps($P_set1_ps(-1.0f), $P_min_ps($P_set1_ps(1.0f), r));\n"
    "}\n";

/* The vector function of a math intrinsic, or NULL.  f32 exp, tanh and
 * erf are tec's own inline polynomials (tec_vexp_f32x16, ...; see
 * cg_emit_vmath_f32); the others are glibc's vector math (libmvec): the vector
 * function ABI names _ZGV<isa>N<lanes>v_<name>, isa d for 32-byte and e for
 * 64-byte vectors.  sigmoid is 1 / (1 + exp(-x)), as in the scalar helper,
 * with one vector division: the reciprocal estimate and a Newton step
 * instead measured slower (bench/results/vmath_sigmoid.txt). */
const char *cg_vmath_name(ir_intrin fn)
{
    switch (fn) {
    case IR_FN_EXP: case IR_FN_SIGMOID: return "exp";
    case IR_FN_LOG: return "log";
    case IR_FN_TANH: return "tanh";
    case IR_FN_ERF: return "erf";
    case IR_FN_SIN: return "sin";
    case IR_FN_COS: return "cos";
    default: return NULL;
    }
}

/* Whether tec writes the f32 vector function `name` itself. */
bool cg_own_vmath(const char *name, ir_dtype t)
{
    return t == IR_F32 && (strcmp(name, "exp") == 0 || strcmp(name, "tanh") == 0 ||
                           strcmp(name, "erf") == 0);
}

void cg_put_vmath_symbol(cg_str *s, const char *name, ir_dtype t, int lanes)
{
    if (cg_own_vmath(name, t)) {
        cg_str_printf(s, "tec_v%s_f32x%d", name, lanes);
        return;
    }
    int bytes = lanes * ir_dtype_size(t);
    cg_str_printf(s, "_ZGV%cN%dv_%s%s", bytes == 64 ? 'e' : 'd', lanes, name, t == IR_F32 ? "f" : "");
}

/* text with $V, $M, $N, $B, $P and $R replaced for vectors of `lanes` f32. */
static void put_vmath_text(cg_str *s, const char *text, int lanes)
{
    char v[32], mt[32], n[16], b[16];
    snprintf(v, sizeof v, "tec_nf32x%d", lanes);
    snprintf(mt, sizeof mt, "tec_nmf32x%d", lanes);
    snprintf(n, sizeof n, "%d", lanes);
    snprintf(b, sizeof b, "%d", lanes * 4);
    for (const char *p = text; *p; p++) {
        if (*p != '$') {
            cg_str_putn(s, p, 1);
            continue;
        }
        p++;
        cg_str_puts(s, *p == 'V' ? v : *p == 'M' ? mt : *p == 'N' ? n : *p == 'B' ? b
                     : *p == 'P' ? (lanes == 16 ? "_mm512" : "_mm256")
                                 : (lanes == 16 ? "__m512" : "__m256"));
    }
}

/* exp, tanh and erf for vectors of `lanes` f32: AVX-512's for 16 lanes
 * (and 8 with AVX512VL) where the compiler targets it, else the generic. */
void cg_emit_vmath_f32(cg_str *s, int lanes)
{
    bool avx = lanes == 16 || lanes == 8;
    if (avx)
        cg_str_printf(s, "#if defined(__x86_64__) && defined(%s)\n#include <immintrin.h>\n",
                      lanes == 16 ? "__AVX512F__" : "__AVX512VL__");
    if (avx)
        put_vmath_text(s, vmath_f32_avx512_text, lanes);
    if (avx)
        cg_str_puts(s, "#else\n");
    put_vmath_text(s, vmath_f32_text, lanes);
    if (avx)
        cg_str_puts(s, "#endif\n");
}

/* ---------------------------------------------------------------- accumulators that are numbers */

/* Whether every value a local f32 or f64 buffer b of function f holds is a
 * number (not NaN), so that fmax(b's value, x) is one max instruction
 * (tec_vmaxn_f32x16, emit_prelude.c) instead of a compare and a masked
 * max whose compare sits on the accumulator's chain of dependent
 * operations.  By induction over the stores: each stores a number (a
 * constant that is not NaN) or the max or min of anything and a value
 * that is a number (a load of b itself: fmax and fmin are NaN only when
 * both operands are).  b starts zeroed, or `filled` (its first statement
 * stores every element); the lanes past a padded row's end
 * (ir_buffer.row_pitch) may hold anything, but no result uses them.  A
 * pooling's tile (init -inf, then y = max(y, x[..]) per tap) is such a
 * buffer: a 3x3 max pooling of stride 2 on 192x71x71 channels-last, 83 to
 * 64 us with its input in L2, 126 to 86 us from memory (one thread;
 * bench/results/window_s29.txt). */
static bool number_of(const ir_expr *v, const ir_buffer *b);

/* Whether select v (its else arm a number) is a number though its then arm
 * may not be: select(u != u, t, f) with u a number is f, and select(t > f,
 * t, f) (<, >=, <=, operands either way) takes t only where an ordered
 * comparison holds, so where t is not NaN.  The scalar copies of fmax(a,
 * x), a != a ? x : (x > a ? x : a) (the vectorizer's tails), are such. */
static bool picks_number(const ir_expr *v, const ir_buffer *b)
{
    const ir_expr *c = v->c;
    if (c->kind == IR_NE)
        return ir_expr_equal(c->a, c->b) && number_of(c->a, b);
    return (c->kind == IR_LT || c->kind == IR_LE || c->kind == IR_GT || c->kind == IR_GE) &&
           ((ir_expr_equal(c->a, v->a) && ir_expr_equal(c->b, v->b)) ||
            (ir_expr_equal(c->a, v->b) && ir_expr_equal(c->b, v->a)));
}

static bool number_of(const ir_expr *v, const ir_buffer *b)
{
    switch (v->kind) {
    case IR_FLOAT: return v->fval == v->fval;
    case IR_INT: return true;
    case IR_BROADCAST: return number_of(v->a, b);
    case IR_LOAD: return v->buf == b;
    case IR_MIN: case IR_MAX: return number_of(v->a, b) || number_of(v->b, b);
    case IR_SELECT: return number_of(v->b, b) && (number_of(v->a, b) || picks_number(v, b));
    default: return false;
    }
}

typedef struct number_check {
    const ir_buffer *b;
    bool alloc, ok;
} number_check;

static bool check_number_stores(const ir_stmt *s, void *p)
{
    number_check *c = p;
    if (s->kind == IR_S_ALLOC && s->buf == c->b)
        c->alloc = true;
    if (s->kind == IR_S_STORE && s->buf == c->b && !(s->value && number_of(s->value, c->b)))
        c->ok = false;
    return c->ok;
}

bool cg_holds_numbers(const ir_func *f, const ir_buffer *b)
{
    if (!f || !f->body || !b || b->role != IR_BUF_LOCAL || (b->dtype != IR_F32 && b->dtype != IR_F64))
        return false;
    number_check c = {b, false, true};
    ir_stmt_walk(f->body, check_number_stores, NULL, &c);
    return c.alloc && c.ok;
}
