#!/bin/bash
# bench/models.sh — latency of every model of tec's zoo, tec against PyTorch
# in the same run.
#
#   bench/models.sh [--save] [MODEL...]        (after make; default: every model)
#   BENCH_REPEAT=5 bench/models.sh resnet18    (a quick run)
#
# For each model (examples/MODEL.te, batch 1, the program's default shapes:
# 224x224 images, GPT-2 at T=128) and each -O level (2 and 3):
#
#   compile   seconds from starting `tec -v -OX MODEL` until its kernels are
#             loaded (the `tec: parallel loops run on` line on stderr): read,
#             parse, passes, C generation, the C compiler, dlopen.  "cold" is
#             the first such run with an empty kernel cache (XDG_CACHE_HOME is
#             a fresh directory for the whole benchmark), "cached" the second
#             one (a cache hit: everything but the C compiler).  Neither
#             includes the default data or any run.
#   latency   `TEC_NUM_THREADS=N tec -OX MODEL --repeat R`: tec's median of R
#             runs of the whole graph after one warm-up run (inputs and
#             weights already in memory).
#
# and PyTorch's latency (bench/models_torch.py: tools/torch_ref.py's model
# in float32, eval mode, the same input shapes and data, inference_mode,
# torch.set_num_threads(N), the median of R runs after warm-up runs).
# PyTorch runs with OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE unset, for N
# threads with torch.set_num_threads(N) and OPENBLAS_NUM_THREADS=N (and
# MKL_NUM_THREADS=N): OpenBLAS, which serves its linear layers, keeps a
# thread pool of its own that otherwise uses every core, so GPT-2 "on one
# thread" ran on two (216 ms, against 396 ms on one core).  It runs once in
# each environment of TORCH_ENVS (default "OMP_WAIT_POLICY=PASSIVE" and
# "OMP_WAIT_POLICY=ACTIVE", separated by '|'), and the table gives its best
# time per model and thread count and the environment that gave it: with
# spinning (active) OpenMP threads its CNNs run fastest on a quiet machine,
# while passive threads suit GPT-2 and a loaded one, so neither setting
# alone is PyTorch at its best.
#
# R is BENCH_REPEAT (default 20), fewer when R runs would take more than
# BENCH_CAP seconds (default 20; the count is estimated from one run at one
# thread, at least 3 runs); the table gives the R each number used.
# BENCH_THREADS (default "1 2") lists the thread counts.  TEC is the tec
# binary (default ./tec of this tree), PYTHON the interpreter with torch
# (default /usr/bin/python3).  With --save, the output is also written to
# bench/results/models.txt.  A model that fails in tec shows FAIL in its row
# (the error is printed below the table), and the run goes on; without
# PyTorch, its columns say so and tec's numbers are still reported.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
srcdir=${srcdir:-$here}
TEC=${TEC:-$here/tec}
PYTHON=${PYTHON:-/usr/bin/python3}
HELPER=$(command -v python3 || echo "$PYTHON")    # runs the timing helper below
REPEAT=${BENCH_REPEAT:-20}
CAP=${BENCH_CAP:-20}
THREADS=${BENCH_THREADS:-1 2}
TORCH_ENVS=${TORCH_ENVS:-OMP_WAIT_POLICY=PASSIVE|OMP_WAIT_POLICY=ACTIVE}
ALL="resnet18 resnet50 mobilenet_v2 efficientnet_b0 googlenet gpt2"

save=
models=
for a in "$@"; do
    case $a in
    --save) save=1 ;;
    -h|--help) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "models.sh: unknown option $a" >&2; exit 2 ;;
    *) models="$models $a" ;;
    esac
done
models=${models:-$ALL}
case $REPEAT in ''|*[!0-9]*|0) echo "models.sh: BENCH_REPEAT must be a positive count" >&2; exit 2 ;; esac
[ -x "$TEC" ] || { echo "models.sh: error: no tec at $TEC (run make, or set TEC)" >&2; exit 2; }

if [ -n "$save" ] && [ -z "${MODELS_SH_SAVING:-}" ]; then
    mkdir -p "$srcdir/bench/results"
    MODELS_SH_SAVING=1 bash "$0" "$@" | tee "$srcdir/bench/results/models.txt"
    exit "${PIPESTATUS[0]}"
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/models-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/cache"
export XDG_CACHE_HOME=$tmp/cache        # cold compiles: an empty kernel cache

# load_time OUTFILE KILL tec ARGS...: runs tec, timestamps its stderr lines,
# and prints the seconds until its kernels were loaded (or "?"); with KILL=1
# it stops tec right then (the run itself is not wanted).  stdout goes to
# OUTFILE, stderr (without the timestamps) to OUTFILE.err.
cat >"$tmp/load_time.py" <<'PY'
import os, re, signal, subprocess, sys, time
out, kill, argv = sys.argv[1], sys.argv[2] == "1", sys.argv[3:]
marker = re.compile(r"^tec: parallel loops run on ")
t0 = time.monotonic()
with open(out, "wb") as fo, open(out + ".err", "w") as fe:
    p = subprocess.Popen(argv, stdout=fo, stderr=subprocess.PIPE, text=True)
    loaded = None
    for line in p.stderr:
        if loaded is None and marker.match(line):
            loaded = time.monotonic() - t0
            if kill:
                p.send_signal(signal.SIGTERM)
                break
        fe.write(line)
    p.stderr.close()
    rc = p.wait()
print("%.2f" % loaded if loaded is not None else "?", rc if loaded is None or not kill else 0)
PY

# The median line of `tec --repeat`, in ms.
parse_ms() {
    sed -n 's/^time: median of [0-9]* runs after a warm-up: \([0-9.]*\) us$/\1/p' "$1" |
        awk '{ printf "%.1f", $1 / 1000 }'
}

commit=$(git -C "$srcdir" rev-parse --short HEAD 2>/dev/null || echo unknown)
if [ "$commit" != unknown ] && [ -n "$(git -C "$srcdir" status --porcelain --untracked-files=no 2>/dev/null)" ]; then
    commit="$commit (built from a working tree with uncommitted changes)"
fi
cpu=$(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1)
torch_version=$(env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE "$PYTHON" -c \
    'import torch; print(torch.__version__)' 2>/dev/null) || torch_version=
echo "# bench/models.sh: tec vs PyTorch latency, batch 1 (ms; lower is better)"
echo "# date:    $(date '+%Y-%m-%d %H:%M %Z')"
echo "# machine: ${cpu:-unknown CPU}, nproc $(nproc), $(uname -sr)"
echo "# tec:     commit $commit, kernels built by $(${CC:-cc} --version | head -1)"
if [ -n "$torch_version" ]; then
    echo "# PyTorch: $torch_version ($PYTHON), environment: OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE unset, OPENBLAS_NUM_THREADS and MKL_NUM_THREADS = the thread count; the best of: ${TORCH_ENVS//|/, } (column PT env)"
else
    echo "# PyTorch: not installed for $PYTHON (apt-get install python3-torch python3-torchvision): tec's numbers only"
fi
echo "# runs:    median of up to $REPEAT runs after warm-up, capped at ${CAP}s per measurement; load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo

rows=()
crows=()
errors=()
for m in $models; do
    prog=$srcdir/examples/$m.te
    [ -f "$prog" ] || { errors+=("$m: no program $prog"); continue; }
    declare -A ms=() runs=() cold=() cached=()
    failed=
    for o in 2 3; do
        echo "... $m -O$o: compiling" >&2
        read -r c rc < <("$HELPER" "$tmp/load_time.py" "$tmp/out" 1 \
            env TEC_NUM_THREADS=1 "$TEC" -v -O$o "$prog" --repeat 1)
        cold[$o]=$c
        if [ "$rc" != 0 ]; then
            cold[$o]=FAIL
            errors+=("$m -O$o: tec failed (exit status $rc): $(grep -v '^tec: \(target\|running\|kernel\)' "$tmp/out.err" | head -3)")
            failed="$failed $o"
            continue
        fi
        read -r c rc < <("$HELPER" "$tmp/load_time.py" "$tmp/out" 0 \
            env TEC_NUM_THREADS=1 "$TEC" -v -O$o "$prog" --repeat 1)
        cached[$o]=$c
        probe=$(parse_ms "$tmp/out")
        if [ "$rc" != 0 ] || [ -z "$probe" ]; then
            cached[$o]=FAIL
            errors+=("$m -O$o: tec failed (exit status $rc): $(grep -v '^tec: \(target\|running\|kernel\)' "$tmp/out.err" | head -3)")
            failed="$failed $o"
            continue
        fi
        n=$(awk -v t="$probe" -v r="$REPEAT" -v cap="$CAP" 'BEGIN {
            n = int(cap * 1000 / (t > 0 ? t : 1)); lo = r < 3 ? r : 3
            if (n > r) n = r; if (n < lo) n = lo; print n }')
        for t in $THREADS; do
            echo "... $m -O$o: $t thread(s), $n runs" >&2
            if TEC_NUM_THREADS=$t "$TEC" -O$o "$prog" --repeat "$n" >"$tmp/out" 2>"$tmp/out.err" &&
                v=$(parse_ms "$tmp/out") && [ -n "$v" ]; then
                ms[$o,$t]=$v
            else
                ms[$o,$t]=FAIL
                errors+=("$m -O$o, $t thread(s): $(head -3 "$tmp/out.err")")
            fi
            runs[$o,$t]=$n
        done
    done
    : >"$tmp/torch"
    if [ -n "$torch_version" ]; then
        IFS='|' read -r -a envs <<<"$TORCH_ENVS"
        for tenv in "${envs[@]}"; do
            for t in $THREADS; do
                echo "... $m: PyTorch ($tenv, $t thread(s))" >&2
                # shellcheck disable=SC2086
                env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OPENBLAS_NUM_THREADS=$t \
                    MKL_NUM_THREADS=$t $tenv "$PYTHON" \
                    "$srcdir/bench/models_torch.py" "$m" --tec "$TEC" --program "$prog" \
                    --threads "$t" --repeat "$REPEAT" --cap "$CAP" \
                    >"$tmp/torch.one" 2>"$tmp/torch.err" ||
                    errors+=("$m: PyTorch ($tenv, $t thread(s)) failed: $(tail -3 "$tmp/torch.err")")
                sed -n "s/^torch-result /torch-result env=${tenv// /,} /p" "$tmp/torch.one" >>"$tmp/torch"
            done
        done
    fi
    for t in $THREADS; do
        pt=- ptn=- ptenv=-
        if [ -z "$torch_version" ]; then
            pt="n/a"
        else
            # the fastest environment for this thread count
            line=$(grep " $m threads=$t " "$tmp/torch" 2>/dev/null |
                   awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^median_ms=/) { v = substr($i, 11) + 0 } }
                        NR == 1 || v < best { best = v; keep = $0 } END { if (NR) print keep }')
            if [ -n "$line" ]; then
                pt=$(echo "$line" | sed 's/.*median_ms=\([0-9.]*\).*/\1/' | awk '{ printf "%.1f", $1 }')
                ptn=$(echo "$line" | sed 's/.*runs=\([0-9]*\).*/\1/')
                ptenv=$(echo "$line" | sed 's/.*env=\([^ ]*\) .*/\1/; s/OMP_WAIT_POLICY=//')
            else
                pt=FAIL
            fi
        fi
        rows+=("$(awk -v m="$m" -v t="$t" -v a="${ms[2,$t]:-FAIL}" -v b="${ms[3,$t]:-FAIL}" \
            -v p="$pt" -v na="${runs[2,$t]:--}" -v nb="${runs[3,$t]:--}" -v np="$ptn" -v pe="$ptenv" '
            function ratio(x, y) { return (x + 0 > 0 && y + 0 > 0) ? sprintf("%.2f", x / y) : "-" }
            BEGIN { printf "%-16s %3s %10s %10s %10s %7s %7s   %-9s %s/%s/%s\n", m, t, a, b, p,
                    ratio(a, p), ratio(b, p), pe, na, nb, np }')")
    done
    crows+=("$(printf '%-16s %9s %9s %9s %9s' "$m" "${cold[2]:-FAIL}" "${cached[2]:--}" \
        "${cold[3]:-FAIL}" "${cached[3]:--}")")
    unset ms runs cold cached
done

echo "latency, ms (median of the runs counted in the last column: tec -O2/tec -O3/PyTorch)"
printf '%-16s %3s %10s %10s %10s %7s %7s   %-9s %s\n' model thr "tec -O2" "tec -O3" PyTorch \
    "O2/PT" "O3/PT" "PT env" runs
for r in "${rows[@]}"; do echo "$r"; done
echo
echo "compile, seconds from starting tec until its kernels are loaded (cold: empty kernel cache; cached: a cache hit)"
printf '%-16s %9s %9s %9s %9s\n' model "-O2 cold" "-O2 hit" "-O3 cold" "-O3 hit"
for r in "${crows[@]}"; do echo "$r"; done
echo
echo "# load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
if [ ${#errors[@]} -gt 0 ]; then
    echo
    echo "failures:"
    for e in "${errors[@]}"; do echo "  $e"; done
fi
exit 0
