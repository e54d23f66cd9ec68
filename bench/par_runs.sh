#!/bin/bash
# bench/par_runs.sh — the time of each run of a process, run by run: what a
# user who times a process's first runs sees (the runtime's tries of one
# thread and of the temps apart, runtime/threads.h, fall on particular runs).
#
#   bench/par_runs.sh MODEL_PATH...          (.te or .onnx; as root)
#
# For each model, BENCH_ROUNDS rounds (default 3), each starting a process
# of every binary in turn: TEC (default ./tec) and, when set, TEC_VS (an
# older build); each process runs the model BENCH_REPEAT + 1 times (default
# 20: `--repeat 20`, after its warm-up run) on BENCH_THREADS threads
# (default 2).  A run is one call of rt_run_execute, timed by a uprobe on
# its entry and return (`perf probe`, on a copy of each binary whose lib/
# links to the binary's own, so that other processes running the binary
# meet no probe).  Prints per process one line: the round, the binary, the
# vCPU round trip before it (bench/vcpu_rtt.c, ns: near ~50-70, far
# ~150-380), tec's --verbose counts (busy calls, calls on one thread, runs
# apart), then every run's time in ms, the warm-up first; and per binary the
# median over rounds of each run.  Also the median of runs 2-11 ("med10",
# what `--repeat 10` reports) and of all runs after the warm-up ("medN").
# BENCH_CHRT (default "chrt -f 10"; empty: none) runs tec and the round
# trip under a real-time policy, so that other processes' load does not
# decide.  An .onnx model's input is DIR/MODEL.in/*.npy when it exists
# (bench/ort_export.py).
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
TEC=${TEC:-$here/tec}
TEC_VS=${TEC_VS:-}
REPEAT=${BENCH_REPEAT:-20}
ROUNDS=${BENCH_ROUNDS:-3}
THREADS=${BENCH_THREADS:-2}
CHRT=${BENCH_CHRT-chrt -f 10}
[ $# -gt 0 ] || { echo "usage: bench/par_runs.sh MODEL_PATH..." >&2; exit 2; }
command -v perf >/dev/null || { echo "par_runs.sh: needs perf (perf probe)" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/par-runs.XXXXXX")
groups=
cleanup() {
    for g in $groups; do perf probe -q -d "$g:*" 2>/dev/null; done
    rm -rf "$tmp"
}
trap cleanup EXIT
cc -O2 -fopenmp "$here/bench/vcpu_rtt.c" -o "$tmp/vcpu_rtt" || exit 1
$CHRT true 2>/dev/null || CHRT=
rtt() { $CHRT "$tmp/vcpu_rtt" | awk '{print $3}'; }

# probe BIN NAME: a copy of BIN at $tmp/NAME/tec with uprobes in group
# parruns_NAME_PID on rt_run_execute's entry and return (run_NAME, ret_NAME:
# perf wants event names unique across groups)
probe() {
    local g="parruns_$2_$$" dir
    dir=$(cd "$(dirname "$1")" && pwd)
    mkdir -p "$tmp/$2"
    cp "$1" "$tmp/$2/tec" && ln -s "$dir/lib" "$tmp/$2/lib" || exit 1
    perf probe -q -x "$tmp/$2/tec" -a "$g:run_$2=rt_run_execute" -a "$g:ret_$2=rt_run_execute%return" ||
        { echo "par_runs.sh: perf probe failed (root? debug info?)" >&2; exit 1; }
    groups="$groups $g"
}
probe "$TEC" new
bins=new
[ -n "$TEC_VS" ] && { probe "$TEC_VS" old; bins="new old"; }

echo "# bench/par_runs.sh, $(date -u '+%Y-%m-%d %H:%M UTC'), load $(cut -d' ' -f1-3 /proc/loadavg)," \
     "$THREADS threads, $REPEAT runs after a warm-up${CHRT:+, under $CHRT}"
echo "# new: $TEC${TEC_VS:+   old: $TEC_VS}"
for path in "$@"; do
    m=$(basename "$path"); m=${m%.*}
    args=(-O2 --threads "$THREADS" --repeat "$REPEAT" --verbose "$path")
    if [ -d "${path%.*}.in" ]; then
        for f in "${path%.*}.in"/*.npy; do args+=(--input "$(basename "$f" .npy)=$f"); done
    fi
    for b in $bins; do "$tmp/$b/tec" "${args[@]}" >/dev/null 2>&1; done   # the caches
    echo "## $m (round bin rtt busy/one/apart: ms of run 1 (warm-up), 2, ...)"
    for r in $(seq "$ROUNDS"); do
        for b in $bins; do
            g="parruns_${b}_$$"
            r0=$(rtt)
            $CHRT perf record -q -o "$tmp/perf.data" -e "$g:*" -- "$tmp/$b/tec" "${args[@]}" \
                >"$tmp/out" 2>&1 || { echo "$m: $b failed:"; tail -3 "$tmp/out"; continue; }
            counts=$(awk '/calls ran with threads asleep/ {b = $2} /calls ran on one thread/ {o = $2}
                          /runs placed the temps apart/ {a = $2}
                          END {printf "%d/%d/%d", b, o, a}' "$tmp/out")
            times=$(perf script -i "$tmp/perf.data" -F time,event 2>/dev/null |
                awk '{t = $1 + 0} /:run_/ {s = t} /:ret_.*__return/ {printf " %.2f", (t - s) * 1000}')
            echo "$r $b $r0 $counts$times" | tee -a "$tmp/rows"
        done
    done
    # per binary: each run's median over the rounds, and med10 / medN of those rounds
    for b in $bins; do
        awk -v b="$b" '$2 == b {n++; for (i = 5; i <= NF; i++) v[i, n] = $i; nf = NF}
            function med(a, k,   i, j, t) {
                for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (a[j] < a[i]) {t = a[i]; a[i] = a[j]; a[j] = t}
                return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2 }
            END {
                if (!n) exit
                line = sprintf("%-4s median", b)
                for (i = 5; i <= nf; i++) { for (r = 1; r <= n; r++) x[r] = v[i, r]; line = line sprintf(" %.2f", med(x, n)) }
                for (r = 1; r <= n; r++) {
                    k = 0; for (i = 6; i <= nf && i <= 15; i++) y[++k] = v[i, r]; m10[r] = med(y, k)
                    k = 0; for (i = 6; i <= nf; i++) y[++k] = v[i, r]; mN[r] = med(y, k)
                }
                printf "%s   med10 %.2f medN %.2f\n", line, med(m10, n), med(mN, n)
            }' "$tmp/rows"
    done
    rm -f "$tmp/rows"
done
