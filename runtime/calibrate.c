/* runtime/calibrate.c — measures this machine's roof: peak FP32 FLOP/s with
 * vector FMAs and memory bandwidth with a STREAM-style triad, on one thread
 * and on all of them, and caches the result (doc/profile.md, "Roofline").
 */
#include "runtime/profile.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "codegen/codegen.h"
#include "ir/path.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define TEC_X86 1
#endif

uint64_t rt_llc_bytes(void)
{
    const char *env = getenv("TEC_LLC_BYTES");
    if (env && *env) {
        char *end;
        unsigned long long v = strtoull(env, &end, 10);
        if (*end == 0 && v > 0)
            return v;
    }
    /* The kernel's description (codegen/target.c), preferred to sysconf,
     * which in some virtual machines derives the size from cpuid and
     * reports the host's whole L3 (seen: 384 MiB for a guest whose kernel
     * says 32 MiB). */
    cg_caches c;
    cg_sysfs_caches(&c);
    if (c.llc > 0)
        return (uint64_t)c.llc;
#ifdef _SC_LEVEL3_CACHE_SIZE
    long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
    if (l3 > 0)
        return (uint64_t)l3;
#endif
#ifdef _SC_LEVEL2_CACHE_SIZE
    long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    if (l2 > 0)
        return (uint64_t)l2;
#endif
    return UINT64_C(8) << 20;
}

static void cpu_name(char *out, size_t len)
{
    snprintf(out, len, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) != 0)
            continue;
        char *colon = strchr(line, ':');
        if (!colon)
            continue;
        colon++;
        while (*colon == ' ' || *colon == '\t')
            colon++;
        colon[strcspn(colon, "\n")] = 0;
        snprintf(out, len, "%s", colon);
        break;
    }
    fclose(f);
}

/* ---------------------------------------------------------------- peak FLOP/s */

/* Each kernel runs `iters` rounds of NACC independent FMA chains (enough to
 * cover the FMA latency on two pipes) and returns a value that depends on
 * every chain, so nothing can be optimized away.  The inner loops must be
 * unrolled, or the accumulators live in memory and the kernel measures
 * store forwarding instead of FMAs. */
#define NACC 12

typedef float (*fma_kernel)(uint64_t iters);

#ifdef TEC_X86
__attribute__((target("avx512f"))) static float fma_avx512(uint64_t iters)
{
    __m512 acc[NACC];
    __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
    for (int i = 0; i < NACC; i++)
        acc[i] = _mm512_set1_ps((float)i);
    for (uint64_t n = 0; n < iters; n++)
#pragma GCC unroll 16   /* keep the accumulators in registers */
        for (int i = 0; i < NACC; i++)
            acc[i] = _mm512_fmadd_ps(acc[i], a, b);
    __m512 s = acc[0];
    for (int i = 1; i < NACC; i++)
        s = _mm512_add_ps(s, acc[i]);
    return _mm512_reduce_add_ps(s);
}

__attribute__((target("avx2,fma"))) static float fma_avx2(uint64_t iters)
{
    __m256 acc[NACC];
    __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
    for (int i = 0; i < NACC; i++)
        acc[i] = _mm256_set1_ps((float)i);
    for (uint64_t n = 0; n < iters; n++)
#pragma GCC unroll 16   /* keep the accumulators in registers */
        for (int i = 0; i < NACC; i++)
            acc[i] = _mm256_fmadd_ps(acc[i], a, b);
    __m256 s = acc[0];
    for (int i = 1; i < NACC; i++)
        s = _mm256_add_ps(s, acc[i]);
    float out[8];
    _mm256_storeu_ps(out, s);
    return out[0] + out[1] + out[2] + out[3] + out[4] + out[5] + out[6] + out[7];
}
#endif

/* Portable fallback: GCC vector extension, 4 lanes, multiply-add. */
typedef float v4f __attribute__((vector_size(16)));
static float fma_generic(uint64_t iters)
{
    v4f acc[NACC];
    v4f a = {0.999999f, 0.999999f, 0.999999f, 0.999999f}, b = {1e-7f, 1e-7f, 1e-7f, 1e-7f};
    for (int i = 0; i < NACC; i++)
        acc[i] = (v4f){(float)i, (float)i, (float)i, (float)i};
    for (uint64_t n = 0; n < iters; n++)
#pragma GCC unroll 16   /* keep the accumulators in registers */
        for (int i = 0; i < NACC; i++)
            acc[i] = acc[i] * a + b;
    v4f s = acc[0];
    for (int i = 1; i < NACC; i++)
        s += acc[i];
    return s[0] + s[1] + s[2] + s[3];
}

typedef struct isa_kernel {
    const char *name;
    fma_kernel fn;
    int lanes;
} isa_kernel;

static int available_kernels(isa_kernel *out)
{
    int n = 0;
#ifdef TEC_X86
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f"))
        out[n++] = (isa_kernel){"avx512", fma_avx512, 16};
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        out[n++] = (isa_kernel){"avx2", fma_avx2, 8};
#endif
    out[n++] = (isa_kernel){"generic", fma_generic, 4};
    return n;
}

static volatile float sink;

/* A start gate for worker threads, so they all run at once. */
typedef struct gate {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int state;          /* 0 wait, 1 go, -1 give up */
} gate;

typedef struct job {
    gate *start;
    fma_kernel fn;
    uint64_t iters;
    /* triad */
    double *a, *b, *c;
    size_t lo, hi;
    bool init;          /* first touch of the triad arrays */
} job;

static void triad_range(job *j)
{
    const double s = 3.0;
    double *restrict a = j->a, *restrict b = j->b, *restrict c = j->c;
    for (size_t i = j->lo; i < j->hi; i++)
        a[i] = b[i] + s * c[i];
}

static void *worker(void *arg)
{
    job *j = arg;
    pthread_mutex_lock(&j->start->mu);
    while (j->start->state == 0)
        pthread_cond_wait(&j->start->cv, &j->start->mu);
    int state = j->start->state;
    pthread_mutex_unlock(&j->start->mu);
    if (state < 0)
        return NULL;
    if (j->init) {      /* each thread touches the pages it will use first */
        for (size_t i = j->lo; i < j->hi; i++) {
            j->a[i] = 0;
            j->b[i] = 1;
            j->c[i] = 2;
        }
    } else if (j->fn) {
        sink = j->fn(j->iters);
    } else {
        triad_range(j);
    }
    return NULL;
}

static void open_gate(gate *g, int state)
{
    pthread_mutex_lock(&g->mu);
    g->state = state;
    pthread_cond_broadcast(&g->cv);
    pthread_mutex_unlock(&g->mu);
}

/* Runs `threads` copies of the job at once, splitting [0, n) between them;
 * returns the wall time in seconds (0 and *ok = false if a thread could not
 * start), and in *share (when not NULL) the fraction of it the threads ran
 * on a processor: well below 1 when other work took the machine. */
static double run_parallel(const job *base, int threads, size_t n, bool *ok, double *share)
{
    pthread_t *t = calloc((size_t)threads, sizeof *t);
    job *jobs = calloc((size_t)threads, sizeof *jobs);
    gate g = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};
    if (!t || !jobs) {
        free(t);
        free(jobs);
        *ok = false;
        return 0;
    }
    int started = 0;
    for (int i = 0; i < threads; i++) {
        jobs[i] = *base;
        jobs[i].start = &g;
        jobs[i].lo = n * (size_t)i / (size_t)threads;
        jobs[i].hi = n * (size_t)(i + 1) / (size_t)threads;
        if (pthread_create(&t[i], NULL, worker, &jobs[i]) != 0)
            break;
        started++;
    }
    double secs = 0;
    struct timespec c0, c1;
    bool cpu_ok = clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0) == 0;
    uint64_t s = rt_now_ns();
    open_gate(&g, started == threads ? 1 : -1);
    for (int i = 0; i < started; i++)
        pthread_join(t[i], NULL);
    secs = (double)(rt_now_ns() - s) / 1e9;
    cpu_ok = cpu_ok && clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1) == 0;
    if (share) {   /* the processor time the threads got of the wall time */
        double cpu = (double)(c1.tv_sec - c0.tv_sec) + (double)(c1.tv_nsec - c0.tv_nsec) / 1e9;
        *share = cpu_ok && secs > 0 ? cpu / (secs * threads) : 1;
    }
    if (started < threads)
        *ok = false;
    free(t);
    free(jobs);
    return secs;
}

/* Measurements are repeated and the best kept; how far the repeats
 * disagree, and how much of the wall time the threads ran, tell whether
 * the machine was busy (rt_calibration_steady). */
enum { REPS = 5 };

typedef struct steadiness {
    double spread;      /* the largest 1 - second best / best of a measurement */
    double share;       /* the lowest processor share of a best run */
} steadiness;

/* Keeps the best of the rates (with its processor share) in *best. */
static double keep_best(const double *rate, const double *share, int n, steadiness *st)
{
    int b = 0;
    for (int i = 1; i < n; i++)
        if (rate[i] > rate[b])
            b = i;
    double second = 0;
    for (int i = 0; i < n; i++)
        if (i != b && rate[i] > second)
            second = rate[i];
    if (n > 1 && rate[b] > 0 && 1 - second / rate[b] > st->spread)
        st->spread = 1 - second / rate[b];
    if (share[b] < st->share)
        st->share = share[b];
    return rate[b];
}

/* Best GFLOP/s of kernel k over REPS runs of ~0.1 s each. */
static double measure_peak(const isa_kernel *k, int threads, bool *ok, steadiness *st)
{
    uint64_t iters = 1 << 16;
    for (;;) {                     /* size the run to about 0.1 s on one thread */
        uint64_t s = rt_now_ns();
        sink = k->fn(iters);
        double secs = (double)(rt_now_ns() - s) / 1e9;
        if (secs > 0.05 || iters > (UINT64_C(1) << 40))
            break;
        iters *= 2;
    }
    double rate[REPS], share[REPS];
    for (int rep = 0; rep < REPS; rep++) {
        job j = {.fn = k->fn, .iters = iters};
        double secs = run_parallel(&j, threads, 0, ok, &share[rep]);
        if (!*ok || secs <= 0)
            return 0;
        rate[rep] = (double)iters * NACC * k->lanes * 2.0 * threads / secs;
    }
    return keep_best(rate, share, REPS, st) / 1e9;
}

/* Best triad bandwidth in GB/s over REPS passes (2 reads + 1 write per
 * element, as STREAM counts it; the best pass is the one least disturbed
 * by other work on the machine). */
static double measure_triad(double *a, double *b, double *c, size_t n, int threads, bool *ok,
                            steadiness *st)
{
    double rate[REPS], share[REPS];
    for (int rep = 0; rep < REPS; rep++) {
        job j = {.a = a, .b = b, .c = c};
        double secs = run_parallel(&j, threads, n, ok, &share[rep]);
        if (!*ok || secs <= 0)
            return 0;
        rate[rep] = 3.0 * sizeof(double) * (double)n / secs;
    }
    return keep_best(rate, share, REPS, st) / 1e9;
}

/* Each triad array: 4x the last-level cache, within [64 MiB, 256 MiB] and at
 * most an eighth of physical memory.  The upper bound keeps calibration to
 * seconds: first-touching gigabytes costs more than the measurement (some
 * virtual machines report the whole host's L3, which no single core sees). */
static size_t triad_bytes(uint64_t llc)
{
    uint64_t want = llc * 4, lo = UINT64_C(64) << 20, hi = UINT64_C(256) << 20;
    want = want < lo ? lo : want > hi ? hi : want;
    long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
    if (pages > 0 && psize > 0) {
        uint64_t cap = (uint64_t)pages * (uint64_t)psize / 8;
        if (want > cap)
            want = cap;
    }
    return (size_t)want;
}

bool rt_calibrate(rt_calibration *c, FILE *log, diag *d)
{
    memset(c, 0, sizeof *c);
    cpu_name(c->cpu, sizeof c->cpu);
    long np = sysconf(_SC_NPROCESSORS_ONLN);
    c->threads = np > 0 ? (int)np : 1;
    c->llc_bytes = rt_llc_bytes();
    bool ok = true;
    steadiness st = {0, 1};

    isa_kernel ks[3];
    int nk = available_kernels(ks);
    for (int i = 0; i < nk && ok; i++) {
        double g = measure_peak(&ks[i], 1, &ok, &st);
        if (log)
            fprintf(log, "tec: calibrate: %s FMA, 1 thread: %.1f GFLOP/s\n", ks[i].name, g);
        if (g > c->peak_gflops[0]) {
            c->peak_gflops[0] = g;
            snprintf(c->isa, sizeof c->isa, "%s", ks[i].name);
        }
    }
    for (int i = 0; i < nk && ok; i++)
        if (strcmp(ks[i].name, c->isa) == 0)
            c->peak_gflops[1] = c->threads > 1 ? measure_peak(&ks[i], c->threads, &ok, &st)
                                               : c->peak_gflops[0];
    if (log && ok)
        fprintf(log, "tec: calibrate: %s FMA, %d threads: %.1f GFLOP/s\n", c->isa, c->threads,
                c->peak_gflops[1]);

    size_t bytes = triad_bytes(c->llc_bytes);
    size_t n = bytes / sizeof(double);
    c->array_bytes = n * sizeof(double);
    double *a = ok ? malloc(bytes) : NULL, *b = a ? malloc(bytes) : NULL,
           *cc = b ? malloc(bytes) : NULL;
    if (ok && !cc) {
        diag_error(d, diag_noloc(), "calibrate: cannot allocate 3 arrays of %zu MiB for the "
                   "bandwidth test", bytes >> 20);
        ok = false;
    }
    if (ok) {
        job init = {.a = a, .b = b, .c = cc, .init = true};
        run_parallel(&init, c->threads, n, &ok, NULL);
        c->bw_gbs[0] = measure_triad(a, b, cc, n, 1, &ok, &st);
        c->bw_gbs[1] = c->threads > 1 ? measure_triad(a, b, cc, n, c->threads, &ok, &st)
                                     : c->bw_gbs[0];
        if (log && ok)
            fprintf(log, "tec: calibrate: triad on 3 x %zu MiB: %.1f GB/s (1 thread), "
                    "%.1f GB/s (%d threads)\n", bytes >> 20, c->bw_gbs[0], c->bw_gbs[1],
                    c->threads);
        if (log && ok && (uint64_t)bytes < c->llc_bytes * 4)
            fprintf(log, "tec: calibrate: note: each array is less than 4x the %.0f MiB "
                    "last-level cache reported; if that is more than one core sees, set "
                    "TEC_LLC_BYTES to the real size and calibrate again\n",
                    (double)c->llc_bytes / (1 << 20));
    }
    free(a);
    free(b);
    free(cc);
    c->spread = st.spread;
    c->cpu_share = st.share;
    if (!ok && d->nerrors == 0)
        diag_error(d, diag_noloc(), "calibrate: cannot start measurement threads: %s",
                   strerror(errno));
    return ok;
}

bool rt_calibration_steady(const rt_calibration *c, char *why, size_t n)
{
    if (c->spread > RT_CALIB_MAX_SPREAD)
        snprintf(why, n, "its repeated runs disagree by up to %.0f%%", 100 * c->spread);
    else if (c->cpu_share < RT_CALIB_MIN_SHARE)
        snprintf(why, n, "its threads ran only %.0f%% of the time (other work took the "
                 "processors)", 100 * c->cpu_share);
    else
        return true;
    return false;
}

/* ---------------------------------------------------------------- the cache file */

char *rt_calibration_path(diag *d)
{
    char *dir = cg_cache_dir(NULL, d);
    if (!dir)
        return NULL;
    size_t n = strlen(dir) + 32;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s/calibration.json", dir);
    free(dir);
    return p;
}

bool rt_calibration_save(const rt_calibration *c, diag *d)
{
    char *path = rt_calibration_path(d);
    if (!path)
        return false;
    char *slash = strrchr(path, '/');
    *slash = 0;
    bool ok = ir_make_dirs(path, 0700, NULL, 0);   /* the cache is private */
    *slash = '/';
    size_t n = strlen(path) + 16;
    char *tmp = malloc(n);
    FILE *f = NULL;
    if (ok && tmp) {
        snprintf(tmp, n, "%s.%ld", path, (long)getpid());
        f = fopen(tmp, "w");
    }
    if (f) {
        fputs("{\n  \"cpu\": ", f);
        rt_json_str(f, c->cpu);
        fputs(",\n  \"isa\": ", f);
        rt_json_str(f, c->isa);
        fprintf(f, ",\n  \"threads\": %d,\n", c->threads);
        fprintf(f, "  \"peak_gflops_1\": %.3f,\n  \"peak_gflops_all\": %.3f,\n",
                c->peak_gflops[0], c->peak_gflops[1]);
        fprintf(f, "  \"bandwidth_gbs_1\": %.3f,\n  \"bandwidth_gbs_all\": %.3f,\n",
                c->bw_gbs[0], c->bw_gbs[1]);
        fprintf(f, "  \"llc_bytes\": %llu,\n  \"array_bytes\": %llu\n}\n",
                (unsigned long long)c->llc_bytes, (unsigned long long)c->array_bytes);
        ok = !ferror(f);
        ok = fclose(f) == 0 && ok;
        ok = ok && rename(tmp, path) == 0;
        if (!ok)
            unlink(tmp);
    } else {
        ok = false;
    }
    if (!ok)
        diag_error(d, diag_noloc(), "cannot write the calibration cache %s: %s", path,
                   strerror(errno));
    free(tmp);
    free(path);
    return ok;
}

/* The text after "key": in a flat JSON object we wrote ourselves. */
static const char *json_value(const char *text, const char *key)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *p = strstr(text, pat);
    if (!p)
        return NULL;
    p += strlen(pat);
    while (*p == ' ')
        p++;
    return p;
}

static bool json_number(const char *text, const char *key, double *out)
{
    const char *v = json_value(text, key);
    if (!v)
        return false;
    char *end;
    *out = strtod(v, &end);
    return end != v;
}

static bool json_str(const char *text, const char *key, char *out, size_t len)
{
    const char *v = json_value(text, key);
    if (!v || *v != '"')
        return false;
    v++;
    size_t n = 0;
    while (*v && *v != '"' && n + 1 < len) {
        if (*v == '\\' && v[1])
            v++;
        out[n++] = *v++;
    }
    out[n] = 0;
    return *v == '"';
}

bool rt_calibration_load(rt_calibration *c)
{
    memset(c, 0, sizeof *c);
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    if (!(xdg && xdg[0] == '/') && !(home && *home))
        return false;   /* no cache directory: nothing cached */
    diag quiet;
    diag_init(&quiet, stderr);
    char *path = rt_calibration_path(&quiet);
    diag_fini(&quiet);
    if (!path)
        return false;
    FILE *f = fopen(path, "r");
    free(path);
    if (!f)
        return false;
    char text[4096];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = 0;
    char cpu[128];
    cpu_name(cpu, sizeof cpu);
    double threads, llc, arr;
    bool ok = json_str(text, "cpu", c->cpu, sizeof c->cpu) &&
              json_str(text, "isa", c->isa, sizeof c->isa) &&
              json_number(text, "threads", &threads) &&
              json_number(text, "peak_gflops_1", &c->peak_gflops[0]) &&
              json_number(text, "peak_gflops_all", &c->peak_gflops[1]) &&
              json_number(text, "bandwidth_gbs_1", &c->bw_gbs[0]) &&
              json_number(text, "bandwidth_gbs_all", &c->bw_gbs[1]) &&
              json_number(text, "llc_bytes", &llc) && json_number(text, "array_bytes", &arr);
    ok = ok && strcmp(cpu, c->cpu) == 0 && c->peak_gflops[0] > 0 && c->bw_gbs[0] > 0;
    if (ok) {
        c->threads = (int)threads;
        c->llc_bytes = (uint64_t)llc;
        c->array_bytes = (uint64_t)arr;
    }
    return ok;
}

void rt_calibration_print(FILE *out, const rt_calibration *c)
{
    fprintf(out, "machine: %s, %d threads, last-level cache %.1f MiB\n", c->cpu, c->threads,
            (double)c->llc_bytes / (1 << 20));
    fprintf(out, "peak FP32 (%s FMA): %.1f GFLOP/s on 1 thread, %.1f GFLOP/s on %d threads\n",
            c->isa, c->peak_gflops[0], c->peak_gflops[1], c->threads);
    fprintf(out, "memory bandwidth (triad, 3 x %.0f MiB): %.1f GB/s on 1 thread, %.1f GB/s on "
            "%d threads\n", (double)c->array_bytes / (1 << 20), c->bw_gbs[0], c->bw_gbs[1],
            c->threads);
    fprintf(out, "machine balance: %.2f FLOP/byte (1 thread)\n",
            c->bw_gbs[0] > 0 ? c->peak_gflops[0] / c->bw_gbs[0] : 0);
}
