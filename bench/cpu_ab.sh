#!/bin/bash
# bench/cpu_ab.sh — builds of tec compared on one model by CPU time, in one
# run that takes turns (A B C A B C ...), so that the load of a shared
# machine falls on all alike; CPU time (perf stat's task-clock), not wall
# time, so that waiting for a core does not count.
#
#   bench/cpu_ab.sh ROUNDS REPEAT TEC1,TEC2[,...] MODEL [tec args...]
#
# Per round and build: task-clock of `TEC -O2 --repeat REPEAT MODEL args`
# less that of `--repeat 1` (loading, compiling from the cache, prepack),
# divided by REPEAT - 1: ms per run at one thread (TEC_NUM_THREADS=1).
# Prints each build's median over the rounds, then the rounds.
set -eu
[ $# -ge 4 ] || { sed -n '2,13p' "$0"; exit 2; }
R=$1; N=$2; BUILDS=$(echo "$3" | tr , " "); shift 3
PYTHON=${PYTHON:-/usr/bin/python3}
for tec in $BUILDS; do TEC_NUM_THREADS=1 $tec -O2 --repeat 1 "$@" >/dev/null; done
clock() { TEC_NUM_THREADS=1 perf stat -e task-clock -x, "$@" 2>&1 >/dev/null | grep task-clock | cut -d, -f1; }
for i in $(seq "$R"); do
    for tec in $BUILDS; do
        t=$(clock $tec -O2 --repeat "$N" "$@")
        t1=$(clock $tec -O2 --repeat 1 "$@")
        echo "$tec $(echo "($t - $t1) / ($N - 1)" | bc -l)"
    done
done | "$PYTHON" -c "
import sys, statistics, collections
v = collections.OrderedDict()
for l in sys.stdin:
    k, t = l.split()
    v.setdefault(k, []).append(float(t))
for k in v:
    print(k, 'median %.2f ms/run' % statistics.median(v[k]), ' '.join('%.1f' % x for x in v[k]))"
