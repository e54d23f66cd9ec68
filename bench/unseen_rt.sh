#!/bin/bash
# bench/unseen_rt.sh — issue 23's measure for models tec has not seen, on a
# machine other jobs share: per model its error against PyTorch, its cold
# first result and tec/ONNX Runtime at each thread count, whole-model
# medians with tec and ORT in turns under `chrt -f 10` (ahead of the other
# jobs' processes, so a run is rarely preempted).
#
#   bench/unseen_rt.sh DIR MODEL...
#
# DIR holds bench/ort_export.py's exports (MODEL.onnx, MODEL.in/*.npy,
# MODEL.ref.npy).  Per model:
#   cold     a new, empty XDG_CACHE_HOME; `tec -O2 MODEL.onnx --input ...
#            --save-outputs` under chrt: elapsed and CPU seconds (tec's and
#            its C compiler's), and err = max |tec - torch| / max |torch|
#   rounds   ROUNDS (default 3) rounds; in each, for every thread count of
#            THREADS (default "1 2"): tec -O2 --repeat REPEAT (default 10,
#            the median of its runs after a warm-up, kernels from the cold
#            run's cache) and bench/ort_run.js (REPEAT runs, CAP seconds at
#            most), ORT first in odd rounds and second in even ones
# Prints a line per model and thread count: the medians of the rounds'
# medians, their ratio, and the median of the rounds' paired ratios
# (tec / ORT of the same round, which the machine's drift moves least).
# Env: TEC (default ./tec), ORT_NODE_DIR (default bench/node), PYTHON
# (default /usr/bin/python3), ROUNDS, THREADS, REPEAT, CAP (default 5).
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
TEC=${TEC:-$here/tec}
PYTHON=${PYTHON:-/usr/bin/python3}
export ORT_NODE_DIR=${ORT_NODE_DIR:-$here/bench/node}
ROUNDS=${ROUNDS:-3} THREADS=${THREADS:-"1 2"} REPEAT=${REPEAT:-10} CAP=${CAP:-5}
[ $# -ge 2 ] || { echo "usage: bench/unseen_rt.sh DIR MODEL..." >&2; exit 2; }
DIR=$1
shift
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
RT="chrt -f 10"
$RT true 2>/dev/null || RT=

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {if (NR==0) print "-"; else if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
maxerr() {   # maxerr REF.npy DIR: max |got - ref| / max |ref| of DIR's one output
    "$PYTHON" -c '
import sys, glob, numpy as np
ref = np.load(sys.argv[1]).astype(np.float64)
g = np.load(glob.glob(sys.argv[2] + "/*.npy")[0]).astype(np.float64).reshape(ref.shape)
print("%.1e" % (np.abs(g - ref).max() / max(np.abs(ref).max(), 1e-30)))' "$1" "$2" 2>/dev/null || echo FAIL
}
tec_ms() {   # tec_ms N ARGS...: tec's median ms on N threads, or FAIL
    local n=$1
    shift
    TEC_NUM_THREADS=$n $RT "$TEC" -O2 "$@" --repeat "$REPEAT" 2>&1 |
        sed -n 's/^time: median of [0-9]* runs after a warm-up: \([0-9.]*\) us$/\1/p' |
        awk '{printf "%.3f", $1 / 1000; f = 1} END {if (!f) print "FAIL"}'
}
ort_ms() {   # ort_ms N ONNX: ORT's median ms on N threads, or FAIL
    $RT node "$here/bench/ort_run.js" "$2" "$DIR/$m.in" "$DIR/$m.ref.npy" "$1" "$REPEAT" "$CAP" \
        2>/dev/null | sed -n 's/.* median_ms=\([^ ]*\).*/\1/p' | awk '{print; f = 1} END {if (!f) print "FAIL"}'
}

echo "# bench/unseen_rt.sh $DIR, tec $TEC, rounds $ROUNDS, repeat $REPEAT; $(date -u +%H:%M) UTC, load $(cut -d' ' -f1-3 /proc/loadavg)"
for m in "$@"; do
    onnx=$DIR/$m.onnx
    inargs=()
    for f in "$DIR/$m.in"/*.npy; do inargs+=(--input "$(basename "$f" .npy)=$f"); done
    export XDG_CACHE_HOME=$tmp/cache-$m
    mkdir -p "$XDG_CACHE_HOME"
    t0=$(date +%s.%N)
    TEC_NUM_THREADS=2 $RT /usr/bin/time -f '%U %S' -o "$tmp/cpu" \
        "$TEC" -O2 "$onnx" "${inargs[@]}" --save-outputs "$tmp/out-$m" >/dev/null 2>"$tmp/cold-err"
    t1=$(date +%s.%N)
    cold=$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.2f", b - a}')
    cold_cpu=$(awk 'NF == 2 && $1 ~ /^[0-9.]+$/ {printf "%.2f", $1 + $2}' "$tmp/cpu")
    err=$(maxerr "$DIR/$m.ref.npy" "$tmp/out-$m")
    echo "$m cold=${cold}s cold_cpu=${cold_cpu}s err=$err load=$(cut -d' ' -f1 /proc/loadavg)"
    [ "$err" = FAIL ] && sed 's/^/  /' "$tmp/cold-err" | head -5
    for n in $THREADS; do
        tl= ol= pairs=
        for r in $(seq "$ROUNDS"); do
            if [ $((r % 2)) = 1 ]; then
                o=$(ort_ms "$n" "$onnx"); t=$(tec_ms "$n" "$onnx" "${inargs[@]}")
            else
                t=$(tec_ms "$n" "$onnx" "${inargs[@]}"); o=$(ort_ms "$n" "$onnx")
            fi
            tl="$tl $t" ol="$ol $o"
            pairs="$pairs $(awk -v a="$t" -v b="$o" 'BEGIN {if (a + 0 > 0 && b + 0 > 0) printf "%.3f", a / b}')"
        done
        tm=$(echo "$tl" | median) om=$(echo "$ol" | median) pm=$(echo "$pairs" | median)
        printf "%-22s %dT tec %9s ms  ORT %9s ms  ratio %s  paired %s  (rounds tec:%s ORT:%s)\n" "$m" "$n" \
            "$tm" "$om" "$(awk -v a="$tm" -v b="$om" 'BEGIN {if (a + 0 > 0 && b + 0 > 0) printf "%.2f", a / b; else print "-"}')" \
            "$pm" "$tl" "$ol"
    done
    rm -rf "$XDG_CACHE_HOME" "$tmp/out-$m"
done
