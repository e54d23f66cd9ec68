#!/bin/sh
# bench/accel_scalesim.sh — how fast `tec --accel-mode=scalesim` answers a
# ResNet-18 topology on the three SCALE-Sim configs of testsuite/accel/scalesim,
# against SCALE-Sim v2's own run of ResNet-18 on the same configs on this
# machine (83 s, 274 s and 23 min; SCALE-Sim itself is not run here).
# Prints the median wall time of 5 runs per config and the ratio; asserts
# nothing.
#
#   srcdir=. builddir=. sh bench/accel_scalesim.sh [TOPOLOGY.csv]   (after make)
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
srcdir=${srcdir:-$here}
builddir=${builddir:-.}
TEC=${TEC:-$builddir/tec}
topo=${1:-$srcdir/testsuite/accel/resnet18.csv}
if [ ! -x "$TEC" ]; then
    echo "accel_scalesim: error: $TEC not built (run make first, or set TEC)" >&2
    exit 1
fi
out=$(mktemp "${TMPDIR:-/tmp}/accel_scalesim.XXXXXX")
trap 'rm -f "$out"' EXIT
echo "topology: $topo"
for run in os_32x32:83 ws_128x128:274 is_16x16:1380; do
    cfg=${run%%:*} scalesim_s=${run#*:}
    times=""
    for i in 1 2 3 4 5; do
        start=$(date +%s.%N)
        "$TEC" --topology "$topo" --accel "$srcdir/testsuite/accel/scalesim/$cfg.cfg" \
            --accel-mode=scalesim >"$out" 2>/dev/null
        end=$(date +%s.%N)
        times="$times $(echo "$end - $start" | bc -l)"
    done
    median=$(printf '%s\n' $times | sort -g | sed -n 3p)
    printf '%-11s tec %.3f s (median of 5: %s)  SCALE-Sim %d s  ratio %.0fx\n' "$cfg" \
        "$median" "$(echo $times)" "$scalesim_s" "$(echo "$scalesim_s / $median" | bc -l)"
done
