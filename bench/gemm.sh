#!/bin/bash
# bench/gemm.sh — single-precision GEMM, tec against OpenBLAS.
#
#   bench/gemm.sh [--save | --out FILE] [--threads LIST] [--shapes LIST] [--no-calibrate]
#
# For each shape MxKxN (default 1024x1024x1024 and the four im2col GEMMs of
# ResNet-18's 3x3 convolutions: 3136x576x64, 784x1152x128, 196x2304x256,
# 49x4608x512) and each thread count (default 1,2), measures C = A·B with
#   - OpenBLAS: cblas_sgemm, row-major, alpha 1, beta 0, timed by the small
#     harness bench/gemm_blas.c (built here into a scratch directory);
#     median of >= 20 calls after a warm-up, enough to fill ~0.3 s;
#   - tec: `tec -O3 -D M=.. -D K=.. -D N=.. --threads T --repeat R PROGRAM`,
#     the median of R runs of the compiled graph after a warm-up run (what
#     `--repeat` prints; see runtime/profile.c rt_time_runs).  R is picked
#     from a first timing run: >= 20 runs filling ~0.3 s, but fewer (never
#     under 3) when that would take more than GEMM_MAX_TIME seconds.
# and prints GFLOP/s = 2·M·N·K / median for both and the ratio tec/OpenBLAS.
# tec's answer for each shape is checked against sgemm's on the same random
# inputs, so a fast wrong kernel cannot score.
#
# Options:
#   --save            also write the report to bench/results/gemm.txt
#   --out FILE        also write the report to FILE (written at the end)
#   --threads LIST    thread counts, comma-separated (default 1,2)
#   --shapes LIST     shapes MxKxN, comma-separated
#   --no-calibrate    leave out `tec --calibrate`'s peak in the header (~2 s)
# Environment:
#   TEC        the tec binary (default ./tec of the build tree)
#   TEC_GEMM   the .te program with shape parameters M, K, N (default
#              bench/gemm.te, or examples/matmul.te when that is missing)
#   CC         compiler of the harness (default cc); tec uses it for kernels too
#   GEMM_MIN_TIME  seconds each measurement should last at least (default 0.3)
#   GEMM_MAX_TIME  seconds a tec measurement may last at most (default 2)
#
# OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE, when set in the environment (they
# can force OpenBLAS's AVX2 kernels on an AVX-512 machine), are removed for
# the OpenBLAS runs only, so that OpenBLAS runs the kernels it picks for this
# CPU; the report prints the kernel set it ran (openblas_get_corename()).
#
# Exit status: 0 when every measurement ran and every answer was right;
# 1 when tec failed or was wrong on some shape (the table says which);
# 2 on a setup error (tec not built, OpenBLAS missing, bad option).
set -eu

here=$(cd "$(dirname "$0")/.." && pwd)
srcdir=$(cd "${srcdir:-$here}" && pwd)
TEC=${TEC:-${builddir:-$here}/tec}
out=
threads_list=1,2
shapes_list=1024x1024x1024,3136x576x64,784x1152x128,196x2304x256,49x4608x512
calibrate=1
min_time=${GEMM_MIN_TIME:-0.3}
max_time=${GEMM_MAX_TIME:-2}
cc=${CC:-cc}

die() {
    echo "gemm.sh: error: $*" >&2
    exit 2
}

while [ $# -gt 0 ]; do
    case "$1" in
    --save) out=$srcdir/bench/results/gemm.txt ;;
    --out) [ $# -ge 2 ] || die "--out needs a file"; out=$2; shift ;;
    --out=*) out=${1#--out=} ;;
    --threads) [ $# -ge 2 ] || die "--threads needs a list"; threads_list=$2; shift ;;
    --threads=*) threads_list=${1#--threads=} ;;
    --shapes) [ $# -ge 2 ] || die "--shapes needs a list"; shapes_list=$2; shift ;;
    --shapes=*) shapes_list=${1#--shapes=} ;;
    --no-calibrate) calibrate= ;;
    -h | --help) sed -n '2,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
    esac
    shift
done
IFS=, read -r -a threads <<<"$threads_list"
IFS=, read -r -a shapes <<<"$shapes_list"
for t in "${threads[@]}"; do
    [[ $t =~ ^[1-9][0-9]*$ ]] || die "bad thread count '$t'"
done
for s in "${shapes[@]}"; do
    [[ $s =~ ^[1-9][0-9]*x[1-9][0-9]*x[1-9][0-9]*$ ]] || die "bad shape '$s' (want MxKxN)"
done

if [ -z "${TEC_GEMM:-}" ]; then
    TEC_GEMM=$srcdir/bench/gemm.te
    [ -f "$TEC_GEMM" ] || TEC_GEMM=$srcdir/examples/matmul.te
fi
[ -f "$TEC_GEMM" ] || die "no program $TEC_GEMM (set TEC_GEMM)"
TEC_GEMM=$(cd "$(dirname "$TEC_GEMM")" && pwd)/$(basename "$TEC_GEMM")
command -v "$TEC" >/dev/null 2>&1 || die "$TEC is not built (run make first, or set TEC)"
command -v "$cc" >/dev/null 2>&1 || die "no C compiler '$cc' (set CC)"

# CPU time of the whole machine (/proc/stat: busy and hypervisor steal, in
# clock ticks) and of this script with its children (`times`), so that the
# report can say how much of the CPUs other processes took during the run.
cpu_stat() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8, $9 }' /proc/stat 2>/dev/null || :; }
own_cpu() { # seconds of CPU used by this shell and its children so far
    times >"$tmp/times"
    awk '{ for (i = 1; i <= NF; i++) { split($i, a, /[ms]/); t += a[1] * 60 + a[2] } }
        END { print t + 0 }' "$tmp/times"
}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gemm_bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
report=$tmp/report
: >"$report"
say() { printf '%s\n' "$*" | tee -a "$report"; }
read -r busy0 steal0 <<<"$(cpu_stat)"
own0=$(own_cpu)
wall0=$(date +%s.%N)

# --- the OpenBLAS harness
if ! "$cc" -O2 -o "$tmp/gemm_blas" "$here/bench/gemm_blas.c" -lopenblas -lm 2>"$tmp/cc.log"; then
    sed 's/^/  /' "$tmp/cc.log" >&2
    die "cannot build the OpenBLAS harness: needs cblas.h and libopenblas (Debian: apt-get install libopenblas-dev; ./bootstrap installs it)"
fi
blas() { env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE "$@"; }
blas_env_note=
for v in OPENBLAS_CORETYPE OPENBLAS_L2_SIZE; do
    if [ -n "${!v+set}" ]; then
        blas_env_note="$blas_env_note $v=${!v}"
    fi
done

# --- what tec accepts
tec_threads_opt=0
if "$TEC" --help 2>&1 | grep -q -- '--threads'; then
    tec_threads_opt=1
fi

cpus=$(getconf _NPROCESSORS_ONLN 2>/dev/null || nproc)
model=$(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1)
[ -n "$model" ] || model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
cores=$(lscpu 2>/dev/null | awk -F: '/^Core\(s\) per socket/ {c=$2} /^Socket\(s\)/ {s=$2}
    /^Thread\(s\) per core/ {t=$2} END { if (c && s) printf "%d cores x %d thread(s)", c*s, t }')
load_start=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo '?')
ccver=$("$cc" --version 2>/dev/null | head -1)
commit=$(git -C "$srcdir" rev-parse --short HEAD 2>/dev/null || echo unknown)
prog_state=
if [ "$commit" != unknown ]; then
    rel=${TEC_GEMM#"$srcdir"/}
    if ! git -C "$srcdir" ls-files --error-unmatch -- "$rel" >/dev/null 2>&1; then
        prog_state=" (not committed)"
    elif ! git -C "$srcdir" diff --quiet HEAD -- "$rel" 2>/dev/null; then
        prog_state=" (modified since the commit)"
    fi
fi
target=$("$TEC" --print-target 2>/dev/null | awk '/^target:/ {t=$2} /^vector-bits:/ {v=$2}
    END { printf "%s, %s-bit vectors", t, v }')
read -r m0 k0 n0 <<<"${shapes[0]//x/ }"
nkernels=$("$TEC" -O3 -D M="$m0" -D K="$k0" -D N="$n0" --emit=tir "$TEC_GEMM" 2>/dev/null |
    grep -c '^func ' || :)
openblas_config=$(blas OPENBLAS_NUM_THREADS=1 "$tmp/gemm_blas" --min-time 0 --min-reps 1 1x1x1 |
    sed -n 's/^config //p')
openblas_core=$(blas OPENBLAS_NUM_THREADS=1 "$tmp/gemm_blas" --min-time 0 --min-reps 1 1x1x1 |
    sed -n 's/^corename //p')
[ -n "$openblas_core" ] || die "the OpenBLAS harness printed no core name"

say "== GEMM (f32, C = A·B): tec against OpenBLAS cblas_sgemm — bench/gemm.sh"
say "date:      $(date -u '+%Y-%m-%d %H:%M UTC')"
say "machine:   ${model:-unknown CPU}, $cpus CPUs${cores:+ ($cores)}"
if [ -n "$calibrate" ]; then
    "$TEC" --calibrate 2>/dev/null | sed -n 's/^peak /           tec --calibrate: peak /p' |
        while IFS= read -r l; do say "$l"; done
fi
say "load:      load average $load_start at the start (CPU use by others during the run: at the end)"
say "compiler:  $ccver (tec's kernels and the harness)"
say "OpenBLAS:  $openblas_config; kernels: $openblas_core"
if [ -n "$blas_env_note" ]; then
    say "           (the environment set$blas_env_note; unset for the OpenBLAS runs only)"
fi
built=$(date -u -r "$(command -v "$TEC")" '+%Y-%m-%d %H:%M UTC' 2>/dev/null || echo '?')
say "tec:       HEAD $commit (binary built $built from the working tree), ${TEC_GEMM#"$srcdir"/}$prog_state,"
say "           -O3, target $target"
say ""
say "OpenBLAS time: one cblas_sgemm call (row-major, alpha 1, beta 0), each call timed alone;"
say "  median of >= 20 calls after a warm-up call, enough calls to fill ${min_time} s."
say "tec time: what \`tec --repeat R\` prints: the median of R runs of the compiled graph after a"
say "  warm-up run; a run calls the graph's ${nkernels:-?} kernel(s) through libffi on buffers allocated and"
say "  filled beforehand: the kernel code only (zeroing C, any packing, the product), no"
say "  compilation, loading or I/O — the same work as one cblas_sgemm call.  R >= 20 filling"
say "  ${min_time} s, or fewer (>= 3) when R runs would exceed ${max_time} s (marked *)."
say "Threads: OPENBLAS_NUM_THREADS=T for OpenBLAS; TEC_NUM_THREADS=T$([ $tec_threads_opt = 1 ] && echo " and --threads T") for tec."
say "GFLOP/s = 2·M·N·K / median time; ratio = tec / OpenBLAS (above 1: tec is faster)."
say "tec's C is checked against sgemm's on the same random A, B (|error| <= 2·K·2^-24·(|A|·|B|))."
say ""
hdr=$(printf '%-16s %3s  %9s %9s %6s  %9s %9s %6s  %7s' \
    "M x K x N" thr "BLAS GF/s" "BLAS ms" reps "tec GF/s" "tec ms" reps "tec/BLAS")
say "$hdr"
say "$(printf '%s' "$hdr" | tr -c '\n' '-')"

status=0
notes=()
ratios=$tmp/ratios
: >"$ratios"
for t in "${threads[@]}"; do
    for s in "${shapes[@]}"; do
        read -r M K N <<<"${s//x/ }"
        flops=$((2 * M * N * K))

        # OpenBLAS
        line=$(blas OPENBLAS_NUM_THREADS="$t" "$tmp/gemm_blas" --min-time "$min_time" "$s" |
            tee "$tmp/blas.out" | sed -n 's/^gemm //p') || true
        bthreads=$(sed -n 's/^threads //p' "$tmp/blas.out")
        [ -n "$line" ] || die "the OpenBLAS harness failed on $s"
        read -r _ _ _ breps bus bgf <<<"$line"
        if [ "$bthreads" != "$t" ]; then
            notes+=("$s, $t thread(s): OpenBLAS ran on $bthreads thread(s) (its maximum)")
        fi

        # tec: a first run (compiles, warms the kernel cache, checks the
        # answer and times one run), then the measurement.
        tflags=(-O3 -D M="$M" -D K="$K" -D N="$N")
        [ $tec_threads_opt = 1 ] && tflags+=(--threads "$t")
        rm -rf "$tmp/io" && mkdir -p "$tmp/io"
        "$tmp/gemm_blas" --write-inputs "$tmp/io" "$s"
        tres=FAIL
        if TEC_NUM_THREADS=$t "$TEC" "${tflags[@]}" --input A="$tmp/io/A.npy" \
            --input B="$tmp/io/B.npy" --save-outputs "$tmp/io/out" --repeat 1 "$TEC_GEMM" \
            >"$tmp/tec.out" 2>"$tmp/tec.err"; then
            t1=$(sed -n 's/^time: median of [0-9]* runs after a warm-up: \([0-9.]*\) us$/\1/p' "$tmp/tec.out")
            [ -n "$t1" ] || die "no timing line from tec --repeat (see $TEC --help)"
            if ! "$tmp/gemm_blas" --check "$tmp/io/out/C.npy" "$s" >"$tmp/check.out" 2>&1; then
                tres=WRONG
                notes+=("$s, $t thread(s): tec's result is wrong: $(tail -1 "$tmp/check.out")")
            else
                reps=$(awk -v t="$t1" -v lo="$min_time" -v hi="$max_time" 'BEGIN {
                    t = t / 1e6; if (t < 1e-9) t = 1e-9
                    r = int(lo / t) + 1; if (r < 20) r = 20
                    if (r * t > hi) { r = int(hi / t); if (r < 3) r = 3 }
                    if (r > 100000) r = 100000
                    print r }')
                if TEC_NUM_THREADS=$t "$TEC" "${tflags[@]}" --repeat "$reps" "$TEC_GEMM" \
                    >"$tmp/tec.out" 2>"$tmp/tec.err"; then
                    tus=$(sed -n 's/^time: median of [0-9]* runs after a warm-up: \([0-9.]*\) us$/\1/p' "$tmp/tec.out")
                    [ -n "$tus" ] || die "no timing line from tec --repeat"
                    tres=ok
                fi
            fi
        fi
        if [ $tres = FAIL ]; then
            notes+=("$s, $t thread(s): tec failed: $(head -3 "$tmp/tec.err" | tr '\n' ' ')")
        fi

        if [ $tres = ok ]; then
            row=$(awk -v s="$s" -v t="$t" -v f="$flops" -v bus="$bus" -v br="$breps" \
                -v tus="$tus" -v tr="$reps" 'BEGIN {
                bg = f / (bus * 1e3); tg = f / (tus * 1e3)
                printf "%-16s %3d  %9.2f %9.3f %6d  %9.2f %9.3f %5d%s  %7.3f", s, t, bg, bus / 1e3,
                    br, tg, tus / 1e3, tr, tr < 20 ? "*" : " ", tg / bg }')
            echo "$t $(awk -v b="$bus" -v u="$tus" 'BEGIN { print b / u }')" >>"$ratios"
        else
            status=1
            row=$(awk -v s="$s" -v t="$t" -v f="$flops" -v bus="$bus" -v br="$breps" \
                -v r="$tres" 'BEGIN {
                printf "%-16s %3d  %9.2f %9.3f %6d  %9s %9s %6s  %7s", s, t, f / (bus * 1e3),
                    bus / 1e3, br, r, "-", "-", "-" }')
        fi
        say "$row"
    done
done

say ""
for t in "${threads[@]}"; do
    gm=$(awk -v t="$t" '$1 == t { s += log($2); n++ }
        END { if (n) printf "%.3f over %d shape(s)", exp(s / n), n }' "$ratios")
    [ -z "$gm" ] || say "geometric mean of tec/OpenBLAS, $t thread(s): $gm"
done
for n in "${notes[@]+"${notes[@]}"}"; do
    say "note: $n"
done
read -r busy1 steal1 <<<"$(cpu_stat)"
own1=$(own_cpu)
wall1=$(date +%s.%N)
say "$(awk -v b0="${busy0:-}" -v b1="${busy1:-}" -v s0="${steal0:-0}" -v s1="${steal1:-0}" \
    -v o0="$own0" -v o1="$own1" -v w0="$wall0" -v w1="$wall1" -v n="$cpus" \
    -v hz="$(getconf CLK_TCK 2>/dev/null || echo 100)" 'BEGIN {
    w = w1 - w0; printf "the run took %.0f s", w
    if (b0 == "" || b1 == "" || w <= 0) { print ""; exit }
    other = ((b1 - b0) / hz - (o1 - o0)) / (w * n) * 100; steal = (s1 - s0) / hz / (w * n) * 100
    if (other < 0) other = 0
    printf "; other processes (machine-wide, from /proc/stat) used %.0f%% of the %d CPUs meanwhile", other, n
    if (steal >= 1) printf ", the hypervisor took %.0f%%", steal
    if (other >= 10 || steal >= 10) printf ": the numbers may be low and noisy"
    print "" }')"

if [ -n "$out" ]; then
    mkdir -p "$(dirname "$out")"
    cp "$report" "$out"
    echo "gemm.sh: report written to $out" >&2
fi
exit $status
