#!/bin/sh
# bench/accel_sweep.sh — speed of the accelerator model:
# raw layer evaluations per second, and a sweep of 105 configurations
# (5 array shapes x 3 dataflows x 7 SRAM sizes) over ResNet-50 with each
# tiling-search objective.  Prints timings; asserts nothing about them.
#
#   srcdir=. builddir=. sh bench/accel_sweep.sh     (after make)
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
srcdir=${srcdir:-$here}
builddir=${builddir:-.}
ACCEL=${ACCEL:-$builddir/accel/tec-accel}
if [ ! -x "$ACCEL" ]; then
    echo "accel_sweep: error: $ACCEL not built (run make first, or set ACCEL)" >&2
    exit 1
fi
cfg=$srcdir/accel/configs/edge_os_32x32.cfg
topo=$srcdir/testsuite/accel/resnet50.csv
out=$(mktemp "${TMPDIR:-/tmp}/accel_sweep.XXXXXX")
trap 'rm -f "$out"' EXIT

echo "== per-layer evaluations, ResNet-50 (54 layers) x 2000 rounds, no result reuse"
"$ACCEL" --config "$cfg" --topology "$topo" --bench 2000 2>&1
"$ACCEL" --config "$cfg" --topology "$topo" --bench 20 --search edp 2>&1

for search in none dram edp; do
    echo "== sweep: 105 configurations over ResNet-50, tiling search $search"
    start=$(date +%s.%N)
    "$ACCEL" --config "$cfg" --topology "$topo" --sweep --search "$search" \
        --csv "$out" --time 2>&1
    end=$(date +%s.%N)
    rows=$(($(wc -l <"$out") - 1))
    awk -v s="$start" -v e="$end" -v r="$rows" \
        'BEGIN { printf "wall clock (process included): %.3f s for %d configurations\n", e - s, r }'
done
