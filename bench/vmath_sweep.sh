#!/bin/bash
# bench/vmath_sweep.sh — the maximum error of the vector math of a tec build
# (tec_vexp_f32x16, tec_vtanh_f32x16, tec_verf_f32x16: the text it writes
# into generated C, codegen/emit_vmath.c) over EVERY non-negative finite
# f32 (2^31 inputs; the functions are odd or, for exp, checked on one side
# of zero only) against the C library's double-precision function:
# the maximum absolute error, the maximum error in ulp of the f32 result
# (subnormal spacing below 2^-126) and the input where each happens, and
# the TSC cycles per 16 values of the function on an L1-resident array.
#
#   bench/vmath_sweep.sh [erf|exp|tanh|expneg] [STEP]
#
# TEC (default ./tec) writes the C; STEP (default 1) takes every STEP-th
# float (97 gives a quick look).  Needs a CPU with AVX-512 (the 16-lane
# functions are its).  expneg sweeps exp over the negative floats.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
TEC=${TEC:-$here/tec}
fn=${1:-erf} step=${2:-1}
case $fn in erf|exp|tanh) ref=$fn sign=1 ;; expneg) fn=exp ref=exp sign=-1 ;;
    *) echo "vmath_sweep.sh: unknown function '$fn' (erf, exp, tanh or expneg)" >&2; exit 2 ;; esac
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
printf 'input x: f32[64]\nr[i] = %s(x[i]) where i in 0..64\noutput r\n' "$fn" >"$dir/one.te"
"$TEC" -O2 --emit=c "$dir/one.te" >"$dir/one.c"
# the prelude: everything before the first kernel's comment
sed '/^\/\* @/,$d' "$dir/one.c" >"$dir/prelude.h"
grep -q "tec_v${fn}_f32x16" "$dir/prelude.h" || { echo "vmath_sweep.sh: $TEC writes no tec_v${fn}_f32x16" >&2; exit 1; }
cat >"$dir/sweep.c" <<C
#include "prelude.h"
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <x86intrin.h>
#define VF tec_v${fn}_f32x16
static double ulp_of(double w)   /* the spacing of f32 at w's f32 rounding */
{
    float f = fabsf((float)w);
    double u = (double)nextafterf(f, INFINITY) - (double)f;
    return u < 0x1p-149 ? 0x1p-149 : u;
}
static float x[4096] __attribute__((aligned(64))), y[4096] __attribute__((aligned(64)));
int main(void)
{
    double maxabs = 0, maxulp = 0;
    float atabs = 0, atulp = 0, in[16] __attribute__((aligned(64))), out[16] __attribute__((aligned(64)));
    for (uint64_t b = 0; b < 0x7f800000u; b += 16 * (uint64_t)$step) {
        for (int j = 0; j < 16; j++) {
            uint32_t bits = (uint32_t)(b + (uint64_t)j * $step);
            if (bits >= 0x7f800000u)
                bits = 0;
            memcpy(&in[j], &bits, 4);
            in[j] *= $sign;
        }
        *(tec_nf32x16 *)out = VF(*(tec_nf32x16 *)in);
        for (int j = 0; j < 16; j++) {
            double w = $ref((double)in[j]);
            if (!isfinite((float)w))
                continue;
            double e = fabs(out[j] - w), u = e / ulp_of(w);
            if (e > maxabs) maxabs = e, atabs = in[j];
            if (u > maxulp) maxulp = u, atulp = in[j];
        }
    }
    for (int i = 0; i < 4096; i++)
        x[i] = (i - 2048) * (6.0f / 4096);
    uint64_t best = ~0ull;
    for (int rep = 0; rep < 2000; rep++) {
        uint64_t t0 = __rdtsc();
        for (int i = 0; i < 4096; i += 16)
            *(tec_nf32x16 *)&y[i] = VF(*(tec_nf32x16 *)&x[i]);
        __asm__ volatile("" ::: "memory");
        uint64_t t = __rdtsc() - t0;
        best = t < best ? t : best;
    }
    printf("${fn}%s: max abs error %.3g at %.9g, max %.3g ulp at %.9g (every %d-th float); %.1f TSC cycles per 16 values\n",
           $sign < 0 ? " (x < 0)" : "", maxabs, atabs, maxulp, atulp, $step, best / 256.0);
    return 0;
}
C
${CC:-cc} -O2 -march=native -o "$dir/sweep" "$dir/sweep.c" -lm
"$dir/sweep"
