#!/bin/bash
# bench/start.sh — the time to the first result with warm caches: tec
# against another build of tec (TEC_VS), in one run, taking turns.
#
#   TEC_VS=OLD_TEC bench/start.sh [--save] [PROGRAM...]
#       (after make; default examples/resnet18.te; a PROGRAM may be an
#        .onnx model, run with --input NAME=FILE for each FILE of MODEL.in/
#        when that folder exists, else with default data)
#
# For each program, each build runs it once to fill its caches, then in
# BENCH_ROUNDS rounds (default 7) that alternate old, new, old, new: a plain
# run (`tec -O2 PROGRAM`) and a profiled one (`--profile --repeat 1`).
# Each cell is the median over the rounds of the elapsed time and of the
# CPU time (user + system, all threads) of the whole process, in ms, from
# /usr/bin/time, and a third number: tec's CPU time outside its runs (the
# "total" less the "run" row of --time-phases, in ms with a decimal: all
# that a start from the caches adds to the work itself).  START_MODES picks
# the modes (default "plain profile").
# TEC_LABEL and TEC_VS_LABEL name the two builds in the
# header (default: their file names).  --save appends the output to
# bench/results/start.txt.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
TEC=${TEC:-$here/tec}
TEC_VS=${TEC_VS:?set TEC_VS to the tec to compare with}
ROUNDS=${BENCH_ROUNDS:-7}
save= progs=
for a in "$@"; do
    case $a in
    --save) save=1 ;;
    -h|--help) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "start.sh: unknown option $a" >&2; exit 2 ;;
    *) progs="$progs $a" ;;
    esac
done
progs=${progs:-$here/examples/resnet18.te}
if [ -n "$save" ] && [ -z "${START_SH_SAVING:-}" ]; then
    mkdir -p "$here/bench/results"
    START_SH_SAVING=1 bash "$0" "$@" | tee -a "$here/bench/results/start.txt"
    exit "${PIPESTATUS[0]}"
fi
[ -x /usr/bin/time ] || { echo "start.sh: needs /usr/bin/time" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/start-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
export XDG_CACHE_HOME=$tmp/cache
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
echo "# bench/start.sh, $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) processors: $cpu;" \
     "load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# new: ${TEC_LABEL:-$(basename "$TEC")}  old: ${TEC_VS_LABEL:-$(basename "$TEC_VS")}  (median of $ROUNDS; ms elapsed / ms CPU / ms CPU outside the run)"
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
# one BINARY ARGS...: "elapsed_ms cpu_ms outside_ms" of one run
one() {
    /usr/bin/time -f '%e %U %S' -o "$tmp/t" "$@" --time-phases >/dev/null 2>"$tmp/err" ||
        { cat "$tmp/err" >&2; echo "start.sh: $* failed" >&2; exit 1; }
    outside=$(awk '$1 == "total" {t = $3} $1 == "run" && NF == 4 {r = $3}
                   END {printf "%.1f", t - r}' "$tmp/err")
    awk -v o="$outside" '{printf "%.0f %.0f %s\n", $1 * 1000, ($2 + $3) * 1000, o}' "$tmp/t"
}
for p in $progs; do
    args=(-O2 "$p")
    in=${p%.onnx}.in
    if [ "${p%.onnx}" != "$p" ] && [ -d "$in" ]; then
        for f in "$in"/*.npy; do args+=(--input "$(basename "$f" .npy)=$f"); done
    fi
    for mode in ${START_MODES:-plain profile}; do
        extra=()
        [ $mode = profile ] && extra=(--profile --repeat 1)
        for b in "$TEC_VS" "$TEC"; do "$b" "${args[@]}" "${extra[@]}" >/dev/null 2>&1; done
        : >"$tmp/old"; : >"$tmp/new"
        for _ in $(seq "$ROUNDS"); do
            one "$TEC_VS" "${args[@]}" "${extra[@]}" >>"$tmp/old"
            one "$TEC" "${args[@]}" "${extra[@]}" >>"$tmp/new"
        done
        cell() {
            echo "$(cut -d' ' -f1 "$1" | median) / $(cut -d' ' -f2 "$1" | median) /" \
                 "$(cut -d' ' -f3 "$1" | median)"
        }
        printf '%-28s %-8s old %-19s new %s\n' "$(basename "$p")" "$mode" "$(cell "$tmp/old")" \
               "$(cell "$tmp/new")"
    done
done
