#!/bin/bash
# bench/par_layers.sh — which layers lose to ONNX Runtime on 2 threads but
# not on 1: per-layer profiles of tec and ONNX Runtime at 1 and 2 threads,
# with the two processors' distance before each.
#
#   ORT_NODE_DIR=... bench/par_layers.sh OUTDIR MODEL.onnx...
#
# For each model (an export of bench/ort_export.py: MODEL.onnx, MODEL.in/,
# MODEL.ref.npy) and thread count (1, then 2), one line
# "MODEL threads=N rtt=NS" (bench/vcpu_rtt.c's round trip: near ~50-70 ns,
# far ~300+), then ONNX Runtime's per-node trace (OUTDIR/MODEL.N.ort_*.json,
# bench/ort_run.js with its profiler on) and tec's --trace of every run of
# every layer (OUTDIR/MODEL.N.tec-trace.json), each over RUNS runs
# (BENCH_PROFILE_RUNS, default 20).  RUN_PREFIX (e.g. "chrt -f 10") runs
# every timed command under it.  Then bench/par_layers.py joins the four
# (per-layer minima, which hold on a busy machine) and lists the layer
# groups whose loss to ONNX Runtime grows from 1 thread to 2.  TEC: the
# tec to profile (default this checkout's).
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/bench/onnx_args.sh"
TEC=${TEC:-$here/tec}
RUNS=${BENCH_PROFILE_RUNS:-20}
PREFIX=${RUN_PREFIX:-}
ORT_NODE_DIR=${ORT_NODE_DIR:?ORT_NODE_DIR=DIR of onnxruntime-node is needed}
out=${1:?usage: bench/par_layers.sh OUTDIR MODEL.onnx...}
shift
mkdir -p "$out" || exit 1
cc -O2 -fopenmp "$here/bench/vcpu_rtt.c" -o "$out/vcpu_rtt" || exit 1
echo "# bench/par_layers.sh, $(date -u '+%Y-%m-%d %H:%M UTC'), load $(cut -d' ' -f1-3 /proc/loadavg)${PREFIX:+, under $PREFIX}"
for onnx in "$@"; do
    m=$(basename "$onnx" .onnx)
    dir=$(dirname "$onnx")
    onnx_args "$onnx"
    "$TEC" -O2 "${args[@]}" --profile >/dev/null 2>&1     # the cache
    for n in 1 2; do
        rtt=$($PREFIX "$out/vcpu_rtt" | awk '{print $3}')
        rm -f "$out/$m.$n.ort"_*.json
        ORT_NODE_DIR=$ORT_NODE_DIR $PREFIX node "$here/bench/ort_run.js" "$onnx" "$dir/$m.in" \
            "$dir/$m.ref.npy" "$n" "$RUNS" 30 "$out/$m.$n.ort" >/dev/null
        TEC_NUM_THREADS=$n $PREFIX "$TEC" -O2 --profile --trace="$out/$m.$n.tec-trace.json" \
            "${args[@]}" --repeat "$RUNS" >"$out/$m.$n.tec.txt" 2>&1
        rtt2=$($PREFIX "$out/vcpu_rtt" | awk '{print $3}')
        echo "$m threads=$n rtt=$rtt/$rtt2"
    done
    "$here/bench/par_layers.py" "$out/$m".1.ort_*.json "$out/$m.1.tec-trace.json" \
        "$out/$m".2.ort_*.json "$out/$m.2.tec-trace.json"
done
