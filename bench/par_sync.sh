#!/bin/bash
# bench/par_sync.sh — how much of a 2-thread run its threads spend
# synchronizing, per kernel and in all, next to the two processors' distance.
#
#   bench/par_sync.sh [--kernels] MODEL_PATH...     (.te or .onnx)
#
# For each model: bench/vcpu_rtt's round trip, then tec -O2 --repeat
# BENCH_REPEAT (default 20) with bench/omp_trace.c preloaded, once on 2
# threads (the runs tec puts on one thread count apart) and once on 1
# (TEC_NUM_THREADS=1), then the round trip again.
# An .onnx model's input is DIR/MODEL.in/*.npy when it exists
# (bench/ort_export.py).  Prints one line per model:
#
#   rtt       the round trips before / after (ns): near ~50-70, far ~300+
#   ms        tec's median run on 2 threads
#   regions   parallel regions per run
#   wall      their time per run (us): work + fork + imbal + join
#   fork imbal join   the synchronization (bench/omp_trace.c), us per run
#   sync%     (fork + imbal + join) / wall
#   work1     the regions' work per run on one thread
#   gain      work1 / (2T wall): the speed-up of the regions
#   infl      2 * (2T work) / work1: how much more the same work takes split
#             on two processors (data another processor wrote, shared lines)
#   gap gap1  the serial time between regions per run on 2 threads and on 1
#             (the other thread waits meanwhile)
#
# --kernels also prints bench/omp_trace.c's table per kernel (2T, then 1T).
# Runs under `chrt -f 5` when it can (the machine is shared), as root.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
TEC=${TEC:-$here/tec}
REPEAT=${BENCH_REPEAT:-20}
kernels=
models=
for a in "$@"; do
    case $a in
    --kernels) kernels=1 ;;
    -h|--help) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) models="$models $a" ;;
    esac
done
[ -n "$models" ] || { echo "usage: bench/par_sync.sh [--kernels] MODEL_PATH..." >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/par-sync.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cc -O2 -shared -fPIC "$here/bench/omp_trace.c" -o "$tmp/omp_trace.so" -ldl || exit 1
cc -O2 -fopenmp "$here/bench/vcpu_rtt.c" -o "$tmp/vcpu_rtt" || exit 1
rt=
chrt -f 5 true 2>/dev/null && rt="chrt -f 5"
rtt() { $rt "$tmp/vcpu_rtt" | awk '{print $3}'; }
echo "# bench/par_sync.sh, $(date -u '+%Y-%m-%d %H:%M UTC'), load $(cut -d' ' -f1-3 /proc/loadavg)${rt:+, under $rt}"
printf '%-16s %9s %7s %7s %8s %7s %7s %7s %5s %8s %5s %5s %6s %6s\n' model rtt ms regions wall \
    fork imbal join sync% work1 gain infl gap gap1
for path in $models; do
    m=$(basename "$path"); m=${m%.*}
    args=(-O2 --repeat "$REPEAT" "$path")
    if [ -d "${path%.*}.in" ]; then
        for f in "${path%.*}.in"/*.npy; do
            n=$(basename "$f" .npy)
            args+=(--input "$n=$f")
        done
    fi
    "$TEC" "${args[@]}" >/dev/null 2>&1   # the caches
    r0=$(rtt)
    rm -f "$tmp/t1" "$tmp/t2"
    OMP_TRACE_RUNS=$((REPEAT + 1)) OMP_TRACE_OUT="$tmp/t2" \
        LD_PRELOAD="$tmp/omp_trace.so" $rt "$TEC" --threads 2 "${args[@]}" >"$tmp/o2" 2>&1
    r1=$(rtt)
    TEC_NUM_THREADS=1 OMP_TRACE_RUNS=$((REPEAT + 1)) OMP_TRACE_OUT="$tmp/t1" \
        LD_PRELOAD="$tmp/omp_trace.so" $rt "$TEC" "${args[@]}" >"$tmp/o1" 2>&1
    for o in o1 o2; do
        grep -q '^time: ' "$tmp/$o" || { echo "$m: tec failed:"; tail -5 "$tmp/$o"; continue 2; }
    done
    ms=$(sed -n 's/^time: median of [0-9]* runs after a warm-up: \([0-9.]*\) us$/\1/p' "$tmp/o2")
    t2=$(awk '$1 == "TOTAL" && $2 == 2' "$tmp/t2")
    t1=$(awk '$1 == "TOTAL" && $2 == 1' "$tmp/t1")
    # TOTAL team regions wall work fork imbal join sync% busy0 busy1 gap slow
    awk -v m="$m" -v rtt="$r0/$r1" -v ms="$ms" -v t1="$t1" '{
        split(t1, one, " ")
        w1 = one[5]
        printf "%-16s %9s %7.2f %7.1f %8.0f %7.0f %7.0f %7.0f %5.1f %8.0f %5.2f %5.2f %6.0f %6.0f\n",
            m, rtt, ms / 1000, $3, $4, $6, $7, $8, $9, w1, w1 / $4, 2 * $5 / w1, $12, one[12] }' <<<"$t2"
    if [ -n "$kernels" ]; then
        echo "## $m, 2 threads (rtt $r0 ns before)"; cat "$tmp/t2"
        echo "## $m, 1 thread"; cat "$tmp/t1"
    fi
done
