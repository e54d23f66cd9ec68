#!/bin/bash
# bench/fuse_vmath.sh — a tec build against another one (TEC_VS, a build
# before a change) on models whose kernels end in activations.  Each round
# runs both, in turn, as `tec -O2 MODEL --repeat R` and `--repeat 1`, and
# takes the difference of the processes' CPU times (user + sys) over R - 1
# inferences: CPU time per inference, which holds better than elapsed time
# on a machine others share (compile and load cancel out).  Prints each
# model's median over the rounds (ms) and the ratio tec / TEC_VS.
#
#   TEC_VS=/path/to/old/tec bench/fuse_vmath.sh [MODEL.te|MODEL.onnx ...]
#
# Defaults: bench/conv_bias_act.te examples/efficientnet_b0.te
# examples/mobilenet_v2.te examples/gpt2.te.  BENCH_ROUNDS (default 5),
# BENCH_REPEAT (default 20), TEC_NUM_THREADS (default 1).  An .onnx model
# takes its inputs from MODEL.in/*.npy beside it, as bench/ort.sh leaves them.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
TEC=${TEC:-$here/tec}
: "${TEC_VS:?set TEC_VS to the tec to compare with}"
ROUNDS=${BENCH_ROUNDS:-5}
REPEAT=${BENCH_REPEAT:-20}
export TEC_NUM_THREADS=${TEC_NUM_THREADS:-1}
[ $# -gt 0 ] || set -- "$here/bench/conv_bias_act.te" "$here/examples/efficientnet_b0.te" \
    "$here/examples/mobilenet_v2.te" "$here/examples/gpt2.te"
cpu() {   # cpu TEC MODEL R: the CPU seconds of `TEC -O2 MODEL --repeat R`
    local args=() TIMEFORMAT='%U %S' t
    case $2 in *.onnx)
        for f in "${2%.onnx}.in"/*.npy; do args+=(--input "$(basename "$f" .npy)=$f"); done ;;
    esac
    t=$( { time "$1" -O2 "$2" "${args[@]}" --repeat "$3" >/dev/null 2>&1; } 2>&1 )
    echo "$t" | awk '{print $1 + $2}'
}
run() {   # run TEC MODEL: CPU ms per inference
    local a b
    a=$(cpu "$1" "$2" "$REPEAT") b=$(cpu "$1" "$2" 1)
    awk -v a="$a" -v b="$b" -v r="$REPEAT" 'BEGIN {printf "%.3f", (a - b) * 1000 / (r - 1)}'
}
median() { tr ' ' '\n' | grep . | sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
echo "machine: $(grep -m1 "model name" /proc/cpuinfo | cut -d: -f2 | sed "s/^ //"), $(nproc) processors, $(uname -m); TEC_NUM_THREADS=$TEC_NUM_THREADS; load at start $(cut -d" " -f1-3 /proc/loadavg)"
printf "%-28s %10s %10s %7s\n" model "vs (ms)" "tec (ms)" ratio   # CPU ms per inference
for m in "$@"; do
    cpu "$TEC_VS" "$m" 1 >/dev/null; cpu "$TEC" "$m" 1 >/dev/null   # compile, warm the cache
    a= b=
    for r in $(seq "$ROUNDS"); do a="$a $(run "$TEC_VS" "$m")"; b="$b $(run "$TEC" "$m")"; done
    ma=$(echo $a | median) mb=$(echo $b | median)
    printf '%-28s %10s %10s %7s\n' "$(basename "$m")" "$ma" "$mb" "$(awk -v a="$ma" -v b="$mb" 'BEGIN {printf "%.3f", b / a}')"
done
