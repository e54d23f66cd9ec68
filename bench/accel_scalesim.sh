#!/bin/sh
# bench/accel_scalesim.sh — how fast `tec --accel-mode=scalesim` answers a
# ResNet-18 topology on the three SCALE-Sim configs of testsuite/accel/scalesim,
# against SCALE-Sim v2's own run of ResNet-18 on the same configs on this
# machine, whose times bench/results/accel_scalesim_reference.txt keeps
# (SCALE-Sim itself is not run here; set SCALESIM_TIMES to another file).
# Prints the median wall time of 5 runs per config and the ratio; then, per
# config and layer, tec's default model's DRAM traffic over SCALE-Sim's
# (ifmap reads, filter reads, ofmap writes, ifmap + filter reads) and the
# largest ratio above 1 of ifmap and filter reads (doc/accel.md section 7,
# item 4, says where and why the two differ).  Asserts nothing.
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
times_file=${SCALESIM_TIMES:-$srcdir/bench/results/accel_scalesim_reference.txt}
echo "topology: $topo"
echo "SCALE-Sim times: $times_file"
for cfg in os_32x32 ws_128x128 is_16x16; do
    scalesim_s=$(awk -v c="$cfg" '$1 == c { print $2 }' "$times_file")
    if [ -z "$scalesim_s" ]; then
        echo "accel_scalesim: error: $times_file has no time for $cfg" >&2
        exit 1
    fi
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

echo
echo "per-layer DRAM traffic, tec's default model / SCALE-Sim mode (words):"
for cfg in os_32x32 ws_128x128 is_16x16; do
    c=$srcdir/testsuite/accel/scalesim/$cfg.cfg
    "$TEC" --topology "$topo" --accel "$c" --accel-report="$out.csv" >/dev/null 2>&1
    "$TEC" --topology "$topo" --accel "$c" --accel-mode=scalesim >"$out" 2>/dev/null
    awk -v cfg="$cfg" -F, '
        FNR == NR { if (FNR > 2 && NF == 1) { split($0, f, " ")
                        if (f[1] != "total" && f[13] != "") { si[f[1]] = f[13]; sf[f[1]] = f[14]; so[f[1]] = f[15] } }
                    next }
        FNR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
        $col["kind"] == "gemm" && ($col["name"] in si) {
            n = $col["name"]; ti = $col["dram_reads_ifmap"]; tf = $col["dram_reads_filter"]
            to = $col["dram_writes_ofmap"]
            ri = ti / si[n]; rf = tf / sf[n]
            printf "%-11s %-24s ifmap %5.2f  filter %5.2f  ofmap %5.2f  reads %5.2f\n", cfg, n,
                   ri, rf, to / so[n], (ti + tf) / (si[n] + sf[n])
            if (ri > worst) { worst = ri; wn = n " ifmap" }
            if (rf > worst) { worst = rf; wn = n " filter" }
        }
        END { printf "%-11s largest ratio above 1: %.2f (%s)\n", cfg, worst, wn }' "$out" "$out.csv"
done
rm -f "$out.csv"
