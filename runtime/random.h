/* runtime/random.h — default contents of inputs and weights.
 *
 * When the user gives no file for an INPUT or PARAM buffer, tec fills it with
 * pseudo-random values that depend only on the buffer's name and each
 * element's flat index — not on the run, the thread count or the order of
 * buffers — so any other tool can rebuild the same tensor.  doc/data.md
 * gives the formula and a Python reference implementation.
 */
#ifndef TEC_RUNTIME_RANDOM_H
#define TEC_RUNTIME_RANDOM_H

#include <stdint.h>

#include "runtime/tensor.h"

/* The 64-bit FNV-1a hash of the bytes of s: the seed of a named tensor. */
uint64_t rt_fnv1a64(const char *s);

/* The splitmix64 output function (Steele, Lea, Flood 2014), mod 2^64. */
uint64_t rt_splitmix64(uint64_t z);

/* The uniform number in [0, 1) of element i of the tensor seeded by seed:
 * (splitmix64(seed + (i + 1) * 0x9E3779B97F4A7C15) >> 11) * 2^-53. */
double rt_uniform01(uint64_t seed, int64_t i);

/* Fills t with uniform values in [lo, hi) derived only from `name` and the
 * flat element index: floats get lo + (hi - lo) * u computed in double and
 * rounded to the dtype (rounding may give hi itself for f32/f16/bf16);
 * integer and bool dtypes get lo + floor((hi - lo) * u).  lo == hi fills the
 * constant lo. */
void rt_fill_default(rt_tensor *t, const char *name, double lo, double hi);

#endif
