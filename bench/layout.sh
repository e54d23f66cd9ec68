#!/bin/bash
# bench/layout.sh — what the layout pass (doc/passes.md, "Layouts") gains:
# the convolutional zoo models at -O2 with and without it.
#
#   bench/layout.sh [--save] [--rounds N] [MODEL...]
#
# For each model (default: resnet18 resnet50 mobilenet_v2 efficientnet_b0
# googlenet, the ones with padded convolutions or pools) at 1 and 2
# threads, `tec -O2 --repeat 20` (median of 20 runs after a warm-up) with
# the -O2 pipeline as it is and with the same pipeline less `layout`; the
# two take turns, ROUNDS times (default 5), and the table gives each one's
# median over the rounds and the ratio without/with (above 1: the pass
# makes the model faster).  With --save the table is also written to
# bench/results/layout.txt.  TEC is the tec binary (default ./tec).
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
srcdir=$(cd "${srcdir:-$here}" && pwd)
TEC=${TEC:-${builddir:-$here}/tec}
PYTHON=${PYTHON:-/usr/bin/python3}
save= rounds=5 models=
while [ $# -gt 0 ]; do
    case "$1" in
    --save) save=1 ;;
    --rounds) rounds=$2; shift ;;
    -*) echo "usage: bench/layout.sh [--save] [--rounds N] [MODEL...]" >&2; exit 2 ;;
    *) models="$models $1" ;;
    esac
    shift
done
models=${models:-resnet18 resnet50 mobilenet_v2 efficientnet_b0 googlenet}
with=$("$TEC" --list-passes | sed -n 's/^  -O2  //p')
without=$(echo "$with" | sed 's/,layout,/,/')
if [ "$with" = "$without" ]; then
    echo "bench/layout.sh: the -O2 pipeline has no layout pass: $with" >&2
    exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

time_us() {   # MODEL THREADS [tec options...]
    local model=$1 t=$2
    shift 2
    "$TEC" -O2 "$@" --threads "$t" --repeat 20 "$srcdir/examples/$model.te" |
        sed -n 's/^time: median of [0-9]* runs after a warm-up: \([0-9.]*\) us$/\1/p'
}
report() {
    echo "# bench/layout.sh: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) processors," \
         "load $(cut -d' ' -f1-3 /proc/loadavg); tec $(git -C "$srcdir" describe --always --dirty 2>/dev/null || echo '?') -O2;" \
         "median of $rounds rounds, each the median of 20 runs after a warm-up"
    echo "# with:    --passes=$with"
    echo "# without: --passes=$without"
    printf '%-16s %-7s %14s %14s %9s\n' model threads "without (ms)" "with (ms)" "without/with"
    for model in $models; do
        for t in 1 2; do
            time_us "$model" "$t" >/dev/null                            # compile both
            time_us "$model" "$t" --passes="$without" >/dev/null
            : >"$tmp/with" ; : >"$tmp/without"
            for r in $(seq 1 "$rounds"); do
                time_us "$model" "$t" --passes="$without" >>"$tmp/without"
                time_us "$model" "$t" >>"$tmp/with"
            done
            "$PYTHON" - "$model" "$t" "$tmp" <<'PY'
import statistics, sys
model, t, d = sys.argv[1], int(sys.argv[2]), sys.argv[3]
med = {v: statistics.median(float(x) for x in open(f"{d}/{v}")) / 1e3 for v in ("without", "with")}
print("%-16s %-7d %14.2f %14.2f %9.3fx" % (model, t, med["without"], med["with"], med["without"] / med["with"]))
PY
        done
    done
}
if [ -n "$save" ]; then
    mkdir -p "$here/bench/results"
    report | tee "$here/bench/results/layout.txt"
else
    report
fi
