#!/bin/bash
# bench/cc_workaround.sh — what -fno-tree-loop-if-convert (tec's workaround
# for GCC 12's if-conversion miscompile, doc/codegen.md) changes in the zoo's
# machine code.
#
#   bench/cc_workaround.sh [--save] [MODEL...]    (after make; default: the zoo)
#
# For each model: `tec -O2 --emit=c`, then the command line tec runs
# (`tec -v`), once with the workaround flag and once without it, both as
# objects (-c); the functions whose disassembly differs (addresses and
# offsets masked) are listed.  A kernel whose code does not change costs
# nothing; the ones that do are the ones to time (tec --profile, per layer).
# --save writes bench/results/cc_workaround.txt.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
TEC=${TEC:-$here/tec}
save= models=
for a in "$@"; do
    case $a in
    --save) save=1 ;;
    -h|--help) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "cc_workaround.sh: unknown option $a" >&2; exit 2 ;;
    *) models="$models $a" ;;
    esac
done
models=${models:-resnet18 resnet50 mobilenet_v2 efficientnet_b0 googlenet gpt2}
if [ -n "$save" ] && [ -z "${CCW_SH_SAVING:-}" ]; then
    mkdir -p "$here/bench/results"
    CCW_SH_SAVING=1 bash "$0" "$@" | tee "$here/bench/results/cc_workaround.txt"
    exit "${PIPESTATUS[0]}"
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ccw-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# tec's compiler words and flags, from its verbose command line
line=$("$TEC" -O2 -v --no-cache "$here/examples/matmul.te" 2>&1 | sed -n 's/^tec: running: //p' | head -1)
read -r -a argv <<<"$line"
cc=() flags=()
for w in "${argv[@]}"; do
    case $w in
    -o|*.so|*.c|-lm|-lmvec|-shared) ;;
    -*) flags+=("$w") ;;
    *) [ ${#flags[@]} -eq 0 ] && cc+=("$w") ;;
    esac
done
echo "# bench/cc_workaround.sh, $(date -u '+%Y-%m-%d %H:%M UTC'): ${cc[*]} ($("${cc[@]}" --version | head -1))"
echo "# flags: ${flags[*]}"
case " ${flags[*]} " in
*" -fno-tree-loop-if-convert "*) ;;
*) echo "# (this compiler does not get the workaround; comparing with it added)" ;;
esac
without=() with=()
for f in "${flags[@]}"; do [ "$f" = -fno-tree-loop-if-convert ] || without+=("$f"); done
with=("${without[@]}" -fno-tree-loop-if-convert)
disasm() { objdump -d --no-show-raw-insn "$1" | sed 's/^ *[0-9a-f]*:[[:space:]]*//; s/<[^>]*+0x[0-9a-f]*>//; s/0x[0-9a-f]*//g; s/\b[0-9a-f]\{4,\}\b//g'; }
for m in $models; do
    "$TEC" -O2 --emit=c "$here/examples/$m.te" -o "$tmp/$m.c" 2>/dev/null || { echo "$m: tec failed"; continue; }
    "${cc[@]}" "${with[@]}" -c "$tmp/$m.c" -o "$tmp/with.o" && "${cc[@]}" "${without[@]}" -c "$tmp/$m.c" -o "$tmp/without.o" ||
        { echo "$m: the compiler failed"; continue; }
    disasm "$tmp/with.o" >"$tmp/with.s"
    disasm "$tmp/without.o" >"$tmp/without.s"
    awk -v M="$m" '/^[[:space:]]*<[^>]*>:$/ {name = $1; next} name {body[FILENAME, name] = body[FILENAME, name] $0 "\n"; names[name] = 1}
         END {n = 0; d = 0; list = "";
              for (k in names) {n++; if (body[ARGV[1], k] != body[ARGV[2], k]) {d++; list = list " " k}}
              printf "%-16s %4d functions, %3d differ:%s\n", M, n, d, list}' "$tmp/with.s" "$tmp/without.s"
done
