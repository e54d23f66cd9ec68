#!/bin/bash
# bench/conv_layout.sh — which layout ResNet's 3x3 convolutions want:
# the measurement behind tec's choice of NCHW between layers
# (doc/passes.md, "Layouts").
#
#   bench/conv_layout.sh [--save] [--rounds N]
#
# For the 3x3, stride-1 convolution of each ResNet-18 stage (C = F = 64,
# 128, 256, 512 channels on 56, 28, 14, 7 pixels), at 1 and 2 threads, with
# no schedule in the programs (-O2 chooses):
#   nchw      lib/nn.te's conv2d(x, F, 3, pad=1) on NCHW, as the zoo runs it
#             (the kernel copies its input into a padded buffer);
#   prepadded bench/conv_prepadded.te: NCHW whose input already has its
#             border of zeros (what a producer writing into a padded layout
#             would give: no copy);
#   nchw16c   bench/conv_nchwc.te: the channel-blocked layout, input with
#             its border.
# Each is `tec -O2 --repeat R` (median of R runs after a warm-up); the three
# take turns, ROUNDS times (default 5), and the table gives each variant's
# median over the rounds as GFLOP/s (2*C*F*H*H*9 / time) and its time
# relative to nchw.  With --save the table is also written to
# bench/results/conv_layout.txt.  TEC is the tec binary (default ./tec).
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
srcdir=$(cd "${srcdir:-$here}" && pwd)
TEC=${TEC:-${builddir:-$here}/tec}
PYTHON=${PYTHON:-/usr/bin/python3}
save= rounds=5
while [ $# -gt 0 ]; do
    case "$1" in
    --save) save=1 ;;
    --rounds) rounds=$2; shift ;;
    *) echo "usage: bench/conv_layout.sh [--save] [--rounds N]" >&2; exit 2 ;;
    esac
    shift
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/nchw.te" <<EOT
import "$srcdir/lib/nn.te"
let C = 64
let F = 64
let H = 56
input x: f32[1, C, H, H]
y = conv2d(x, F, 3, pad=1) as "conv"
output y
EOT
cp "$srcdir/bench/conv_prepadded.te" "$tmp/prepadded.te"
cp "$srcdir/bench/conv_nchwc.te" "$tmp/nchw16c.te"

time_us() {   # VARIANT THREADS C H REPEAT
    "$TEC" -O2 --threads "$2" -D C="$3" -D F="$3" -D H="$4" --repeat "$5" "$tmp/$1.te" |
        sed -n 's/^time: median of [0-9]* runs after a warm-up: \([0-9.]*\) us$/\1/p'
}
report() {
    echo "# bench/conv_layout.sh: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) processors," \
         "load $(cut -d' ' -f1-3 /proc/loadavg); tec -O2, no schedule in the programs;" \
         "median of $rounds rounds, each the median of --repeat runs"
    printf '%-9s %-7s %3s  %18s %18s %18s\n' stage threads C "nchw GF/s" "prepadded GF/s (x)" "nchw16c GF/s (x)"
    for stage in "64 56" "128 28" "256 14" "512 7"; do
        set -- $stage
        c=$1 h=$2
        for t in 1 2; do
            for v in nchw prepadded nchw16c; do
                "$TEC" -O2 --threads "$t" -D C="$c" -D F="$c" -D H="$h" "$tmp/$v.te" >/dev/null   # compile
                : >"$tmp/$v.times"
            done
            for r in $(seq 1 "$rounds"); do
                for v in nchw prepadded nchw16c; do
                    time_us $v "$t" "$c" "$h" 50 >>"$tmp/$v.times"
                done
            done
            "$PYTHON" - "$c" "$h" "$t" "$tmp" <<'PY'
import statistics, sys
c, h, t, d = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
flops = 2.0 * c * c * h * h * 9
med = {v: statistics.median(float(x) for x in open(f"{d}/{v}.times")) for v in ("nchw", "prepadded", "nchw16c")}
gf = {v: flops / med[v] / 1e3 for v in med}
cell = lambda v: "%8.1f (%5.2fx)" % (gf[v], med["nchw"] / med[v])
print("%-9s %-7d %3d  %18.1f %18s %18s" % ("%dx%d" % (h, h), t, c, gf["nchw"], cell("prepadded"), cell("nchw16c")))
PY
        done
    done
}
if [ -n "$save" ]; then
    mkdir -p "$here/bench/results"
    report | tee "$here/bench/results/conv_layout.txt"
else
    report
fi
