#!/bin/bash
# bench/int8_pair.sh — a QDQ model's whole-run time in tec (a new and an old
# build) and in ONNX Runtime, in turns, under one load.
#
#   TEC=NEW TEC_VS=OLD ORT_NODE_DIR=.. bench/int8_pair.sh MODEL.onnx INDIR [REF.npy]
#
# For each thread count of BENCH_THREADS (default "1 2") and each of
# BENCH_ROUNDS rounds (default 3): `tec -O2 --repeat R` of both builds
# (TEC_NUM_THREADS=N, each with its own kernel cache already warm) and
# bench/ort_run.js (intraOpNumThreads N), each the median of R =
# BENCH_REPEAT runs (default 20) after warm-up runs; with BENCH_RT=1 every
# run under `chrt -f 10` (real-time FIFO: other processes do not preempt
# it), and the vCPUs' round trip (bench/vcpu_rtt.c) before each round,
# since every 2-thread number depends on it (near ~60 ns, far 150-380 ns).
# Prints one line per run and, per thread count, the median of the rounds
# and the ratios new/ORT and old/ORT.  INDIR holds NAME.npy per input; REF
# is the reference ort_run.js checks (default: INDIR's model's .ref.npy).
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
model=$1 indir=$2 ref=${3:-${1%.onnx}.ref.npy}
TEC=${TEC:-$here/tec}
REPEAT=${BENCH_REPEAT:-20}
ROUNDS=${BENCH_ROUNDS:-3}
THREADS=${BENCH_THREADS:-1 2}
export ORT_NODE_DIR=${ORT_NODE_DIR:-$here/bench/node}
rt=()
[ "${BENCH_RT:-0}" = 1 ] && rt=(chrt -f 10)
inargs=()
for f in "$indir"/*.npy; do n=$(basename "$f" .npy); inargs+=(--input "$n=$f"); done
rtt=/tmp/int8_pair_rtt.$$
gcc -O2 -fopenmp -o "$rtt" "$here/bench/vcpu_rtt.c" 2>/dev/null || rtt=
trap 'rm -f /tmp/int8_pair_rtt.$$' EXIT
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
tec_ms() {   # tec_ms TEC THREADS
    TEC_NUM_THREADS=$2 "${rt[@]}" "$1" -O2 "$model" "${inargs[@]}" --repeat "$REPEAT" 2>&1 |
        sed -n 's/^time: median of [0-9]* runs after a warm-up: \([0-9.]*\) us$/\1/p' | awk '{printf "%.3f", $1 / 1000}'
}
ort_ms() {
    "${rt[@]}" node "$here/bench/ort_run.js" "$model" "$indir" "$ref" "$1" "$REPEAT" 30 2>/dev/null |
        sed -n 's/.*median_ms=\([0-9.]*\).*/\1/p'
}
echo "# $(basename "$model"), $(date -u '+%H:%M UTC'), load $(cut -d' ' -f1-3 /proc/loadavg), R=$REPEAT, rounds $ROUNDS${rt:+, chrt -f 10}"
for n in $THREADS; do
    tec_ms "$TEC" "$n" >/dev/null; [ -n "${TEC_VS:-}" ] && tec_ms "$TEC_VS" "$n" >/dev/null   # caches warm
    a= b= o=
    for r in $(seq "$ROUNDS"); do
        x=$(tec_ms "$TEC" "$n"); y=-; [ -n "${TEC_VS:-}" ] && y=$(tec_ms "$TEC_VS" "$n"); z=$(ort_ms "$n")
        echo "  T=$n round $r: new $x  old $y  ORT $z ms${rtt:+  ($("${rt[@]}" "$rtt"))}"
        a="$a $x" b="$b $y" o="$o $z"
    done
    ma=$(echo "$a" | median) mo=$(echo "$o" | median)
    mb=-; [ -n "${TEC_VS:-}" ] && mb=$(echo "$b" | median)
    awk -v n="$n" -v a="$ma" -v b="$mb" -v o="$mo" 'BEGIN {printf "T=%s medians: new %.3f  old %s  ORT %.3f ms;  new/ORT %.3f", n, a, b, o, a / o;
        if (b + 0 > 0) printf "  old/ORT %.3f  new/old %.3f", b / o, a / b; printf "\n"}'
done
