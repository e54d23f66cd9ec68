/* testsuite/unit/test_passes.c — the pass manager and the passes.
 *
 * Each case parses a small module, runs a pipeline, and checks substrings
 * of the printed result.  Every case, and every .tir file under testsuite/tir/passes
 * file (with the pipeline of its RUN line), is also checked for meaning:
 * the interpreter runs each function before and after the passes on the
 * same random inputs, special float values included, and the outputs must
 * be identical bit for bit (cheap translation validation).
 *
 * Inputs: 64 for a small function.  The interpreter takes about 0.2 us a
 * statement, so a function whose call executes more statements than
 * TRIAL_BUDGET / 64 (a convolution of the autoscheduler's tests) gets
 * fewer, TRIAL_BUDGET's worth but at least MIN_TRIALS, each of them
 * thousands of random elements; the output says which functions were
 * compared on fewer inputs.  TEC_TEST_TRIALS=64 compares every function
 * on 64 (about 15 times the CPU time: 494 s instead of 33 s).
 *
 * Usage: test_passes [SRCDIR]   (the .tir files are found under SRCDIR)
 * Prints one line per check group, and the CPU seconds of each .tir file;
 * exits 1 on any failure.
 */
#include <dirent.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ir/diag.h"
#include "ir/interp.h"
#include "ir/ir.h"
#include "passes/passes.h"
#include "passes/work.h"
#include "testsuite/unit/test.h"

/* ---------------------------------------------------------------- helpers */

static ir_module *parse(const char *name, const char *text)
{
    diag d;
    diag_init(&d, stdout);
    ir_module *m = ir_parse(name, text, strlen(text), &d);
    diag_fini(&d);
    return m;
}

/* Runs pipeline on m; false (with the diagnostics printed) on failure. */
static bool run(ir_module *m, const char *pipeline)
{
    diag d;
    diag_init(&d, stdout);
    pass_options o = {.verify_each = true};
    bool ok = pass_run_pipeline(m, pipeline, &o, &d);
    diag_fini(&d);
    return ok;
}

/* A deterministic generator (xorshift64*), so failures reproduce. */
static uint64_t rng_state = 0x9e3779b97f4a7c15u;

static uint64_t rng(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545f4914f6cdd1du;
}

/* Mostly ordinary values; one in three is a value that breaks careless
 * float rewrites (signed zeros, infinities, NaN) or integer ones (extremes). */
static double random_float(void)
{
    static const double special[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, 1e30, -1e-30, 1.0};
    if (rng() % 3 == 0)
        return special[rng() % 8];
    return ((double)(rng() % 2000001) - 1000000.0) / 250000.0;
}

static int64_t random_int(ir_dtype t)
{
    if (rng() % 16 == 0) {
        int64_t big = t == IR_I32 ? INT32_MAX : INT64_MAX;
        return rng() % 2 ? big : -big - 1;
    }
    return (int64_t)(rng() % 17) - 8;
}

/* ordinary: no special float values.  Schedules reorder reductions, so
 * their results are compared to a tolerance of the largest magnitude; one
 * infinity or NaN among a reduction's inputs would make every output
 * infinite or NaN and the comparison say nothing. */
static void fill(const ir_buffer *b, void *p, bool ordinary)
{
    int64_t n = ir_buffer_numel(b);
    for (int64_t i = 0; i < n; i++) {
        double v = random_float();
        if (ordinary && (!isfinite(v) || fabs(v) > 1e6 || (v != 0 && fabs(v) < 1e-6)))
            v = ((double)(rng() % 2000001) - 1000000.0) / 250000.0;
        switch (b->dtype) {
        case IR_F32: ((float *)p)[i] = (float)v; break;
        case IR_F64: ((double *)p)[i] = v; break;
        case IR_I32: ((int32_t *)p)[i] = (int32_t)random_int(IR_I32); break;
        case IR_I64: ((int64_t *)p)[i] = random_int(IR_I64); break;
        case IR_BOOL: ((uint8_t *)p)[i] = (uint8_t)(rng() % 2); break;
        case IR_I8: case IR_U8: ((uint8_t *)p)[i] = (uint8_t)rng(); break;
        default: ((uint16_t *)p)[i] = (uint16_t)rng(); break;   /* i16, f16, bf16: bits */
        }
    }
}

/* Whether two buffers agree: byte for byte, or (tol > 0, floats) within
 * tol of the largest magnitude in a. */
static bool same_buffer(const ir_buffer *buf, const void *a, const void *b, size_t size, double tol)
{
    if (tol <= 0 || (buf->dtype != IR_F32 && buf->dtype != IR_F64))
        return memcmp(a, b, size) == 0;
    int64_t n = ir_buffer_numel(buf);
    double scale = 0, err = 0;
    for (int64_t i = 0; i < n; i++) {
        double x = buf->dtype == IR_F32 ? ((const float *)a)[i] : ((const double *)a)[i];
        double y = buf->dtype == IR_F32 ? ((const float *)b)[i] : ((const double *)b)[i];
        if (x != x || y != y) {
            if ((x != x) != (y != y))
                return false;
            continue;
        }
        scale = fabs(x) > scale ? fabs(x) : scale;
        err = fabs(x - y) > err ? fabs(x - y) : err;
    }
    return err <= tol * (scale > 0 ? scale : 1);
}

/* Inputs a function is compared on: TRIALS, or for a function whose call
 * executes more than TRIAL_BUDGET / TRIALS statements (counted statically,
 * passes/work.h) as many as TRIAL_BUDGET allows, at least MIN_TRIALS.
 * TEC_TEST_TRIALS=N asks for at least N (at most TRIALS). */
#define TRIALS 64
#define TRIAL_BUDGET ((int64_t)1 << 21)
#define MIN_TRIALS 4

static int min_trials(void)
{
    const char *e = getenv("TEC_TEST_TRIALS");
    int n = e && *e ? atoi(e) : MIN_TRIALS;
    return n < 1 ? 1 : n > TRIALS ? TRIALS : n;
}

/* The comparisons f gets, and (in *work) its statement executions a call,
 * -1 when not counted (a bound that is not a constant: it gets TRIALS). */
static int trials_for(const ir_func *f, int64_t *work)
{
    int64_t w = pass_stmt_work(f->body, TRIAL_BUDGET);
    *work = w;
    if (w <= 0 || w <= TRIAL_BUDGET / TRIALS)
        return TRIALS;
    int n = (int)(TRIAL_BUDGET / w), lo = min_trials();
    return n < lo ? lo : n;
}

/* Functions compared on fewer than TRIALS inputs so far, and the CPU
 * seconds of this process (per-file timing). */
static int reduced_funcs;

static double cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Runs function fi of `before` and `after` on the same random data, up to
 * TRIALS times until trials_for's number of runs compared; every run that
 * succeeds before must succeed after with identical bytes (tol 0), or float
 * results within tol of their magnitude (schedules reorder a reduction's
 * additions).  Returns the number of comparable runs (0 means the check
 * said nothing, which the callers treat as a failure). */
static int validate_func(const ir_module *before, const ir_module *after, int fi, const char *what,
                         double tol)
{
    const ir_func *f = before->funcs[fi], *g = after->funcs[fi];
    if (f->nparams != g->nparams) {
        printf("FAIL %s: @%s has %d params before, %d after\n", what, f->name, f->nparams,
               g->nparams);
        failures++;
        return 0;
    }
    int np = f->nparams, compared = 0;
    int64_t work;
    int want = trials_for(f, &work);
    if (want < TRIALS) {
        printf("note %s: @%s compared on %d inputs, not %d (%lld statements a call)\n", what,
               f->name, want, TRIALS, (long long)work);
        reduced_funcs++;
    }
    void **a = calloc((size_t)np + 1, sizeof *a), **b = calloc((size_t)np + 1, sizeof *b);
    size_t *size = calloc((size_t)np + 1, sizeof *size);
    for (int i = 0; i < np; i++) {
        size[i] = (size_t)ir_buffer_numel(f->params[i]) * (size_t)ir_dtype_size(f->params[i]->dtype);
        if ((size_t)ir_buffer_numel(g->params[i]) * (size_t)ir_dtype_size(g->params[i]->dtype) !=
            size[i]) {
            printf("FAIL %s: @%s param %d changed its size\n", what, f->name, i);
            failures++;
            goto done;
        }
        a[i] = malloc(size[i]);
        b[i] = malloc(size[i]);
    }
    for (int trial = 0; trial < TRIALS && compared < want; trial++) {
        for (int i = 0; i < np; i++) {
            fill(f->params[i], a[i], tol > 0);
            memcpy(b[i], a[i], size[i]);
        }
        char ea[256], eb[256];
        if (!ir_interp_func(f, a, ea, sizeof ea))
            continue;   /* the input made the original fail: nothing to compare */
        if (!ir_interp_func(g, b, eb, sizeof eb)) {
            printf("FAIL %s: @%s fails only after the passes: %s\n", what, f->name, eb);
            failures++;
            goto done;
        }
        for (int i = 0; i < np; i++)
            if (!same_buffer(f->params[i], a[i], b[i], size[i], tol)) {
                printf("FAIL %s: @%s: %s differs after the passes (trial %d)\n", what,
                       f->name, f->params[i]->name, trial);
                failures++;
                goto done;
            }
        compared++;
    }
done:
    for (int i = 0; i < np; i++) {
        free(a[i]);
        free(b[i]);
    }
    free(a);
    free(b);
    free(size);
    return compared;
}

/* Parses text twice, runs pipeline on the second copy, and compares every
 * function's results.  Returns the transformed module (caller frees) or
 * NULL after a failure. */
static ir_module *transform_and_validate(const char *what, const char *text, const char *pipeline)
{
    ir_module *before = parse(what, text), *after = parse(what, text);
    if (!before || !after || !run(after, pipeline)) {
        printf("FAIL %s: does not parse or the pipeline '%s' fails\n", what, pipeline);
        failures++;
        ir_module_free(before);
        ir_module_free(after);
        return NULL;
    }
    /* Schedules may reorder a reduction's additions: results agree to
     * rounding.  Every other pass keeps them bit for bit. */
    double tol = strstr(pipeline, "schedule") ? 1e-5 : 0;
    for (int i = 0; i < before->nfuncs; i++)
        if (validate_func(before, after, i, what, tol) == 0) {
            printf("FAIL %s: @%s: no input ran without error; nothing was compared\n", what,
                   before->funcs[i]->name);
            failures++;
        }
    ir_module_free(before);
    return after;
}

/* ---------------------------------------------------------------- cases */

/* One case: the input, the pipeline, substrings the printed output must
 * contain and substrings it must not. */
typedef struct pass_case {
    const char *name;
    const char *pipeline;
    const char *src;
    const char *want[8];
    const char *reject[6];
} pass_case;

static const pass_case cases[] = {
    {"simplify: floordiv(x, 1) = x, floormod(x, 1) = 0", "simplify",
     "module \"c\"\n"
     "func @f(X: i64[4], Y: i64[4]) {\n"
     "  for i in 0..4 {\n"
     "    Y[i] = floordiv(X[i], 1) * 10 + floormod(X[i], 1)\n"
     "  }\n"
     "}\n",
     {"Y[i] = X[i] * 10\n"},
     {"floordiv", "floormod"}},
    {"simplify: floordiv(a*c + b, c) = a + floordiv(b, c)", "simplify",
     "module \"c\"\n"
     "func @f(Y: i64[4, 16]) {\n"
     "  for i in 0..4 {\n"
     "    for j in 0..16 {\n"
     "      Y[i, j] = floordiv(i * 4 + j, 4)\n"
     "    }\n"
     "  }\n"
     "}\n",
     {"Y[i, j] = i + floordiv(j, 4)\n"},
     {"i * 4"}},
    {"simplify: floormod(a*c + b, c) = floormod(b, c)", "simplify",
     "module \"c\"\n"
     "func @f(Y: i64[4, 16]) {\n"
     "  for i in 0..4 {\n"
     "    for j in 0..16 {\n"
     "      Y[i, j] = floormod(i * 4 + j + 5, 4)\n"
     "    }\n"
     "  }\n"
     "}\n",
     {"Y[i, j] = floormod(j + 1, 4)\n"},
     {"i * 4"}},
    {"simplify: 0 <= x < c from loop bounds: floordiv = 0, floormod = x", "simplify",
     "module \"c\"\n"
     "func @f(Y: i64[8], Z: i64[8]) {\n"
     "  for j in 0..8 {\n"
     "    Y[j] = floordiv(j, 8)\n"
     "    Z[j] = floormod(j, 8)\n"
     "  }\n"
     "}\n",
     {"Y[j] = 0\n", "Z[j] = j\n"},
     {"floordiv", "floormod"}},
    {"simplify: a flattened index splits back into its coordinates", "simplify",
     "module \"c\"\n"
     "func @f(Y: i64[4, 8], Z: i64[4, 8]) {\n"
     "  for i in 0..4 {\n"
     "    for j in 0..8 {\n"
     "      Y[i, j] = floordiv(i * 8 + j, 8)\n"
     "      Z[i, j] = floormod(i * 8 + j, 8)\n"
     "    }\n"
     "  }\n"
     "}\n",
     {"Y[i, j] = i\n", "Z[i, j] = j\n"},
     {"floordiv", "floormod"}},
    {"simplify: exact integer folding", "simplify",
     "module \"c\"\n"
     "func @f(Y: i64[8], Z: i32[2]) {\n"
     "  Y[0] = 3 * 4 - 2\n"
     "  Y[1] = floordiv(-7, 2)\n"
     "  Y[2] = floormod(-7, 2)\n"
     "  Y[3] = floormod(7, -2)\n"
     "  Y[4] = min(3, -5) + max(3, -5)\n"
     "  Y[5] = 4611686018427387904 + 4611686018427387903\n"
     "  Z[0] = 2147483646i32 + 1i32\n"
     "}\n",
     {"Y[0] = 10\n", "Y[1] = -4\n", "Y[2] = 1\n", "Y[3] = -1\n", "Y[4] = -2\n",
      "Y[5] = 9223372036854775807\n", "Z[0] = 2147483647i32\n"},
     {"floordiv", "floormod"}},
    {"simplify: results that overflow are left unfolded (GMP)", "simplify",
     "module \"c\"\n"
     "func @f(X: i64[1], Y: i64[4], Z: i32[1]) {\n"
     "  Y[0] = 9223372036854775807 + 1\n"
     "  Y[1] = 4611686018427387904 * 2\n"
     "  if X[0] > 100 {\n"
     "    Y[2] = floordiv(-9223372036854775807 - 1, -1)\n"
     "  }\n"
     "  Y[3] = -(-9223372036854775807 - 1)\n"
     "  Z[0] = 2147483647i32 + 1i32\n"
     "}\n",
     {"Y[0] = 9223372036854775807 + 1\n", "Y[1] = 4611686018427387904 * 2\n",
      "Y[2] = floordiv(-9223372036854775808, -1)\n", "Y[3] = -(-9223372036854775808)\n",
      "Z[0] = 2147483647i32 + 1i32\n"},
     {}},
    {"simplify: padding guards proven by ranges are removed", "simplify",
     "module \"c\"\n"
     "func @f(X: f32[10], Y: f32[8, 3]) {\n"
     "  for p in 1..8 {\n"
     "    for r in 0..3 {\n"
     "      if 0 <= p + r - 1 && p + r - 1 < 10 {\n"
     "        Y[p, r] = X[p + r - 1]\n"
     "      }\n"
     "    }\n"
     "  }\n"
     "  for q in 0..8 {\n"
     "    for s in 0..3 {\n"
     "      Y[q, s] = select(0 <= q + s - 1 && q + s - 1 < 10, X[select(q + s - 1 >= 0, q + s - 1, 0)], 0.0f)\n"
     "    }\n"
     "  }\n"
     "}\n",
     {"      Y[p, r] = X[p + r - 1]\n", "select(q + s - 1 >= 0, X[q + s - 1], 0.0f)"},
     {"if ", "< 10"}},
    {"simplify: floats are never reassociated or given unsafe identities", "simplify",
     "module \"c\"\n"
     "func @f(F: f32[8], G: f64[4]) {\n"
     "  F[0] = F[1] + 1.0f + 2.0f\n"
     "  F[2] = F[3] + 0.0f\n"
     "  F[4] = F[5] * 0.0f\n"
     "  F[6] = F[7] - F[7]\n"
     "  F[1] = 2.0f * F[1] * 1.0f\n"
     "  F[3] = F[3] - 0.0f + -0.0f\n"
     "  G[0] = G[1] * 3.0 / 1.0\n"
     "}\n",
     {"F[0] = F[1] + 1.0f + 2.0f\n", "F[2] = F[3] + 0.0f\n", "F[4] = F[5] * 0.0f\n",
      "F[6] = F[7] - F[7]\n", "F[1] = F[1] * 2.0f\n", "F[3] = F[3]\n", "G[0] = G[1] * 3.0\n"},
     {}},
    {"simplify: f32 constants fold in f32, f64 in f64", "simplify",
     "module \"c\"\n"
     "func @f(F: f32[4], G: f64[4]) {\n"
     "  F[0] = 16777216.0f + 1.0f\n"
     "  F[1] = 1.0f / 3.0f\n"
     "  F[2] = cast<f32>(16777217)\n"
     "  F[3] = -(0.5f * 3.0f)\n"
     "  G[0] = 16777216.0 + 1.0\n"
     "  G[1] = 0.1 + 0.2\n"
     "  G[2] = cast<f64>(0.1f)\n"
     "  G[3] = sqrt(2.0)\n"
     "}\n",
     {"F[0] = 16777216.0f\n", "F[1] = 0.33333334f\n", "F[2] = 16777216.0f\n",
      "F[3] = -1.5f\n", "G[0] = 16777217.0\n", "G[1] = 0.30000000000000004\n",
      "G[2] = 0.10000000149011612\n", "G[3] = 1.4142135623730951\n"},
     {}},
    {"simplify: integer identities", "simplify",
     "module \"c\"\n"
     "func @f(X: i64[8], Y: i64[8], B: bool[2]) {\n"
     "  Y[0] = X[0] + 0\n"
     "  Y[1] = 1 * X[1]\n"
     "  Y[2] = X[2] * 0\n"
     "  Y[3] = X[3] - X[3]\n"
     "  Y[4] = min(X[4], X[4]) + max(X[5], X[5])\n"
     "  Y[5] = select(true, X[5], X[6]) + select(false, X[0], X[7])\n"
     "  Y[6] = -(-X[6])\n"
     "  Y[7] = cast<i64>(2.75) + cast<i64>(3i32) + cast<i64>(-2.5f)\n"
     "  B[0] = !(!B[1])\n"
     "  B[1] = !(X[0] < X[1])\n"
     "}\n",
     {"Y[0] = X[0]\n", "Y[1] = X[1]\n", "Y[2] = 0\n", "Y[3] = 0\n", "Y[4] = X[4] + X[5]\n",
      "Y[5] = X[5] + X[7]\n", "Y[6] = X[6]\n", "Y[7] = 3\n"},
     {"select", "min", "max", "B[0] = !"}},
    {"simplify: canonical order and constant folding of sums", "simplify",
     "module \"c\"\n"
     "func @f(X: i64[8], Y: i64[8], Z: i64[8]) {\n"
     "  for i in 0..4 {\n"
     "    Y[i] = 3 + X[i]\n"
     "    Z[i] = X[i] + 1 + 2\n"
     "    Y[i + 4] = 2 * (i + 1) + 2 - i\n"
     "    Z[i + 4] = X[i] - 1 - 2\n"
     "  }\n"
     "}\n",
     {"Y[i] = X[i] + 3\n", "Z[i] = X[i] + 3\n", "Y[i + 4] = i + 4\n", "Z[i + 4] = X[i] - 3\n"},
     {}},
    {"simplify: loops, ifs and asserts that ranges decide", "simplify",
     "module \"c\"\n"
     "func @f(X: i64[8], Y: i64[8]) {\n"
     "  for k in 0..1 {\n"
     "    Y[k] = X[k + 2]\n"
     "  }\n"
     "  for e in 5..5 {\n"
     "    Y[e] = 7\n"
     "  }\n"
     "  for i in 0..8 {\n"
     "    assert i < 8, \"proven\"\n"
     "    assert X[i] < 8, \"kept\"\n"
     "    if i + 1 > i {\n"
     "      Y[i] = X[i]\n"
     "    } else {\n"
     "      Y[i] = 0\n"
     "    }\n"
     "    if i >= 3 {\n"
     "      Y[i] = floordiv(i, 3)\n"
     "    }\n"
     "  }\n"
     "}\n",
     {"Y[0] = X[2]\n", "assert X[i] < 8, \"kept\"\n", "    Y[i] = X[i]\n",
      "if i >= 3 {\n", "Y[i] = floordiv(i, 3)\n"},
     {"for k", "for e", "proven", "else"}},
    {"flatten: 2-D", "flatten",
     "module \"c\"\n"
     "func @f(A: f32[4, 8], B: f32[4, 8]) {\n"
     "  for i in 0..4 {\n"
     "    for j in 0..8 {\n"
     "      B[i, j] = A[i, j] * 2.0f\n"
     "    }\n"
     "  }\n"
     "}\n",
     {"A: f32[32], B: f32[32]", "B[i * 8 + j] = A[i * 8 + j] * 2.0f\n"},
     {"[4, 8]"}},
    {"flatten: 4-D", "flatten,simplify",
     "module \"c\"\n"
     "func @f(A: f32[2, 3, 4, 5], B: f32[2, 3, 4, 5]) {\n"
     "  for n in 0..2 {\n"
     "    for c in 0..3 {\n"
     "      for h in 0..4 {\n"
     "        for w in 0..5 {\n"
     "          B[n, c, h, w] = A[n, c, 3 - h, w] + 1.0f\n"
     "        }\n"
     "      }\n"
     "    }\n"
     "  }\n"
     "}\n",
     {"A: f32[120], B: f32[120]", "B[n * 60 + c * 20 + h * 5 + w] = A[n * 60 + c * 20 - h * 5 + w + 15]"},
     {}},
    {"flatten: 0-d scalars become one element", "flatten",
     "module \"c\"\n"
     "func @f(S: f32[], A: f32[4]) {\n"
     "  for i in 0..4 {\n"
     "    S[] = S[] + A[i]\n"
     "  }\n"
     "}\n",
     {"S: f32[1], A: f32[4]", "S[0] = S[0] + A[i]\n"},
     {"[]"}},
    {"flatten: allocations and the graph", "flatten",
     "module \"c\"\n"
     "func @f(A: f32[2, 3], B: f32[2, 3]) {\n"
     "  alloc T: f32[3, 2] stack {\n"
     "    for i in 0..2 {\n"
     "      for j in 0..3 {\n"
     "        T[j, i] = A[i, j]\n"
     "      }\n"
     "    }\n"
     "    for i in 0..2 {\n"
     "      for j in 0..3 {\n"
     "        B[i, j] = T[j, i] + 1.0f\n"
     "      }\n"
     "    }\n"
     "  }\n"
     "}\n"
     "graph {\n"
     "  input A: f32[2, 3]\n"
     "  output B: f32[2, 3]\n"
     "  call @f(A, B)\n"
     "}\n",
     {"alloc T: f32[6] stack", "T[j * 2 + i] = A[i * 3 + j]", "input A: f32[6]",
      "output B: f32[6]"},
     {"[2, 3]", "[3, 2]"}},
    {"flatten: every buffer once, however often mentioned, across functions and the graph",
     "flatten",
     "module \"c\"\n"
     "func @f(A: f32[2, 3], S: f32[], T: f32[3, 2]) {\n"
     "  for i in 0..2 {\n"
     "    for j in 0..3 {\n"
     "      T[j, i] = A[i, j] + A[1 - i, j] + S[]\n"
     "      S[] = S[] + T[j, i] * A[i, 2 - j]\n"
     "    }\n"
     "  }\n"
     "}\n"
     "func @g(T: f32[3, 2], U: f32[3, 2, 1]) {\n"
     "  for j in 0..3 {\n"
     "    U[j, 1, 0] = T[j, 0] * T[j, 1]\n"
     "    U[j, 0, 0] = T[j, 1] - T[j, 0]\n"
     "  }\n"
     "}\n"
     "graph {\n"
     "  input A: f32[2, 3]\n"
     "  temp S: f32[]\n"
     "  temp T: f32[3, 2]\n"
     "  output U: f32[3, 2, 1]\n"
     "  call @f(A, S, T)\n"
     "  call @g(T, U)\n"
     "}\n",
     {"func @f(A: f32[6], S: f32[1], T: f32[6])", "T[j * 2 + i] = A[i * 3 + j] + A[(1 - i) * 3 + j] + S[0]",
      "func @g(T: f32[6], U: f32[6])", "U[j * 2 + 1 + 0] = T[j * 2 + 0] * T[j * 2 + 1]",
      "input A: f32[6]", "temp S: f32[1]", "temp T: f32[6]", "output U: f32[6]"},
     {"[2, 3]", "[3, 2]", "[]", "[3, 2, 1]"}},
    {"flatten: idempotent", "flatten,flatten",
     "module \"c\"\n"
     "func @f(A: f32[4, 8], B: f32[32]) {\n"
     "  for i in 0..4 {\n"
     "    for j in 0..8 {\n"
     "      B[i * 8 + j] = A[i, j]\n"
     "    }\n"
     "  }\n"
     "}\n",
     {"B[i * 8 + j] = A[i * 8 + j]\n"},
     {}},
    {"flatten: blocks, iteration variables and init stay", "flatten,simplify",
     "module \"c\"\n"
     "func @mm(A: f32[4, 3], B: f32[3, 5], C: f32[4, 5]) {\n"
     "  for i in 0..4 {\n"
     "    for j in 0..5 {\n"
     "      for k in 0..3 {\n"
     "        block C_update(vi: spatial[4] = i, vj: spatial[5] = j, vk: reduce[3] = k) reads(C, A, B) writes(C) {\n"
     "          init {\n"
     "            C[vi, vj] = 0.0f\n"
     "          }\n"
     "          C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]\n"
     "        }\n"
     "      }\n"
     "    }\n"
     "  }\n"
     "}\n",
     {"block C_update(vi: spatial[4] = i, vj: spatial[5] = j, vk: reduce[3] = k)",
      "C[vi * 5 + vj] = 0.0f", "C[vi * 5 + vj] = C[vi * 5 + vj] + A[vi * 3 + vk] * B[vk * 5 + vj]"},
     {}},
    {"dce: stores to a local buffer nobody reads", "dce",
     "module \"c\"\n"
     "func @f(A: f32[4], B: f32[4]) {\n"
     "  alloc T: f32[4] stack {\n"
     "    alloc U: f32[4] stack {\n"
     "      for i in 0..4 {\n"
     "        U[i] = A[i] * 2.0f\n"
     "        T[i] = U[i]\n"
     "        B[i] = A[i] + 1.0f\n"
     "        B[i] = B[i]\n"
     "      }\n"
     "    }\n"
     "  }\n"
     "  for j in 0..4 {\n"
     "    let x: i64 = j * 2 {\n"
     "      B[j] = B[j] * 3.0f\n"
     "    }\n"
     "  }\n"
     "}\n",
     {"B[i] = A[i] + 1.0f\n", "B[j] = B[j] * 3.0f\n"},
     {"alloc", "T[i]", "U[i]", "let", "B[i] = B[i]\n"}},
    {"hoist: loop-invariant lets leave their loops", "hoist",
     "module \"c\"\n"
     "func @f(A: f32[64], B: f32[64]) {\n"
     "  for i in 0..4 {\n"
     "    for j in 0..4 {\n"
     "      let s: i64 = i * 4 {\n"
     "        let t: i64 = 3 {\n"
     "          B[s + j] = A[s + j + t - 3]\n"
     "        }\n"
     "      }\n"
     "    }\n"
     "  }\n"
     "}\n",
     {"func @f(A: f32[64], B: f32[64]) {\n  let t: i64 = 3 {\n    for i in 0..4 {\n"
      "      let s: i64 = i * 4 {\n        for j in 0..4 {\n"},
     {}},
    {"-O1 pipeline on a padded convolution", NULL,
     "module \"c\"\n"
     "func @conv(X: f32[1, 2, 6, 6], W: f32[3, 2, 3, 3], Y: f32[1, 3, 6, 6]) {\n"
     "  for n in 0..1 {\n"
     "    for f in 0..3 {\n"
     "      for p in 0..6 {\n"
     "        for q in 0..6 {\n"
     "          for c in 0..2 {\n"
     "            for r in 0..3 {\n"
     "              for s in 0..3 {\n"
     "                block Y_update(vn: spatial[1] = n, vf: spatial[3] = f, vp: spatial[6] = p, vq: spatial[6] = q, vc: reduce[2] = c, vr: reduce[3] = r, vs: reduce[3] = s) reads(Y, X, W) writes(Y) {\n"
     "                  init {\n"
     "                    Y[vn, vf, vp, vq] = 0.0f\n"
     "                  }\n"
     "                  Y[vn, vf, vp, vq] = Y[vn, vf, vp, vq] + select(0 <= vp + vr - 1 && vp + vr - 1 < 6 && 0 <= vq + vs - 1 && vq + vs - 1 < 6, X[vn, vc, vp + vr - 1, vq + vs - 1], 0.0f) * W[vf, vc, vr, vs]\n"
     "                }\n"
     "              }\n"
     "            }\n"
     "          }\n"
     "        }\n"
     "      }\n"
     "    }\n"
     "  }\n"
     "}\n",
     {"X: f32[72], W: f32[54], Y: f32[108]", "vn: spatial[1] = 0",
      "Y[vf * 36 + vp * 6 + vq] = 0.0f", "X[vc * 36 + vp * 6 + vr * 6 + vq + vs - 7]"},
     {"for n", "vn *"}},
};

static bool contains(const char *hay, const char *needle) { return strstr(hay, needle) != NULL; }

static void run_case(const pass_case *c)
{
    int before = failures;
    const char *pipeline = c->pipeline ? c->pipeline : pass_pipeline(1);
    ir_module *m = transform_and_validate(c->name, c->src, pipeline);
    if (m) {
        char *text = ir_module_to_string(m);
        for (int i = 0; i < 8 && c->want[i]; i++)
            if (!contains(text, c->want[i])) {
                printf("FAIL %s: output lacks \"%s\"\n", c->name, c->want[i]);
                failures++;
            }
        for (int i = 0; i < 6 && c->reject[i]; i++)
            if (contains(text, c->reject[i])) {
                printf("FAIL %s: output still contains \"%s\"\n", c->name, c->reject[i]);
                failures++;
            }
        /* The result must read back and print the same (it is a valid module). */
        ir_module *again = parse(c->name, text);
        char *text2 = again ? ir_module_to_string(again) : NULL;
        if (!text2 || strcmp(text, text2) != 0) {
            printf("FAIL %s: the output does not parse back to itself\n", c->name);
            failures++;
        }
        if (failures != before)
            printf("---- output:\n%s----\n", text);
        free(text2);
        ir_module_free(again);
        free(text);
        ir_module_free(m);
    }
    printf("%s %s\n", failures == before ? "ok  " : "FAIL", c->name);
}

/* ---------------------------------------------------------------- the pass manager */

static char *read_stream(FILE *f)
{
    fflush(f);
    long n = ftell(f);
    char *s = calloc(1, (size_t)(n > 0 ? n : 0) + 1);
    rewind(f);
    if (n > 0 && fread(s, 1, (size_t)n, f) != (size_t)n)
        s[0] = 0;
    return s;
}

static const char *small_module =
    "module \"small\"\n"
    "func @f(A: f32[2, 2], B: f32[2, 2]) {\n"
    "  for i in 0..2 {\n"
    "    for j in 0..2 {\n"
    "      B[i, j] = A[i, j] + 0.0f * 1.0f\n"
    "    }\n"
    "  }\n"
    "}\n";

/* pass_lower_for_emit: the emission pipeline runs on a copy of the
 * functions; the original keeps its scalar IR, the copy's graph calls the
 * copy's functions, and both compute the same bits. */
static const char *vector_module =
    "module \"vec\"\n"
    "func @f(A: f32[2, 21], B: f32[2, 21]) {\n"
    "  for i in 0..2 {\n"
    "    for j in 0..21 vectorized {\n"
    "      B[i, j] = A[i, j] * 2.0f + 1.0f\n"
    "    }\n"
    "  }\n"
    "}\n"
    "graph {\n"
    "  input A: f32[2, 21]\n"
    "  output B: f32[2, 21]\n"
    "  call @f(A, B)\n"
    "}\n";

static void test_lower_for_emit(void)
{
    int before = failures;
    CHECK(strcmp(pass_emit_pipeline(0), "vectorize") == 0);
    for (int level = 1; level <= 3; level++)
        CHECK(strcmp(pass_emit_pipeline(level), "vectorize,simplify") == 0);
    ir_module *m = parse("vec", vector_module);
    diag d;
    diag_init(&d, stdout);
    ir_module *c = m ? pass_lower_for_emit(m, pass_emit_pipeline(2), NULL, &d) : NULL;
    diag_fini(&d);
    CHECK(c != NULL);
    if (m && c) {
        char *orig = NULL, *low = NULL;
        size_t n1 = 0, n2 = 0;
        FILE *f1 = open_memstream(&orig, &n1), *f2 = open_memstream(&low, &n2);
        ir_print_module(f1, m);
        ir_print_module(f2, c);
        fclose(f1);
        fclose(f2);
        CHECK(!contains(orig, "ramp(") && contains(orig, "for j in 0..21 vectorized"));
        CHECK(contains(low, "step") && contains(low, "ramp("));
        CHECK(c->nfuncs == 1 && c->funcs[0] != m->funcs[0] && c->graph.ncalls == 1 &&
              c->graph.calls[0].fn == c->funcs[0] && m->graph.calls[0].fn == m->funcs[0]);
        CHECK(validate_func(m, c, 0, "lower_for_emit", 0) > 0);
        free(orig);
        free(low);
    }
    ir_module_free(c);
    ir_module_free(m);
    check(failures == before, "pass_lower_for_emit: the emission passes on a copy");
}

static void test_manager(void)
{
    int before = failures;
    /* the table and the pipelines name real passes */
    int n;
    const pass_info *t = pass_table(&n);
    CHECK(n >= 4);
    for (int i = 0; i < n; i++)
        CHECK(pass_lookup(t[i].name) == &t[i] && t[i].description && t[i].run);
    CHECK(pass_lookup("frobnicate") == NULL);
    CHECK(strcmp(pass_pipeline(0), "schedule,flatten") == 0);
    CHECK(strcmp(pass_pipeline(1), "simplify,schedule,dce,flatten,simplify") == 0);
    CHECK(strcmp(pass_pipeline(7), pass_pipeline(3)) == 0);

    /* an unknown pass is reported before anything runs */
    FILE *err = tmpfile();
    diag d;
    diag_init(&d, err);
    ir_module *m = parse("small", small_module);
    char *orig = ir_module_to_string(m);
    CHECK(!pass_run_pipeline(m, "flatten,foo", NULL, &d));
    char *msg = read_stream(err);
    CHECK(strcmp(msg, "tec: error: unknown pass 'foo' (see tec --list-passes)\n") == 0);
    char *now = ir_module_to_string(m);
    CHECK(strcmp(orig, now) == 0);   /* flatten did not run */
    free(msg);
    free(now);
    free(orig);
    diag_fini(&d);
    fclose(err);

    /* an empty name, and an unknown name in --dump-ir */
    err = tmpfile();
    diag_init(&d, err);
    CHECK(!pass_run_pipeline(m, "flatten,,simplify", NULL, &d));
    pass_options o = {.dump_ir = "simplfy"};
    CHECK(!pass_run_pipeline(m, "simplify", &o, &d));
    msg = read_stream(err);
    CHECK(strcmp(msg, "tec: error: empty pass name in pipeline 'flatten,,simplify'\n"
                      "tec: error: unknown pass 'simplfy' (see tec --list-passes)\n") == 0);
    free(msg);
    diag_fini(&d);
    fclose(err);

    /* --dump-ir prints after the named passes only */
    FILE *dump = tmpfile();
    diag_init(&d, stdout);
    o = (pass_options){.dump_ir = "flatten", .dump_out = dump};
    CHECK(pass_run_pipeline(m, "simplify,flatten", &o, &d));
    char *text = read_stream(dump);
    CHECK(strncmp(text, "# -- IR after flatten --\nmodule \"small\"\n", 40) == 0);
    CHECK(!contains(text, "after simplify"));
    CHECK(contains(text, "B[i * 2 + j] = A[i * 2 + j] + 0.0f\n"));
    free(text);
    fclose(dump);
    ir_module_free(m);

    /* --dump-dir writes the input and one numbered file per pass */
    char dir[] = "/tmp/tec-test-passes-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char sub[128], path[256];
    snprintf(sub, sizeof sub, "%s/dumps", dir);   /* created by the pass manager */
    m = parse("small", small_module);
    o = (pass_options){.dump_dir = sub, .base = "net"};
    CHECK(pass_run_pipeline(m, "simplify,flatten,simplify", &o, &d));
    static const char *const files[] = {"net.00.input.tir", "net.01.simplify.tir",
                                        "net.02.flatten.tir", "net.03.simplify.tir"};
    for (int i = 0; i < 4; i++) {
        snprintf(path, sizeof path, "%s/%s", sub, files[i]);
        FILE *f = fopen(path, "r");
        CHECK(f != NULL);
        if (!f)
            continue;
        char *s = calloc(1, 4096);
        size_t len = fread(s, 1, 4095, f);
        fclose(f);
        ir_module *back = parse(path, s);
        CHECK(len > 0 && back != NULL);
        if (i == 0)
            CHECK(contains(s, "A[i, j] + 0.0f * 1.0f"));
        if (i == 1)
            CHECK(contains(s, "B[i, j] = A[i, j] + 0.0f\n"));
        if (i == 3)
            CHECK(contains(s, "B[i * 2 + j] = A[i * 2 + j] + 0.0f\n"));
        ir_module_free(back);
        free(s);
        unlink(path);
    }
    snprintf(path, sizeof path, "%s/net.04.simplify.tir", sub);
    CHECK(access(path, F_OK) != 0);
    rmdir(sub);
    /* a dump directory that cannot be created is an error, not a crash */
    err = tmpfile();
    diag_init(&d, err);
    snprintf(path, sizeof path, "%s/missing/deeper", dir);
    o = (pass_options){.dump_dir = path, .base = "net"};
    CHECK(!pass_run_pipeline(m, "simplify", &o, &d));
    msg = read_stream(err);
    CHECK(strncmp(msg, "tec: error: cannot create IR dump directory", 43) == 0);
    free(msg);
    diag_fini(&d);
    fclose(err);
    rmdir(dir);
    ir_module_free(m);
    printf("%s pass manager: table, pipelines, unknown passes, --dump-ir, --dump-dir\n",
           failures == before ? "ok  " : "FAIL");
}

/* ---------------------------------------------------------------- random expressions */

/* A growing text buffer for generated modules. */
typedef struct text_buf {
    char s[16384];
    size_t n;
} text_buf;

static void put(text_buf *t, const char *s)
{
    size_t len = strlen(s);
    if (t->n + len < sizeof t->s) {
        memcpy(t->s + t->n, s, len + 1);
        t->n += len;
    }
}

static const char *pick(const char *const *choices, size_t n) { return choices[rng() % n]; }
#define PICK(arr) pick(arr, sizeof arr / sizeof arr[0])

static void gen_int(text_buf *t, int depth);
static void gen_float(text_buf *t, int depth);

static void gen_cond(text_buf *t, int depth, bool is_float)
{
    static const char *const cmps[] = {" < ", " <= ", " > ", " >= ", " == ", " != "};
    switch (rng() % 6) {
    case 0:
        put(t, "(");
        gen_cond(t, depth - 1, is_float);
        put(t, rng() % 2 ? " && " : " || ");
        gen_cond(t, depth - 1, !is_float);
        put(t, ")");
        return;
    case 1:
        put(t, "!(");
        gen_cond(t, depth - 1, is_float);
        put(t, ")");
        return;
    default:
        put(t, "(");
        (is_float ? gen_float : gen_int)(t, depth - 1);
        put(t, PICK(cmps));
        (is_float ? gen_float : gen_int)(t, depth - 1);
        put(t, ")");
    }
}

/* An i64 expression over the loop variables i in 0..4, j in 0..8 and the
 * data X[8], with constants near 0 and near the ends of int64. */
static void gen_int(text_buf *t, int depth)
{
    static const char *const leaves[] = {"i", "j", "X[j]", "X[i]", "0", "1", "-1", "2", "3",
                                         "7", "8", "-8", "9223372036854775807",
                                         "(-9223372036854775807 - 1)", "i", "j"};
    static const char *const ops[] = {" + ", " - ", " * "};
    static const char *const divisors[] = {"1", "2", "3", "4", "8", "-3", "16"};
    if (depth <= 0 || rng() % 5 == 0) {
        put(t, PICK(leaves));
        return;
    }
    switch (rng() % 9) {
    case 0: case 1: case 2:
        put(t, "(");
        gen_int(t, depth - 1);
        put(t, PICK(ops));
        gen_int(t, depth - 1);
        put(t, ")");
        return;
    case 3: case 4:
        put(t, rng() % 2 ? "floordiv(" : "floormod(");
        gen_int(t, depth - 1);
        put(t, ", ");
        if (rng() % 4) {
            put(t, PICK(divisors));
        } else {   /* never zero: division by zero would stop the interpreter */
            put(t, "max(");
            gen_int(t, depth - 1);
            put(t, ", 1)");
        }
        put(t, ")");
        return;
    case 5:
        put(t, rng() % 2 ? "min(" : "max(");
        gen_int(t, depth - 1);
        put(t, ", ");
        gen_int(t, depth - 1);
        put(t, ")");
        return;
    case 6:
        put(t, "select(");
        gen_cond(t, depth - 1, false);
        put(t, ", ");
        gen_int(t, depth - 1);
        put(t, ", ");
        gen_int(t, depth - 1);
        put(t, ")");
        return;
    case 7:
        put(t, "-(");
        gen_int(t, depth - 1);
        put(t, ")");
        return;
    default: {
        /* only floats in range: converting others is undefined in C */
        text_buf x = {.n = 0};
        gen_float(&x, depth - 1);
        put(t, "cast<i64>(select(");
        put(t, x.s);
        put(t, " < 1000.0f && ");
        put(t, x.s);
        put(t, " > -1000.0f, ");
        put(t, x.s);
        put(t, ", 0.0f))");
        return;
    }
    }
}

/* An f32 expression over F[8] with signed zeros, infinities and NaN. */
static void gen_float(text_buf *t, int depth)
{
    static const char *const leaves[] = {"F[j]", "F[i]", "0.0f", "-0.0f", "1.0f", "2.5f",
                                         "0.1f", "16777216.0f", "inff", "nanf", "F[j]", "3.0f"};
    static const char *const ops[] = {" + ", " - ", " * ", " / "};
    if (depth <= 0 || rng() % 5 == 0) {
        put(t, PICK(leaves));
        return;
    }
    switch (rng() % 7) {
    case 0: case 1: case 2:
        put(t, "(");
        gen_float(t, depth - 1);
        put(t, PICK(ops));
        gen_float(t, depth - 1);
        put(t, ")");
        return;
    case 3:
        put(t, rng() % 2 ? "min(" : "max(");
        gen_float(t, depth - 1);
        put(t, ", ");
        gen_float(t, depth - 1);
        put(t, ")");
        return;
    case 4:
        put(t, "select(");
        gen_cond(t, depth - 1, true);
        put(t, ", ");
        gen_float(t, depth - 1);
        put(t, ", ");
        gen_float(t, depth - 1);
        put(t, ")");
        return;
    case 5:
        put(t, "-(");
        gen_float(t, depth - 1);
        put(t, ")");
        return;
    default:
        put(t, "cast<f32>(");
        gen_int(t, depth - 1);
        put(t, ")");
        return;
    }
}

/* Random modules through simplify and the -O2 pipeline, each validated by
 * the interpreter.  A generated module the parser rejects is a bug in the
 * generator, reported as a failure. */
static void test_random(void)
{
    int before = failures, nmodules = 0;
    int count = getenv("TEC_TEST_RANDOM") ? atoi(getenv("TEC_TEST_RANDOM")) : 150;
    for (int n = 0; n < count; n++) {
        text_buf t = {.n = 0};
        put(&t, "module \"r\"\nfunc @f(X: i64[8], F: f32[8], Y: i64[32], G: f32[32]) {\n"
                "  for i in 0..4 {\n    for j in 0..8 {\n      Y[i * 8 + j] = ");
        gen_int(&t, 5);
        put(&t, "\n      G[i * 8 + j] = ");
        gen_float(&t, 4);
        put(&t, "\n      if ");
        gen_cond(&t, 3, false);
        put(&t, " {\n        Y[i * 8 + j] = ");
        gen_int(&t, 3);
        put(&t, "\n      }\n    }\n  }\n}\n");
        const char *pipeline = n % 2 ? "simplify" : pass_pipeline(2);
        int f0 = failures;
        ir_module *m = transform_and_validate("random module", t.s, pipeline);
        if (failures != f0)
            printf("---- input (%s):\n%s----\n", pipeline, t.s);
        ir_module_free(m);
        nmodules++;
        if (failures - before > 3)
            break;
    }
    printf("%s %d random modules keep their meaning through simplify and -O2\n",
           failures == before ? "ok  " : "FAIL", nmodules);
}

/* ---------------------------------------------------------------- the .tir pass tests */

/* The pipeline of a file's RUN line (--passes=LIST), or NULL. */
static char *run_line_pipeline(const char *text)
{
    const char *run = strstr(text, "RUN:");
    const char *p = run ? strstr(run, "--passes=") : NULL;
    const char *eol = run ? strchr(run, '\n') : NULL;
    if (!p || (eol && p > eol))
        return NULL;
    p += strlen("--passes=");
    size_t n = strcspn(p, " \t\n|");
    char *s = malloc(n + 1);
    memcpy(s, p, n);
    s[n] = 0;
    return s;
}


/* ---------------------------------------------------------------- memplan */

/* Checks a plan: aligned offsets, every item inside the arena, never-live
 * items at 0, and no shared byte between two items live at the same call. */
static bool plan_ok(const pass_mem_item *it, int n, int64_t align, int64_t arena)
{
    if (arena < 0 || arena % align != 0)
        return false;
    for (int i = 0; i < n; i++) {
        bool live = it[i].first >= 0 && it[i].first <= it[i].last;
        if (it[i].offset < 0 || it[i].offset % align != 0 ||
            it[i].offset + it[i].bytes > arena || (!live && it[i].offset != 0))
            return false;
        for (int j = 0; live && j < i; j++) {
            bool lj = it[j].first >= 0 && it[j].first <= it[j].last;
            if (!lj || it[j].first > it[i].last || it[i].first > it[j].last)
                continue;
            if (it[i].bytes > 0 && it[j].bytes > 0 && it[i].offset < it[j].offset + it[j].bytes &&
                it[j].offset < it[i].offset + it[i].bytes)
                return false;
        }
    }
    return true;
}

static const char memplan_module[] =
    "module \"mp\"\n"
    "func @dbl(x: f32[16], y: f32[16]) {\n"
    "  for i in 0..16 {\n"
    "    y[i] = x[i] * 2.0f\n"
    "  }\n"
    "}\n"
    "func @add(a: f32[16], b: f32[16], c: f32[16]) {\n"
    "  for i in 0..16 {\n"
    "    c[i] = a[i] + b[i]\n"
    "  }\n"
    "}\n"
    "graph {\n"
    "  input x: f32[16] init(-1, 1)\n"
    "  temp t1: f32[16]\n"
    "  temp t2: f32[16]\n"
    "  temp t3: f32[16]\n"
    "  temp t4: f32[16]\n"
    "  output y: f32[16]\n"
    "  call @dbl(x, t1)\n"
    "  call @dbl(t1, t2)\n"
    "  call @dbl(t2, t3)\n"
    "  call @add(t3, t1, t4)\n"
    "  call @dbl(t4, y)\n"
    "}\n";

/* Runs m's graph with the interpreter, the placed temps in an arena as the
 * executor places them (filled with 0xff first); returns y's data. */
static bool interp_planned(const ir_module *m, float *y)
{
    const ir_graph *g = &m->graph;
    void **data = calloc((size_t)g->nbufs, sizeof *data);
    unsigned char *arena = g->has_arena ? malloc((size_t)g->arena_bytes + 1) : NULL;
    if (arena)
        memset(arena, 0xff, (size_t)g->arena_bytes + 1);
    for (int i = 0; i < g->nbufs; i++) {
        const ir_buffer *b = g->bufs[i];
        data[i] = b->in_arena ? (void *)(arena + b->arena_offset)
                              : calloc((size_t)ir_buffer_numel(b), sizeof(float));
        if (b->role == IR_BUF_INPUT)
            for (int k = 0; k < 16; k++)
                ((float *)data[i])[k] = (float)k - 7.5f;
    }
    char err[256];
    bool ok = ir_interp_module(m, data, err, sizeof err);
    for (int i = 0; i < g->nbufs; i++) {
        if (g->bufs[i]->role == IR_BUF_OUTPUT)
            memcpy(y, data[i], 16 * sizeof(float));
        if (!g->bufs[i]->in_arena)
            free(data[i]);
    }
    free(arena);
    free(data);
    return ok;
}

static void test_memplan(void)
{
    int before = failures;
    /* random problems: the plan is always sound, and never worse than giving
     * every live item its own aligned slot */
    for (int trial = 0; trial < 2000; trial++) {
        int n = 1 + (int)(rng() % 40);
        int64_t align = (int64_t)1 << (rng() % 8);
        int ncalls = 1 + (int)(rng() % 30);
        pass_mem_item it[40];
        int64_t slots = 0;
        for (int i = 0; i < n; i++) {
            int a = (int)(rng() % (uint64_t)ncalls), b = (int)(rng() % (uint64_t)ncalls);
            it[i].first = a < b ? a : b;
            it[i].last = a < b ? b : a;
            if (rng() % 8 == 0)
                it[i].first = it[i].last = -1;
            it[i].bytes = rng() % 4 == 0 ? 64 * (int64_t)(rng() % 8) : (int64_t)(rng() % 5000);
            it[i].offset = 12345;
            slots += (it[i].bytes + align - 1) / align * align;
        }
        int64_t arena = pass_memplan_solve(it, n, align);
        bool ok = plan_ok(it, n, align, arena) && arena <= slots;
        CHECK(ok);
        if (!ok)
            break;
    }
    /* a chain: each item lives two calls; two slots suffice */
    pass_mem_item chain[6];
    for (int i = 0; i < 6; i++)
        chain[i] = (pass_mem_item){100, i, i + 1, -1};
    CHECK(pass_memplan_solve(chain, 6, 64) == 256);
    CHECK(chain[0].offset == 0 && chain[1].offset == 128 && chain[2].offset == 0);
    /* largest first: the big one gets 0, the small ones fit above it */
    pass_mem_item mix[3] = {{10, 0, 2, -1}, {1000, 1, 1, -1}, {10, 2, 3, -1}};
    CHECK(pass_memplan_solve(mix, 3, 64) == 1088);
    CHECK(mix[1].offset == 0 && mix[0].offset == 1024 && mix[2].offset == 0);
    /* errors: an alignment that is not a power of two, overflow */
    CHECK(pass_memplan_solve(mix, 3, 48) == -1);
    pass_mem_item huge[2] = {{INT64_MAX - 100, 0, 1, -1}, {1000, 1, 2, -1}};
    CHECK(pass_memplan_solve(huge, 2, 64) == -1);
    CHECK(pass_memplan_solve(NULL, 0, 64) == 0);

    /* the pass: t1 (calls 1..4) and t3 (3..4) are live together, t2 (2..3)
     * dies before t4 (4..5) is born, so they share */
    ir_module *m = parse("memplan", memplan_module);
    CHECK(m != NULL);
    if (m) {
        float want[16], got[16];
        CHECK(interp_planned(m, want));
        CHECK(run(m, "memplan"));
        const ir_graph *g = &m->graph;
        ir_buffer *t1 = ir_graph_find_buffer(m, "t1"), *t2 = ir_graph_find_buffer(m, "t2");
        ir_buffer *t3 = ir_graph_find_buffer(m, "t3"), *t4 = ir_graph_find_buffer(m, "t4");
        CHECK(g->has_arena && g->arena_bytes == 192);
        CHECK(t1->in_arena && t2->in_arena && t3->in_arena && t4->in_arena);
        CHECK(!ir_graph_find_buffer(m, "x")->in_arena && !ir_graph_find_buffer(m, "y")->in_arena);
        CHECK(t2->arena_offset == t4->arena_offset);
        CHECK(t1->arena_offset != t3->arena_offset && t2->arena_offset != t3->arena_offset);
        for (int i = 0; i < g->nbufs; i++)
            CHECK(g->bufs[i]->arena_offset % 64 == 0);
        CHECK(interp_planned(m, got));
        CHECK(memcmp(want, got, sizeof want) == 0);
        /* the text round-trips */
        char *text = ir_module_to_string(m);
        ir_module *m2 = parse("memplan2", text);
        char *text2 = m2 ? ir_module_to_string(m2) : NULL;
        CHECK(text2 && strcmp(text, text2) == 0);
        CHECK(text && strstr(text, "  arena 192\n") && strstr(text, "  temp t1: f32[16] arena("));
        free(text);
        free(text2);
        ir_module_free(m2);
        /* a plan that overlaps two live temps fails verification */
        t3->arena_offset = t1->arena_offset;
        FILE *err = tmpfile();
        diag d;
        diag_init(&d, err);
        CHECK(!ir_verify(m, "test", &d));
        char *msg = read_stream(err);
        CHECK(msg && strstr(msg, "are live at the same time but share arena bytes"));
        free(msg);
        diag_fini(&d);
        fclose(err);
        ir_module_free(m);
    }
    printf("%s memplan: random plans are sound, the pass shares dead temps' storage\n",
           failures == before ? "ok  " : "FAIL");
}

static void test_tir_files(const char *srcdir)
{
    char dirname[4096];
    snprintf(dirname, sizeof dirname, "%s/testsuite/tir/passes", srcdir);
    DIR *dir = opendir(dirname);
    if (!dir) {
        printf("FAIL cannot open %s\n", dirname);
        failures++;
        return;
    }
    int nfiles = 0, before = failures;
    struct dirent *ent;
    while ((ent = readdir(dir))) {
        size_t len = strlen(ent->d_name);
        if (len < 5 || strcmp(ent->d_name + len - 4, ".tir") != 0)
            continue;
        char path[8192];
        snprintf(path, sizeof path, "%s/%s", dirname, ent->d_name);
        double t0 = cpu_seconds();
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        fseek(f, 0, SEEK_END);
        long n = ftell(f);
        rewind(f);
        char *text = calloc(1, (size_t)n + 1);
        size_t got = fread(text, 1, (size_t)n, f);
        fclose(f);
        text[got] = 0;
        char *pipeline = run_line_pipeline(text);
        if (!pipeline) {
            printf("FAIL %s: no --passes= in its RUN line\n", ent->d_name);
            failures++;
        } else {
            ir_module *m = transform_and_validate(ent->d_name, text, pipeline);
            ir_module_free(m);
            nfiles++;
            printf("time %s: %.2f s CPU\n", ent->d_name, cpu_seconds() - t0);
        }
        free(pipeline);
        free(text);
    }
    closedir(dir);
    CHECK(nfiles >= 10);
    printf("%s %d testsuite/tir/passes files keep their meaning through their pipelines "
           "(%d functions on fewer inputs: notes above)\n",
           failures == before ? "ok  " : "FAIL", nfiles, reduced_funcs);
}

int main(int argc, char **argv)
{
    /* TEC_TEST_SEED explores other random inputs; the default is fixed so
     * that a failure reproduces. */
    const char *seed = getenv("TEC_TEST_SEED");
    if (seed && *seed)
        rng_state ^= strtoull(seed, NULL, 10) * 0x9e3779b97f4a7c15u + 1;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        run_case(&cases[i]);
    test_manager();
    test_lower_for_emit();
    test_random();
    test_memplan();
    test_tir_files(argc > 1 ? argv[1] : ".");
    if (failures)
        printf("%d failure(s)\n", failures);
    return failures ? 1 : 0;
}
