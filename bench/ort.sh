#!/bin/bash
# bench/ort.sh — tec against ONNX Runtime and PyTorch in one run: the zoo as
# .te and as its ONNX export, and torchvision models tec was not tuned on.
#
#   bench/ort.sh [--save] [--profile] [MODEL...]     (after make)
#   BENCH_ROUNDS=1 BENCH_REPEAT=5 bench/ort.sh resnet18      (a quick run)
#
# Models: the zoo (resnet18 resnet50 mobilenet_v2 efficientnet_b0 googlenet
# gpt2) and TORCHVISION (default: resnet34 resnext50_32x4d densenet121
# mobilenet_v3_large efficientnet_b1 regnet_y_400mf convnext_tiny
# inception_v3 squeezenet1_1), each exported by bench/ort_export.py (opset
# 13, batch 1; the zoo with tec's default data as weights and input, the
# others with seeded random ones) into $ORT_WORK (default a temporary
# folder; give one to keep the exports between runs).
#
# For each model and thread count N of BENCH_THREADS (default "1 2"), in
# BENCH_ROUNDS rounds (default 3) that take turns, so a change in the
# machine's load hits every column alike:
#   tec .te     TEC_NUM_THREADS=N tec -O2 examples/MODEL.te --repeat R (zoo)
#   tec .onnx   TEC_NUM_THREADS=N tec -O2 MODEL.onnx --input ... --repeat R
#   ORT         bench/ort_run.js: ONNX Runtime (onnxruntime-node), all graph
#               optimizations, intraOpNumThreads N, sequential
# each the median of R runs after warm-up runs; the table gives the median
# of the rounds.  PyTorch (torch.set_num_threads(N), inference_mode) is
# measured once, by ort_export.py.  R is BENCH_REPEAT (default 20), fewer
# when the runs would take more than BENCH_CAP seconds (default 10).
#
# Also per model: "cold", the seconds from starting `tec -O2 MODEL.onnx`
# with an empty kernel cache to its exit after the first result, and
# "cached", the same run again (in the notes also "cold_cpu", the cold
# run's CPU seconds, tec's and its C compiler's); and "err", the largest of max |tec - torch|
# / max |torch| over tec's .onnx output (and ORT's, which is checked too).
#
# ONNX Runtime: onnxruntime-node 1.30.0 from npm, installed on first use
# with `npm install --ignore-scripts` into $ORT_NODE_DIR (default bench/node,
# ignored by git); its npm package carries the CPU library.  Node.js and
# npm must be installed.  PyTorch: Debian's python3-torch and
# python3-torchvision ($PYTHON, default /usr/bin/python3).
#
# BENCH_CPU=1 measures CPU time instead of the clock, for a machine so busy
# (several jobs per core) that few runs go unpreempted and medians and even
# minima of whole runs measure the load: each ms column is then CPU ms per
# run (user and system, all threads).  tec's is the difference between
# `--repeat 2+K` and `--repeat 2` divided by K (the import, compile and
# load cancel; K is BENCH_REPEAT, more for a fast model, so that the runs
# take about a second of CPU time), ORT's its process's CPU time over its
# timed runs (bench/ort_run.js cpu_ms).  At 1 thread that is the work a
# run takes; at 2 it also counts the time threads spend waiting for each
# other (spinning), so the 2-thread rows then compare work, not latency.
#
# On several threads each round starts with the vCPUs' round trip
# (bench/vcpu_rtt.c: near ~50-70 ns, far ~150-380, above 1000 the partner
# thread waited for a processor; it flips within minutes and every
# 2-thread time depends on it, ORT's too), and ORT runs
# before tec's cells in odd rounds and after them in even ones.  The
# table's cells are medians per column; at the end each 2-thread cell's
# rounds are listed paired (tec .onnx / ORT of the same round, the ratio
# that the machine's state moves least), with their median and the
# fastest round's ratio (tec's fastest / ORT's fastest).
#
# tec runs with TEC_THREADS_TRACE=1: at the end the table lists each tec
# cell (model, threads, side, round) some of whose runs went asleep beside
# other processes or on one thread (runtime/threads.h), with the trace's
# first reason for sleeping; such a cell times the machine's load, not
# tec's kernels.
#
# TEC_VS=OTHER_TEC adds a column: OTHER_TEC on the .onnx export, timed in the
# same rounds (a build before a change, say), and its ratio to ORT.
#
# --profile also writes ONNX Runtime's per-node trace (enableProfiling) and
# tec's --profile report at 1 thread for each model into $ORT_WORK/profile/
# (MODEL.tec.txt, MODEL.tec.json with whole layer names, and
# MODEL.tec-trace.json with every run's time of every layer), each over
# BENCH_PROFILE_RUNS runs (default 10);
# bench/ort_compare.py TRACE.json MODEL.tec.json then lists where tec loses,
# layer group by layer group (medians per node: it holds on a busy machine;
# `--min TRACE.json MODEL.tec-trace.json`, the minima, on a very busy one).
# --save writes the output to bench/results/ort.txt.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
TEC=${TEC:-$here/tec}
TEC_VS=${TEC_VS:-}
PYTHON=${PYTHON:-/usr/bin/python3}
REPEAT=${BENCH_REPEAT:-20}
CAP=${BENCH_CAP:-10}
PROFILE_RUNS=${BENCH_PROFILE_RUNS:-10}
ROUNDS=${BENCH_ROUNDS:-3}
THREADS=${BENCH_THREADS:-1 2}
CPU=${BENCH_CPU:-}
ZOO="resnet18 resnet50 mobilenet_v2 efficientnet_b0 googlenet gpt2"
TORCHVISION=${TORCHVISION:-resnet34 resnext50_32x4d densenet121 mobilenet_v3_large efficientnet_b1 regnet_y_400mf convnext_tiny inception_v3 squeezenet1_1}
export ORT_NODE_DIR=${ORT_NODE_DIR:-$here/bench/node}

save= profile= models=
for a in "$@"; do
    case $a in
    --save) save=1 ;;
    --profile) profile=1 ;;
    -h|--help) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "ort.sh: unknown option $a" >&2; exit 2 ;;
    *) models="$models $a" ;;
    esac
done
models=${models:-$ZOO $TORCHVISION}
[ -x "$TEC" ] || { echo "ort.sh: error: no tec at $TEC (run make, or set TEC)" >&2; exit 2; }

if [ -n "$save" ] && [ -z "${ORT_SH_SAVING:-}" ]; then
    mkdir -p "$here/bench/results"
    ORT_SH_SAVING=1 bash "$0" "$@" | tee "$here/bench/results/ort.txt"
    exit "${PIPESTATUS[0]}"
fi

if [ ! -d "$ORT_NODE_DIR/node_modules/onnxruntime-node" ]; then
    echo "ort.sh: installing onnxruntime-node@1.30.0 into $ORT_NODE_DIR" >&2
    mkdir -p "$ORT_NODE_DIR"
    (cd "$ORT_NODE_DIR" && npm install --ignore-scripts --no-audit --no-fund --prefix . \
        onnxruntime-node@1.30.0 >&2) || { echo "ort.sh: error: npm install failed" >&2; exit 2; }
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/ort-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
WORK=${ORT_WORK:-$tmp/work}
mkdir -p "$WORK" "$tmp/cache"
export XDG_CACHE_HOME=$tmp/cache

is_zoo() { case " $ZOO " in *" $1 "*) return 0 ;; esac; return 1; }
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {if (NR==0) print "-"; else if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
# tec_ms ARGS...: tec's median in ms, or FAIL ($BIN instead of tec if set).
# On several threads the runtime's choices of each run (TEC_THREADS_TRACE:
# asleep beside other processes, one thread) are counted into $tmp/choices
# under the label $cell, so that a slow cell shows whether tec's runtime
# or the machine made it so.
tec_ms() {
    local out
    out=$(TEC_THREADS_TRACE=1 "${BIN:-$TEC}" -O2 "$@" 2>&1) || { echo "$out" >>"$tmp/errors"; echo FAIL; return; }
    echo "$out" | awk -v cell="${cell:-}" '/^tec: run [0-9]+: / {n++; a += /asleep/; o += / 1 thread/; p += /temps apart/}
        /^tec: threads asleep / && why == "" {why = $0; sub(/^tec: threads /, "", why)}
        END {if (n && cell != "") printf "%s: %d runs, %d asleep, %d on one thread, %d temps apart%s\n", cell, n, a, o, p,
             why == "" ? "" : "; first " why}' \
        >>"$tmp/choices"
    echo "$out" | sed -n 's/^time: median of [0-9]* runs after a warm-up: \([0-9.]*\) us$/\1/p' |
        awk '{printf "%.3f", $1 / 1000}'
}
# tec_cpu_ms K ARGS...: tec's CPU ms per run ($BIN instead of tec if set),
# the CPU time of --repeat 2+K less that of --repeat 2, over K, after a
# run that compiles the kernels (their C compiler's time is tec's, a child's);
# or FAIL
tec_cpu_ms() {
    local k=$1 a b
    shift
    cpu_s "${BIN:-$TEC}" -O2 "$@" >/dev/null || { echo FAIL; return; }   # fills the kernel cache
    a=$(cpu_s "${BIN:-$TEC}" -O2 "$@" --repeat 2) && b=$(cpu_s "${BIN:-$TEC}" -O2 "$@" --repeat $((2 + k))) ||
        { echo FAIL; return; }
    awk -v a="$a" -v b="$b" -v k="$k" 'BEGIN {printf "%.3f", (b - a) * 1000 / k}'
}
cpu_s() {   # cpu_s CMD...: the user + system seconds CMD took (its output goes to $tmp/errors on failure)
    local out
    out=$(/usr/bin/time -f 'cpu %U %S' "$@" 2>&1) || { echo "$out" >>"$tmp/errors"; return 1; }
    echo "$out" | awk '$1 == "cpu" {printf "%.3f", $2 + $3}'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.2f", a / b; else print "-" }'; }
maxerr() {   # maxerr REF.npy DIR: max |got - ref| / max |ref| of DIR's one output
    "$PYTHON" -c '
import sys, glob, numpy as np
ref = np.load(sys.argv[1]).astype(np.float64)
got = [f for f in glob.glob(sys.argv[2] + "/*.npy")]
g = np.load(got[0]).astype(np.float64).reshape(ref.shape)
print("%.1e" % (np.abs(g - ref).max() / max(np.abs(ref).max(), 1e-30)))' "$1" "$2" 2>/dev/null || echo FAIL
}

# The vCPUs' round trip (bench/vcpu_rtt.c, ns), or - where it cannot be told.
vcpu_rtt_ns() {
    [ -x "$tmp/vcpu_rtt" ] || ${CC:-cc} -O2 -fopenmp -o "$tmp/vcpu_rtt" "$here/bench/vcpu_rtt.c" 2>/dev/null ||
        { echo -; return; }
    "$tmp/vcpu_rtt" 2>/dev/null | awk '$1 == "round" {print $3; f = 1} END {if (!f) print "-"}'
}
# One round's cells of model $m on $n threads (the loop's variables):
# ONNX Runtime's (ort_cell; its error into ort_err) and tec's (tec_cells),
# each appending its time to its column's list; paired records the round
# (its rtt, ORT's and tec .onnx's time) in $tmp/rounds.
ort_cell() {
    line=$(node "$here/bench/ort_run.js" "$onnx" "$WORK/$m.in" "$WORK/$m.ref.npy" \
           "$n" "$REPEAT" "$CAP" 2>>"$tmp/errors")
    ort_err=$(echo "$line" | sed -n 's/.* err=\([^ ]*\).*/\1/p')
    local field=median_ms
    [ -n "$CPU" ] && field=cpu_ms
    ort_ms=$(echo "$line" | sed -n "s/.* $field=\([0-9.]*\).*/\1/p")
    ort="$ort $ort_ms"
}
tec_cells() {
    if [ -n "$CPU" ]; then
        # about a second of CPU time in the K runs (ORT's time as the guide)
        local k
        k=$(awk -v r="$REPEAT" -v c="$ort_ms" 'BEGIN {k = c > 0 ? int(1000 / c) : r;
            print k < r ? r : (k > 500 ? 500 : k)}')
        [ -n "$TEC_VS" ] && vs="$vs $(BIN=$TEC_VS TEC_NUM_THREADS=$n tec_cpu_ms "$k" "$onnx" "${inargs[@]}")"
        is_zoo "$m" && te="$te $(TEC_NUM_THREADS=$n tec_cpu_ms "$k" "$here/examples/$m.te")"
        on_ms=$(TEC_NUM_THREADS=$n tec_cpu_ms "$k" "$onnx" "${inargs[@]}")
        on="$on $on_ms"
        return
    fi
    if [ -n "$TEC_VS" ]; then
        vs="$vs $(cell="$m ${n}T vs round $r" BIN=$TEC_VS TEC_NUM_THREADS=$n tec_ms "$onnx" "${inargs[@]}" --repeat "$REPEAT")"
    fi
    if is_zoo "$m"; then
        te="$te $(cell="$m ${n}T .te round $r" TEC_NUM_THREADS=$n tec_ms "$here/examples/$m.te" --repeat "$REPEAT")"
    fi
    on_ms=$(cell="$m ${n}T .onnx round $r" TEC_NUM_THREADS=$n tec_ms "$onnx" "${inargs[@]}" --repeat "$REPEAT")
    on="$on $on_ms"
}
paired() {
    echo "$m $n $r $rtt ${ort_ms:--} ${on_ms:--}" >>"$tmp/rounds"
}

cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
echo "# bench/ort.sh, $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) processors: $cpu"
echo "# tec $("$TEC" --version 2>/dev/null | head -1), cc: $(${CC:-cc} --version | head -1)"
echo "# ONNX Runtime: onnxruntime-node 1.30.0 (CPU); PyTorch: $("$PYTHON" -c 'import torch; print(torch.__version__)' 2>/dev/null || echo none)"
if [ -n "$CPU" ]; then
    echo "# batch 1; BENCH_CPU: tec and ORT columns are CPU ms per run (PyTorch's the clock's), median of $ROUNDS rounds; load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
else
    echo "# batch 1; ms = median of R runs, median of $ROUNDS rounds taking turns; load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
fi
echo
vs_head= vs_rule=
[ -n "$TEC_VS" ] && { vs_head=" $(printf '%9s | %7s |' "vs .onnx" "vs/ORT")"; vs_rule="-----------|---------|"; }
printf '| %-18s | %2s | %9s | %9s | %9s | %9s | %7s | %7s | %7s |%s\n' model T "tec .te" "tec .onnx" ORT PyTorch "te/ORT" "onnx/ORT" "cold s" "$vs_head"
printf '|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s\n' -------------------- ---- ----------- ----------- ----------- ----------- --------- --------- --------- "$vs_rule"
[ -n "$TEC_VS" ] && echo "(vs: $TEC_VS)"
summary=$tmp/summary
: >"$summary"
for m in $models; do
    log=$tmp/$m.export
    if ! "$PYTHON" "$here/bench/ort_export.py" "$m" "$WORK" --tec "$TEC" \
            --threads "$(echo $THREADS | tr ' ' ,)" --repeat "$REPEAT" --cap "$CAP" >"$log" 2>&1; then
        printf '| %-18s | export failed: %s\n' "$m" "$(tail -1 "$log")"
        continue
    fi
    onnx=$WORK/$m.onnx
    inargs=()
    for f in "$WORK/$m.in"/*.npy; do inargs+=(--input "$(basename "$f" .npy)=$f"); done
    # Cold: an empty kernel cache of its own; then cached.
    # (cold_cpu: its CPU seconds, tec's and the C compiler's, which a busy
    # machine does not inflate as it does the clock)
    t0=$(date +%s.%N)
    XDG_CACHE_HOME=$tmp/cold-$m /usr/bin/time -f '%U %S' -o "$tmp/$m.cold-cpu" \
        "$TEC" -O2 "$onnx" "${inargs[@]}" --save-outputs "$tmp/$m.out" \
        >"$tmp/$m.cold" 2>&1 || { cat "$tmp/$m.cold" >>"$tmp/errors"; }
    t1=$(date +%s.%N)
    cold_cpu=$(awk 'NF == 2 && $1 ~ /^[0-9.]+$/ {printf "%.1f", $1 + $2}' "$tmp/$m.cold-cpu")
    XDG_CACHE_HOME=$tmp/cold-$m "$TEC" -O2 "$onnx" "${inargs[@]}" >/dev/null 2>&1
    t2=$(date +%s.%N)
    rm -rf "$tmp/cold-$m"
    cold=$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.1f", b - a}')
    cached=$(awk -v a="$t1" -v b="$t2" 'BEGIN {printf "%.2f", b - a}')
    err=$(maxerr "$WORK/$m.ref.npy" "$tmp/$m.out")
    ort_err=-
    for n in $THREADS; do
        te= on= ort= vs=
        for r in $(seq "$ROUNDS"); do
            # On several threads: the processors' distance now, and ORT
            # after tec's cells in the even rounds (before them in the
            # odd), so that a drift within a round falls on both sides
            rtt=-
            [ "$n" -gt 1 ] && rtt=$(vcpu_rtt_ns)
            if [ -z "$CPU" ] && [ "$n" -gt 1 ] && [ $((r % 2)) = 0 ]; then
                tec_cells
                ort_cell
            else
                ort_cell
                tec_cells
            fi
            paired
        done
        case $te in *FAIL*) te=FAIL ;; *) te=$(echo "$te" | median) ;; esac
        case $on in *FAIL*) on=FAIL ;; *) on=$(echo "$on" | median) ;; esac
        ort=$(echo "$ort" | median)
        vs_cols=
        if [ -n "$TEC_VS" ]; then
            case $vs in *FAIL*) vs=FAIL ;; *) vs=$(echo "$vs" | median) ;; esac
            vs_cols=" $(printf '%9s | %7s |' "$vs" "$(ratio "$vs" "$ort")")"
        fi
        pt=$(sed -n "s/^torch-result $m threads=$n median_ms=\([0-9.]*\).*/\1/p" "$log")
        printf '| %-18s | %2s | %9s | %9s | %9s | %9s | %7s | %7s | %7s |%s\n' "$m" "$n" "${te:--}" \
            "$on" "${ort:--}" "${pt:--}" "$(ratio "$te" "$ort")" "$(ratio "$on" "$ort")" "$cold" "$vs_cols"
        echo "$m $n $(ratio "$on" "$ort") $(is_zoo "$m" && echo zoo || echo tv)" >>"$summary"
    done
    echo "$m cold=$cold cold_cpu=${cold_cpu:--} cached=$cached err_tec=$err err_ort=$ort_err" >>"$tmp/notes"
    if [ -n "$profile" ]; then
        mkdir -p "$WORK/profile"
        node "$here/bench/ort_run.js" "$onnx" "$WORK/$m.in" "$WORK/$m.ref.npy" 1 \
            "$PROFILE_RUNS" "$CAP" "$WORK/profile/$m.ort" >/dev/null 2>>"$tmp/errors"
        TEC_NUM_THREADS=1 "$TEC" -O2 --profile --report="$WORK/profile/$m.tec.json" \
            --trace="$WORK/profile/$m.tec-trace.json" "$onnx" "${inargs[@]}" \
            --repeat "$PROFILE_RUNS" >"$WORK/profile/$m.tec.txt" 2>&1
    fi
done
echo
echo "Per model: seconds to the first result of tec -O2 MODEL.onnx with an empty"
echo "kernel cache (cold) and from the cache (cached); max |out - torch| / max |torch|"
echo "of tec's and ONNX Runtime's output:"
[ -f "$tmp/notes" ] && sed 's/^/  /' "$tmp/notes"
echo
echo "Geometric mean of tec .onnx / ORT:"
for n in $THREADS; do
    for set in zoo tv; do
        awk -v n="$n" -v s="$set" '$2 == n && $4 == s && $3 + 0 > 0 {l += log($3); c++; if ($3 > mx) mx = $3}
            END {if (c) printf "  %s at %s thread(s): %.2f over %d models (worst %.2f)\n",
                 s == "zoo" ? "zoo" : "torchvision", n, exp(l / c), c, mx}' "$summary"
    done
done
if [ -s "$tmp/rounds" ] && awk '$2 > 1 {f = 1} END {exit !f}' "$tmp/rounds"; then
    echo
    echo "Rounds on several threads, paired: each round's tec .onnx / ORT (the two run in the"
    echo "same minute, ORT first in odd rounds and last in even ones${CPU:+ (BENCH_CPU: always first, CPU ms)}), with the vCPUs' round trip"
    echo "before the round (bench/vcpu_rtt.c; near < 120 ns, far < 1000: every 2-thread time"
    echo "depends on it; busy above, where the partner thread waited for a processor: other"
    echo "processes held them); median of the rounds' ratios, and tec's fastest round / ORT's:"
    awk '$2 > 1 {
        k = $1 " " $2 "T"
        if (!(k in seen)) { seen[k] = 1; order[++nk] = k }
        r = ($5 > 0 && $6 > 0) ? $6 / $5 : 0
        text[k] = text[k] sprintf(" %s:%s %s/%s", $3, $4, $6, $5) (r ? sprintf("=%.2f", r) : "")
        if (r) { n[k]++; q[k, n[k]] = r }
        if ($5 > 0 && (!(k in mo) || $5 < mo[k])) mo[k] = $5
        if ($6 > 0 && (!(k in mt) || $6 < mt[k])) mt[k] = $6
        near[k] += ($4 != "-" && $4 < 120); far[k] += ($4 != "-" && $4 >= 120 && $4 < 1000)
        busy[k] += ($4 == "-" || $4 >= 1000)
    }
    END {
        for (i = 1; i <= nk; i++) {
            k = order[i]; m = n[k]
            for (a = 1; a <= m; a++) for (b = a + 1; b <= m; b++)
                if (q[k, b] < q[k, a]) { t = q[k, a]; q[k, a] = q[k, b]; q[k, b] = t }
            med = !m ? "-" : sprintf("%.2f", m % 2 ? q[k, (m + 1) / 2] : (q[k, m / 2] + q[k, m / 2 + 1]) / 2)
            printf "  %-22s median %s, fastest %s (%d near, %d far, %d busy); rounds (round:rtt tec/ORT ms):%s\n",
                k, med, (mo[k] > 0 && mt[k] > 0) ? sprintf("%.2f", mt[k] / mo[k]) : "-", near[k], far[k],
                busy[k], text[k]
        }
    }' "$tmp/rounds"
fi
if [ -s "$tmp/choices" ] && grep -qv ' 0 asleep, 0 on one thread' "$tmp/choices"; then
    echo
    echo "tec's runtime on several threads (runs of each cell's process asleep beside other"
    echo "processes or on one thread: such cells time the machine's load, not tec's kernels):"
    grep -v ' 0 asleep, 0 on one thread' "$tmp/choices" | sed 's/^/  /'
fi
if [ -s "$tmp/errors" ]; then
    echo
    echo "Errors:"
    sed 's/^/  /' "$tmp/errors" | head -40
fi
[ -n "$profile" ] && echo "Profiles: $WORK/profile/"
exit 0
