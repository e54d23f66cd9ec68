#!/bin/bash
# bench/par_ab.sh — two builds of tec and ONNX Runtime on N threads, in
# rounds that take turns, each round with the two processors' distance.
#
#   TEC=NEW TEC_VS=OLD ORT_NODE_DIR=... bench/par_ab.sh MODEL.onnx...
#
# For each model (an export of bench/ort_export.py: MODEL.onnx, MODEL.in/)
# and round (BENCH_ROUNDS, default 3), one line: bench/vcpu_rtt.c's round
# trip before (ns; near ~50-70, far ~300+), then `tec -O2 --repeat R`
# (BENCH_REPEAT, default 20; tec's median) of TEC_VS and TEC, and
# ONNX Runtime's median (bench/ort_run.js, all graph optimizations; only
# with ORT_NODE_DIR), all on BENCH_THREADS threads (default 2), then the
# ratios new/old and new/ORT.  RUN_PREFIX (e.g. "chrt -f 5") runs every
# timed command under it.  Compare only rows of one kind of minute.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/bench/onnx_args.sh"
TEC=${TEC:-$here/tec}
TEC_VS=${TEC_VS:?TEC_VS=OLD_TEC is needed}
ROUNDS=${BENCH_ROUNDS:-3}
REPEAT=${BENCH_REPEAT:-20}
N=${BENCH_THREADS:-2}
PREFIX=${RUN_PREFIX:-}
ORT_NODE_DIR=${ORT_NODE_DIR:-}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/par-ab.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cc -O2 -fopenmp "$here/bench/vcpu_rtt.c" -o "$tmp/vcpu_rtt" || exit 1
echo "# bench/par_ab.sh, $(date -u '+%Y-%m-%d %H:%M UTC'), $N threads, load $(cut -d' ' -f1-3 /proc/loadavg)${PREFIX:+, under $PREFIX}"
echo "# new: $TEC"
echo "# old: $TEC_VS"
printf '%-16s %5s %6s %9s %9s %9s %7s %7s\n' model round rtt "old ms" "new ms" "ORT ms" new/old new/ORT
# tec_ms BIN ARGS...: the median in ms
tec_ms() {
    local bin=$1
    shift
    TEC_NUM_THREADS=$N $PREFIX "$bin" -O2 "$@" 2>&1 |
        sed -n 's/^time: median of [0-9]* runs after a warm-up: \([0-9.]*\) us$/\1/p' |
        awk '{printf "%.3f", $1 / 1000}'
}
for onnx in "$@"; do
    m=$(basename "$onnx" .onnx)
    dir=$(dirname "$onnx")
    onnx_args "$onnx"
    "$TEC" -O2 "${args[@]}" >/dev/null 2>&1     # the caches
    "$TEC_VS" -O2 "${args[@]}" >/dev/null 2>&1
    for r in $(seq "$ROUNDS"); do
        rtt=$($PREFIX "$tmp/vcpu_rtt" | awk '{print $3}')
        old=$(tec_ms "$TEC_VS" "${args[@]}" --repeat "$REPEAT")
        new=$(tec_ms "$TEC" "${args[@]}" --repeat "$REPEAT")
        ort=-
        if [ -n "$ORT_NODE_DIR" ]; then
            ort=$(ORT_NODE_DIR=$ORT_NODE_DIR $PREFIX node "$here/bench/ort_run.js" "$onnx" \
                  "$dir/$m.in" "$dir/$m.ref.npy" "$N" "$REPEAT" 10 2>/dev/null |
                  sed -n 's/.*median_ms=\([0-9.]*\).*/\1/p')
        fi
        awk -v m="$m" -v r="$r" -v rtt="$rtt" -v o="$old" -v n="$new" -v t="${ort:--}" 'BEGIN {
            printf "%-16s %5d %6s %9s %9s %9s %7s %7s\n", m, r, rtt, o, n, t,
                (o > 0 && n > 0) ? sprintf("%.3f", n / o) : "-",
                (t > 0 && n > 0) ? sprintf("%.3f", n / t) : "-" }'
    done
done
