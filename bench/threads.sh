#!/bin/bash
# bench/threads.sh — tec on 1 and 2 threads when other processes compete for
# the processors: tec's default against other OpenMP settings.
#
#   bench/threads.sh [--save] [MODEL...]      (after make; default mobilenet_v2 resnet18)
#   COMPETE=1 bench/threads.sh                (1 spinning process started before tec)
#   COMPETE=1 AFTER=1 bench/threads.sh        (... started AFTER_DELAY s after each tec)
#
# For each model (examples/MODEL.te at -O2) in BENCH_ROUNDS rounds (default
# 5) that take turns: `tec --repeat BENCH_REPEAT` (default 10; tec's median)
#   1T        TEC_NUM_THREADS=1
#   2T tec    TEC_NUM_THREADS=2, tec's default (doc/codegen.md, "Threads"):
#             unbound, spinning GOMP_SPINCOUNT=10000 times between parallel
#             loops, asleep at once while other processes hold the processors
#   2T spin   the same spinning throughout (GOMP_SPINCOUNT=10000 set)
#   2T pass   OMP_PROC_BIND=false OMP_WAIT_POLICY=passive (asleep throughout)
#   2T bound  OMP_PROC_BIND=true OMP_WAIT_POLICY=active (bound and spinning)
# plus, with TEC_VS=OLD_TEC, `2T old`: that build's default on 2 threads,
# and with SPINS="N ...", `2T sN`: 2 threads, GOMP_SPINCOUNT=N throughout.
# Each cell lists the rounds' times in ms, then their median.  COMPETE=N
# starts N processes that spin (`while :; do :; done`): for the whole run,
# or with AFTER=1 anew for each tec run, AFTER_DELAY seconds (default 0.3,
# after the kernels loaded from the cache) after it starts, and stopped when
# it ends.  Without COMPETE the competition is whatever else runs on the
# machine (the runnable count at each round is printed).  --save appends
# the output to bench/results/threads.txt.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
TEC=${TEC:-$here/tec}
TEC_VS=${TEC_VS:-}
ROUNDS=${BENCH_ROUNDS:-5}
REPEAT=${BENCH_REPEAT:-10}
COMPETE=${COMPETE:-0}
AFTER=${AFTER:-0}
AFTER_DELAY=${AFTER_DELAY:-0.3}
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
stop_spinners() {
    [ ${#spinners[@]} -gt 0 ] && { kill "${spinners[@]}" 2>/dev/null; wait "${spinners[@]}" 2>/dev/null; }
    spinners=()
}
# start_spinners DELAY: COMPETE spinning processes, each after DELAY seconds
start_spinners() {
    for _ in $(seq "$COMPETE"); do
        sh -c "sleep $1; while :; do :; done" </dev/null >/dev/null 2>&1 &
        spinners+=($!)
    done
}
cleanup() { stop_spinners; rm -rf "$tmp"; }
trap cleanup EXIT
export XDG_CACHE_HOME=$tmp/cache
for m in $models; do
    "$TEC" -O2 "$here/examples/$m.te" >/dev/null 2>&1   # fill the cache
    [ -n "$TEC_VS" ] && "$TEC_VS" -O2 "$here/examples/$m.te" >/dev/null 2>&1
done
[ "$AFTER" = 1 ] || start_spinners 0
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
when=$([ "$AFTER" = 1 ] && echo "${AFTER_DELAY} s after each tec run starts" || echo "before tec")
echo "# bench/threads.sh, $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) processors: $cpu"
echo "# $COMPETE spinning processes started $when; load average $(cut -d' ' -f1-3 /proc/loadavg)"
# ms BINARY ENV...: one tec run's median in ms
ms() {
    local bin=$1
    shift
    [ "$AFTER" = 1 ] && start_spinners "$AFTER_DELAY"
    env "$@" "$bin" -O2 "$here/examples/$m.te" --repeat "$REPEAT" >"$tmp/out" 2>&1
    [ "$AFTER" = 1 ] && stop_spinners
    sed -n 's/^time: median of [0-9]* runs after a warm-up: \([0-9.]*\) us$/\1/p' "$tmp/out" |
        awk '{printf "%.1f", $1 / 1000}'
}
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
SPINS=${SPINS:-}
variants="1T|TEC_NUM_THREADS=1
2T tec|TEC_NUM_THREADS=2
2T spin|TEC_NUM_THREADS=2 OMP_PROC_BIND=false GOMP_SPINCOUNT=10000
2T pass|TEC_NUM_THREADS=2 OMP_PROC_BIND=false OMP_WAIT_POLICY=passive
2T bound|TEC_NUM_THREADS=2 OMP_PROC_BIND=true OMP_WAIT_POLICY=active"
for n in $SPINS; do
    variants="$variants
2T s$n|TEC_NUM_THREADS=2 OMP_PROC_BIND=false GOMP_SPINCOUNT=$n"
done
nvar=$(echo "$variants" | wc -l)
for m in $models; do
    declare -A t=()
    run=
    for _ in $(seq "$ROUNDS"); do
        run="$run $(cut -d' ' -f4 /proc/loadavg | cut -d/ -f1)"
        for i in $(seq "$nvar"); do
            v=$(echo "$variants" | sed -n "${i}p")
            t[$i]="${t[$i]:-} $(ms "$TEC" ${v#*|})"
        done
        [ -n "$TEC_VS" ] && t[old]="${t[old]:-} $(ms "$TEC_VS" TEC_NUM_THREADS=2)"
    done
    echo "$m (runnable at each round:$run)"
    for i in $(seq "$nvar"); do
        v=$(echo "$variants" | sed -n "${i}p")
        printf '  %-9s %s   median %s ms\n' "${v%%|*}" "${t[$i]}" "$(echo "${t[$i]}" | median)"
    done
    [ -n "$TEC_VS" ] && printf '  %-9s %s   median %s ms\n' "2T old" "${t[old]}" "$(echo "${t[old]}" | median)"
    unset t
done
exit 0
