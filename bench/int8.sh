#!/bin/bash
# bench/int8.sh — int8 against f32 in one run: the layers of lib/nn.te
# (qconv2d and qlinear against conv2d and linear, one thread), and ResNet-18
# quantized to the QDQ form by tools/quantize.py against the f32 model,
# in tec and in ONNX Runtime.
#
#   bench/int8.sh [--save]          (after make)
#   BENCH_ROUNDS=1 BENCH_REPEAT=5 bench/int8.sh     (a quick run)
#
# Layers (-O2, TEC_NUM_THREADS=1; each program is one layer, its input
# and weights tec's default data):
#   3x3 conv 128->128 on 28x28 (padding 1, relu), 3x3 conv 256->256 on
#   14x14 (padding 1), 1x1 conv 64->256 on 56x56, linear 1024->1024 on
#   64 rows; int8: qconv2d / qlinear (int32 accumulation, requantized), f32:
#   conv2d / linear.  bf16: the 1024^3 product of bf16 matrices summed in
#   f32, with bench/bf16_gemm.te's written schedule and without a schedule
#   (the automatic one), against bench/gemm.te's f32 product.  Each pair
#   takes turns, BENCH_ROUNDS rounds.  BENCH_CHECK=1 also compares each
#   int8 output at -O2 with the interpreter's, bit for bit (slow), and
#   BENCH_CHECK=all the bf16 products' too (minutes each).
#
# ResNet-18 (batch 1, 224x224): bench/ort_export.py exports the zoo's
# resnet18 (tec's default data as weights and input) to ONNX, opset 13;
# tools/quantize.py quantizes it (uint8 activations calibrated on
# QUANT_CALIBRATE inputs, default 8; int8 per-channel weights) and reports
# top-1 agreement and output error on QUANT_EVALUATE inputs (default 16),
# running tec at -O$QUANT_OPT (default 2; the results are the same at
# every level).
# For each thread count N of BENCH_THREADS (default "1 2"):
#   tec f32     TEC_NUM_THREADS=N tec -O2 resnet18.onnx
#   tec int8    TEC_NUM_THREADS=N tec -O2 resnet18_int8.onnx
#   ORT f32/int8  bench/ort_run.js: ONNX Runtime (onnxruntime-node 1.30.0,
#               CPU, all graph optimizations, intraOpNumThreads N) on the
#               same two files
# (tec's threads wait as OMP_WAIT_POLICY says; spinning, =active, is faster
# on an idle machine and much slower on a loaded one)
# and with TEC_VS=OLD_TEC the int8 model under that build too, in the
# same rounds (an old/new pair measured under one load);
# each the median of R runs after warm-up runs (R = BENCH_REPEAT, default
# 20, fewer past BENCH_CAP seconds, default 10), in BENCH_ROUNDS rounds
# (default 3) taking turns; the table gives the median of the rounds.
# BENCH_CLOCK=cpu measures CPU time per run instead of wall time (perf stat's
# task-clock of R+1 runs less that of 1 run, over R; ONNX Runtime's: of R+3
# runs less 3, its warm-up runs alike), which a loaded machine inflates
# less (the ResNet-18 rows with more than one thread stay wall time: CPU
# time would add the threads' times).
# "err" is max |out - torch f32| / max |torch f32| (the quantization
# error, for the int8 rows).  Last, the static profile's parameter and
# activation bytes of both models (the int8 weights are one byte each).
#
# ONNX Runtime is installed on first use as bench/ort.sh does (npm, into
# $ORT_NODE_DIR, default bench/node, ignored by git).  Needs Debian's
# python3-torch, python3-torchvision and python3-onnx ($PYTHON, default
# /usr/bin/python3).  --save writes the output to bench/results/int8.txt.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
TEC=${TEC:-$here/tec}
PYTHON=${PYTHON:-/usr/bin/python3}
REPEAT=${BENCH_REPEAT:-20}
CLOCK=${BENCH_CLOCK:-wall}
[ "$CLOCK" = cpu ] && ! perf stat -e task-clock true >/dev/null 2>&1 &&
    { echo "int8.sh: BENCH_CLOCK=cpu needs perf (perf stat -e task-clock)" >&2; exit 2; }
CAP=${BENCH_CAP:-10}
ROUNDS=${BENCH_ROUNDS:-3}
THREADS=${BENCH_THREADS:-1 2}
CALIBRATE=${QUANT_CALIBRATE:-8}
EVALUATE=${QUANT_EVALUATE:-16}
QOPT=${QUANT_OPT:-2}
export ORT_NODE_DIR=${ORT_NODE_DIR:-$here/bench/node}

case ${1:-} in
--save)
    if [ -z "${INT8_SH_SAVING:-}" ]; then
        mkdir -p "$here/bench/results"
        INT8_SH_SAVING=1 bash "$0" | tee "$here/bench/results/int8.txt"
        exit "${PIPESTATUS[0]}"
    fi ;;
-h|--help) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
'') ;;
*) echo "int8.sh: unknown argument $1" >&2; exit 2 ;;
esac
[ -x "$TEC" ] || { echo "int8.sh: error: no tec at $TEC (run make, or set TEC)" >&2; exit 2; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/int8-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
export XDG_CACHE_HOME=$tmp/cache
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {if (NR==0) print "-"; else if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.2f", a / b; else print "-" }'; }
# cpu_ms CMD...: the CPU time (ms, all threads) of CMD, by perf stat
cpu_ms() {
    perf stat -x, -e task-clock -- "$@" 2>&1 >/dev/null | awk -F, '$3 == "task-clock" {print $1}'
}
# cpu_base CMD...: the smaller of two cpu_ms of CMD (the start a longer run
# is compared with: one slow start, a page cache or a cache entry still
# being written, would make the difference too small, even negative)
cpu_base() {
    local x y
    x=$(cpu_ms "$@")
    y=$(cpu_ms "$@")
    awk -v x="$x" -v y="$y" 'BEGIN {print (x < y ? x : y)}'
}
# tec_ms ARGS...: tec -O2's median in ms, or FAIL (the message in $tmp/errors);
# with CLOCK=cpu the CPU time per run instead: that of --repeat R+1 less
# that of --repeat 1 (the same warm-up and start), over R
tec_ms() {
    local out
    out=$("$TEC" -O2 "$@" --repeat "$REPEAT" 2>&1) || { echo "$out" | head -5 >>"$tmp/errors"; echo FAIL; return; }
    if [ "$CLOCK" = cpu ]; then
        local a b
        a=$(cpu_base "$TEC" -O2 "$@" --repeat 1)
        b=$(cpu_ms "$TEC" -O2 "$@" --repeat $((REPEAT + 1)))
        awk -v a="$a" -v b="$b" -v r="$REPEAT" 'BEGIN {printf "%.3f", (b - a) / r}'
        return
    fi
    echo "$out" | sed -n 's/^time: median of [0-9]* runs after a warm-up: \([0-9.]*\) us$/\1/p' |
        awk '{printf "%.3f", $1 / 1000}'
}
rounds_of() {   # rounds_of CMD...: the median over the rounds of CMD's ms
    local all=
    for _ in $(seq "$ROUNDS"); do all="$all $("$@")"; done
    case $all in *FAIL*) echo FAIL ;; *) echo "$all" | median ;; esac
}

cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
flags=$(grep -o -w -E 'avx512_vnni|avx_vnni|avx512_bf16|avx512bw|avx2' /proc/cpuinfo | sort -u | tr '\n' ' ')
echo "# bench/int8.sh, $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) processors: $cpu ($flags)"
echo "# tec $("$TEC" --version 2>/dev/null | head -1), cc: $(${CC:-cc} --version | head -1)"
echo "# -O2; ms = $([ "$CLOCK" = cpu ] && echo "CPU time per run (R = $REPEAT)" || echo "median of R = $REPEAT runs"), median of $ROUNDS rounds; load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo

# ---------------------------------------------------------------- layers
layer() {   # layer NAME INT8_CALL F32_CALL INPUT_TYPE [F32_RELU]: writes NAME.int8.te, NAME.f32.te
    printf 'import "nn.te"\ninput x: i8%s\ny = %s as "layer"\noutput y\n' "$4" "$2" >"$tmp/$1.int8.te"
    printf 'import "nn.te"\ninput x: f32%s\ny = %s as "layer"\n%soutput y\n' "$4" "$3" \
        "${5:+y = relu(y) as \"relu\"$'\n'}" >"$tmp/$1.f32.te"
}
layer conv3x3_128 "qconv2d(x, 128, 3, pad=1, relu=1)" "conv2d(x, 128, 3, pad=1)" "[1, 128, 28, 28]" relu
layer conv3x3_256 "qconv2d(x, 256, 3, pad=1)" "conv2d(x, 256, 3, pad=1)" "[1, 256, 14, 14]"
layer conv1x1_64_256 "qconv2d(x, 256, 1)" "conv2d(x, 256, 1)" "[1, 64, 56, 56]"
layer linear_1024 "qlinear(x, 1024)" "linear(x, 1024)" "[64, 1024]"
echo "Layers, one thread (lib/nn.te; int8: qconv2d/qlinear, f32: conv2d/linear; bf16 against bench/gemm.te's f32):"
echo
printf '| %-48s | %9s | %9s | %8s |%s\n' layer "int8 ms" "f32 ms" int8/f32 "${BENCH_CHECK:+ -O2 = interp |}"
# (the bf16 rows: bf16 in the int8 column)
printf '|%s|%s|%s|%s|%s\n' -------------------------------------------------- ----------- ----------- ---------- "${BENCH_CHECK:+--------------|}"
# bf16: bench/bf16_gemm.te (its written schedule) and the same product
# without a schedule (the automatic one) against bench/gemm.te's f32
sed '/^schedule bmatmul {/,/^}/d' "$here/bench/bf16_gemm.te" >"$tmp/bf16_auto.int8.te"
cp "$here/bench/bf16_gemm.te" "$tmp/bf16_sched.int8.te"
cp "$here/bench/gemm.te" "$tmp/bf16_auto.f32.te"
cp "$here/bench/gemm.te" "$tmp/bf16_sched.f32.te"
pair_ms() {   # pair_ms A B: "a b", the median over the rounds of each, taking turns
    local a= b=
    for _ in $(seq "$ROUNDS"); do
        a="$a $(tec_ms "$1")"
        b="$b $(tec_ms "$2")"
    done
    for v in "$a" "$b"; do case $v in *FAIL*) printf 'FAIL ' ;; *) printf '%s ' "$(echo "$v" | median)" ;; esac; done
}
for l in "conv3x3_128:3x3 conv 128->128 on 28x28 (relu)" "conv3x3_256:3x3 conv 256->256 on 14x14" \
         "conv1x1_64_256:1x1 conv 64->256 on 56x56" "linear_1024:linear 1024->1024 on 64 rows" \
         "bf16_auto:bf16 matmul 1024^3, automatic schedule" \
         "bf16_sched:bf16 matmul 1024^3, bench/bf16_gemm.te"; do
    n=${l%%:*}
    read -r i8 f32 <<<"$(TEC_NUM_THREADS=1 pair_ms "$tmp/$n.int8.te" "$tmp/$n.f32.te")"
    same=
    if [ -n "${BENCH_CHECK:-}" ] && [ "${BENCH_CHECK}" != all ] && [ "${n#bf16}" != "$n" ]; then
        same=" $(printf '%12s' -) |"
    elif [ -n "${BENCH_CHECK:-}" ]; then
        "$TEC" -O2 "$tmp/$n.int8.te" --save-outputs "$tmp/$n.o2" >/dev/null 2>&1
        "$TEC" --interp "$tmp/$n.int8.te" --save-outputs "$tmp/$n.in" >/dev/null 2>&1
        o=y.npy
        case $n in bf16*) o=C.npy ;; esac
        if [ -s "$tmp/$n.o2/$o" ] && cmp -s "$tmp/$n.o2/$o" "$tmp/$n.in/$o"; then same=" $(printf '%12s' yes) |"
        else same=" $(printf '%12s' NO) |"; fi
    fi
    printf '| %-48s | %9s | %9s | %8s |%s\n' "${l#*:}" "$i8" "$f32" "$(ratio "$i8" "$f32")" "$same"
done
echo

# ---------------------------------------------------------------- ResNet-18
if [ ! -d "$ORT_NODE_DIR/node_modules/onnxruntime-node" ]; then
    echo "int8.sh: installing onnxruntime-node@1.30.0 into $ORT_NODE_DIR" >&2
    mkdir -p "$ORT_NODE_DIR"
    (cd "$ORT_NODE_DIR" && npm install --ignore-scripts --no-audit --no-fund --prefix . \
        onnxruntime-node@1.30.0 >&2) || echo "int8.sh: npm install failed: no ONNX Runtime column" >&2
fi
W=$tmp/work
if ! "$PYTHON" "$here/bench/ort_export.py" resnet18 "$W" --tec "$TEC" --no-time >"$tmp/export" 2>&1; then
    echo "ResNet-18: export failed: $(tail -1 "$tmp/export")"
    exit 1
fi
echo "ResNet-18 quantized by tools/quantize.py (calibrated on $CALIBRATE inputs, evaluated on $EVALUATE others):"
echo
"$PYTHON" "$here/tools/quantize.py" "$W/resnet18.onnx" "$W/resnet18_int8.onnx" --tec "$TEC" \
    --calibrate "$CALIBRATE" --evaluate "$EVALUATE" -O "$QOPT" >"$tmp/quantize" 2>&1 ||
    { sed 's/^/  /' "$tmp/quantize" | tail -5; exit 1; }
grep -v ': input [0-9]*:' "$tmp/quantize" | sed "s|$W/||; s/^/  /"
echo
inargs=(--input "image=$W/resnet18.in/image.npy")
ort_ms() {   # ort_ms MODEL THREADS: ONNX Runtime's median (its err in $tmp/ort_err.MODEL)
    local line
    line=$(node "$here/bench/ort_run.js" "$W/$1.onnx" "$W/resnet18.in" "$W/resnet18.ref.npy" \
           "$2" "$REPEAT" "$CAP" 2>>"$tmp/errors") || { echo FAIL; return; }
    echo "$line" | sed -n 's/.* err=\([^ ]*\).*/\1/p' >"$tmp/ort_err.$1"
    if [ "$CLOCK" = cpu ]; then   # as tec_ms: REPEAT + 3 runs less 3 (the same warm-up)
        local a b
        a=$(cpu_base node "$here/bench/ort_run.js" "$W/$1.onnx" "$W/resnet18.in" "$W/resnet18.ref.npy" "$2" 3 1000)
        b=$(cpu_ms node "$here/bench/ort_run.js" "$W/$1.onnx" "$W/resnet18.in" "$W/resnet18.ref.npy" "$2" $((REPEAT + 3)) 1000)
        awk -v a="$a" -v b="$b" -v r="$REPEAT" 'BEGIN {printf "%.3f", (b - a) / r}'
        return
    fi
    echo "$line" | sed -n 's/.*median_ms=\([0-9.]*\).*/\1/p'
}
have_ort=
[ -d "$ORT_NODE_DIR/node_modules/onnxruntime-node" ] && command -v node >/dev/null && have_ort=1
# When tec -O2 cannot compile the int8 model (see Errors), the int8 column
# is the -O2 pipeline without the fuse pass, marked with a *.
q_opts=(-O2)
if ! "$TEC" -O2 "$W/resnet18_int8.onnx" "${inargs[@]}" >/dev/null 2>"$tmp/o2err"; then
    sed 's/^/(-O2) /' "$tmp/o2err" | head -3 >>"$tmp/errors"
    nofuse=$("$TEC" --list-passes | sed -n 's/^  -O2  //p' | sed 's/fuse,//')
    q_opts=(--passes="$nofuse")
fi
tec_q_ms() {   # tec_q_ms ARGS...: as tec_ms, with q_opts instead of -O2
    local out
    out=$("$TEC" "${q_opts[@]}" "$@" --repeat "$REPEAT" 2>&1) || { echo "$out" | head -5 >>"$tmp/errors"; echo FAIL; return; }
    if [ "$CLOCK" = cpu ]; then
        local a b
        a=$(cpu_base "$TEC" "${q_opts[@]}" "$@" --repeat 1)
        b=$(cpu_ms "$TEC" "${q_opts[@]}" "$@" --repeat $((REPEAT + 1)))
        awk -v a="$a" -v b="$b" -v r="$REPEAT" -v m="${q_opts[0]}" \
            'BEGIN {printf "%.3f%s", (b - a) / r, m == "-O2" ? "" : "*"}'
        return
    fi
    echo "$out" | sed -n 's/^time: median of [0-9]* runs after a warm-up: \([0-9.]*\) us$/\1/p' |
        awk -v m="${q_opts[0]}" '{printf "%.3f%s", $1 / 1000, m == "-O2" ? "" : "*"}'
}
printf '| %2s | %9s | %9s | %9s | %9s | %9s | %9s | %9s |\n' T "tec f32" "tec int8" int8/f32 "ORT f32" "ORT int8" int8/f32 "tec/ORT"
printf '|%s|%s|%s|%s|%s|%s|%s|%s|\n' ---- ----------- ----------- ----------- ----------- ----------- ----------- -----------
clock_asked=$CLOCK
vs_rows=
for n in $THREADS; do
    CLOCK=$clock_asked
    [ "$n" -gt 1 ] && CLOCK=wall   # (CPU time adds the threads' times)
    f= q= of= oq= qv=
    for _ in $(seq "$ROUNDS"); do
        f="$f $(TEC_NUM_THREADS=$n tec_ms "$W/resnet18.onnx" "${inargs[@]}")"
        q="$q $(TEC_NUM_THREADS=$n tec_q_ms "$W/resnet18_int8.onnx" "${inargs[@]}")"
        [ -n "${TEC_VS:-}" ] &&
            qv="$qv $(TEC=$TEC_VS TEC_NUM_THREADS=$n tec_q_ms "$W/resnet18_int8.onnx" "${inargs[@]}")"
        if [ -n "$have_ort" ]; then
            of="$of $(ort_ms resnet18 "$n")"
            oq="$oq $(ort_ms resnet18_int8 "$n")"
        fi
    done
    mark=
    case $q in *'*'*) mark='*'; q=${q//\*/} ;; esac
    for var in f q of oq qv; do
        case ${!var} in *FAIL*) printf -v "$var" FAIL ;; *) printf -v "$var" '%s' "$(echo "${!var}" | median)" ;; esac
    done
    printf '| %2s | %9s | %9s | %9s | %9s | %9s | %9s | %9s |\n' "$n" "$f" "$q$mark" "$(ratio "$q" "$f")" \
        "${of:--}" "${oq:--}" "$(ratio "$oq" "$of")" "$(ratio "$q" "$oq")"
    [ -n "${TEC_VS:-}" ] && vs_rows="$vs_rows$(printf '| %2s | %9s | %9s | %9s | %9s |' "$n" "${qv:-FAIL}" "$q" \
        "$(ratio "$q" "$qv")" "$(ratio "$qv" "$oq")")"$'\n'
done
if [ -n "${TEC_VS:-}" ]; then
    echo
    echo "The int8 model under TEC_VS ($("$TEC_VS" --version 2>/dev/null | head -1)), in the same rounds:"
    printf '| %2s | %9s | %9s | %9s | %9s |\n' T "old int8" "new int8" new/old "old/ORT"
    printf '|%s|%s|%s|%s|%s|\n' ---- ----------- ----------- ----------- -----------
    printf '%s' "$vs_rows"
fi
echo
echo "(tec/ORT: tec int8 / ORT int8 on the same QDQ file$([ "$clock_asked" = cpu ] && echo "; 1 thread: CPU time per run, more: wall time"))"
[ "${q_opts[0]}" = -O2 ] || echo "(*: tec -O2 fails on the int8 model, see Errors; measured with ${q_opts[0]})"
echo "Output error against PyTorch f32, max |out - ref| / max |ref|:"
for m in resnet18 resnet18_int8; do
    opts=(-O2)
    [ "$m" = resnet18_int8 ] && opts=("${q_opts[@]}")
    "$TEC" "${opts[@]}" "$W/$m.onnx" "${inargs[@]}" --save-outputs "$tmp/$m.out" >/dev/null 2>&1
    e=$("$PYTHON" -c '
import sys, glob, numpy as np
ref = np.load(sys.argv[1]).astype(np.float64)
g = np.load(glob.glob(sys.argv[2] + "/*.npy")[0]).astype(np.float64).reshape(ref.shape)
print("%.1e (top-1 %s)" % (np.abs(g - ref).max() / np.abs(ref).max(), "same" if g.argmax() == ref.argmax() else "differs"))' \
        "$W/resnet18.ref.npy" "$tmp/$m.out" 2>/dev/null || echo FAIL)
    echo "  tec $m: $e; ORT: $(cat "$tmp/ort_err.$m" 2>/dev/null || echo -)"
done
echo
echo "Static profile (tec --profile --no-run --report): parameter and activation bytes:"
for m in resnet18 resnet18_int8; do
    "$TEC" -O2 --profile --no-run "$W/$m.onnx" "${inargs[@]}" --report="$tmp/$m.json" >/dev/null 2>&1 ||
        "$TEC" -O0 --profile --no-run "$W/$m.onnx" "${inargs[@]}" --report="$tmp/$m.json" >/dev/null 2>&1
    "$PYTHON" -c '
import json, sys
t = json.load(open(sys.argv[1]))["totals"]
print("  %-14s %10d parameters in %9d bytes (%.2f B each), activations %9d bytes" % (
    sys.argv[2], t["params"] + t["state"], t["param_bytes"],
    t["param_bytes"] / max(t["params"] + t["state"], 1), t["activation_bytes"]))' "$tmp/$m.json" "$m" ||
        echo "  $m: (no report)"
done
if [ -s "$tmp/errors" ]; then
    echo
    echo "Errors:"
    sed 's/^/  /' "$tmp/errors" | head -30
fi
exit 0
