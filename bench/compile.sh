#!/bin/bash
# bench/compile.sh — time to the first result: tec on a model, from the
# command to its printed outputs, with an empty kernel cache and from the
# cache.
#
#   bench/compile.sh [--save] [MODEL...]        (after make; default: see below)
#   BASE=/path/to/other/tec BASE_LABEL=main bench/compile.sh
#                                               (the same runs with another
#                                                tec binary, side by side)
#   LOCK=/tmp/measure.lock bench/compile.sh     (each run holds that flock:
#                                                one measurement at a time
#                                                on a shared machine)
#
# MODEL is an example of the zoo (examples/MODEL.te; default every one), an
# ONNX file M.onnx (its input, if any, the first .npy of M.in/), or,
# with Debian's python3-torch and python3-torchvision, a torchvision model
# (default ONNX models: squeezenet1_1 resnet34 inception_v3), exported once
# by bench/ort_export.py (opset 13, random weights) into $WORK and run as
# `tec -O2 MODEL.onnx --input image=...`.
#
# For each model and tec binary, two runs of `tec -O2 MODEL` (-v, default
# data, default threads):
#
#   cold     XDG_CACHE_HOME is a new, empty directory: read, passes, C,
#            the C compiler, load, default data, one run, outputs printed;
#   cached   the same command once more: the kernels come from the cache.
#
# Each cell is the elapsed time in seconds and, in parentheses, the CPU
# time (user + system) of tec and everything it ran, the C compiler
# included: on a machine shared with other work the elapsed time is
# stretched by the others' load, the CPU time much less.  The kernels
# column is what `tec -v` says: kernels, the distinct ones, and the
# translation units compiled.  The machine's load average is printed
# before and after the runs.  With --save the output also goes to
# bench/results/compile.txt.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
TEC=${TEC:-$here/tec}
BASE=${BASE:-}
BASE_LABEL=${BASE_LABEL:-another tec}
LOCK=${LOCK:-}
PYTHON=${PYTHON:-/usr/bin/python3}
WORK=${WORK:-${TMPDIR:-/tmp}/tec-bench-compile}
ZOO="matmul conv mlp resnet18 resnet50 mobilenet_v2 efficientnet_b0 googlenet gpt2"
ONNX="squeezenet1_1 resnet34 inception_v3"

save=
models=
for a in "$@"; do
    case $a in
    --save) save=1 ;;
    -*) echo "usage: bench/compile.sh [--save] [MODEL...]" >&2; exit 2 ;;
    *) models="$models $a" ;;
    esac
done
have_torch=
"$PYTHON" -c 'import torch, torchvision' 2>/dev/null && have_torch=1
if [ -z "$models" ]; then
    models=$ZOO
    [ -n "$have_torch" ] && models="$models $ONNX"
fi
mkdir -p "$WORK"

# timed LABEL CMD...: runs CMD with stdout to $WORK/out, stderr to
# $WORK/err; prints "ELAPSED CPU STATUS".
timed() {
    "$PYTHON" - "$@" <<'PY'
import fcntl, resource, subprocess, sys, time, os
work = os.environ["WORK"]
if os.environ.get("LOCK"):   # held until this script ends, not timed
    lock = open(os.environ["LOCK"], "a")
    fcntl.flock(lock, fcntl.LOCK_EX)
t0 = time.monotonic()
with open(os.path.join(work, "out"), "w") as o, open(os.path.join(work, "err"), "w") as e:
    rc = subprocess.call(sys.argv[1:], stdout=o, stderr=e)
dt = time.monotonic() - t0
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print("%.2f %.2f %d" % (dt, r.ru_utime + r.ru_stime, rc))
PY
}
export WORK LOCK

# The command line of MODEL for tec.
model_args() {
    local m=$1
    if [ "${m%.onnx}" != "$m" ] && [ -f "$m" ]; then   # an ONNX file, its inputs in M.in/
        local in
        in=$(ls "${m%.onnx}.in/"*.npy 2>/dev/null | head -1)
        echo "$m${in:+ --input $(basename "$in" .npy)=$in}"
        return 0
    fi
    if [ -f "$here/examples/$m.te" ]; then
        echo "$here/examples/$m.te"
        return 0
    fi
    [ -n "$have_torch" ] || return 1
    if [ ! -f "$WORK/$m.onnx" ]; then
        "$PYTHON" "$here/bench/ort_export.py" "$m" "$WORK" --tec "$TEC" --no-time \
            >"$WORK/export.log" 2>&1 || { cat "$WORK/export.log" >&2; return 1; }
    fi
    local in
    in=$(ls "$WORK/$m.in/"*.npy 2>/dev/null | head -1)
    echo "$WORK/$m.onnx${in:+ --input $(basename "$in" .npy)=$in}"
}

# One row: the cold and cached runs of binary BIN on MODEL.
measure() {
    local bin=$1 m=$2 args cache cold warm kern
    args=$(model_args "$m") || { printf '%s' "(no model)"; return; }
    cache=$(mktemp -d "$WORK/cache.XXXXXX")
    # shellcheck disable=SC2086
    cold=$(XDG_CACHE_HOME=$cache timed "$bin" -O2 -v -I "$here/lib" $args)
    kern=$(sed -n 's/^tec: \([0-9]*\) kernels, \([0-9]*\) distinct: \([0-9]*\) translation units.*/\1\/\2\/\3/p' "$WORK/err")
    [ -n "$kern" ] || kern="whole"
    # shellcheck disable=SC2086
    warm=$(XDG_CACHE_HOME=$cache timed "$bin" -O2 -I "$here/lib" $args)
    rm -rf "$cache"
    set -- $cold
    local c="$1 ($2)" cs=$3
    set -- $warm
    local w="$1 ($2)" ws=$3
    [ "$cs" = 0 ] || c="FAIL"
    [ "$ws" = 0 ] || w="FAIL"
    printf '%-14s %-12s %-18s' "$kern" "$c" "$w"
}

{
    echo "bench/compile.sh — seconds to the first result, elapsed (CPU), tec -O2, default data"
    echo "machine: $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1), $(nproc) processors"
    echo "C compiler: $(${CC:-cc} --version | head -1)"
    echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "kernels: all/distinct/translation units compiled (split build), or whole (one file)"
    echo
    if [ -n "$BASE" ]; then
        printf '%-16s | %-46s | %s\n' "" "tec (this tree)" "$BASE_LABEL"
        printf '%-16s | %-14s %-12s %-18s | %-14s %-12s %-18s\n' model kernels cold cached \
            kernels cold cached
    else
        printf '%-16s | %-14s %-12s %-18s\n' model kernels cold cached
    fi
    for m in $models; do
        printf '%-16s | ' "$(basename "$m" .onnx)"
        measure "$TEC" "$m"
        if [ -n "$BASE" ]; then
            printf ' | '
            measure "$BASE" "$m"
        fi
        echo
    done
    echo
    echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
} | if [ -n "$save" ]; then tee "$here/bench/results/compile.txt"; else cat; fi
