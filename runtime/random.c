/* runtime/random.c — default tensor contents (see random.h, doc/data.md). */
#include "runtime/random.h"

#include <math.h>
#include <pthread.h>
#include <unistd.h>

/* lo + (hi - lo) * u must be two roundings, as in Python, not one fma. */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

uint64_t rt_fnv1a64(const char *s)
{
    uint64_t h = 0xCBF29CE484222325u;           /* FNV-1a 64 offset basis */
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        h ^= *p;
        h *= 0x100000001B3u;                     /* FNV 64 prime */
    }
    return h;
}

static inline uint64_t splitmix64(uint64_t z)
{
    z ^= z >> 30;
    z *= 0xBF58476D1CE4E5B9u;
    z ^= z >> 27;
    z *= 0x94D049BB133111EBu;
    z ^= z >> 31;
    return z;
}

static inline double uniform01(uint64_t seed, int64_t i)
{
    /* unsigned arithmetic: everything is mod 2^64, as the formula says */
    uint64_t z = splitmix64(seed + ((uint64_t)i + 1) * 0x9E3779B97F4A7C15u);
    return (double)(z >> 11) * 0x1.0p-53;        /* 53 bits: exact in double */
}

uint64_t rt_splitmix64(uint64_t z) { return splitmix64(z); }
double rt_uniform01(uint64_t seed, int64_t i) { return uniform01(seed, i); }

/* One thread's share of a fill: elements [from, to). */
typedef struct fill_part {
    rt_tensor *t;
    uint64_t seed;
    double lo, span;
    int64_t from, to;
    pthread_t tid;
    bool started;
} fill_part;

/* The f32 and f64 loops, vectorized, with a copy for x86-64-v4 machines
 * (AVX-512's 64-bit multiply and conversions: about 2.5 times as fast) chosen
 * when tec starts (GCC's target_clones).  Integer arithmetic and
 * conversions are exact and the two roundings stay two (no contraction,
 * above), so every copy gives the formula's values bit for bit. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__ELF__)
#define FILL_CLONES __attribute__((target_clones("arch=x86-64-v4", "default"), \
                                   optimize("tree-vectorize")))
#else
#define FILL_CLONES
#endif

/* uniform01(seed, i) spelled out: a clone for another target cannot
 * inline a function of this one. */
#define FILL_UNIFORM01(seed, i, u)                                              \
    do {                                                                        \
        uint64_t z = (seed) + ((uint64_t)(i) + 1) * 0x9E3779B97F4A7C15u;        \
        z ^= z >> 30;                                                           \
        z *= 0xBF58476D1CE4E5B9u;                                               \
        z ^= z >> 27;                                                           \
        z *= 0x94D049BB133111EBu;                                               \
        z ^= z >> 31;                                                           \
        u = (double)(z >> 11) * 0x1.0p-53;                                      \
    } while (0)

FILL_CLONES
static void fill_f32(float *p, int64_t from, int64_t to, uint64_t seed, double lo, double span)
{
    for (int64_t i = from; i < to; i++) {
        double u;
        FILL_UNIFORM01(seed, i, u);
        p[i] = (float)(lo + span * u);
    }
}

FILL_CLONES
static void fill_f64(double *p, int64_t from, int64_t to, uint64_t seed, double lo, double span)
{
    for (int64_t i = from; i < to; i++) {
        double u;
        FILL_UNIFORM01(seed, i, u);
        p[i] = lo + span * u;
    }
}

/* f32 and f64 (almost every default tensor) are written directly; the
 * other dtypes through rt_tensor_set's conversions.  The values are the
 * formula's, whatever the split into parts. */
static void *fill_range(void *arg)
{
    fill_part *f = arg;
    rt_tensor *t = f->t;
    double lo = f->lo, span = f->span;
    bool is_float = ir_dtype_is_float(t->dtype);
    if (t->dtype == IR_F32) {
        fill_f32(t->data, f->from, f->to, f->seed, lo, span);
    } else if (t->dtype == IR_F64) {
        fill_f64(t->data, f->from, f->to, f->seed, lo, span);
    } else {
        for (int64_t i = f->from; i < f->to; i++) {
            double u = uniform01(f->seed, i);
            rt_tensor_set(t, i, is_float ? lo + span * u : lo + floor(span * u));
        }
    }
    return NULL;
}

/* Tensors of this many elements or more are filled by several threads. */
#define FILL_PARALLEL_MIN (1 << 18)
#define FILL_MAX_THREADS 16

void rt_fill_default(rt_tensor *t, const char *name, double lo, double hi)
{
    int64_t n = rt_tensor_numel(t);
    if (lo == hi) {
        for (int64_t i = 0; i < n; i++)
            rt_tensor_set(t, i, lo);
        return;
    }
    fill_part parts[FILL_MAX_THREADS];
    long cpus = n >= FILL_PARALLEL_MIN ? sysconf(_SC_NPROCESSORS_ONLN) : 1;
    int k = cpus < 1 ? 1 : cpus > FILL_MAX_THREADS ? FILL_MAX_THREADS : (int)cpus;
    for (int j = 0; j < k; j++) {
        parts[j] = (fill_part){.t = t, .seed = rt_fnv1a64(name), .lo = lo, .span = hi - lo,
                               .from = n * j / k, .to = n * (j + 1) / k};
        /* Part 0 runs here; a thread that cannot start has its part run
         * here too. */
        parts[j].started = j > 0 && pthread_create(&parts[j].tid, NULL, fill_range, &parts[j]) == 0;
    }
    for (int j = 0; j < k; j++)
        if (!parts[j].started)
            fill_range(&parts[j]);
    for (int j = 1; j < k; j++)
        if (parts[j].started)
            pthread_join(parts[j].tid, NULL);
}
