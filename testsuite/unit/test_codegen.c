/* testsuite/unit/test_codegen.c — the C backend, compiler invocation,
 * kernel cache and loader.
 *
 * Kernels are built with the ir.h builder, emitted, compiled (with -Wall
 * -Wextra -Werror, so generated code must be warning-free), loaded and
 * called; results are compared bit for bit with values computed here in
 * plain C and with the IR interpreter.  Prints one line per check; exits 1
 * if any failed.
 *
 * The test binary must export tec_prof_* (link with -export-dynamic): the
 * kernels that call them resolve them from the process, as in tec.
 */
#include "codegen/codegen.h"
#include "codegen/sha256.h"
#include "ir/interp.h"
#include "testsuite/unit/test.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The references below must round like the kernels: no fused multiply-add. */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif


/* ---------------------------------------------------------------- runtime hooks */

/* Called by the profiling kernel; resolved at dlopen time from this
 * executable, like tec's own runtime. */
int64_t hook_enter_sum, hook_exit_sum, hook_count_sum, hook_calls;
void tec_prof_enter(int64_t id);
void tec_prof_exit(int64_t id);
void tec_prof_count(int64_t id, int64_t n);
void tec_prof_enter(int64_t id) { hook_enter_sum += id; hook_calls++; }
void tec_prof_exit(int64_t id) { hook_exit_sum += id; hook_calls++; }
void tec_prof_count(int64_t id, int64_t n) { hook_count_sum += id * 1000 + n; hook_calls++; }

/* ---------------------------------------------------------------- builder shorthands */

static ir_module *M;

static ir_expr *I(int64_t v) { return ir_int(M, v); }
static ir_expr *V(ir_var *v) { return ir_varref(M, v); }
static ir_expr *F32(double v) { return ir_float(M, v, IR_F32); }
static ir_expr *BIN(ir_expr_kind k, ir_expr *a, ir_expr *b) { return ir_binary(M, k, a, b); }
static ir_expr *L1(ir_buffer *b, ir_expr *i) { return ir_load(M, b, &i, 1); }
static ir_expr *L2(ir_buffer *b, ir_expr *i, ir_expr *j)
{
    ir_expr *idx[2] = {i, j};
    return ir_load(M, b, idx, 2);
}
static ir_expr *L3(ir_buffer *b, ir_expr *i, ir_expr *j, ir_expr *k)
{
    ir_expr *idx[3] = {i, j, k};
    return ir_load(M, b, idx, 3);
}
static ir_expr *L4(ir_buffer *b, ir_expr *i, ir_expr *j, ir_expr *k, ir_expr *l)
{
    ir_expr *idx[4] = {i, j, k, l};
    return ir_load(M, b, idx, 4);
}
static ir_stmt *S1(ir_buffer *b, ir_expr *i, ir_expr *v) { return ir_store(M, b, &i, 1, v); }
static ir_stmt *S2(ir_buffer *b, ir_expr *i, ir_expr *j, ir_expr *v)
{
    ir_expr *idx[2] = {i, j};
    return ir_store(M, b, idx, 2, v);
}
static ir_stmt *S3(ir_buffer *b, ir_expr *i, ir_expr *j, ir_expr *k, ir_expr *v)
{
    ir_expr *idx[3] = {i, j, k};
    return ir_store(M, b, idx, 3, v);
}
static ir_expr *CALL(ir_intrin fn, ir_expr *a, ir_expr *b)
{
    ir_expr *args[2] = {a, b};
    return ir_call(M, fn, args, b ? 2 : 1);
}
static ir_stmt *FOR(ir_var *v, int64_t lo, int64_t hi, ir_for_kind k, ir_stmt *body)
{
    return ir_for(M, v, I(lo), I(hi), k, body);
}
static ir_buffer *ARG(ir_func *f, const char *name, ir_dtype t, int ndim, const int64_t *shape)
{
    ir_buffer *b = ir_buffer_new(M, name, t, ndim, shape, IR_BUF_ARG);
    ir_func_add_param(M, f, b);
    return b;
}
static ir_buffer *LOCAL(const char *name, ir_dtype t, int ndim, const int64_t *shape, ir_scope sc)
{
    ir_buffer *b = ir_buffer_new(M, name, t, ndim, shape, IR_BUF_LOCAL);
    b->scope = sc;
    return b;
}
static ir_var *VAR(const char *name) { return ir_var_new(M, name, IR_I64); }

/* Two values are the same when their bits are (any NaN equals any NaN). */
static bool same_f32(float a, float b)
{
    return (isnan(a) && isnan(b)) || memcmp(&a, &b, sizeof a) == 0;
}
static bool same_f64(double a, double b)
{
    return (isnan(a) && isnan(b)) || memcmp(&a, &b, sizeof a) == 0;
}

/* ---------------------------------------------------------------- SHA-256 */

static void test_sha256_vectors(void)
{
    static const struct { const char *msg, *hex; } v[] = {
        {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
        {"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
        {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
         "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
        {"abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklm"
         "nopqrlmnopqrsmnopqrstnopqrstu",
         "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"},
    };
    char hex[65];
    for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
        cg_sha256_hex(v[i].msg, strlen(v[i].msg), hex);
        check(strcmp(hex, v[i].hex) == 0, "sha256 test vector %zu (%zu bytes)", i, strlen(v[i].msg));
    }
    /* One million 'a', fed in pieces of 997 bytes to cross block edges. */
    static char a[997];
    memset(a, 'a', sizeof a);
    cg_sha256_ctx s;
    cg_sha256_init(&s);
    size_t left = 1000000;
    while (left) {
        size_t n = left < sizeof a ? left : sizeof a;
        cg_sha256_update(&s, a, n);
        left -= n;
    }
    uint8_t dg[32];
    cg_sha256_final(&s, dg);
    cg_sha256_to_hex(dg, hex);
    check(strcmp(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0") == 0,
          "sha256 of one million 'a'");
    /* Byte-by-byte updates agree with one-shot hashing at every length
     * around the padding edges (55, 56, 63, 64 bytes ...). */
    char msg[130], one[65];
    bool all = true;
    for (size_t n = 0; n < sizeof msg; n++) {
        msg[n] = (char)('A' + n % 26);
        cg_sha256_init(&s);
        for (size_t i = 0; i < n; i++)
            cg_sha256_update(&s, msg + i, 1);
        cg_sha256_final(&s, dg);
        cg_sha256_to_hex(dg, hex);
        cg_sha256_hex(msg, n, one);
        all &= strcmp(hex, one) == 0;
    }
    check(all, "sha256 incremental == one-shot for lengths 0..129");
}

/* The vectors with the processor's SHA extensions and without them, and
 * the two agree on pseudo-random data of many lengths. */
static void test_sha256(void)
{
    bool ni = cg_sha256_use_extensions(true);
    test_sha256_vectors();
    static unsigned char data[70000];
    uint32_t x = 12345;
    for (size_t i = 0; i < sizeof data; i++) {
        x = x * 1103515245u + 12345u;
        data[i] = (unsigned char)(x >> 24);
    }
    static const size_t lens[] = {0, 1, 63, 64, 65, 127, 128, 1000, 4096, 65537, 70000};
    char with[sizeof lens / sizeof *lens][65];
    for (size_t i = 0; i < sizeof lens / sizeof *lens; i++)
        cg_sha256_hex(data, lens[i], with[i]);
    check(!cg_sha256_use_extensions(false), "sha256: the portable code can be chosen");
    test_sha256_vectors();
    bool same = true;
    for (size_t i = 0; i < sizeof lens / sizeof *lens; i++) {
        char hex[65];
        cg_sha256_hex(data, lens[i], hex);
        same &= strcmp(hex, with[i]) == 0;
    }
    check(same, "sha256: %s and the portable code agree", ni ? "SHA-NI" : "the default");
    cg_sha256_use_extensions(true);
}

/* ---------------------------------------------------------------- the kernels */

/* C[i, j] = sum_k A[i, k] * B[k, j] as a block with init. */
static ir_func *build_matmul(void)
{
    int64_t sa[2] = {6, 5}, sb[2] = {5, 7}, sc[2] = {6, 7};
    ir_func *f = ir_func_new(M, "matmul");
    ir_func_set_attr(M, f, "layer", "mm");
    ir_func_set_attr(M, f, "op", "matmul");
    ir_func_set_attr(M, f, "loc", "t.te:3:5");
    ir_buffer *A = ARG(f, "A", IR_F32, 2, sa), *B = ARG(f, "B", IR_F32, 2, sb),
              *C = ARG(f, "C", IR_F32, 2, sc);
    ir_var *i = VAR("i"), *j = VAR("j"), *k = VAR("k");
    ir_var *vi = VAR("vi"), *vj = VAR("vj"), *vk = VAR("vk");
    ir_itervar it[3] = {{vi, IR_ITER_SPATIAL, 6, V(i)}, {vj, IR_ITER_SPATIAL, 7, V(j)},
                        {vk, IR_ITER_REDUCE, 5, V(k)}};
    ir_stmt *init = S2(C, V(vi), V(vj), F32(0));
    ir_stmt *body = S2(C, V(vi), V(vj),
                       BIN(IR_ADD, L2(C, V(vi), V(vj)),
                           BIN(IR_MUL, L2(A, V(vi), V(vk)), L2(B, V(vk), V(vj)))));
    ir_stmt *blk = ir_block(M, "C", it, 3, init, body);
    f->body = FOR(i, 0, 6, IR_FOR_PARALLEL,
                  FOR(j, 0, 7, IR_FOR_SERIAL, FOR(k, 0, 5, IR_FOR_SERIAL, blk)));
    return f;
}

/* y[f, p, q] = sum_{c,r,s} x[c, p+r-1, q+s-1] (0 outside) * w[f, c, r, s]:
 * a padded 3x3 convolution whose out-of-range reads are guarded by select. */
static ir_func *build_conv(void)
{
    int64_t sx[3] = {2, 5, 5}, sw[4] = {3, 2, 3, 3}, sy[3] = {3, 5, 5};
    ir_func *f = ir_func_new(M, "layer1.0.conv1");
    ir_func_set_attr(M, f, "layer", "layer1.0.conv1");
    ir_func_set_attr(M, f, "op", "conv2d");
    ir_buffer *x = ARG(f, "x", IR_F32, 3, sx), *w = ARG(f, "layer1.0.conv1.weight", IR_F32, 4, sw),
              *y = ARG(f, "y", IR_F32, 3, sy);
    ir_var *fo = VAR("f"), *p = VAR("p"), *q = VAR("q"), *c = VAR("c"), *r = VAR("r"),
           *s = VAR("s");
    ir_var *vf = VAR("vf"), *vp = VAR("vp"), *vq = VAR("vq"), *vc = VAR("vc"), *vr = VAR("vr"),
           *vs = VAR("vs");
    ir_itervar it[6] = {
        {vf, IR_ITER_SPATIAL, 3, V(fo)}, {vp, IR_ITER_SPATIAL, 5, V(p)},
        {vq, IR_ITER_SPATIAL, 5, V(q)}, {vc, IR_ITER_REDUCE, 2, V(c)},
        {vr, IR_ITER_REDUCE, 3, V(r)}, {vs, IR_ITER_REDUCE, 3, V(s)},
    };
    ir_expr *h = BIN(IR_SUB, BIN(IR_ADD, V(vp), V(vr)), I(1));
    ir_expr *wi = BIN(IR_SUB, BIN(IR_ADD, V(vq), V(vs)), I(1));
    ir_expr *inside = BIN(IR_AND, BIN(IR_AND, BIN(IR_GE, h, I(0)), BIN(IR_LT, h, I(5))),
                          BIN(IR_AND, BIN(IR_GE, wi, I(0)), BIN(IR_LT, wi, I(5))));
    ir_expr *xv = ir_select(M, inside, L3(x, V(vc), h, wi), F32(0));
    ir_stmt *body = S3(y, V(vf), V(vp), V(vq),
                       BIN(IR_ADD, L3(y, V(vf), V(vp), V(vq)),
                           BIN(IR_MUL, xv, L4(w, V(vf), V(vc), V(vr), V(vs)))));
    ir_stmt *blk = ir_block(M, "conv", it, 6, S3(y, V(vf), V(vp), V(vq), F32(0)), body);
    f->body = FOR(fo, 0, 3, IR_FOR_SERIAL,
                  FOR(p, 0, 5, IR_FOR_SERIAL,
                      FOR(q, 0, 5, IR_FOR_SERIAL,
                          FOR(c, 0, 2, IR_FOR_SERIAL,
                              FOR(r, 0, 3, IR_FOR_UNROLLED,
                                  FOR(s, 0, 3, IR_FOR_VECTORIZED, blk))))));
    return f;
}

/* Inputs of the expression kernel: x, y, p (p > 0) per float type, x, y per
 * integer type (y never 0), and a bool vector holding a raw byte 2. */
#define NT 4
static float in_xf[NT] = {-1.5f, 0.25f, 2.0f, NAN}, in_yf[NT] = {0.5f, -3.0f, 2.0f, 1.0f},
             in_pf[NT] = {0.5f, 2.0f, 10.0f, 1e-3f};
static double in_xd[NT] = {-1.5, 0.25, 2.0, NAN}, in_yd[NT] = {0.5, -3.0, 2.0, 1e10},
              in_pd[NT] = {0.5, 2.0, 10.0, 1e-3};
static int64_t in_xi[NT] = {-7, -6, 5, 7}, in_yi[NT] = {2, -4, 3, -2};
static int32_t in_xj[NT] = {-7, INT32_MAX, 5, INT32_MIN}, in_yj[NT] = {3, -3, 2, 7};
static uint8_t in_xb[NT] = {0, 1, 2, 0};

enum { NF = 30, ND = 20, NI = 19, NJ = 9, NB = 10 };

/* The buffers and loop index of the expression kernel while it is built. */
typedef struct expr_kernel {
    ir_buffer *xf, *yf, *pf, *xd, *yd, *pd, *xi, *yi, *xj, *yj, *xb, *of, *od, *oi, *oj, *ob;
    ir_var *t;
} expr_kernel;

static ir_expr *X(ir_buffer *b, ir_var *t) { return L1(b, V(t)); }

/* f32 case c as IR; ref_f32 computes the same in plain C. */
static ir_expr *case_f32(const expr_kernel *k, int c)
{
    ir_var *t = k->t;
    ir_expr *x = X(k->xf, t), *y = X(k->yf, t), *p = X(k->pf, t);
    switch (c) {
    case 0: return BIN(IR_ADD, x, y);
    case 1: return BIN(IR_SUB, x, y);
    case 2: return BIN(IR_MUL, x, y);
    case 3: return BIN(IR_DIV, x, y);
    case 4: return BIN(IR_MIN, x, y);
    case 5: return BIN(IR_MAX, x, y);
    case 6: return ir_unary(M, IR_NEG, x);
    case 7: return ir_select(M, BIN(IR_LT, x, y), x, BIN(IR_MUL, y, F32(2)));
    case 8: return CALL(IR_FN_EXP, x, NULL);
    case 9: return CALL(IR_FN_LOG, p, NULL);
    case 10: return CALL(IR_FN_SQRT, p, NULL);
    case 11: return CALL(IR_FN_RSQRT, p, NULL);
    case 12: return CALL(IR_FN_TANH, x, NULL);
    case 13: return CALL(IR_FN_ERF, x, NULL);
    case 14: return CALL(IR_FN_SIGMOID, x, NULL);
    case 15: return CALL(IR_FN_ABS, x, NULL);
    case 16: return CALL(IR_FN_FLOOR, x, NULL);
    case 17: return CALL(IR_FN_CEIL, x, NULL);
    case 18: return CALL(IR_FN_SIN, x, NULL);
    case 19: return CALL(IR_FN_COS, x, NULL);
    case 20: return CALL(IR_FN_POW, p, y);
    case 21: return ir_cast(M, X(k->xi, t), IR_F32);
    case 22: return ir_cast(M, X(k->yd, t), IR_F32);
    case 23: return BIN(IR_ADD, BIN(IR_MUL, x, F32(0.1)), F32(-1e-3));
    case 24: return BIN(IR_MIN, y, ir_float(M, INFINITY, IR_F32));
    case 25: return ir_select(M, BIN(IR_EQ, x, x), ir_float(M, -INFINITY, IR_F32),
                              ir_float(M, NAN, IR_F32));
    case 26: return ir_cast(M, BIN(IR_LT, x, y), IR_F32);
    case 27: return ir_cast(M, X(k->xb, t), IR_F32);
    case 28: return ir_unary(M, IR_NEG, F32(-2.5));
    default: return BIN(IR_ADD, BIN(IR_MUL, x, y), p);   /* no fma */
    }
}

static float ref_f32(int c, int t)
{
    float x = in_xf[t], y = in_yf[t], p = in_pf[t];
    switch (c) {
    case 0: return x + y;
    case 1: return x - y;
    case 2: return x * y;
    case 3: return x / y;
    case 4: return fminf(x, y);
    case 5: return fmaxf(x, y);
    case 6: return -x;
    case 7: return x < y ? x : y * 2.0f;
    case 8: return expf(x);
    case 9: return logf(p);
    case 10: return sqrtf(p);
    case 11: return 1.0f / sqrtf(p);
    case 12: return tanhf(x);
    case 13: return erff(x);
    case 14: return 1.0f / (1.0f + expf(-x));
    case 15: return fabsf(x);
    case 16: return floorf(x);
    case 17: return ceilf(x);
    case 18: return sinf(x);
    case 19: return cosf(x);
    case 20: return powf(p, y);
    case 21: return (float)in_xi[t];
    case 22: return (float)in_yd[t];
    case 23: return x * 0.1f + -1e-3f;
    case 24: return fminf(y, INFINITY);
    case 25: return x == x ? -INFINITY : NAN;
    case 26: return x < y ? 1.0f : 0.0f;
    case 27: return in_xb[t] ? 1.0f : 0.0f;
    case 28: return 2.5f;
    default: { float m = x * y; return m + p; }
    }
}

static ir_expr *case_f64(const expr_kernel *k, int c)
{
    ir_var *t = k->t;
    ir_expr *x = X(k->xd, t), *y = X(k->yd, t), *p = X(k->pd, t);
    switch (c) {
    case 0: return BIN(IR_ADD, x, y);
    case 1: return BIN(IR_DIV, x, y);
    case 2: return BIN(IR_MIN, x, y);
    case 3: return BIN(IR_MAX, x, y);
    case 4: return CALL(IR_FN_EXP, x, NULL);
    case 5: return CALL(IR_FN_LOG, p, NULL);
    case 6: return CALL(IR_FN_SQRT, p, NULL);
    case 7: return CALL(IR_FN_RSQRT, p, NULL);
    case 8: return CALL(IR_FN_TANH, x, NULL);
    case 9: return CALL(IR_FN_ERF, x, NULL);
    case 10: return CALL(IR_FN_SIGMOID, x, NULL);
    case 11: return CALL(IR_FN_ABS, x, NULL);
    case 12: return CALL(IR_FN_FLOOR, x, NULL);
    case 13: return CALL(IR_FN_CEIL, x, NULL);
    case 14: return CALL(IR_FN_SIN, x, NULL);
    case 15: return CALL(IR_FN_COS, x, NULL);
    case 16: return CALL(IR_FN_POW, p, y);
    case 17: return BIN(IR_MUL, x, ir_float(M, 0.1, IR_F64));
    case 18: return ir_cast(M, X(k->xj, t), IR_F64);
    default: return ir_cast(M, X(k->xf, t), IR_F64);
    }
}

static double ref_f64(int c, int t)
{
    double x = in_xd[t], y = in_yd[t], p = in_pd[t];
    switch (c) {
    case 0: return x + y;
    case 1: return x / y;
    case 2: return fmin(x, y);
    case 3: return fmax(x, y);
    case 4: return exp(x);
    case 5: return log(p);
    case 6: return sqrt(p);
    case 7: return 1.0 / sqrt(p);
    case 8: return tanh(x);
    case 9: return erf(x);
    case 10: return 1.0 / (1.0 + exp(-x));
    case 11: return fabs(x);
    case 12: return floor(x);
    case 13: return ceil(x);
    case 14: return sin(x);
    case 15: return cos(x);
    case 16: return pow(p, y);
    case 17: return x * 0.1;
    case 18: return (double)in_xj[t];
    default: return (double)in_xf[t];
    }
}

static ir_expr *case_i64(const expr_kernel *k, int c)
{
    ir_var *t = k->t;
    ir_expr *x = X(k->xi, t), *y = X(k->yi, t);
    switch (c) {
    case 0: return BIN(IR_ADD, x, y);
    case 1: return BIN(IR_SUB, x, y);
    case 2: return BIN(IR_MUL, x, y);
    case 3: return BIN(IR_FLOORDIV, x, I(3));
    case 4: return BIN(IR_FLOORMOD, x, I(3));
    case 5: return BIN(IR_FLOORDIV, x, I(-3));
    case 6: return BIN(IR_FLOORMOD, x, I(-3));
    case 7: return BIN(IR_FLOORDIV, x, y);   /* divisor not constant: checked */
    case 8: return BIN(IR_FLOORMOD, x, y);
    case 9: return BIN(IR_MIN, x, y);
    case 10: return BIN(IR_MAX, x, y);
    case 11: return ir_unary(M, IR_NEG, x);
    case 12: return CALL(IR_FN_ABS, x, NULL);
    case 13: return ir_select(M, BIN(IR_GT, x, I(0)), x, I(INT64_MIN));
    case 14: return ir_cast(M, X(k->yd, t), IR_I64);   /* checked, in range */
    case 15: return BIN(IR_ADD, x, I(INT64_MAX));      /* wraps */
    case 16: return ir_cast(M, X(k->xj, t), IR_I64);
    case 17: return ir_unary(M, IR_NEG, BIN(IR_ADD, I(INT64_MAX), I(1)));  /* constant, wraps */
    default: return BIN(IR_SUB, I(-5), ir_unary(M, IR_NEG, x));
    }
}

static int64_t wrap64(uint64_t v) { return (int64_t)v; }

static int64_t fdiv(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}
static int64_t fmod64(int64_t a, int64_t b) { return a - b * fdiv(a, b); }

static int64_t ref_i64(int c, int t)
{
    int64_t x = in_xi[t], y = in_yi[t];
    switch (c) {
    case 0: return x + y;
    case 1: return x - y;
    case 2: return x * y;
    case 3: return fdiv(x, 3);
    case 4: return fmod64(x, 3);
    case 5: return fdiv(x, -3);
    case 6: return fmod64(x, -3);
    case 7: return fdiv(x, y);
    case 8: return fmod64(x, y);
    case 9: return x < y ? x : y;
    case 10: return x > y ? x : y;
    case 11: return -x;
    case 12: return x < 0 ? -x : x;
    case 13: return x > 0 ? x : INT64_MIN;
    case 14: return (int64_t)trunc(in_yd[t]);
    case 15: return wrap64((uint64_t)x + (uint64_t)INT64_MAX);
    case 16: return in_xj[t];
    case 17: return INT64_MIN;
    default: return -5 + x;
    }
}

static ir_expr *case_i32(const expr_kernel *k, int c)
{
    ir_var *t = k->t;
    ir_expr *x = X(k->xj, t), *y = X(k->yj, t);
    switch (c) {
    case 0: return BIN(IR_ADD, x, ir_int_typed(M, 1, IR_I32));   /* INT32_MAX + 1 wraps */
    case 1: return BIN(IR_MUL, x, y);
    case 2: return BIN(IR_FLOORDIV, x, ir_int_typed(M, 3, IR_I32));
    case 3: return BIN(IR_FLOORMOD, x, ir_int_typed(M, -3, IR_I32));
    case 4: return BIN(IR_FLOORDIV, x, y);
    case 5: return CALL(IR_FN_ABS, x, NULL);
    case 6: return ir_cast(M, X(k->xi, t), IR_I32);
    case 7: return ir_cast(M, X(k->yf, t), IR_I32);
    default: return ir_unary(M, IR_NEG, x);
    }
}

static int32_t wrap32(int64_t v) { return (int32_t)(uint32_t)(uint64_t)v; }

static int32_t ref_i32(int c, int t)
{
    int64_t x = in_xj[t], y = in_yj[t];
    switch (c) {
    case 0: return wrap32(x + 1);
    case 1: return wrap32(x * y);
    case 2: return wrap32(fdiv(x, 3));
    case 3: return wrap32(fmod64(x, -3));
    case 4: return wrap32(fdiv(x, y));
    case 5: return wrap32(x < 0 ? -x : x);
    case 6: return wrap32(in_xi[t]);
    case 7: return (int32_t)in_yf[t];
    default: return wrap32(-x);
    }
}

static ir_expr *case_bool(const expr_kernel *k, int c)
{
    ir_var *t = k->t;
    ir_expr *x = X(k->xf, t), *y = X(k->yf, t), *b = X(k->xb, t);
    switch (c) {
    case 0: return BIN(IR_EQ, x, y);
    case 1: return BIN(IR_NE, x, y);
    case 2: return BIN(IR_LT, x, y);
    case 3: return BIN(IR_LE, x, y);
    case 4: return BIN(IR_GT, x, y);
    case 5: return BIN(IR_GE, x, y);
    case 6: return BIN(IR_OR, BIN(IR_AND, b, BIN(IR_GT, x, F32(0))), ir_unary(M, IR_NOT, b));
    case 7: return BIN(IR_EQ, ir_unary(M, IR_NOT, b), BIN(IR_LT, x, y));
    case 8: return ir_cast(M, y, IR_BOOL);
    default: return ir_cast(M, X(k->xi, t), IR_BOOL);
    }
}

static uint8_t ref_bool(int c, int t)
{
    float x = in_xf[t], y = in_yf[t];
    bool b = in_xb[t] != 0;
    switch (c) {
    case 0: return x == y;
    case 1: return x != y;
    case 2: return x < y;
    case 3: return x <= y;
    case 4: return x > y;
    case 5: return x >= y;
    case 6: return (b && x > 0) || !b;
    case 7: return (!b) == (x < y);
    case 8: return y != 0;
    default: return in_xi[t] != 0;
    }
}

static ir_func *build_exprs(void)
{
    ir_func *f = ir_func_new(M, "exprs");
    int64_t n[1] = {NT};
    expr_kernel k;
    k.xf = ARG(f, "xf", IR_F32, 1, n);
    k.yf = ARG(f, "yf", IR_F32, 1, n);
    k.pf = ARG(f, "pf", IR_F32, 1, n);
    k.xd = ARG(f, "xd", IR_F64, 1, n);
    k.yd = ARG(f, "yd", IR_F64, 1, n);
    k.pd = ARG(f, "pd", IR_F64, 1, n);
    k.xi = ARG(f, "xi", IR_I64, 1, n);
    k.yi = ARG(f, "yi", IR_I64, 1, n);
    k.xj = ARG(f, "xj", IR_I32, 1, n);
    k.yj = ARG(f, "yj", IR_I32, 1, n);
    k.xb = ARG(f, "xb", IR_BOOL, 1, n);
    int64_t s[5][2] = {{NF, NT}, {ND, NT}, {NI, NT}, {NJ, NT}, {NB, NT}};
    k.of = ARG(f, "of", IR_F32, 2, s[0]);
    k.od = ARG(f, "od", IR_F64, 2, s[1]);
    k.oi = ARG(f, "oi", IR_I64, 2, s[2]);
    k.oj = ARG(f, "oj", IR_I32, 2, s[3]);
    k.ob = ARG(f, "ob", IR_BOOL, 2, s[4]);
    k.t = VAR("t");
    ir_stmt *seq = ir_seq_new(M);
    for (int c = 0; c < NF; c++)
        ir_seq_append(M, seq, S2(k.of, I(c), V(k.t), case_f32(&k, c)));
    for (int c = 0; c < ND; c++)
        ir_seq_append(M, seq, S2(k.od, I(c), V(k.t), case_f64(&k, c)));
    for (int c = 0; c < NI; c++)
        ir_seq_append(M, seq, S2(k.oi, I(c), V(k.t), case_i64(&k, c)));
    for (int c = 0; c < NJ; c++)
        ir_seq_append(M, seq, S2(k.oj, I(c), V(k.t), case_i32(&k, c)));
    for (int c = 0; c < NB; c++)
        ir_seq_append(M, seq, S2(k.ob, I(c), V(k.t), case_bool(&k, c)));
    f->body = FOR(k.t, 0, NT, IR_FOR_SERIAL, seq);
    return f;
}

/* Row softmax through temporaries: a small stack one (row max), a global
 * one (exponentials) and a stack one too large for the stack (row sums,
 * padded to 5000 floats) that must go to the heap. */
static ir_func *build_softmax(void)
{
    int64_t sx[2] = {3, 8}, sm[1] = {3}, sbig[1] = {5000};
    ir_func *f = ir_func_new(M, "softmax");
    ir_buffer *x = ARG(f, "x", IR_F32, 2, sx), *y = ARG(f, "y", IR_F32, 2, sx);
    ir_buffer *m = LOCAL("m", IR_F32, 1, sm, IR_SCOPE_STACK);
    ir_buffer *e = LOCAL("e", IR_F32, 2, sx, IR_SCOPE_GLOBAL);
    ir_buffer *s = LOCAL("s", IR_F32, 1, sbig, IR_SCOPE_STACK);
    ir_var *r = VAR("r"), *j = VAR("j"), *vr = VAR("vr"), *vj = VAR("vj");
    ir_stmt *seq = ir_seq_new(M);
    {   /* m[r] = max_j x[r, j] */
        ir_itervar it[2] = {{vr, IR_ITER_SPATIAL, 3, V(r)}, {vj, IR_ITER_REDUCE, 8, V(j)}};
        ir_stmt *b = ir_block(M, "rowmax", it, 2, S1(m, V(vr), ir_float(M, -INFINITY, IR_F32)),
                              S1(m, V(vr), BIN(IR_MAX, L1(m, V(vr)), L2(x, V(vr), V(vj)))));
        ir_seq_append(M, seq, FOR(r, 0, 3, IR_FOR_SERIAL, FOR(j, 0, 8, IR_FOR_SERIAL, b)));
    }
    ir_var *r2 = VAR("r"), *j2 = VAR("j");
    ir_seq_append(M, seq, FOR(r2, 0, 3, IR_FOR_SERIAL, FOR(j2, 0, 8, IR_FOR_SERIAL,
        S2(e, V(r2), V(j2), CALL(IR_FN_EXP, BIN(IR_SUB, L2(x, V(r2), V(j2)), L1(m, V(r2))), NULL)))));
    ir_var *r3 = VAR("r"), *j3 = VAR("j");
    ir_seq_append(M, seq, FOR(r3, 0, 3, IR_FOR_SERIAL, FOR(j3, 0, 8, IR_FOR_SERIAL,
        S1(s, V(r3), BIN(IR_ADD, L1(s, V(r3)), L2(e, V(r3), V(j3)))))));
    ir_var *r4 = VAR("r"), *j4 = VAR("j");
    ir_seq_append(M, seq, FOR(r4, 0, 3, IR_FOR_SERIAL, FOR(j4, 0, 8, IR_FOR_SERIAL,
        S2(y, V(r4), V(j4), BIN(IR_DIV, L2(e, V(r4), V(j4)), L1(s, V(r4)))))));
    f->body = ir_alloc_stmt(M, m, ir_alloc_stmt(M, e, ir_alloc_stmt(M, s, seq)));
    return f;
}

/* Two asserts on n[0], then let/if: out[0] = n*2 > 5 ? n*2 : -(n*2); and a
 * stack temporary that is written but never read. */
static ir_func *build_checks(void)
{
    int64_t one[1] = {1};
    ir_func *f = ir_func_new(M, "checks");
    ir_buffer *n = ARG(f, "n", IR_I64, 1, one), *out = ARG(f, "out", IR_I64, 1, one);
    ir_buffer *scratch = LOCAL("scratch", IR_F32, 1, one, IR_SCOPE_STACK);
    ir_var *a = VAR("a");
    ir_stmt *seq = ir_seq_new(M);
    ir_seq_append(M, seq, ir_assert(M, BIN(IR_GE, L1(n, I(0)), I(0)), "n must be >= 0"));
    ir_seq_append(M, seq, ir_assert(M, BIN(IR_LT, L1(n, I(0)), I(10)), "n must be < 10 */ ok"));
    ir_seq_append(M, seq, ir_let(M, a, BIN(IR_MUL, L1(n, I(0)), I(2)),
                                 ir_if(M, BIN(IR_GT, V(a), I(5)), S1(out, I(0), V(a)),
                                       S1(out, I(0), ir_unary(M, IR_NEG, V(a))))));
    ir_seq_append(M, seq, ir_alloc_stmt(M, scratch, S1(scratch, I(0), F32(1))));
    f->body = seq;
    return f;
}

/* out[t] = floordiv(x[t], y[t]) through a heap temporary; y holds a 0. */
static ir_func *build_divzero(void)
{
    int64_t n[1] = {NT}, big[1] = {100000};
    ir_func *f = ir_func_new(M, "divzero");
    ir_buffer *x = ARG(f, "x", IR_I64, 1, n), *y = ARG(f, "y", IR_I64, 1, n),
              *out = ARG(f, "out", IR_I64, 1, n);
    ir_buffer *tmp = LOCAL("tmp", IR_I64, 1, big, IR_SCOPE_GLOBAL);
    ir_var *t = VAR("t");
    ir_stmt *seq = ir_seq_new(M);
    ir_seq_append(M, seq, S1(tmp, V(t), BIN(IR_FLOORDIV, L1(x, V(t)), L1(y, V(t)))));
    ir_seq_append(M, seq, S1(out, V(t), L1(tmp, V(t))));
    f->body = ir_alloc_stmt(M, tmp, FOR(t, 0, NT, IR_FOR_SERIAL, seq));
    return f;
}

/* out[t] = (i32) x[t]: 3e9 has no i32. */
static ir_func *build_badcast(void)
{
    int64_t n[1] = {2};
    ir_func *f = ir_func_new(M, "badcast");
    ir_buffer *x = ARG(f, "x", IR_F32, 1, n), *out = ARG(f, "out", IR_I32, 1, n);
    ir_var *t = VAR("t");
    f->body = FOR(t, 0, 2, IR_FOR_SERIAL, S1(out, V(t), ir_cast(M, L1(x, V(t)), IR_I32)));
    return f;
}

/* Profiling hooks: enter(7); for t < 3: count(2, t); exit(7). */
static ir_func *build_hooks(void)
{
    ir_func *f = ir_func_new(M, "hooks");
    ir_var *t = VAR("t");
    ir_stmt *seq = ir_seq_new(M);
    ir_seq_append(M, seq, ir_eval(M, CALL(IR_FN_PROF_ENTER, I(7), NULL)));
    ir_seq_append(M, seq, FOR(t, 0, 3, IR_FOR_SERIAL,
                              ir_eval(M, CALL(IR_FN_PROF_COUNT, I(2), V(t)))));
    ir_seq_append(M, seq, ir_eval(M, CALL(IR_FN_PROF_EXIT, I(7), NULL)));
    f->body = seq;
    return f;
}

/* Names C would choke on (a keyword, header macros, '.', a typedef, the
 * generated code's own prefix), a 0-d buffer, an unused parameter, two
 * nested loops whose variables are both called "i", a loop bound read from
 * memory, and an unused block iteration variable. */
static ir_func *build_names(void)
{
    int64_t n[1] = {4}, nn[2] = {4, 4};
    ir_func *f = ir_func_new(M, "weird names!");
    ir_buffer *w = ARG(f, "layer1.0.conv1.weight", IR_F32, 1, n);
    ir_buffer *nan_ = ARG(f, "NAN", IR_F32, 1, n);
    ir_buffer *lin = ARG(f, "linux", IR_F32, 1, n);
    ir_buffer *kw = ARG(f, "int", IR_F32, 1, n);
    ir_buffer *ty = ARG(f, "int64_t", IR_I64, 1, n);
    ir_buffer *tec = ARG(f, "tec_heap", IR_F32, 1, n);
    ir_buffer *sc = ARG(f, "scalar", IR_F32, 0, NULL);
    ARG(f, "unused", IR_F32, 1, n);
    ir_buffer *out = ARG(f, "out", IR_F32, 2, nn);
    ir_var *i1 = VAR("i"), *i2 = VAR("i"), *v = ir_var_new(M, "float", IR_I64);
    ir_var *bi = VAR("INT64_MAX"), *bj = VAR("bj");
    ir_expr *sum = BIN(IR_ADD, BIN(IR_ADD, L1(w, V(i1)), L1(nan_, V(i2))),
                       BIN(IR_ADD, L1(lin, V(i1)), BIN(IR_MUL, L1(kw, V(i2)), L1(tec, V(bi)))));
    sum = BIN(IR_ADD, sum, ir_load(M, sc, NULL, 0));
    ir_itervar it[2] = {{bi, IR_ITER_SPATIAL, 4, V(i1)}, {bj, IR_ITER_SPATIAL, 4, V(i2)}};
    ir_stmt *blk = ir_block(M, "b", it, 2, NULL,
                            ir_let(M, v, BIN(IR_ADD, V(i2), I(0)), S2(out, V(i1), V(v), sum)));
    ir_expr *hi = L1(ty, I(0));   /* the inner bound is read from memory */
    f->body = FOR(i1, 0, 4, IR_FOR_SERIAL, ir_for(M, i2, I(0), hi, IR_FOR_UNROLLED, blk));
    return f;
}

/* ---------------------------------------------------------------- running */

static void run_kernels(cg_library *lib)
{
    char err[256];

    {   /* matmul */
        float A[30], B[35], C[42], Ci[42];
        for (int i = 0; i < 30; i++)
            A[i] = (float)(i % 7) * 0.37f - 1.0f;
        for (int i = 0; i < 35; i++)
            B[i] = (float)(i % 5) * -0.61f + 0.5f;
        for (int i = 0; i < 42; i++)
            C[i] = Ci[i] = 99.0f;  /* the init must overwrite this */
        void *d[3] = {A, B, C}, *di[3] = {A, B, Ci};
        bool ok = cg_call(lib, 0, d, err, sizeof err);
        check(ok, "matmul runs%s%s", ok ? "" : ": ", ok ? "" : err);
        bool same = true, interp_same = ir_interp_func(M->funcs[0], di, err, sizeof err);
        for (int i = 0; i < 6; i++)
            for (int j = 0; j < 7; j++) {
                float acc = 0;
                for (int k = 0; k < 5; k++)
                    acc = acc + A[i * 5 + k] * B[k * 7 + j];
                same &= same_f32(C[i * 7 + j], acc);
                interp_same &= same_f32(C[i * 7 + j], Ci[i * 7 + j]);
            }
        check(same, "matmul == plain C, bit for bit");
        check(interp_same, "matmul == interpreter, bit for bit");
    }
    {   /* padded conv */
        float x[50], w[54], y[75], yi[75];
        for (int i = 0; i < 50; i++)
            x[i] = (float)((i * 7) % 11) * 0.25f - 1.0f;
        for (int i = 0; i < 54; i++)
            w[i] = (float)((i * 5) % 9) * 0.125f - 0.5f;
        void *d[3] = {x, w, y}, *di[3] = {x, w, yi};
        bool ok = cg_call(lib, 1, d, err, sizeof err);
        check(ok, "conv runs");
        bool same = true, interp_same = ir_interp_func(M->funcs[1], di, err, sizeof err);
        for (int f = 0; f < 3; f++)
            for (int p = 0; p < 5; p++)
                for (int q = 0; q < 5; q++) {
                    float acc = 0;
                    for (int c = 0; c < 2; c++)
                        for (int r = 0; r < 3; r++)
                            for (int s = 0; s < 3; s++) {
                                int h = p + r - 1, ww = q + s - 1;
                                float xv = h >= 0 && h < 5 && ww >= 0 && ww < 5
                                               ? x[(c * 5 + h) * 5 + ww] : 0.0f;
                                acc = acc + xv * w[((f * 2 + c) * 3 + r) * 3 + s];
                            }
                    int o = (f * 5 + p) * 5 + q;
                    same &= same_f32(y[o], acc);
                    interp_same &= same_f32(y[o], yi[o]);
                }
        check(same, "padded conv == plain C, bit for bit");
        check(interp_same, "padded conv == interpreter, bit for bit");
    }
    {   /* every expression kind and intrinsic */
        float of[NF * NT], ofi[NF * NT];
        double od[ND * NT], odi[ND * NT];
        int64_t oi[NI * NT], oii[NI * NT];
        int32_t oj[NJ * NT], oji[NJ * NT];
        uint8_t ob[NB * NT], obi[NB * NT];
        void *d[16] = {in_xf, in_yf, in_pf, in_xd, in_yd, in_pd, in_xi, in_yi, in_xj, in_yj,
                       in_xb, of, od, oi, oj, ob};
        void *di[16] = {in_xf, in_yf, in_pf, in_xd, in_yd, in_pd, in_xi, in_yi, in_xj, in_yj,
                        in_xb, ofi, odi, oii, oji, obi};
        bool ok = cg_call(lib, 2, d, err, sizeof err);
        check(ok, "expression kernel runs%s%s", ok ? "" : ": ", ok ? "" : err);
        bool iok = ir_interp_func(M->funcs[2], di, err, sizeof err);
        check(iok, "interpreter runs the expression kernel%s%s", iok ? "" : ": ", iok ? "" : err);
        int bad = 0, ibad = 0;
        for (int t = 0; t < NT; t++) {
            for (int c = 0; c < NF; c++) {
                if (!same_f32(of[c * NT + t], ref_f32(c, t)))
                    bad++, printf("  f32 case %d, t=%d: %a, expected %a\n", c, t, of[c * NT + t], ref_f32(c, t));
                ibad += !same_f32(of[c * NT + t], ofi[c * NT + t]);
            }
            for (int c = 0; c < ND; c++) {
                if (!same_f64(od[c * NT + t], ref_f64(c, t)))
                    bad++, printf("  f64 case %d, t=%d: %a, expected %a\n", c, t, od[c * NT + t], ref_f64(c, t));
                ibad += !same_f64(od[c * NT + t], odi[c * NT + t]);
            }
            for (int c = 0; c < NI; c++) {
                if (oi[c * NT + t] != ref_i64(c, t))
                    bad++, printf("  i64 case %d, t=%d: %lld, expected %lld\n", c, t,
                                  (long long)oi[c * NT + t], (long long)ref_i64(c, t));
                ibad += oi[c * NT + t] != oii[c * NT + t];
            }
            for (int c = 0; c < NJ; c++) {
                if (oj[c * NT + t] != ref_i32(c, t))
                    bad++, printf("  i32 case %d, t=%d: %d, expected %d\n", c, t, oj[c * NT + t],
                                  ref_i32(c, t));
                ibad += oj[c * NT + t] != oji[c * NT + t];
            }
            for (int c = 0; c < NB; c++) {
                if (ob[c * NT + t] != ref_bool(c, t))
                    bad++, printf("  bool case %d, t=%d: %d, expected %d\n", c, t, ob[c * NT + t],
                                  ref_bool(c, t));
                ibad += ob[c * NT + t] != obi[c * NT + t];
            }
        }
        check(bad == 0, "%d expression results == plain C (%d differ)",
              (NF + ND + NI + NJ + NB) * NT, bad);
        check(iok && ibad == 0, "expression results == interpreter (%d differ)", ibad);
    }
    {   /* temporaries */
        float x[24], y[24], yi[24];
        for (int i = 0; i < 24; i++)
            x[i] = (float)((i * 5) % 13) * 0.3f - 2.0f;
        void *d[2] = {x, y}, *di[2] = {x, yi};
        bool ok = cg_call(lib, 3, d, err, sizeof err);
        check(ok, "softmax with stack, global and large temporaries runs");
        bool same = true, interp_same = ir_interp_func(M->funcs[3], di, err, sizeof err);
        for (int r = 0; r < 3; r++) {
            float m = -INFINITY, s = 0, e[8];
            for (int j = 0; j < 8; j++)
                m = fmaxf(m, x[r * 8 + j]);
            for (int j = 0; j < 8; j++)
                e[j] = expf(x[r * 8 + j] - m);
            for (int j = 0; j < 8; j++)
                s = s + e[j];
            for (int j = 0; j < 8; j++) {
                same &= same_f32(y[r * 8 + j], e[j] / s);
                interp_same &= same_f32(y[r * 8 + j], yi[r * 8 + j]);
            }
        }
        check(same, "softmax == plain C, bit for bit");
        check(interp_same, "softmax == interpreter, bit for bit");
    }
    {   /* asserts, let, if */
        int64_t n = 3, out = 0;
        void *d[2] = {&n, &out};
        bool ok = cg_call(lib, 4, d, err, sizeof err);
        check(ok && out == 6, "let/if: n=3 gives 6 (got %lld)", (long long)out);
        n = 2;
        ok = cg_call(lib, 4, d, err, sizeof err);
        check(ok && out == -4, "let/else: n=2 gives -4 (got %lld)", (long long)out);
        n = 12;
        ok = cg_call(lib, 4, d, err, sizeof err);
        check(!ok && strcmp(err, "in @checks: assert failed: n must be < 10 */ ok") == 0,
              "second assert fails with its message: '%s'", ok ? "(none)" : err);
        n = -1;
        ok = cg_call(lib, 4, d, err, sizeof err);
        check(!ok && strcmp(err, "in @checks: assert failed: n must be >= 0") == 0,
              "first assert fails with its message: '%s'", ok ? "(none)" : err);
        char ierr[256];
        bool iok = ir_interp_func(M->funcs[4], d, ierr, sizeof ierr);
        check(!iok && strcmp(ierr, err) == 0, "interpreter gives the same message: '%s'", ierr);
        check(strcmp(cg_assert_message(M->funcs[4], 2), "n must be < 10 */ ok") == 0 &&
              cg_assert_message(M->funcs[4], 3) == NULL && cg_assert_count(M->funcs[4]) == 2,
              "cg_assert_message numbers the asserts from 1");
    }
    {   /* division by zero, with a heap temporary to free */
        int64_t x[NT] = {7, -7, 9, 1}, y[NT] = {2, 2, 0, 1}, out[NT];
        void *d[3] = {x, y, out};
        bool ok = cg_call(lib, 5, d, err, sizeof err);
        check(!ok && strcmp(err, "in @divzero: integer division by zero") == 0,
              "floordiv by zero stops the kernel: '%s'", ok ? "(none)" : err);
        y[2] = -2;
        ok = cg_call(lib, 5, d, err, sizeof err);
        check(ok && out[0] == 3 && out[1] == -4 && out[2] == -5 && out[3] == 1,
              "floordiv with nonzero divisors: %lld %lld %lld %lld", (long long)out[0],
              (long long)out[1], (long long)out[2], (long long)out[3]);
    }
    {   /* float -> int out of range */
        float x[2] = {1.9f, 3e9f};
        int32_t out[2];
        void *d[2] = {x, out};
        bool ok = cg_call(lib, 6, d, err, sizeof err);
        check(!ok && strcmp(err, "in @badcast: cast of 3e+09 to i32 is out of range") == 0,
              "cast of 3e9 to i32 stops the kernel: '%s'", ok ? "(none)" : err);
        x[1] = -2.9f;
        ok = cg_call(lib, 6, d, err, sizeof err);
        check(ok && out[0] == 1 && out[1] == -2, "cast truncates toward zero: %d %d", out[0], out[1]);
    }
    {   /* runtime hooks */
        hook_enter_sum = hook_exit_sum = hook_count_sum = hook_calls = 0;
        bool ok = cg_call(lib, 7, NULL, err, sizeof err);
        check(ok && hook_calls == 5 && hook_enter_sum == 7 && hook_exit_sum == 7 &&
              hook_count_sum == 3 * 2000 + 0 + 1 + 2,
              "profiling hooks are called from the kernel (%lld calls)", (long long)hook_calls);
    }
    {   /* names */
        float w[4] = {1, 2, 3, 4}, nan_[4] = {10, 20, 30, 40}, lin[4] = {100, 200, 300, 400},
              kw[4] = {1, 0, -1, 2}, tec[4] = {0.5f, 1, 2, 4}, sc = 1000, unused[4] = {0},
              out[16], outi[16];
        int64_t ty[4] = {3, 0, 0, 0};
        for (int i = 0; i < 16; i++)
            out[i] = outi[i] = -1;
        void *d[9] = {w, nan_, lin, kw, ty, tec, &sc, unused, out};
        void *di[9] = {w, nan_, lin, kw, ty, tec, &sc, unused, outi};
        bool ok = cg_call(lib, 8, d, err, sizeof err);
        bool iok = ir_interp_func(M->funcs[8], di, err, sizeof err);
        bool same = ok && iok;
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 4; j++) {
                float want = j < 3 ? w[i] + nan_[j] + (lin[i] + kw[j] * tec[i]) + sc : -1.0f;
                same &= same_f32(out[i * 4 + j], want) && same_f32(outi[i * 4 + j], want);
            }
        check(same, "awkward names, 0-d buffer, shadowed loop names, bound from memory");
    }
}

/* ---------------------------------------------------------------- emitted text */

static void test_text(const char *src)
{
    static const char *const want[] = {
        "int32_t tec_k0_matmul(const float *restrict A, const float *restrict B, float *restrict C)",
        " *   layer: layer1.0.conv1",
        " *   loc: t.te:3:5",
        "#pragma omp parallel num_threads(tec_num_threads)",
        "while (tec_loop_take(&tec_shares, tec_t, tec_team, &tec_first, &tec_end))",
        "int tec_num_threads = 1;",
        "/* unrolled: r in 0..3 */",
        "#define TEC_IVDEP _Pragma(\"GCC ivdep\")",
        "TEC_IVDEP   /* vectorized",
        "#pragma GCC unroll 8",
        "if (vk == 0) {",
        "layer1_0_conv1_weight",
        "int32_t tec_k1_layer1_0_conv1(",
        "INT64_C(",
        "extern void tec_prof_enter(int64_t);",
        "n must be < 10 * / ok",
        "0.1f",
        "INFINITY",
        "NAN_",
        "linux_",
        "int_",
        "int64_t_",
        "tec_heap_",
        "float_",
        "for (int64_t i_1 = 0, tec_end_i_1 = int64_t_[0]; i_1 < tec_end_i_1; ++i_1) {",
        "(void)unused;",
        "calloc(5000, sizeof *s)",
        "float m[3] = {0};",
    };
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
        check(strstr(src, want[i]) != NULL, "emitted C contains \"%.60s\"", want[i]);
}

static void test_symbols(void)
{
    char *s0 = cg_symbol_name(M, 0), *s1 = cg_symbol_name(M, 1), *s8 = cg_symbol_name(M, 8);
    check(s0 && strcmp(s0, "tec_k0_matmul") == 0, "symbol of matmul is %s", s0 ? s0 : "NULL");
    check(s1 && strcmp(s1, "tec_k1_layer1_0_conv1") == 0, "symbol of layer1.0.conv1 is %s",
          s1 ? s1 : "NULL");
    check(s8 && strcmp(s8, "tec_k8_weird_names_") == 0, "symbol of 'weird names!' is %s",
          s8 ? s8 : "NULL");
    free(s0);
    free(s1);
    free(s8);
}

/* ---------------------------------------------------------------- diagnostics */

/* A diag whose output is collected in memory. */
typedef struct captured {
    diag d;
    char *text;
    size_t len;
} captured;

static void cap_init(captured *c)
{
    c->text = NULL;
    c->len = 0;
    diag_init(&c->d, open_memstream(&c->text, &c->len));
}

/* Closes the stream; c->text holds everything reported. */
static void cap_done(captured *c)
{
    fclose(c->d.out);
    diag_fini(&c->d);
}

/* The first line of a captured report, for the check's own line. */
static const char *oneline(const char *text)
{
    static char buf[512];
    snprintf(buf, sizeof buf, "%.*s", text ? (int)strcspn(text, "\n") : 12,
             text ? text : "(no message)");
    return buf;
}

static void test_emit_errors(void)
{
    ir_module *saved = M;
    int64_t n[1] = {4};
    M = ir_module_new("bad2");
    ir_func *f = ir_func_new(M, "free_var");
    ir_buffer *o = ARG(f, "o", IR_I64, 1, n);
    f->body = S1(o, I(0), V(VAR("ghost")));
    captured c;
    cap_init(&c);
    char *src = cg_emit_c(M, NULL, false, &c.d);
    cap_done(&c);
    check(!src && c.text && strcmp(c.text, "tec: internal error: codegen: in @free_var: variable "
                                           "'ghost' is used outside its binding\n") == 0,
          "unbound variable: %s", oneline(c.text));
    free(src);
    free(c.text);
    ir_module_free(M);
    M = saved;
}

/* ---------------------------------------------------------------- compiler and cache */

static char tmproot[256];

/* tmproot/name; the 16 most recent results stay valid. */
static char *tpath(const char *name)
{
    static char buf[16][512];
    static int k;
    char *p = buf[k++ % 16];
    snprintf(p, 512, "%s/%s", tmproot, name);
    return p;
}

static int count_lines_with(const char *path, const char *needle)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    char line[8192];
    int n = 0;
    while (fgets(line, sizeof line, f))
        n += strstr(line, needle) != NULL;
    fclose(f);
    return n;
}

static int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

static const char *tiny_source =
    "#include <stdint.h>\nint32_t tec_k0_f(void) { return 0; }\n";

static void test_cache(void)
{
    /* A compiler wrapper that logs each run, so cache hits are observed
     * without timing: a hit does not run the compiler. */
    char log[512], wrapper[512];
    snprintf(log, sizeof log, "%s", tpath("cc.log"));
    snprintf(wrapper, sizeof wrapper, "%s", tpath("logcc"));
    FILE *w = fopen(wrapper, "w");
    fprintf(w, "#!/bin/sh\necho \"$*\" >> '%s'\nexec cc \"$@\"\n", log);
    fclose(w);
    chmod(wrapper, 0755);

    setenv("XDG_CACHE_HOME", tpath("xdg"), 1);
    cg_options o = {.cc = wrapper, .opt_flags = "-O1"};
    captured c;
    cap_init(&c);
    char *dir = cg_cache_dir(&o, &c.d);
    check(dir && strcmp(dir, tpath("xdg/tec")) == 0, "cache dir is $XDG_CACHE_HOME/tec: %s",
          dir ? dir : "NULL");

    char *p1 = cg_compile(tiny_source, &o, &c.d);
    struct stat st1 = {0}, st2 = {0}, sd = {0};
    check(p1 && stat(p1, &st1) == 0, "first compile creates the cache entry");
    bool have_dir = dir && stat(dir, &sd) == 0;
    check(have_dir && (sd.st_mode & 0777) == 0700, "cache dir has mode 0700 (%o)",
          (unsigned)(sd.st_mode & 0777));
    int runs1 = count_lines_with(log, "-shared");
    int versions1 = count_lines_with(log, "--version");
    char *p2 = cg_compile(tiny_source, &o, &c.d);
    /* a hit marks the entry used (its mtime: codegen/cache.h) */
    check(p1 && p2 && strcmp(p1, p2) == 0 && stat(p2, &st2) == 0 && st1.st_ino == st2.st_ino &&
          st1.st_size == st2.st_size &&
          (st2.st_mtim.tv_sec > st1.st_mtim.tv_sec ||
           (st2.st_mtim.tv_sec == st1.st_mtim.tv_sec && st2.st_mtim.tv_nsec >= st1.st_mtim.tv_nsec)),
          "second compile of the same source is the same file (inode and size unchanged, "
          "marked used)");
    check(runs1 == 1 && count_lines_with(log, "-shared") == 1,
          "second compile is a cache hit: the compiler ran once");
    check(versions1 == 1 && count_lines_with(log, "--version") == 1,
          "compiler identity is computed once per process");
    const char *base = p1 ? strrchr(p1, '/') + 1 : "";
    check(strlen(base) == 67 && strcmp(base + 64, ".so") == 0, "entry is <sha256>.so: %s", base);
    int nent = count_entries(dir);
    check(nent == 1, "no temporary files are left in the cache (%d entries)", nent);

    o.opt_flags = "-O2";
    char *p3 = cg_compile(tiny_source, &o, &c.d);
    check(p3 && p1 && strcmp(p1, p3) != 0, "different flags give a different key");
    o.opt_flags = "-O1";
    char *p4 = cg_compile("#include <stdint.h>\nint32_t tec_k0_f(void) { return 1; }\n", &o, &c.d);
    check(p4 && p1 && strcmp(p1, p4) != 0, "different source gives a different key");

    /* A damaged entry is not used: it is rebuilt. */
    if (p1) {
        FILE *bad = fopen(p1, "w");
        fputs("not an ELF file", bad);
        fclose(bad);
    }
    char *p5 = cg_compile(tiny_source, &o, &c.d);
    cg_library *lib = NULL;
    ir_module *m = ir_module_new("tiny");
    ir_func_new(m, "f");
    if (p5)
        lib = cg_load(p5, m, &c.d);
    char err[128];
    int runs5 = count_lines_with(log, "-shared");
    check(p5 && runs5 == 4 && lib && cg_call(lib, 0, NULL, err, sizeof err),
          "a damaged cache entry is rebuilt and loads (%d compiler runs)", runs5);
    cg_unload(lib);
    cap_done(&c);
    check(c.len == 0, "no diagnostics from the cache runs%s%s", c.len ? ": " : "", c.len ? c.text : "");
    free(c.text);
    free(p1);
    free(p2);
    free(p3);
    free(p4);
    free(p5);

    /* Verbose mode prints the command line. */
    cap_init(&c);
    o.verbose = true;
    o.opt_flags = "-O0 -DVERBOSE_TEST";
    char *pv = cg_compile(tiny_source, &o, &c.d);
    o.verbose = false;
    cap_done(&c);
    check(pv && c.text && strstr(c.text, "tec: running: ") && strstr(c.text, " -ffp-contract=off ") &&
          strstr(c.text, " -O0 -DVERBOSE_TEST "), "verbose prints the compiler command line");
    free(pv);
    free(c.text);

    /* A cache directory others can write to is refused. */
    mkdir(tpath("open"), 0777);
    chmod(tpath("open"), 0777);
    cg_options oo = {.opt_flags = "-O1", .cache_dir = tpath("open")};
    cap_init(&c);
    char *pr = cg_compile(tiny_source, &oo, &c.d);
    cap_done(&c);
    check(!pr && c.text && strstr(c.text, "tec: error: refusing to use the kernel cache directory ") &&
          strstr(c.text, "writable by group or others (mode 0777)"),
          "group/world-writable cache dir is refused");
    free(pr);
    free(c.text);

    if (geteuid() == 0) {
        /* Only root can give a directory away; check the owner rule then. */
        mkdir(tpath("theirs"), 0700);
        if (chown(tpath("theirs"), 65534, 65534) == 0) {
            oo.cache_dir = tpath("theirs");
            cap_init(&c);
            pr = cg_compile(tiny_source, &oo, &c.d);
            cap_done(&c);
            check(!pr && c.text && strstr(c.text, "it is owned by uid 65534, not by you"),
                  "cache dir owned by another user is refused");
            free(pr);
            free(c.text);
        }
    }

    /* A missing compiler is the user's environment, not a tec bug. */
    cg_options om = {.cc = "tec-no-such-compiler-xyz", .opt_flags = "-O1", .cache_dir = tpath("c2")};
    cap_init(&c);
    char *pm = cg_compile(tiny_source, &om, &c.d);
    cap_done(&c);
    check(!pm && c.text && strcmp(c.text, "tec: error: cannot run C compiler "
                                          "'tec-no-such-compiler-xyz': No such file or directory "
                                          "(set CC or install gcc)\n") == 0 &&
          c.d.ninternal == 0, "missing compiler: %s", oneline(c.text));
    free(pm);
    free(c.text);
    om.no_cache = true;
    cap_init(&c);
    pm = cg_compile(tiny_source, &om, &c.d);
    cap_done(&c);
    check(!pm && c.text && strstr(c.text, "tec: error: cannot run C compiler "
                                          "'tec-no-such-compiler-xyz': No such file or directory"),
          "missing compiler without the cache: same message");
    free(pm);
    free(c.text);

    /* $CC is used when no compiler is given, and may hold several words. */
    setenv("CC", "tec-no-such-launcher cc", 1);
    cg_options oe = {.opt_flags = "-O1", .cache_dir = tpath("c3")};
    cap_init(&c);
    pm = cg_compile(tiny_source, &oe, &c.d);
    cap_done(&c);
    check(!pm && c.text && strstr(c.text, "cannot run C compiler 'tec-no-such-launcher'"),
          "$CC is split into words and used");
    free(pm);
    free(c.text);
    unsetenv("CC");

    /* Code the compiler rejects is an internal error with its first lines. */
    cap_init(&c);
    char *pb = cg_compile("this is not C;\n", &o, &c.d);
    cap_done(&c);
    check(!pb && c.text && strncmp(c.text, "tec: internal error: codegen: the C compiler failed on "
                                           "generated code\n", 70) == 0 &&
          strstr(c.text, "error") && c.d.ninternal == 1,
          "compiler failure is an internal error with the compiler's output");
    free(pb);
    free(c.text);

    /* --no-cache: a private directory, gone once the kernels are loaded. */
    cg_options on = {.opt_flags = "-O1", .no_cache = true};
    cap_init(&c);
    char *pn = cg_compile(tiny_source, &on, &c.d);
    char *ndir = pn ? strdup(pn) : NULL;
    if (ndir)
        *strrchr(ndir, '/') = '\0';
    struct stat sn;
    check(pn && ndir && stat(ndir, &sn) == 0 && (sn.st_mode & 0777) == 0700 &&
          strncmp(pn, tpath("xdg"), strlen(tpath("xdg"))) != 0,
          "--no-cache builds in a private temporary directory");
    lib = pn ? cg_load(pn, m, &c.d) : NULL;
    check(lib && cg_call(lib, 0, NULL, err, sizeof err) && ndir && access(ndir, F_OK) != 0,
          "--no-cache: the temporary directory is removed once loaded");
    cg_unload(lib);
    free(pn);
    free(ndir);

    /* --emit=so -o FILE */
    const char *out = tpath("out/kernels.so");
    mkdir(tpath("out"), 0755);
    bool ok = cg_compile_to(tiny_source, out, &o, &c.d);
    lib = ok ? cg_load(out, m, &c.d) : NULL;
    check(ok && lib && count_entries(tpath("out")) == 1, "cg_compile_to writes exactly the file");
    mode_t mask = umask(022);
    umask(mask);
    struct stat so = {0};
    bool have_out = stat(out, &so) == 0;
    check(have_out && (so.st_mode & 0777) == (0777 & ~mask),
          "cg_compile_to gives the file the usual permissions (%o)", (unsigned)(so.st_mode & 0777));
    cg_unload(lib);
    cap_done(&c);
    free(c.text);

    /* A library without the expected symbol: a clear error, no crash. */
    ir_func_new(m, "g");
    cap_init(&c);
    lib = cg_load(out, m, &c.d);
    cap_done(&c);
    check(!lib && c.text && strstr(c.text, "kernel 'tec_k1_g' of @g is missing from"),
          "missing kernel symbol is reported");
    free(c.text);
    cap_init(&c);
    lib = cg_load(tpath("nonexistent.so"), m, &c.d);
    cap_done(&c);
    check(!lib && c.text && strstr(c.text, "tec: error: cannot load compiled kernels: "),
          "unloadable library is reported");
    free(c.text);
    ir_module_free(m);
    free(dir);
}

static void remove_tree(const char *path)
{
    DIR *d = opendir(path);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d))) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            char sub[1024];
            snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
            remove_tree(sub);
        }
        closedir(d);
        rmdir(path);
    } else {
        unlink(path);
    }
}

int main(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(tmproot, sizeof tmproot, "%s/tec-test-codegen-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(tmproot)) {
        perror("mkdtemp");
        return 1;
    }
    unsetenv("CC");

    test_sha256();

    M = ir_module_new("t");
    build_matmul();
    build_conv();
    build_exprs();
    build_softmax();
    build_checks();
    build_divzero();
    build_badcast();
    build_hooks();
    build_names();
    test_symbols();

    diag d;
    diag_init(&d, stdout);
    char *src = cg_emit_c(M, NULL, false, &d);
    check(src != NULL, "emit C for %d kernels", M->nfuncs);
    if (src) {
        test_text(src);
        if (getenv("TEC_TEST_SHOW_C"))
            fputs(src, stdout);
        /* -Werror: generated code must compile without warnings. */
        cg_options o = {.opt_flags = "-O2 -Wall -Wextra -Werror", .cache_dir = tpath("cache")};
        char *so = cg_compile(src, &o, &d);
        check(so != NULL, "generated code compiles with -Wall -Wextra -Werror");
        cg_library *lib = so ? cg_load(so, M, &d) : NULL;
        check(lib != NULL, "compiled kernels load");
        if (lib)
            run_kernels(lib);
        cg_unload(lib);
        free(so);
    }
    free(src);
    diag_fini(&d);
    test_emit_errors();
    ir_module_free(M);

    test_cache();

    remove_tree(tmproot);
    printf("%s: %d failed\n", failures ? "FAIL" : "PASS", failures);
    return failures ? 1 : 0;
}
