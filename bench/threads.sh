#!/bin/bash
# bench/threads.sh — tec on 1 and 2 threads when other processes compete for
# the processors: tec's own choice against threads bound and spinning.
#
#   bench/threads.sh [--save] [MODEL...]      (after make; default mobilenet_v2 resnet18)
#   COMPETE=2 bench/threads.sh                (start 2 spinning processes first)
#
# For each model (examples/MODEL.te at -O2) in BENCH_ROUNDS rounds (default
# 5) that take turns: `tec --repeat BENCH_REPEAT` (default 10; tec's median)
#   1T       TEC_NUM_THREADS=1
#   2T tec   TEC_NUM_THREADS=2, tec's choice (bound and spinning on a quiet
#            machine, unbound and asleep on a busy one: doc/codegen.md)
#   2T spin  TEC_NUM_THREADS=2 OMP_PROC_BIND=true OMP_WAIT_POLICY=active
#            (what tec chose before it looked at the machine's load)
# Each cell lists the rounds' times in ms, then their median.  COMPETE=N
# starts N processes that spin (`while :; do :; done`) for the whole run;
# without it the competition is whatever else runs on the machine (the
# runnable count at each round is printed).  --save appends the output to
# bench/results/threads.txt.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
TEC=${TEC:-$here/tec}
ROUNDS=${BENCH_ROUNDS:-5}
REPEAT=${BENCH_REPEAT:-10}
COMPETE=${COMPETE:-0}
save= models=
for a in "$@"; do
    case $a in
    --save) save=1 ;;
    -h|--help) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "threads.sh: unknown option $a" >&2; exit 2 ;;
    *) models="$models $a" ;;
    esac
done
models=${models:-mobilenet_v2 resnet18}
if [ -n "$save" ] && [ -z "${THREADS_SH_SAVING:-}" ]; then
    mkdir -p "$here/bench/results"
    THREADS_SH_SAVING=1 bash "$0" "$@" | tee -a "$here/bench/results/threads.txt"
    exit "${PIPESTATUS[0]}"
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/threads-bench.XXXXXX")
spinners=()
cleanup() { [ ${#spinners[@]} -gt 0 ] && kill "${spinners[@]}" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
export XDG_CACHE_HOME=$tmp/cache
for m in $models; do "$TEC" -O2 "$here/examples/$m.te" >/dev/null 2>&1; done   # fill the cache
for _ in $(seq "$COMPETE"); do
    sh -c 'while :; do :; done' &
    spinners+=($!)
done
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
echo "# bench/threads.sh, $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) processors: $cpu"
echo "# $COMPETE spinning processes started; load average $(cut -d' ' -f1-3 /proc/loadavg)"
ms() { env "$@" "$TEC" -O2 "$here/examples/$m.te" --repeat "$REPEAT" 2>&1 |
       sed -n 's/^time: median of [0-9]* runs after a warm-up: \([0-9.]*\) us$/\1/p' |
       awk '{printf "%.1f", $1 / 1000}'; }
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
for m in $models; do
    t1= tn= ts= run=
    for _ in $(seq "$ROUNDS"); do
        run="$run $(cut -d' ' -f4 /proc/loadavg | cut -d/ -f1)"
        t1="$t1 $(ms TEC_NUM_THREADS=1)"
        tn="$tn $(ms TEC_NUM_THREADS=2)"
        ts="$ts $(ms TEC_NUM_THREADS=2 OMP_PROC_BIND=true OMP_WAIT_POLICY=active)"
    done
    echo "$m (runnable at each round:$run)"
    echo "  1T      $t1   median $(echo "$t1" | median) ms"
    echo "  2T tec  $tn   median $(echo "$tn" | median) ms"
    echo "  2T spin $ts   median $(echo "$ts" | median) ms"
done
