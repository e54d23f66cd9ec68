/* testsuite/unit/test_interp.c — the reference interpreter against plain C.
 * Each case builds a small function with the ir.h builder, runs it, and
 * compares with values computed here (bit for bit for f32: the interpreter
 * rounds every f32 operation, as this file does). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/interp.h"
#include "ir/ir.h"

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

static int failures;

static void check(bool ok, const char *what, ...)
{
    va_list ap;
    va_start(ap, what);
    printf("%s - ", ok ? "ok" : "FAIL");
    vprintf(what, ap);
    printf("\n");
    va_end(ap);
    if (!ok)
        failures++;
}

/* Expects f to fail with exactly msg. */
static void check_fails(const ir_func *f, void *const *data, const char *msg, const char *what)
{
    char err[512];
    bool ran = ir_interp_func(f, data, err, sizeof err);
    bool ok = !ran && strcmp(err, msg) == 0;
    check(ok, "%s", what);
    if (!ok)
        printf("  got:  %s\n  want: %s\n", ran ? "(success)" : err, msg);
}

static bool run(const ir_func *f, void *const *data, const char *what)
{
    char err[512];
    bool ok = ir_interp_func(f, data, err, sizeof err);
    if (!ok)
        printf("  %s: %s\n", what, err);
    return ok;
}

/* ---------------------------------------------------------------- builder shorthands */

static ir_module *M;

static ir_var *var(const char *name) { return ir_var_new(M, name, IR_I64); }
static ir_expr *V(ir_var *v) { return ir_varref(M, v); }
static ir_expr *I(int64_t v) { return ir_int(M, v); }
static ir_expr *F32(double v) { return ir_float(M, v, IR_F32); }
static ir_expr *bin(ir_expr_kind k, ir_expr *a, ir_expr *b) { return ir_binary(M, k, a, b); }
static ir_expr *ld1(ir_buffer *b, ir_expr *i) { return ir_load(M, b, &i, 1); }
static ir_expr *ld2(ir_buffer *b, ir_expr *i, ir_expr *j)
{
    ir_expr *ix[2] = {i, j};
    return ir_load(M, b, ix, 2);
}
static ir_stmt *st1(ir_buffer *b, ir_expr *i, ir_expr *v) { return ir_store(M, b, &i, 1, v); }
static ir_stmt *st2(ir_buffer *b, ir_expr *i, ir_expr *j, ir_expr *v)
{
    ir_expr *ix[2] = {i, j};
    return ir_store(M, b, ix, 2, v);
}
static ir_stmt *loop(ir_var *v, int64_t lo, int64_t hi, ir_stmt *body)
{
    return ir_for(M, v, I(lo), I(hi), IR_FOR_SERIAL, body);
}
static ir_buffer *param(ir_func *f, const char *name, ir_dtype t, int ndim, const int64_t *shape)
{
    ir_buffer *b = ir_buffer_new(M, name, t, ndim, shape, IR_BUF_ARG);
    ir_func_add_param(M, f, b);
    return b;
}
static ir_stmt *seq2(ir_stmt *a, ir_stmt *b)
{
    ir_stmt *s[2] = {a, b};
    return ir_seq(M, s, 2);
}

/* ---------------------------------------------------------------- cases */

/* C[i, j] = sum_k A[i, k] * B[k, j] as one block with init; C starts as
 * garbage, so a missing init shows. */
static void test_matmul(void)
{
    enum { MM = 3, NN = 4, KK = 5 };
    ir_func *f = ir_func_new(M, "matmul");
    ir_buffer *A = param(f, "A", IR_F32, 2, (int64_t[]){MM, KK});
    ir_buffer *B = param(f, "B", IR_F32, 2, (int64_t[]){KK, NN});
    ir_buffer *C = param(f, "C", IR_F32, 2, (int64_t[]){MM, NN});
    ir_var *i = var("i"), *j = var("j"), *k = var("k");
    ir_var *vi = var("vi"), *vj = var("vj"), *vk = var("vk");
    ir_itervar it[3] = {{vi, IR_ITER_SPATIAL, MM, V(i)},
                        {vj, IR_ITER_SPATIAL, NN, V(j)},
                        {vk, IR_ITER_REDUCE, KK, V(k)}};
    ir_stmt *init = st2(C, V(vi), V(vj), F32(0));
    ir_stmt *upd = st2(C, V(vi), V(vj),
                       bin(IR_ADD, ld2(C, V(vi), V(vj)),
                           bin(IR_MUL, ld2(A, V(vi), V(vk)), ld2(B, V(vk), V(vj)))));
    ir_stmt *blk = ir_block(M, "C", it, 3, init, upd);
    f->body = loop(i, 0, MM, loop(j, 0, NN, loop(k, 0, KK, blk)));

    float a[MM][KK], b[KK][NN], c[MM][NN], want[MM][NN];
    for (int x = 0; x < MM; x++)
        for (int z = 0; z < KK; z++)
            a[x][z] = (float)(x * 7 + z) / 3.0f - 1.1f;
    for (int z = 0; z < KK; z++)
        for (int y = 0; y < NN; y++)
            b[z][y] = 0.37f * (float)(z - y) + 0.01f;
    for (int x = 0; x < MM; x++)
        for (int y = 0; y < NN; y++) {
            c[x][y] = 99.0f;
            float acc = 0.0f;
            for (int z = 0; z < KK; z++)
                acc = acc + a[x][z] * b[z][y];
            want[x][y] = acc;
        }
    void *data[3] = {a, b, c};
    bool ok = run(f, data, "matmul") && memcmp(c, want, sizeof c) == 0;
    check(ok, "matmul block with init, bit-exact f32");
}

/* m[r] = max_j x[r, j], init -inf. */
static void test_max_reduction(void)
{
    enum { R = 2, L = 5 };
    ir_func *f = ir_func_new(M, "rowmax");
    ir_buffer *X = param(f, "x", IR_F32, 2, (int64_t[]){R, L});
    ir_buffer *Y = param(f, "m", IR_F32, 1, (int64_t[]){R});
    ir_var *r = var("r"), *j = var("j"), *vr = var("vr"), *vj = var("vj");
    ir_itervar it[2] = {{vr, IR_ITER_SPATIAL, R, V(r)}, {vj, IR_ITER_REDUCE, L, V(j)}};
    ir_stmt *init = st1(Y, V(vr), F32(-INFINITY));
    ir_stmt *upd = st1(Y, V(vr), bin(IR_MAX, ld1(Y, V(vr)), ld2(X, V(vr), V(vj))));
    f->body = loop(r, 0, R, loop(j, 0, L, ir_block(M, "m", it, 2, init, upd)));
    float x[R][L] = {{-3, -1.5f, -7, -2, -9}, {4, 8.25f, -1, 8, 0}};
    float m[R] = {100, 100};
    void *data[2] = {x, m};
    check(run(f, data, "rowmax") && m[0] == -1.5f && m[1] == 8.25f,
          "max-reduction with -inf init");
}

/* y[i] = select(0 <= i-1 < N, x[i-1], 0) for i in [0, N+2): the unchosen
 * arm would read out of range, so it must not be evaluated. */
static void test_padded_read(void)
{
    enum { N = 4 };
    ir_func *f = ir_func_new(M, "pad");
    ir_buffer *X = param(f, "x", IR_F32, 1, (int64_t[]){N});
    ir_buffer *Y = param(f, "y", IR_F32, 1, (int64_t[]){N + 2});
    ir_var *i = var("i");
    ir_expr *src = bin(IR_SUB, V(i), I(1));
    ir_expr *inside = bin(IR_AND, bin(IR_GE, src, I(0)), bin(IR_LT, src, I(N)));
    f->body = loop(i, 0, N + 2, st1(Y, V(i), ir_select(M, inside, ld1(X, src), F32(0))));
    float x[N] = {1, 2, 3, 4}, y[N + 2];
    memset(y, 0xff, sizeof y);
    void *data[2] = {x, y};
    check(run(f, data, "pad") && y[0] == 0 && y[1] == 1 && y[4] == 4 && y[5] == 0,
          "select-guarded padded read evaluates only the chosen arm");

    ir_func *g = ir_func_new(M, "pad_bad");
    ir_buffer *X2 = param(g, "x", IR_F32, 1, (int64_t[]){N});
    ir_buffer *Y2 = param(g, "y", IR_F32, 1, (int64_t[]){N + 2});
    ir_var *i2 = var("i");
    g->body = loop(i2, 0, N + 2, st1(Y2, V(i2), ld1(X2, bin(IR_SUB, V(i2), I(1)))));
    check_fails(g, data, "in @pad_bad: out-of-range load x[-1]: index 0 must be in [0, 4)",
                "unguarded out-of-range load reported");

    ir_func *h = ir_func_new(M, "store_bad");
    ir_buffer *Y3 = param(h, "y", IR_F32, 2, (int64_t[]){2, 3});
    ir_var *i3 = var("i");
    h->body = loop(i3, 0, 4, st2(Y3, I(1), V(i3), F32(1)));
    float y3[6];
    void *data3[1] = {y3};
    check_fails(h, data3, "in @store_bad: out-of-range store y[1, 3]: index 1 must be in [0, 3)",
                "out-of-range store reported");
}

/* floordiv/floormod round toward -inf; the result of floormod has the sign
 * of the divisor; a zero divisor is an error. */
static void test_floor_ops(void)
{
    enum { N = 7 };
    ir_func *f = ir_func_new(M, "fdiv");
    ir_buffer *A = param(f, "a", IR_I64, 1, (int64_t[]){N});
    ir_buffer *B = param(f, "b", IR_I64, 1, (int64_t[]){N});
    ir_buffer *Q = param(f, "q", IR_I64, 1, (int64_t[]){N});
    ir_buffer *R = param(f, "r", IR_I64, 1, (int64_t[]){N});
    ir_var *i = var("i");
    f->body = loop(i, 0, N, seq2(st1(Q, V(i), bin(IR_FLOORDIV, ld1(A, V(i)), ld1(B, V(i)))),
                                 st1(R, V(i), bin(IR_FLOORMOD, ld1(A, V(i)), ld1(B, V(i))))));
    int64_t a[N] = {7, -7, 7, -7, 0, -1, INT64_MIN};
    int64_t b[N] = {2, 2, -2, -2, 3, 5, 3};
    /* by hand: q = floor(a / b), r = a - b*q */
    static const int64_t wq[N] = {3, -4, -4, 3, 0, -1, INT64_C(-3074457345618258603)};
    static const int64_t wr[N] = {1, 1, -1, -1, 0, 4, 1};
    int64_t q[N], r[N];
    void *data[4] = {a, b, q, r};
    bool ok = run(f, data, "fdiv") && memcmp(q, wq, sizeof q) == 0 && memcmp(r, wr, sizeof r) == 0;
    check(ok, "floordiv/floormod of negatives");

    b[1] = 0;
    check_fails(f, data, "in @fdiv: integer division by zero: floordiv(-7, 0)",
                "floordiv by zero reported");
}

/* out[t] = table[ids[t]] guarded by an assert, as lowering emits for
 * data-dependent indices. */
static void test_assert(void)
{
    enum { T = 3, NV = 50 };
    ir_func *f = ir_func_new(M, "emb");
    ir_buffer *ids = param(f, "ids", IR_I32, 1, (int64_t[]){T});
    ir_buffer *tab = param(f, "table", IR_F32, 1, (int64_t[]){NV});
    ir_buffer *out = param(f, "out", IR_F32, 1, (int64_t[]){T});
    ir_var *t = var("t");
    ir_expr *id = ir_cast(M, ld1(ids, V(t)), IR_I64);
    ir_stmt *chk = ir_assert(M, bin(IR_AND, bin(IR_GE, id, I(0)), bin(IR_LT, id, I(NV))),
                             "index ids[t] out of range [0, 50)");
    f->body = loop(t, 0, T, seq2(chk, st1(out, V(t), ld1(tab, id))));
    int32_t idv[T] = {3, 49, 0};
    float table[NV], o[T];
    for (int k = 0; k < NV; k++)
        table[k] = (float)k * 0.5f;
    void *data[3] = {idv, table, o};
    check(run(f, data, "emb") && o[0] == 1.5f && o[1] == 24.5f && o[2] == 0,
          "embedding gather with a passing assert");
    idv[1] = 60;
    check_fails(f, data, "in @emb: assert failed: index ids[t] out of range [0, 50)",
                "failing assert reported");
}

/* for r: alloc t[1] { t[0] = t[0] + x[r]; y[r] = t[0] }: the temporary is
 * fresh and zeroed on every entry. */
static void test_alloc(void)
{
    enum { N = 3 };
    ir_func *f = ir_func_new(M, "tmp");
    ir_buffer *X = param(f, "x", IR_F64, 1, (int64_t[]){N});
    ir_buffer *Y = param(f, "y", IR_F64, 1, (int64_t[]){N});
    ir_buffer *T = ir_buffer_new(M, "t", IR_F64, 1, (int64_t[]){1}, IR_BUF_LOCAL);
    ir_var *r = var("r");
    ir_stmt *acc = st1(T, I(0), bin(IR_ADD, ld1(T, I(0)), ld1(X, V(r))));
    f->body = loop(r, 0, N, ir_alloc_stmt(M, T, seq2(acc, st1(Y, V(r), ld1(T, I(0))))));
    double x[N] = {1.25, -2, 3}, y[N] = {0};
    void *data[2] = {x, y};
    check(run(f, data, "tmp") && y[0] == 1.25 && y[1] == -2 && y[2] == 3,
          "alloc'ed temporary is zeroed on each entry");

    /* a local used outside its ALLOC is malformed, not a crash */
    ir_func *g = ir_func_new(M, "tmp_bad");
    param(g, "x", IR_F64, 1, (int64_t[]){N});
    ir_buffer *Y2 = param(g, "y", IR_F64, 1, (int64_t[]){N});
    g->body = st1(Y2, I(0), ld1(T, I(0)));
    check_fails(g, data,
                "in @tmp_bad: malformed IR: load of t, which is neither a parameter nor "
                "allocated here",
                "buffer used outside its alloc reported");
}

/* f32 is rounded after every operation: (a + b) - a is 0 for a = 1e8,
 * b = 1 in f32 (1 in f64); intrinsics use the float libm versions; casts
 * to int truncate toward zero. */
static void test_f32_rounding(void)
{
    ir_func *f = ir_func_new(M, "round");
    ir_buffer *X = param(f, "x", IR_F32, 1, (int64_t[]){2});
    ir_buffer *D = param(f, "d", IR_F64, 1, (int64_t[]){2});
    ir_buffer *Y = param(f, "y", IR_F32, 1, (int64_t[]){3});
    ir_buffer *Z = param(f, "z", IR_F64, 1, (int64_t[]){1});
    ir_buffer *K = param(f, "k", IR_I32, 1, (int64_t[]){1});
    ir_expr *a = ld1(X, I(0)), *b = ld1(X, I(1));
    ir_expr *sig = ir_call(M, IR_FN_SIGMOID, &b, 1);
    ir_expr *ex = ir_call(M, IR_FN_TANH, &a, 1);
    ir_stmt *s = ir_seq_new(M);
    ir_seq_append(M, s, st1(Y, I(0), bin(IR_SUB, bin(IR_ADD, a, b), a)));
    ir_seq_append(M, s, st1(Y, I(1), sig));
    ir_seq_append(M, s, st1(Y, I(2), ex));
    ir_expr *da = ld1(D, I(0)), *db = ld1(D, I(1));
    ir_seq_append(M, s, st1(Z, I(0), bin(IR_SUB, bin(IR_ADD, da, db), da)));
    ir_seq_append(M, s, st1(K, I(0), ir_cast(M, bin(IR_MUL, b, F32(-2.7)), IR_I32)));
    f->body = s;
    float x[2] = {1e8f, 1.0f}, y[3];
    double d[2] = {1e8, 1.0}, z[1];
    int32_t kk[1];
    void *data[5] = {x, d, y, z, kk};
    float want_sig = 1.0f / (1.0f + expf(-1.0f));
    check(run(f, data, "round") && y[0] == 0.0f && z[0] == 1.0 && y[1] == want_sig &&
              y[2] == tanhf(1e8f) && kk[0] == -2,
          "f32 rounded per operation, f64 not; float libm; cast truncates");

    /* a float that has no i32 value is an error, not undefined behaviour */
    x[1] = 1e10f;
    check_fails(f, data, "in @round: cast of -2.7e+10 to i32 is out of range",
                "out-of-range float-to-int cast reported");
}

/* A graph of two calls; the second views the 2x3 intermediate as f32[6]. */
static void test_module(void)
{
    ir_module *m = ir_module_new("graph");
    ir_module *saved = M;
    M = m;
    ir_func *f = ir_func_new(m, "scale");
    ir_buffer *X = param(f, "x", IR_F32, 2, (int64_t[]){2, 3});
    ir_buffer *T = param(f, "t", IR_F32, 2, (int64_t[]){2, 3});
    ir_var *i = var("i"), *j = var("j");
    f->body = loop(i, 0, 2, loop(j, 0, 3, st2(T, V(i), V(j),
                                              bin(IR_MUL, ld2(X, V(i), V(j)), F32(2)))));
    ir_func *g = ir_func_new(m, "shift");
    ir_buffer *T2 = param(g, "t", IR_F32, 1, (int64_t[]){6});
    ir_buffer *Y = param(g, "y", IR_F32, 1, (int64_t[]){6});
    ir_var *k = var("k");
    g->body = loop(k, 0, 6, st1(Y, V(k), bin(IR_ADD, ld1(T2, bin(IR_SUB, I(5), V(k))), F32(1))));

    ir_buffer *gx = ir_buffer_new(m, "x", IR_F32, 2, (int64_t[]){2, 3}, IR_BUF_INPUT);
    ir_buffer *gt = ir_buffer_new(m, "t", IR_F32, 2, (int64_t[]){2, 3}, IR_BUF_TEMP);
    ir_buffer *gy = ir_buffer_new(m, "y", IR_F32, 1, (int64_t[]){6}, IR_BUF_OUTPUT);
    ir_graph_add_buffer(m, gx);
    ir_graph_add_buffer(m, gt);
    ir_graph_add_buffer(m, gy);
    ir_graph_add_call(m, f, (ir_buffer *[]){gx, gt}, 2);
    ir_graph_add_call(m, g, (ir_buffer *[]){gt, gy}, 2);
    float x[6] = {0, 1, 2, 3, 4, 5}, t[6], y[6];
    void *gd[3] = {x, t, y};
    char err[256];
    bool ok = ir_interp_module(m, gd, err, sizeof err);
    for (int n = 0; ok && n < 6; n++)
        ok = y[n] == 2.0f * (float)(5 - n) + 1.0f;
    check(ok, "module: calls in order, argument viewed with another shape%s%s",
          ok ? "" : ": ", ok ? "" : err);

    ir_buffer *gbad = ir_buffer_new(m, "w", IR_F32, 1, (int64_t[]){5}, IR_BUF_TEMP);
    ir_graph_add_buffer(m, gbad);
    ir_graph_add_call(m, g, (ir_buffer *[]){gbad, gy}, 2);
    float w[5];
    void *gd2[4] = {x, t, y, w};
    ok = !ir_interp_module(m, gd2, err, sizeof err) &&
         strcmp(err, "call 2 of @shift: argument 0, w f32[5], does not fit parameter t f32[6]") == 0;
    check(ok, "module: argument of another element count refused");
    if (!ok)
        printf("  got: %s\n", err);
    M = saved;
    ir_module_free(m);
}

/* Malformed functions give messages, not crashes. */
static void test_malformed(void)
{
    ir_func *f = ir_func_new(M, "scope");
    ir_buffer *Y = param(f, "y", IR_I64, 1, (int64_t[]){4});
    ir_var *i = var("i");
    f->body = seq2(loop(i, 0, 4, st1(Y, V(i), V(i))), st1(Y, I(0), V(i)));
    int64_t y[4];
    void *data[1] = {y};
    check_fails(f, data, "in @scope: malformed IR: variable i used outside its scope",
                "variable outside its loop reported");

    ir_func *g = ir_func_new(M, "bind");
    ir_buffer *Y2 = param(g, "y", IR_I64, 1, (int64_t[]){4});
    ir_var *j = var("j"), *vj = var("vj");
    ir_itervar it = {vj, IR_ITER_SPATIAL, 4, bin(IR_ADD, V(j), I(1))};
    g->body = loop(j, 0, 4, ir_block(M, "b", &it, 1, NULL, st1(Y2, V(vj), V(vj))));
    void *data2[1] = {y};
    check_fails(g, data2, "in @bind: block b: iteration variable vj is bound to 4, outside [0, 4)",
                "block binding outside its domain reported");

    void *none[1] = {NULL};
    check_fails(g, none, "in @bind: no storage for parameter y", "missing storage reported");

    ir_func *h = ir_func_new(M, "types");
    ir_buffer *Y3 = param(h, "y", IR_F32, 1, (int64_t[]){1});
    h->body = st1(Y3, I(0), ir_float(M, 1.0, IR_F64));
    float y3[1];
    void *data3[1] = {y3};
    check_fails(h, data3, "in @types: malformed IR: store of a f64 value into f32 y",
                "dtype mismatch reported");
}

/* Hooks a runtime would install: they record what they were called with. */
static int64_t hook_log[4];
static void hook_enter(int64_t fn) { hook_log[0] = fn + 100; }
static void hook_count(int64_t site, int64_t n) { hook_log[1] = site; hook_log[2] += n; }

/* Without hooks the 'r' intrinsics do nothing but their arguments are still
 * checked; with hooks they reach them (a NULL member is skipped). */
static void test_runtime_intrinsics(void)
{
    ir_func *f = ir_func_new(M, "prof");
    ir_buffer *X = param(f, "x", IR_I64, 1, (int64_t[]){2});
    ir_expr *args[2] = {I(0), ld1(X, I(1))};
    ir_expr *enter_arg = I(0);
    ir_stmt *s = ir_seq_new(M);
    ir_seq_append(M, s, ir_eval(M, ir_call(M, IR_FN_PROF_ENTER, &enter_arg, 1)));
    ir_seq_append(M, s, ir_eval(M, ir_call(M, IR_FN_PROF_COUNT, args, 2)));
    f->body = s;
    int64_t x[2] = {5, 6};
    void *data[1] = {x};
    check(run(f, data, "prof") && x[0] == 5 && x[1] == 6, "profiling intrinsics are no-ops");
    ir_interp_hooks hk = {hook_enter, NULL, hook_count};
    ir_interp_set_hooks(&hk);
    bool hooked = run(f, data, "prof");
    ir_interp_set_hooks(NULL);
    check(hooked && hook_log[0] == 100 && hook_log[1] == 0 && hook_log[2] == 6,
          "profiling intrinsics call the installed hooks");
    check(run(f, data, "prof") && hook_log[2] == 6, "uninstalled hooks are not called");
    ir_expr *bad[2] = {I(0), ld1(X, I(2))};
    ir_seq_append(M, s, ir_eval(M, ir_call(M, IR_FN_PROF_COUNT, bad, 2)));
    check_fails(f, data, "in @prof: out-of-range load x[2]: index 0 must be in [0, 2)",
                "profiling intrinsic arguments are evaluated");
}

/* f16 storage: values computed in float, rounded to f16 after each op. */
static void test_f16(void)
{
    ir_func *f = ir_func_new(M, "half");
    ir_buffer *X = param(f, "x", IR_F16, 1, (int64_t[]){2});
    ir_buffer *Y = param(f, "y", IR_F16, 1, (int64_t[]){1});
    ir_expr *a = ld1(X, I(0)), *b = ld1(X, I(1));
    f->body = st1(Y, I(0), bin(IR_SUB, bin(IR_ADD, a, b), a));
    uint16_t x[2] = {ir_f32_to_f16(2048.0f), ir_f32_to_f16(1.0f)}, y[1];
    void *data[2] = {x, y};
    /* 2048 + 1 is not representable in f16 (spacing 2): rounds to 2048 */
    check(run(f, data, "half") && ir_f16_to_f32(y[0]) == 0.0f, "f16 rounded after every op");
}

int main(void)
{
    M = ir_module_new("test_interp");
    test_matmul();
    test_max_reduction();
    test_padded_read();
    test_floor_ops();
    test_assert();
    test_alloc();
    test_f32_rounding();
    test_module();
    test_malformed();
    test_runtime_intrinsics();
    test_f16();
    ir_module_free(M);
    printf("%s\n", failures ? "FAILED" : "all passed");
    return failures ? 1 : 0;
}
