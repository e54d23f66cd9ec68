#!/bin/bash
# bench/rtt_rounds.sh — 2-thread medians of tec (new, and TEC_VS old) and
# ONNX Runtime on .onnx exports, in rounds that take turns, each run tagged
# with the vCPU round trip measured just before it (near ~60 ns, far ~320:
# every 2-thread number depends on it, runtime/threads.h), all under
# `chrt -f 10`.
#   TEC=./tec TEC_VS=/old/tec ORT_WORK=/work/wt/allw ORT_NODE_DIR=... \
#   ROUNDS=3 REPEAT=100 THREADS=2 bench/rtt_rounds.sh MODEL...
# Output: one line per run: model round who rtt_ns median_ms.
here=$(cd "$(dirname "$0")/.." && pwd)
TEC=${TEC:-$here/tec}
WORK=${ORT_WORK:?ORT_WORK}
ROUNDS=${ROUNDS:-3}
REPEAT=${REPEAT:-100}
THREADS=${THREADS:-2}
RTT=${RTT:-/tmp/vcpu_rtt}
[ -x "$RTT" ] || gcc -O2 -fopenmp -o "$RTT" "$here/bench/vcpu_rtt.c" || exit 2
rtt() { chrt -f 10 "$RTT" | sed -n 's/^round trip \([0-9]*\) ns$/\1/p'; }
tec_ms() {
    TEC_NUM_THREADS=$THREADS chrt -f 10 "$1" -O2 "$2" "${inargs[@]}" --repeat "$REPEAT" 2>&1 |
        sed -n 's/^time: median of [0-9]* runs after a warm-up: \([0-9.]*\) us$/\1/p' |
        awk '{printf "%.3f", $1 / 1000}'
}
for m in "$@"; do
    onnx=$WORK/$m.onnx
    inargs=()
    for f in "$WORK/$m.in"/*.npy; do inargs+=(--input "$(basename "$f" .npy)=$f"); done
    "$TEC" -O2 "$onnx" "${inargs[@]}" >/dev/null 2>&1   # compile (cache)
    [ -n "$TEC_VS" ] && "$TEC_VS" -O2 "$onnx" "${inargs[@]}" >/dev/null 2>&1
    for r in $(seq "$ROUNDS"); do
        echo "$m $r ort $(rtt) $(chrt -f 10 node "$here/bench/ort_run.js" "$onnx" "$WORK/$m.in" \
            "$WORK/$m.ref.npy" "$THREADS" "$REPEAT" 30 2>/dev/null | sed -n 's/.*median_ms=\([0-9.]*\).*/\1/p')"
        echo "$m $r new $(rtt) $(tec_ms "$TEC" "$onnx")"
        [ -n "$TEC_VS" ] && echo "$m $r old $(rtt) $(tec_ms "$TEC_VS" "$onnx")"
    done
done
