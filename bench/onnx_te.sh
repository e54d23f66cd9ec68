#!/bin/bash
# bench/onnx_te.sh — the same speed from ONNX as from .te: each zoo model
# as examples/MODEL.te and as its ONNX export, timed in one run.
#
#   bench/onnx_te.sh [--save] [--rt] [MODEL...]   (after make; default: the zoo)
#
# Each model is exported by bench/ort_export.py (opset 13, batch 1, tec's
# default data as weights and input) into $ONNX_TE_WORK (default a
# temporary folder).  For each thread count N of BENCH_THREADS (default
# "1 2"), BENCH_ROUNDS rounds (default 7) take turns between
#   te     TEC_NUM_THREADS=N tec -O2 examples/MODEL.te --repeat R
#   onnx   TEC_NUM_THREADS=N tec -O2 MODEL.onnx --input ... --repeat R
#   vs     the same with TEC_VS (another tec: a build before a change), if set
# (R: BENCH_REPEAT, default 20), so a change in the machine's load hits every
# column alike.  The table gives, in ms, the median and the minimum over the
# rounds of tec's median of R runs, and onnx/te of each; "layers" counts the
# kernels tec --profile times (a fused group counts once) of .te, .onnx
# (and vs on the .onnx),
# and "err" is max |onnx - te| / max |te| of the outputs.
# --save writes the output to bench/results/onnx_te.txt.
# With ONNX_TE_EXPORTS=DIR, the exports of DIR (DIR/MODEL.onnx, its inputs
# DIR/MODEL.in/*.npy, its reference DIR/MODEL.ref.npy) are timed instead
# of exporting (no torch needed; /work/wt/allw has the zoo's): their
# weights are not the .te's, so "err" then compares the .onnx's output with
# DIR/MODEL.ref.npy.  --rt runs every timed tec under `chrt -f 10`
# (real-time FIFO: a loaded machine's other processes do not preempt it;
# needs the privilege).
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
TEC=${TEC:-$here/tec}
TEC_VS=${TEC_VS:-}
PYTHON=${PYTHON:-/usr/bin/python3}
REPEAT=${BENCH_REPEAT:-20}
ROUNDS=${BENCH_ROUNDS:-7}
THREADS=${BENCH_THREADS:-1 2}
save= models= rt=()
for a in "$@"; do
    case $a in
    --save) save=1 ;;
    --rt) rt=(chrt -f 10) ;;
    -h|--help) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "onnx_te.sh: unknown option $a" >&2; exit 2 ;;
    *) models="$models $a" ;;
    esac
done
models=${models:-resnet18 resnet50 mobilenet_v2 efficientnet_b0 googlenet gpt2}
[ -x "$TEC" ] || { echo "onnx_te.sh: error: no tec at $TEC (run make, or set TEC)" >&2; exit 2; }
if [ -n "$save" ] && [ -z "${ONNX_TE_SAVING:-}" ]; then
    mkdir -p "$here/bench/results"
    ONNX_TE_SAVING=1 bash "$0" "$@" | tee "$here/bench/results/onnx_te.txt"
    exit "${PIPESTATUS[0]}"
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/onnx-te.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
WORK=${ONNX_TE_WORK:-$tmp/work}
mkdir -p "$WORK"

stat() {   # the median and the minimum of the numbers on stdin
    tr ' ' '\n' | grep -v '^$' | sort -g |
        awk '{a[NR]=$1} END {if (NR==0) print "- -"; else printf "%.3f %.3f\n", (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2), a[1]}'
}
ms() {   # ms TEC ARGS...: tec's median in ms, or nothing
    local bin=$1; shift
    "${rt[@]}" "$bin" -O2 "$@" --repeat "$REPEAT" 2>&1 |
        sed -n 's/^time: median of [0-9]* runs after a warm-up: \([0-9.]*\) us$/\1/p' |
        awk '{printf "%.3f", $1 / 1000}'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.2f", a / b; else print "-" }'; }
kernels() {   # kernels TEC ARGS...: the layers and fused groups tec --profile times
    local bin=$1; shift
    "$bin" -O2 --profile --report="$tmp/k.csv" "$@" >/dev/null 2>&1
    "$PYTHON" -c '
import csv, sys
print(sum(1 for r in csv.DictReader(open(sys.argv[1]))
          if r["kind"] in ("layer", "group") and r["time_us"] != ""))' "$tmp/k.csv" 2>/dev/null || echo -
}

cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
echo "# bench/onnx_te.sh, $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) processors: $cpu"
echo "# tec $("$TEC" --version 2>/dev/null | head -1); batch 1; $ROUNDS rounds taking turns, each tec's median of $REPEAT runs"
echo "# load average at start: $(cut -d' ' -f1-3 /proc/loadavg)${rt:+; timed under chrt -f 10}"
[ -n "${ONNX_TE_EXPORTS:-}" ] && echo "# exports of $ONNX_TE_EXPORTS (err: against MODEL.ref.npy)"
[ -n "$TEC_VS" ] && echo "# vs: another tec ($("$TEC_VS" --version 2>/dev/null | head -1)) on the .onnx"
echo
printf '| %-16s | %1s | %-15s | %-15s | %-15s | %-11s | %-11s | %-11s | %-7s |\n' model T \
    "te ms med/min" "onnx ms med/min" "vs ms med/min" "onnx/te" "vs/te" "layers" err
printf '|%s|%s|%s|%s|%s|%s|%s|%s|%s|\n' ------------------ --- ----------------- ----------------- \
    ----------------- ------------- ------------- ------------- ---------
for m in $models; do
    te=$here/examples/$m.te
    dir=${ONNX_TE_EXPORTS:-$WORK}
    if [ -n "${ONNX_TE_EXPORTS:-}" ]; then
        [ -f "$dir/$m.onnx" ] || { printf '| %-16s | no %s\n' "$m" "$dir/$m.onnx"; continue; }
    elif ! "$PYTHON" "$here/bench/ort_export.py" "$m" "$WORK" --tec "$TEC" --no-time >"$tmp/$m.log" 2>&1; then
        printf '| %-16s | export failed: %s\n' "$m" "$(tail -1 "$tmp/$m.log")"
        continue
    fi
    onnx=$dir/$m.onnx
    inargs=()
    for f in "$dir/$m.in"/*.npy; do inargs+=(--input "$(basename "$f" .npy)=$f"); done
    want="$tmp/$m.te.out"   # the .te's outputs, or the export's reference
    if [ -n "${ONNX_TE_EXPORTS:-}" ]; then
        mkdir -p "$tmp/$m.ref" && cp "$dir/$m.ref.npy" "$tmp/$m.ref/" 2>/dev/null && want="$tmp/$m.ref"
    fi
    # compile once (the kernel cache), and compare the outputs
    "$TEC" -O2 "$te" --save-outputs "$tmp/$m.te.out" >/dev/null 2>&1
    "$TEC" -O2 "$onnx" "${inargs[@]}" --save-outputs "$tmp/$m.onnx.out" >/dev/null 2>&1
    [ -n "$TEC_VS" ] && "$TEC_VS" -O2 "$onnx" "${inargs[@]}" >/dev/null 2>&1
    err=$("$PYTHON" -c '
import sys, glob, numpy as np
a = np.load(glob.glob(sys.argv[1] + "/*.npy")[0]).astype(np.float64)
b = np.load(glob.glob(sys.argv[2] + "/*.npy")[0]).astype(np.float64).reshape(a.shape)
print("%.1e" % (np.abs(a - b).max() / max(np.abs(a).max(), 1e-30)))' "$want" "$tmp/$m.onnx.out" 2>/dev/null || echo FAIL)
    layers="$(kernels "$TEC" "$te")/$(kernels "$TEC" "$onnx" "${inargs[@]}")"
    [ -n "$TEC_VS" ] && layers="$layers/$(kernels "$TEC_VS" "$onnx" "${inargs[@]}")"
    for T in $THREADS; do
        a= b= c=
        for r in $(seq "$ROUNDS"); do
            export TEC_NUM_THREADS=$T
            a="$a $(ms "$TEC" "$te")"
            b="$b $(ms "$TEC" "$onnx" "${inargs[@]}")"
            [ -n "$TEC_VS" ] && c="$c $(ms "$TEC_VS" "$onnx" "${inargs[@]}")"
        done
        read -r am an <<<"$(echo "$a" | stat)"
        read -r bm bn <<<"$(echo "$b" | stat)"
        read -r cm cn <<<"$(echo "$c" | stat)"
        printf '| %-16s | %1s | %7s/%-7s | %7s/%-7s | %7s/%-7s | %5s/%-5s | %5s/%-5s | %-11s | %-7s |\n' \
            "$m" "$T" "$am" "$an" "$bm" "$bn" "$cm" "$cn" "$(ratio "$bm" "$am")" "$(ratio "$bn" "$an")" \
            "$(ratio "$cm" "$am")" "$(ratio "$cn" "$an")" "$layers" "$err"
    done
done
echo
echo "onnx/te and vs/te: of the medians / of the minima (the minimum is the steadier"
echo "on a loaded machine); layers: timed layers and fused groups of .te / .onnx (/ vs)."
