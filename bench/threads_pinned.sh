#!/bin/bash
# bench/threads_pinned.sh — tec on 1 and 2 threads beside a process that
# spins on one processor: two threads must not run slower than one
# (runtime/threads.h: the threads sleep at once while others hold the
# processors).
#
#   bench/threads_pinned.sh TEC[,TEC2...] MODEL...      (exports of bench/ort_export.py)
#   PINNED_ROUNDS=3 PINNED_REPEAT=20 PINNED_CPU=0 ORT_WORK=/work/wt/allw \
#   bench/threads_pinned.sh ./tec,/old/tec efficientnet_b0 resnet18
#
# Per round and model: a busy loop (`while :; do :; done`, nice 0) pinned
# to processor PINNED_CPU (default 0) with taskset starts; then each build
# on 1 thread and on 2 (TEC_NUM_THREADS, `tec -O2 MODEL.onnx --repeat R`,
# tec's median; the builds' order turns each round), with TEC_THREADS_TRACE
# to count the 2-thread runs asleep; then the loop ends.  One line per
# round: the load just before, each build's 1T and 2T medians (ms), their
# ratio 2T/1T and the 2T runs asleep.  PINNED_NONE=1 runs without the loop
# (the same table on the machine as it is).
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/bench/onnx_args.sh"
[ $# -ge 2 ] || { sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2; }
IFS=, read -r -a tecs <<<"$1"
shift
ROUNDS=${PINNED_ROUNDS:-3}
REPEAT=${PINNED_REPEAT:-20}
CPU=${PINNED_CPU:-0}
NONE=${PINNED_NONE:-}
WORK=${ORT_WORK:?set ORT_WORK to a folder of bench/ort_export.py exports}
loop=
trap '[ -n "$loop" ] && kill "$loop" 2>/dev/null' EXIT

# run TEC N: "median asleep-runs/runs" of one process on N threads
run() {
    local out
    out=$(TEC_THREADS_TRACE=1 TEC_NUM_THREADS=$2 "$1" -O2 "${args[@]}" --repeat "$REPEAT" 2>&1)
    echo "$out" | awk '/^time: median of [0-9]* runs after a warm-up: / {m = $(NF - 1) / 1000}
                       /^tec: run [0-9]+: / {n++; a += /asleep/}
                       END {printf "%.3f %d/%d", m, a, n}'
}
echo "# bench/threads_pinned.sh, $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) processors, $REPEAT runs, ${NONE:+no busy loop}${NONE:-a busy loop (nice 0) on CPU $CPU}"
for i in "${!tecs[@]}"; do echo "# build $i: ${tecs[$i]}"; done
echo "# model round load(1min run/all) then per build: 1T ms, 2T ms, 2T/1T, 2T runs asleep"
for r in $(seq "$ROUNDS"); do
    for m in "$@"; do
        onnx=$WORK/$m.onnx
        onnx_args "$onnx"
        ld=$(awk '{print $1 " " $4}' /proc/loadavg)
        if [ -z "$NONE" ]; then
            taskset -c "$CPU" nice -n 0 sh -c 'while :; do :; done' &
            loop=$!
            sleep 0.2
        fi
        order=("${!tecs[@]}")
        [ $((r % 2)) = 0 ] && order=($(printf '%s\n' "${!tecs[@]}" | sort -rn))
        line=
        for i in "${order[@]}"; do
            read -r one _ <<<"$(run "${tecs[$i]}" 1)"
            read -r two asleep <<<"$(run "${tecs[$i]}" 2)"
            line[$i]=$(awk -v a="$one" -v b="$two" -v s="$asleep" -v i="$i" \
                'BEGIN {printf "build%d %8.3f %8.3f %5.2f %6s", i, a, b, (a > 0 ? b / a : 0), s}')
        done
        [ -n "$loop" ] && { kill "$loop"; wait "$loop" 2>/dev/null; loop=; }
        printf '%-16s r%d load %-12s %s\n' "$m" "$r" "$ld" "$(printf '%s   ' "${line[@]}")"
    done
done
