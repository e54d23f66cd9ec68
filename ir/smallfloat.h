/* f16 and bf16 conversions, written once for two users: the interpreter
 * compiles them (IR_SMALLFLOAT_CODE(IR_SMALLFLOAT_DEFINE)), and codegen
 * prints their text into every kernel file that has f16 or bf16 values
 * (IR_SMALLFLOAT_CODE(IR_SMALLFLOAT_TEXT)), so compiled kernels round
 * exactly as the interpreter does.  Needs <math.h> and <stdint.h>. */
#ifndef TEC_IR_SMALLFLOAT_H
#define TEC_IR_SMALLFLOAT_H

#define IR_SMALLFLOAT_DEFINE(...) __VA_ARGS__
#define IR_SMALLFLOAT_TEXT(...) #__VA_ARGS__ "\n"

/* tec_f16_copy and tec_bf16_copy are tec_*_bits(tec_*_value(h)) without
 * the arithmetic: the bits h themselves, a NaN made the quiet NaN of its
 * sign (a copy of a value of the format: packing a weight panel).
 * tec_small_bits(x, mbits, ebits) rounds x to the binary format with
 * `mbits` stored mantissa bits and `ebits` exponent bits (IEEE layout,
 * round to nearest even, gradual underflow, overflow to infinity, NaN stays
 * NaN) and returns its bit pattern.  It works on the exact double, so
 * f64 -> f16 rounds once, not via f32.  tec_f16_value and tec_bf16_value
 * give the value of a bit pattern (exact in float). */
#define IR_SMALLFLOAT_CODE(M)                                                      \
    M(static inline uint16_t tec_small_bits(double x, int mbits, int ebits) {      \
        int bias = (1 << (ebits - 1)) - 1;                                         \
        int emin = 1 - bias;                                                       \
        uint16_t sign = signbit(x) ? (uint16_t)(1u << (mbits + ebits)) : 0;        \
        uint16_t inf = (uint16_t)(((1u << ebits) - 1) << mbits);                   \
        if (isnan(x))                                                              \
            return (uint16_t)(sign | inf | (1u << (mbits - 1)));                   \
        double a = fabs(x);                                                        \
        if (isinf(a))                                                              \
            return sign | inf;                                                     \
        if (a < ldexp(1.0, emin))                                                  \
            return (uint16_t)(sign | (uint16_t)nearbyint(ldexp(a, mbits - emin))); \
        int e2;                                                                    \
        frexp(a, &e2);                                                             \
        int e = e2 - 1;                                                            \
        double m = nearbyint(ldexp(a, mbits - e));                                 \
        if (m == ldexp(1.0, mbits + 1)) {                                          \
            m = ldexp(1.0, mbits);                                                 \
            e++;                                                                   \
        }                                                                          \
        if (e > bias)                                                              \
            return sign | inf;                                                     \
        uint32_t frac = (uint32_t)m - (1u << mbits);                               \
        return (uint16_t)(sign | ((uint32_t)(e + bias) << mbits) | frac);          \
    })                                                                             \
    M(static inline float tec_f16_value(uint16_t h) {                              \
        int e = (h >> 10) & 0x1f;                                                  \
        int m = h & 0x3ff;                                                         \
        float v;                                                                   \
        if (e == 0)                                                                \
            v = ldexpf((float)m, -24);                                             \
        else if (e == 31)                                                          \
            v = m ? NAN : INFINITY;                                                \
        else                                                                       \
            v = ldexpf((float)(m | 0x400), e - 25);                                \
        return (h & 0x8000) ? -v : v;                                              \
    })                                                                             \
    M(static inline float tec_bf16_value(uint16_t h) {                             \
        union { uint32_t u; float f; } v = {.u = (uint32_t)h << 16};               \
        return v.f;                                                                \
    })                                                                             \
    M(static inline uint16_t tec_f16_bits(double x) { return tec_small_bits(x, 10, 5); }) \
    M(static inline uint16_t tec_bf16_bits(double x) { return tec_small_bits(x, 7, 8); }) \
    M(static inline float tec_f16_round(double x) { return tec_f16_value(tec_f16_bits(x)); }) \
    M(static inline uint16_t tec_f16_copy(uint16_t h) {                             \
        return (h & 0x7fff) > 0x7c00 ? (uint16_t)((h & 0x8000) | 0x7e00) : h;      \
    })                                                                             \
    M(static inline uint16_t tec_bf16_copy(uint16_t h) {                            \
        return (h & 0x7fff) > 0x7f80 ? (uint16_t)((h & 0x8000) | 0x7fc0) : h;      \
    })                                                                             \
    M(static inline float tec_bf16_round(double x) { return tec_bf16_value(tec_bf16_bits(x)); })

#endif
