/* bench/gemm_blas.c — times OpenBLAS's cblas_sgemm for bench/gemm.sh, and
 * checks tec's answers against it.
 *
 *   cc -O2 bench/gemm_blas.c -o gemm_blas -lopenblas -lm
 *   OPENBLAS_NUM_THREADS=1 ./gemm_blas [--min-time S] [--min-reps N] MxKxN ...
 *   ./gemm_blas --write-inputs DIR MxKxN     write DIR/A.npy and DIR/B.npy
 *   ./gemm_blas --check FILE.npy MxKxN       compare FILE (C = A·B) with sgemm
 *
 * Timing, for each shape: row-major C = A·B (alpha 1, beta 0) with A M×K,
 * B K×N and C M×N, 64-byte aligned, filled with pseudo-random values in
 * [-1, 1].  One call warms up (thread start, page faults, OpenBLAS's
 * buffers); up to three more estimate the time of one call, which sets the
 * repeat count: at least --min-reps (default 20) and enough calls to fill
 * --min-time seconds (default 0.3).  Each call is timed alone
 * (CLOCK_MONOTONIC) and the median is reported.  A few entries of C are
 * checked against a double-precision dot product, so a broken library cannot
 * report a fast wrong answer.
 *
 * Timing output (one line each, fields separated by spaces):
 *   corename NAME                 openblas_get_corename(): the kernel set run
 *   config TEXT                   openblas_get_config()
 *   threads N                     openblas_get_num_threads()
 *   gemm M K N REPS MEDIAN_US GFLOPS   GFLOP/s = 2*M*N*K / median
 *
 * --write-inputs writes the same A and B as .npy files (for tec --input);
 * --check recomputes C = A·B with sgemm and accepts FILE.npy when every
 * entry is within 2·K·2^-24·(|A|·|B|)[i][j] of it (the usual bound on float
 * dot products, once for each side), printing "check ok max-error E".
 * Exit status 1 on a bad argument, an I/O or allocation failure or a wrong
 * result. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cblas.h>

/* OpenBLAS extensions: declared here too, so that the harness also compiles
 * when <cblas.h> is the reference (netlib) header that lacks them. */
char *openblas_get_corename(void);
char *openblas_get_config(void);
int openblas_get_num_threads(void);

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* An n-float buffer, 64-byte aligned; filled with values in [-1, 1] from
 * *seed when seed is not NULL. */
static float *alloc_matrix(long n, uint64_t *seed)
{
    size_t bytes = ((size_t)n * sizeof(float) + 63) / 64 * 64;
    float *p = aligned_alloc(64, bytes ? bytes : 64);
    if (!p) {
        fprintf(stderr, "gemm_blas: out of memory\n");
        return NULL;
    }
    for (long i = 0; seed && i < n; i++) {
        *seed = *seed * 6364136223846793005ULL + 1442695040888963407ULL;
        p[i] = (float)((double)(*seed >> 40) / (double)(1ULL << 24) * 2.0 - 1.0);
    }
    return p;
}

/* A and B of a shape: the same values for timing, --write-inputs and --check. */
static int make_inputs(int M, int K, int N, float **A, float **B)
{
    uint64_t seed = 42;
    *A = alloc_matrix((long)M * K, &seed);
    *B = *A ? alloc_matrix((long)K * N, &seed) : NULL;
    return *B != NULL;
}

static void sgemm(int M, int K, int N, const float *A, const float *B, float *C)
{
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.0f, A, K, B, N, 0.0f, C,
                N);
}

/* C[i][j] against a double-precision dot product, at a few places. */
static int spot_check(int M, int K, int N, const float *A, const float *B, const float *C)
{
    const int pi[] = {0, M - 1, M / 2, M / 3}, pj[] = {0, N - 1, N / 3, N / 2};
    for (int a = 0; a < 4; a++)
        for (int b = 0; b < 4; b++) {
            int i = pi[a], j = pj[b];
            double want = 0, mag = 0;
            for (int k = 0; k < K; k++) {
                double t = (double)A[(long)i * K + k] * (double)B[(long)k * N + j];
                want += t;
                mag += fabs(t);
            }
            double got = C[(long)i * N + j];
            if (fabs(got - want) > 2.0 * K * 0x1p-24 * mag + 1e-6) {
                fprintf(stderr,
                        "gemm_blas: %dx%dx%d: wrong result at C[%d][%d]: %g, expected %g\n", M, K,
                        N, i, j, got, want);
                return 0;
            }
        }
    return 1;
}

static int bench(int M, int K, int N, double min_time, int min_reps)
{
    float *A, *B, *C;
    if (!make_inputs(M, K, N, &A, &B) || !(C = alloc_matrix((long)M * N, NULL)))
        return 0;
    sgemm(M, K, N, A, B, C); /* warm-up */
    if (!spot_check(M, K, N, A, B, C))
        return 0;
    /* Estimate one call from the fastest of three (fewer when slow). */
    double est = 1e30, spent = 0;
    for (int r = 0; r < 3 && spent < min_time; r++) {
        double s = now_s();
        sgemm(M, K, N, A, B, C);
        double t = now_s() - s;
        spent += t;
        est = t < est ? t : est;
    }
    long reps = (long)ceil(min_time / (est > 1e-9 ? est : 1e-9));
    if (reps < min_reps)
        reps = min_reps;
    if (reps > 100000)
        reps = 100000;
    double *t = malloc(sizeof *t * (size_t)reps);
    if (!t) {
        fprintf(stderr, "gemm_blas: out of memory\n");
        return 0;
    }
    for (long r = 0; r < reps; r++) {
        double s = now_s();
        sgemm(M, K, N, A, B, C);
        t[r] = now_s() - s;
    }
    qsort(t, (size_t)reps, sizeof *t, cmp_double);
    double med = reps % 2 ? t[reps / 2] : (t[reps / 2 - 1] + t[reps / 2]) / 2;
    printf("gemm %d %d %d %ld %.1f %.2f\n", M, K, N, reps, med * 1e6,
           2.0 * M * N * K / med * 1e-9);
    fflush(stdout);
    free(t);
    free(A);
    free(B);
    free(C);
    return 1;
}

/* ------------------------------------------------------------------ .npy */

static int write_npy(const char *path, const float *p, int rows, int cols)
{
    char hdr[128];
    int n = snprintf(hdr, sizeof hdr, "{'descr': '<f4', 'fortran_order': False, 'shape': (%d, %d), }",
                     rows, cols);
    int total = (10 + n + 1 + 63) / 64 * 64; /* magic, version, length, text, '\n' */
    memset(hdr + n, ' ', (size_t)(total - 10 - n - 1));
    hdr[total - 10 - 1] = '\n';
    FILE *f = fopen(path, "wb");
    if (!f) {
        fprintf(stderr, "gemm_blas: cannot write %s\n", path);
        return 0;
    }
    unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0,
                             (unsigned char)((total - 10) & 0xff),
                             (unsigned char)((total - 10) >> 8)};
    int ok = fwrite(pre, 1, 10, f) == 10 &&
             fwrite(hdr, 1, (size_t)(total - 10), f) == (size_t)(total - 10) &&
             fwrite(p, sizeof *p, (size_t)rows * cols, f) == (size_t)rows * cols;
    if (fclose(f) != 0 || !ok) {
        fprintf(stderr, "gemm_blas: cannot write %s\n", path);
        return 0;
    }
    return 1;
}

/* A little-endian float32 C-order .npy of rows x cols, into a new buffer. */
static float *read_npy(const char *path, int rows, int cols)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "gemm_blas: cannot read %s\n", path);
        return NULL;
    }
    unsigned char pre[12];
    char hdr[4096];
    float *p = NULL;
    const char *why = "not a .npy file";
    if (fread(pre, 1, 8, f) != 8 || memcmp(pre, "\x93NUMPY", 6) != 0 || pre[6] < 1 || pre[6] > 3)
        goto bad;
    size_t len;
    if (pre[6] == 1) {
        if (fread(pre + 8, 1, 2, f) != 2)
            goto bad;
        len = pre[8] | (size_t)pre[9] << 8;
    } else {
        if (fread(pre + 8, 1, 4, f) != 4)
            goto bad;
        len = pre[8] | (size_t)pre[9] << 8 | (size_t)pre[10] << 16 | (size_t)pre[11] << 24;
    }
    if (len >= sizeof hdr || fread(hdr, 1, len, f) != len)
        goto bad;
    hdr[len] = 0;
    char want[64];
    snprintf(want, sizeof want, "(%d, %d)", rows, cols);
    why = "not a float32 C-order matrix of the expected shape";
    if (!strstr(hdr, "'<f4'") || !strstr(hdr, "'fortran_order': False") || !strstr(hdr, want))
        goto bad;
    if (!(p = alloc_matrix((long)rows * cols, NULL)))
        goto out;
    why = "truncated";
    if (fread(p, sizeof *p, (size_t)rows * cols, f) != (size_t)rows * cols)
        goto bad;
    goto out;
bad:
    fprintf(stderr, "gemm_blas: %s: %s\n", path, why);
    free(p);
    p = NULL;
out:
    fclose(f);
    return p;
}

static int write_inputs(const char *dir, int M, int K, int N)
{
    float *A, *B;
    if (!make_inputs(M, K, N, &A, &B))
        return 0;
    char path[4096];
    snprintf(path, sizeof path, "%s/A.npy", dir);
    int ok = write_npy(path, A, M, K);
    snprintf(path, sizeof path, "%s/B.npy", dir);
    ok = ok && write_npy(path, B, K, N);
    free(A);
    free(B);
    return ok;
}

static int check_file(const char *path, int M, int K, int N)
{
    float *A, *B, *C, *mag, *got;
    if (!make_inputs(M, K, N, &A, &B) || !(C = alloc_matrix((long)M * N, NULL)) ||
        !(mag = alloc_matrix((long)M * N, NULL)) || !(got = read_npy(path, M, N)))
        return 0;
    sgemm(M, K, N, A, B, C);
    for (long i = 0; i < (long)M * K; i++)
        A[i] = fabsf(A[i]);
    for (long i = 0; i < (long)K * N; i++)
        B[i] = fabsf(B[i]);
    sgemm(M, K, N, A, B, mag);
    double worst = 0, max_err = 0;
    long at = -1;
    for (long i = 0; i < (long)M * N; i++) {
        double err = fabs((double)got[i] - (double)C[i]);
        double rel = err / (2.0 * K * 0x1p-24 * mag[i] + 1e-6);
        if (!(rel <= worst)) { /* also catches NaN */
            worst = isnan(rel) ? INFINITY : rel;
            at = i;
        }
        max_err = err > max_err ? err : max_err;
    }
    int ok = worst <= 1;
    if (ok)
        printf("check ok max-error %.3g\n", max_err);
    else
        fprintf(stderr, "gemm_blas: %s: wrong result at C[%ld][%ld]: %g, OpenBLAS has %g\n", path,
                at / N, at % N, got[at], C[at]);
    free(A);
    free(B);
    free(C);
    free(mag);
    free(got);
    return ok;
}

static int parse_shape(const char *s, int *M, int *K, int *N)
{
    char extra;
    if (sscanf(s, "%dx%dx%d%c", M, K, N, &extra) == 3 && *M > 0 && *K > 0 && *N > 0)
        return 1;
    fprintf(stderr, "gemm_blas: bad shape '%s' (want MxKxN)\n", s);
    return 0;
}

static int usage(void)
{
    fprintf(stderr, "usage: gemm_blas [--min-time SECONDS] [--min-reps N] MxKxN ...\n"
                    "       gemm_blas --write-inputs DIR MxKxN\n"
                    "       gemm_blas --check FILE.npy MxKxN\n");
    return 1;
}

int main(int argc, char **argv)
{
    int M, K, N;
    if (argc == 4 && strcmp(argv[1], "--write-inputs") == 0)
        return parse_shape(argv[3], &M, &K, &N) && write_inputs(argv[2], M, K, N) ? 0 : 1;
    if (argc == 4 && strcmp(argv[1], "--check") == 0)
        return parse_shape(argv[3], &M, &K, &N) && check_file(argv[2], M, K, N) ? 0 : 1;
    double min_time = 0.3;
    int min_reps = 20, first = 1;
    for (; first + 1 < argc && strncmp(argv[first], "--", 2) == 0; first += 2) {
        if (strcmp(argv[first], "--min-time") == 0)
            min_time = atof(argv[first + 1]);
        else if (strcmp(argv[first], "--min-reps") == 0)
            min_reps = atoi(argv[first + 1]);
        else
            return usage();
    }
    if (first >= argc || !(min_time >= 0) || min_reps < 1)
        return usage();
    for (int i = first; i < argc; i++)
        if (!parse_shape(argv[i], &M, &K, &N))
            return usage();
    printf("corename %s\n", openblas_get_corename());
    printf("config %s\n", openblas_get_config());
    printf("threads %d\n", openblas_get_num_threads());
    fflush(stdout);
    for (int i = first; i < argc; i++) {
        parse_shape(argv[i], &M, &K, &N);
        if (!bench(M, K, N, min_time, min_reps))
            return 1;
    }
    return 0;
}
