#!/bin/bash
# bench/threads_turns.sh — how tec's runtime makes its threads wait (spinning
# or asleep, runtime/threads.h) in processes that start right after ONNX
# Runtime's, as bench/ort.sh runs them, and why.
#
#   bench/threads_turns.sh TEC[,TEC2...] MODEL...        (after make)
#   TURNS_ROUNDS=4 TURNS_REPEAT=20 TURNS_THREADS=2 ORT_WORK=/work/wt/allw \
#   ORT_NODE_DIR=/work/main/bench/node bench/threads_turns.sh ./tec,/old/tec resnet18
#
# Per round and model: the vCPUs' round trip (bench/vcpu_rtt.c), ONNX
# Runtime's node runner (bench/ort_run.js) on TURNS_THREADS threads, then
# each tec build in turn (the first build right after node in odd rounds,
# the last in even ones), TEC_THREADS_TRACE=1 TEC_NUM_THREADS=N tec -O2
# MODEL.onnx --repeat R.  One line per process: the load (/proc/loadavg's
# 1-minute average and runnable/all count) just before it, its median (ms),
# its runs as letters (A all threads spinning, a all threads asleep, 1 one
# thread, upper/lower case as spinning/asleep; + after a letter: temps
# apart), and the runtime's decisions with their reasons (the trace's
# "threads spinning/asleep ..." lines, shortened).  At the end, per build,
# the processes and runs that went asleep.
# TURNS_CHRT="chrt -f 10" (or "nice -n -10") runs node and tec under that prefix.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/bench/onnx_args.sh"
[ $# -ge 2 ] || { sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2; }
IFS=, read -r -a tecs <<<"$1"
shift
ROUNDS=${TURNS_ROUNDS:-4}
REPEAT=${TURNS_REPEAT:-20}
N=${TURNS_THREADS:-2}
WORK=${ORT_WORK:?set ORT_WORK to a folder of bench/ort_export.py exports}
export ORT_NODE_DIR=${ORT_NODE_DIR:-$here/bench/node}
CHRT=${TURNS_CHRT:-}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/turns.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
${CC:-cc} -O2 -fopenmp -o "$tmp/vcpu_rtt" "$here/bench/vcpu_rtt.c" || exit 2

load() { awk '{print $1 " " $4}' /proc/loadavg; }
one_tec() {   # one_tec LABEL TEC: one process's line
    local out med runs why
    out=$(TEC_THREADS_TRACE=1 TEC_NUM_THREADS=$N $CHRT "$2" -O2 "${args[@]}" \
          --repeat "$REPEAT" 2>&1)
    med=$(echo "$out" | sed -n 's/^time: median of [0-9]* runs after a warm-up: \([0-9.]*\) us$/\1/p' |
          awk '{printf "%.3f", $1 / 1000}')
    runs=$(echo "$out" | awk '/^tec: run [0-9]+: / {c = / 1 thread/ ? "1" : "A"; if (/asleep/) c = tolower(c) == "1" ? "1" : "a";
                                                  if (/temps apart/) c = c "+"; printf "%s", c}')
    why=$(echo "$out" | sed -n 's/^tec: threads //p' |
          sed 's/run-queue wait/wait/; s/ of its thread time//; s/(asleep before: \([0-9.]*\) of them)/[asleep-compared \1]/' |
          tr '\n' ';')
    printf '%-8s %-16s r%d %-9s load %-12s %9s  %s  %s\n' "$1" "$m" "$r" "$rtt" "$ld" "${med:-FAIL}" "$runs" "$why"
}
echo "# bench/threads_turns.sh, $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) processors, $N threads, $REPEAT runs, ${CHRT:-no chrt}"
for i in "${!tecs[@]}"; do echo "# build $i: ${tecs[$i]}"; done
echo "# build model round rtt(ns) load(1min run/all) median(ms) runs(A spin, a asleep, 1 one thread, + apart) decisions"
for r in $(seq "$ROUNDS"); do
    for m in "$@"; do
        onnx=$WORK/$m.onnx
        onnx_args "$onnx"
        rtt=$("$tmp/vcpu_rtt" 2>/dev/null | awk '$1 == "round" {print $3 "ns"}')
        ld=$(load)
        ort=$($CHRT node "$here/bench/ort_run.js" "$onnx" "$WORK/$m.in" "$WORK/$m.ref.npy" "$N" "$REPEAT" 10 2>/dev/null |
              sed -n 's/.* median_ms=\([0-9.]*\).*/\1/p')
        printf '%-8s %-16s r%d %-9s load %-12s %9s\n' ORT "$m" "$r" "$rtt" "$ld" "${ort:-FAIL}"
        order=("${!tecs[@]}")
        [ $((r % 2)) = 0 ] && order=($(printf '%s\n' "${!tecs[@]}" | sort -rn))
        for i in "${order[@]}"; do
            ld=$(load)
            one_tec "build$i" "${tecs[$i]}"
        done
    done
done | tee "$tmp/lines"
echo
echo "Asleep per build (processes with any run asleep / processes; runs asleep / runs):"
awk '$1 ~ /^build/ {p[$1]++; n = split($9, c, ""); for (k = 1; k <= n; k++) if (c[k] != "+") {t[$1]++; if (c[k] == "a") a[$1]++}
     if ($9 ~ /a/) pa[$1]++}
     END {for (b in p) printf "  %s: %d / %d processes, %d / %d runs\n", b, pa[b], p[b], a[b], t[b]}' "$tmp/lines" | sort
