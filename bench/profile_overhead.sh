#!/bin/bash
# bench/profile_overhead.sh — what --profile costs at run time.
#
#   bench/profile_overhead.sh [PROGRAM.te [REPEAT [ROUNDS]]]
#
# Runs PROGRAM (default examples/resnet18.te, or examples/conv.te at a
# larger size when that does not exist yet) at -O2, alternately without
# and with --profile, ROUNDS times (default 5), each time timing REPEAT runs
# (default 20) after a warm-up, and compares the whole-graph run time round
# by round (the median of the rounds' ratios decides; the two runs of a
# round alternate in order): `tec --repeat N` prints it unprofiled, and the
# JSON report's totals.time_us is the same measurement with the instrumented kernels.
# Compilation is not timed (the kernel cache is warmed first).
#
# Exit status 1 when the overhead exceeds MAX_OVERHEAD percent (default 1,
# the goal tec sets itself for the optimized ResNet-18).  Environment: TEC (the tec binary, default ./tec).
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
TEC=${TEC:-$here/tec}
prog=${1:-}
repeat=${2:-20}
rounds=${3:-5}
max=${MAX_OVERHEAD:-1}
args=()
if [ -z "$prog" ]; then
    if [ -f "$here/examples/resnet18.te" ]; then
        prog=$here/examples/resnet18.te
    else
        prog=$here/examples/conv.te
        args=(-D H=224)
    fi
fi
command -v "$TEC" >/dev/null 2>&1 || [ -x "$TEC" ] || { echo "no tec at $TEC (set TEC)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Warm the kernel cache for both builds (instrumented code is another kernel).
"$TEC" -O2 "${args[@]}" "$prog" >/dev/null
"$TEC" -O2 --profile "${args[@]}" "$prog" >/dev/null

plain_run() {
    t=$("$TEC" -O2 --repeat "$repeat" "${args[@]}" "$prog" |
        sed -n 's/^time: median of [0-9]* runs after a warm-up: \([0-9.]*\) us$/\1/p')
    [ -n "$t" ] || { echo "no timing line from tec --repeat" >&2; exit 2; }
    plain+=("$t")
}
profiled_run() {
    "$TEC" -O2 --profile --repeat "$repeat" "${args[@]}" "$prog" --report="$tmp/r.json" >/dev/null
    profiled+=("$(python3 -c "import json; print(json.load(open('$tmp/r.json'))['totals']['time_us'])")")
}
plain=()
profiled=()
for r in $(seq 1 "$rounds"); do
    # Alternate which goes first, so that neither always follows the other.
    if [ $((r % 2)) = 1 ]; then plain_run; profiled_run; else profiled_run; plain_run; fi
    echo "round $r: plain ${plain[-1]} us, profiled ${profiled[-1]} us"
done

python3 - "$max" "$prog" "${plain[*]}" "${profiled[*]}" <<'PY'
import statistics, sys
limit, prog = float(sys.argv[1]), sys.argv[2]
plain = [float(x) for x in sys.argv[3].split()]
prof = [float(x) for x in sys.argv[4].split()]
a, b = statistics.median(plain), statistics.median(prof)
# The verdict is paired: each round's profiled time over the plain time
# measured right before it, so that the machine's drift between rounds
# (several percent on a shared VM) cancels; the median of those ratios
# also ignores a round that another process disturbed.
ratio = statistics.median(q / p for p, q in zip(plain, prof))
over = 100.0 * (ratio - 1)
print(f"{prog}: median run {a:.1f} us plain, {b:.1f} us profiled ({100.0 * (b - a) / a:+.2f}%); "
      f"median of the {len(plain)} rounds' ratios: overhead {over:+.2f}% (limit {limit:g}%)")
sys.exit(0 if over <= limit else 1)
PY
