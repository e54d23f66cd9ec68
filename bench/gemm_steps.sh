#!/bin/bash
# bench/gemm_steps.sh — GFLOP/s of bench/gemm.te's schedule step by step:
# the walk-through of doc/schedule.md, measured.
#
#   bench/gemm_steps.sh [--save] [--shape MxKxN] [--threads LIST]
#
# bench/gemm.te's schedule is divided by `# step N: what` comment lines.
# For N = 0 (an empty schedule: the naive nest) to the last step, this runs the program with the
# schedule's lines up to the end of step N (`tec -O3 -D M=.. -D K=.. -D
# N=.. --repeat R`, R picked to fill about 0.5 s, at least 1 run for the
# slow early steps) at each thread count (default 1,2), and prints GFLOP/s =
# 2·M·N·K / median.  Every step's output is compared with the unscheduled
# program's (testsuite/compare.py: within 1e-4 of the largest value),
# so a step that computed something else would show as WRONG.
#
# Default shape 1024x1024x1024.  With --save the table is also written to
# bench/results/gemm_steps.txt.  TEC is the tec binary (default ./tec).
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
srcdir=$(cd "${srcdir:-$here}" && pwd)
TEC=${TEC:-${builddir:-$here}/tec}
PYTHON=${PYTHON:-/usr/bin/python3}
shape=1024x1024x1024
threads_list=1,2
save=
while [ $# -gt 0 ]; do
    case "$1" in
    --save) save=1 ;;
    --shape) shape=$2; shift ;;
    --threads) threads_list=$2; shift ;;
    -h | --help) sed -n '2,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "gemm_steps.sh: unknown argument '$1'" >&2; exit 2 ;;
    esac
    shift
done
[[ $shape =~ ^([1-9][0-9]*)x([1-9][0-9]*)x([1-9][0-9]*)$ ]] || { echo "gemm_steps.sh: bad shape '$shape'" >&2; exit 2; }
M=${BASH_REMATCH[1]} K=${BASH_REMATCH[2]} N=${BASH_REMATCH[3]}
IFS=, read -r -a threads <<<"$threads_list"
[ -x "$TEC" ] || { echo "gemm_steps.sh: no tec at $TEC (run make)" >&2; exit 2; }
prog=$srcdir/bench/gemm.te
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gemm_steps.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
if [ -n "$save" ] && [ -z "${GEMM_STEPS_SAVING:-}" ]; then
    mkdir -p "$srcdir/bench/results"
    GEMM_STEPS_SAVING=1 bash "$0" "$@" | tee "$srcdir/bench/results/gemm_steps.txt"
    exit "${PIPESTATUS[0]}"
fi

# The program without its schedule, and the schedule's lines.
awk '/^schedule matmul \{/ { skip = 1; next } skip && /^\}/ { skip = 0; next } !skip' "$prog" >"$tmp/base.te"
awk '/^schedule matmul \{/ { on = 1; next } on && /^\}/ { on = 0 } on' "$prog" >"$tmp/sched"
nsteps=$(grep -c '^ *# step [0-9]*:' "$tmp/sched")
flop=$(awk -v m="$M" -v k="$K" -v n="$N" 'BEGIN { printf "%.0f", 2 * m * k * n }')
defs=(-D "M=$M" -D "K=$K" -D "N=$N")

echo "# bench/gemm_steps.sh: bench/gemm.te's schedule step by step, ${M}x${K}x${N} f32, tec -O3"
echo "# date:    $(date '+%Y-%m-%d %H:%M %Z'), commit $(git -C "$srcdir" rev-parse --short HEAD 2>/dev/null || echo unknown)"
echo "# machine: $(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1), nproc $(nproc); load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
"$TEC" -O0 "${defs[@]}" "$tmp/base.te" --save-outputs "$tmp/ref" >/dev/null
header=$(printf '%4s  %-48s' step what)
for t in "${threads[@]}"; do header="$header$(printf '%14s' "GFLOP/s ${t}thr")"; done
echo "$header"
for step in $(seq 0 "$nsteps"); do
    if [ "$step" = 0 ]; then
        what="no schedule (the naive nest)"
        # an empty schedule: the automatic scheduler leaves the def alone
        { cat "$tmp/base.te"; echo "schedule matmul {"; echo "}"; } >"$tmp/p.te"
    else
        what=$(sed -n "s/^ *# step $step: //p" "$tmp/sched")
        awk -v n="$step" '/^ *# step [0-9]*:/ { split($0, a, /step |:/); if (a[2] + 0 > n) exit } { print }' \
            "$tmp/sched" >"$tmp/upto"
        { cat "$tmp/base.te"; echo "schedule matmul {"; cat "$tmp/upto"; echo "}"; } >"$tmp/p.te"
    fi
    row=$(printf '%4s  %-48s' "$step" "$what")
    for t in "${threads[@]}"; do
        # one run to size the count, then the measurement
        probe=$(TEC_NUM_THREADS=$t "$TEC" -O3 "${defs[@]}" "$tmp/p.te" --repeat 1 --save-outputs "$tmp/out" |
            sed -n 's/^time: median of [0-9]* runs after a warm-up: \([0-9.]*\) us$/\1/p')
        if ! "$PYTHON" "$srcdir/testsuite/compare.py" "$tmp/ref" "$tmp/out" >/dev/null 2>&1; then
            row="$row$(printf '%14s' WRONG)"
            continue
        fi
        r=$(awk -v t="$probe" 'BEGIN { n = int(500000 / (t > 0 ? t : 1)); if (n < 1) n = 1; if (n > 50) n = 50; print n }')
        us=$(TEC_NUM_THREADS=$t "$TEC" -O3 "${defs[@]}" "$tmp/p.te" --repeat "$r" |
            sed -n 's/^time: median of [0-9]* runs after a warm-up: \([0-9.]*\) us$/\1/p')
        row="$row$(awk -v f="$flop" -v us="$us" 'BEGIN { printf "%14.2f", f / (us * 1e3) }')"
    done
    echo "$row"
done
echo
echo "# load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
