# The run cache (driver/runcache.h, doc/codegen.md "The run cache"): a run
# with the same program, options, target, compiler and tec takes its
# optimized modules and kernels from the cache, skipping the passes and the
# C; any change of those recompiles; a damaged, planted or dangling entry
# is never used (the run compiles and gives the right result).
. "$srcdir/testsuite/cli/lib.inc"
export XDG_CACHE_HOME=$PWD/cache
run=$XDG_CACHE_HOME/tec/run
cat >ops.te <<'TE'
def scale(x: f32[N, M]) -> y: f32[N, M] {
    y[i, j] = x[i, j] * 2.0
}
TE
cat >p.te <<'TE'
import "nn.te"
import "ops.te"
let W = 8
input x: f32[4, W]
h = linear(x, 16) as "fc"
r = relu(h) as "act"
y = scale(r) as "scale"
output y
TE
# state: "hit" or "miss" of the last run, from --verbose
state() { if grep -q '^tec: run cache: hit: ' err; then echo hit; else echo miss; fi; }
expect_run() { expect_cached_run "run cache" "$@"; }
expect_run miss p.te
grep -q '^tec: run cache: entry written: ' run.err || { cat run.err; fail "no entry written"; }
expect_run hit p.te
grep -q '^tec: running: ' run.err && fail "a hit compiled: $(cat run.err)"
expect_status 0 "$TEC" --time-phases p.te
grep -Eq '^ +(passes|emit C) ' err && { cat err; fail "a hit ran the passes or the emitter"; }

# Everything that changes the result misses: the program, an imported file,
# a -D value, the -O level, --passes, --profile, --unchecked, the target,
# the compiler.
sed -i 's/linear(x, 16)/linear(x, 12)/' p.te
expect_run miss p.te
expect_run hit p.te
sed -i 's/2\.0/3.0/' ops.te
expect_run miss p.te
expect_run hit p.te
expect_run miss -D W=6 p.te
expect_run hit -D W=6 p.te
expect_run miss -O1 p.te
expect_run miss -O0 p.te
expect_run hit -O1 p.te
expect_run miss --passes=simplify,flatten p.te
expect_run miss --unchecked p.te
expect_status 0 "$TEC" --verbose --profile p.te
[ "$(state)" = miss ] || { cat err; fail "--profile used the plain run's entry"; }
expect_status 0 "$TEC" --verbose --profile p.te
[ "$(state)" = hit ] || { cat err; fail "--profile twice: no hit"; }
grep -q '^ *fc' out || { cat out; fail "the cached --profile run has no fc row"; }
if "$TEC" --target=x86-64-v2 --print-target >/dev/null 2>&1; then
    expect_run miss --target=x86-64-v2 p.te
    expect_run hit --target=x86-64-v2 p.te
fi
# another compiler: the same gcc under another name
cc_path=$(command -v "${CC:-cc}" | head -1)
if [ -n "$cc_path" ]; then
    mkdir -p bin && ln -sf "$(readlink -f "$cc_path")" bin/mycc
    touch -h bin/mycc
    CC=$PWD/bin/mycc expect_run miss p.te
    CC=$PWD/bin/mycc expect_run hit p.te
fi
# the environment the compiler reads
CPATH=/nonexistent expect_run miss p.te

# The thread count is the run's, not the build's: no recompile.
expect_run hit --threads 1 p.te

# Damaged entries: cut short, one byte changed, garbage, empty.  The run
# compiles and writes a good entry again.
entry() { ls "$run"/*.run | head -1; }
rm -rf "$run"
expect_run miss p.te
e=$(entry)
size=$(stat -c %s "$e")
head -c $((size / 2)) "$e" >t && cat t >"$e"
expect_run miss p.te
grep -q 'is damaged' run.err || { cat run.err; fail "a cut entry was not called damaged"; }
expect_run hit p.te
printf 'X' | dd of="$e" bs=1 seek=$((size / 3)) conv=notrunc 2>/dev/null
expect_run miss p.te
expect_run hit p.te
head -c 5000 /dev/urandom >"$e"
expect_run miss p.te
: >"$e"
expect_run miss p.te
expect_run hit p.te

# A checksum that matches but a module that does not parse: damaged.
body=$(sed '$d' "$e" | sed 's/^def /dfe /')
{ printf '%s\n' "$body"; printf 'sha256 %s\n' "$(printf '%s\n' "$body" | sha256sum | cut -d' ' -f1)"; } >"$e"
expect_run miss p.te
grep -q 'is damaged' run.err || { cat run.err; fail "an unparsable entry was not called damaged"; }
expect_run hit p.te

# The kernels removed from the kernel cache, or another file in their place.
so=$(sed -n '/^so /{n;p;q}' "$e")
[ -f "$so" ] || fail "the entry names no shared object: $so"
rm -f "$so"
expect_run miss p.te
expect_run hit p.te
cp "$so" good.so
printf 'not a shared object' >"$so"
expect_run miss p.te
expect_run hit p.te

# An entry someone else could write, or a symbolic link, is not used.
chmod g+w "$e"
expect_run miss p.te
grep -q 'writable by group or others' run.err || { cat run.err; fail "no word on a group-writable entry"; }
expect_run hit p.te
mv "$(entry)" real.run
ln -s "$PWD/real.run" "$e"
expect_run miss p.te
expect_run hit p.te
chmod g+w "$run"
expect_run miss p.te
grep -q 'not used:.*writable by group or others' run.err || { cat run.err; fail "a group-writable folder was used"; }
chmod g-w "$run"

# Modes that need the passes never use it.
expect_status 0 "$TEC" --verbose --dump-ir=fuse p.te
[ "$(state)" = miss ] || fail "--dump-ir used the run cache"
grep -q '^@\|func @' err || { cat err; fail "--dump-ir printed no IR"; }
expect_status 0 "$TEC" --verbose --no-cache p.te
grep -q 'run cache' err && { cat err; fail "--no-cache used the run cache"; }

# An ONNX model: keyed on its imported program.
"$PYTHON" - "$srcdir/testsuite/onnx" <<'PY' || fail "cannot build the model"
import sys
import numpy as np
sys.path.insert(0, sys.argv[1])
from make_hostile import node, value_info, tensor, model
w = (np.arange(12, dtype=np.float32).reshape(4, 3) - 5) / 7
for name, k in (("m1.onnx", 1), ("m2.onnx", 2)):
    open(name, "wb").write(model([node("MatMul", ["x", "w"], ["t"], name="/fc/MatMul"),
                                   node("Relu", ["t"], ["y"], name="/act/Relu")],
                                  [value_info("x", [2, 4])], [value_info("y", [2, 3])],
                                  [tensor("w", [4, 3], (k * w).tobytes())]))
PY
expect_status 0 "$TEC" --verbose m1.onnx
[ "$(state)" = miss ] || { cat err; fail "m1.onnx: a hit"; }
cp out m1.out
expect_status 0 "$TEC" --verbose m1.onnx
[ "$(state)" = hit ] || { cat err; fail "m1.onnx twice: no hit"; }
cmp out m1.out || fail "m1.onnx from the cache gives other outputs"
# the same graph with other weights: the same program, the weights' own values
expect_status 0 "$TEC" --verbose m2.onnx
cmp -s out m1.out && fail "m2.onnx ran m1.onnx's weights"
echo ok
