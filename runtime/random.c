/* runtime/random.c — default tensor contents (see random.h, doc/data.md). */
#include "runtime/random.h"

#include <math.h>

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

uint64_t rt_splitmix64(uint64_t z)
{
    z ^= z >> 30;
    z *= 0xBF58476D1CE4E5B9u;
    z ^= z >> 27;
    z *= 0x94D049BB133111EBu;
    z ^= z >> 31;
    return z;
}

double rt_uniform01(uint64_t seed, int64_t i)
{
    /* unsigned arithmetic: everything is mod 2^64, as the formula says */
    uint64_t z = rt_splitmix64(seed + ((uint64_t)i + 1) * 0x9E3779B97F4A7C15u);
    return (double)(z >> 11) * 0x1.0p-53;        /* 53 bits: exact in double */
}

void rt_fill_default(rt_tensor *t, const char *name, double lo, double hi)
{
    int64_t n = rt_tensor_numel(t);
    if (lo == hi) {
        for (int64_t i = 0; i < n; i++)
            rt_tensor_set(t, i, lo);
        return;
    }
    uint64_t seed = rt_fnv1a64(name);
    double span = hi - lo;
    bool is_float = ir_dtype_is_float(t->dtype);
    for (int64_t i = 0; i < n; i++) {
        double u = rt_uniform01(seed, i);
        double v = is_float ? lo + span * u : lo + floor(span * u);
        rt_tensor_set(t, i, v);
    }
}
