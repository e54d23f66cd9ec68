# The import cache (driver/runcache.h, doc/codegen.md "The import cache"):
# a run of an ONNX model whose file, -D values and --input files are the
# same takes the imported program and weights from the cache, without
# importing the model; any change of them imports it again; a damaged or
# planted entry is never used (the run imports and gives the right result).
. "$srcdir/testsuite/cli/lib.inc"
export XDG_CACHE_HOME=$PWD/cache
run=$XDG_CACHE_HOME/tec/run
# MODEL.onnx: y = relu(x w + b), x f32[N, 16] (N dynamic), w f32[16, 8] (a
# piece of the model file the entry points at), b f32[8] (32 bytes: stored
# in the entry); K scales the weights, NAME names the MatMul node.
make_model() {
    "$PYTHON" - "$srcdir/testsuite/onnx" "$@" <<'PY' || fail "cannot build the model"
import sys
import numpy as np
sys.path.insert(0, sys.argv[1])
from make_hostile import node, value_info, tensor, model
out, k, name = sys.argv[2], float(sys.argv[3]), sys.argv[4]
x = sys.argv[5] if len(sys.argv) > 5 else "x"
w = ((np.arange(128, dtype=np.float32).reshape(16, 8) % 11) - 5) / 7 * k
b = (np.arange(8, dtype=np.float32) - 3) / 5
open(out, "wb").write(model([node("MatMul", [x, "w"], ["t"], name=name),
                             node("Add", ["t", "b"], ["u"], name="/fc/Add"),
                             node("Relu", ["u"], ["y"], name="/act/Relu")],
                            [value_info(x, ["N", 16])], [value_info("y", ["N", 8])],
                            [tensor("w", [16, 8], w.tobytes()), tensor("b", [8], b.tobytes())]))
PY
}
make_input() {   # make_input FILE ROWS SEED
    "$PYTHON" -c "import numpy as np, sys; np.save(sys.argv[1], np.random.default_rng(int(sys.argv[3])).standard_normal((int(sys.argv[2]), 16)).astype(np.float32))" "$@"
}
# state: "hit" or "miss" of the last run's import, from --verbose
state() { if grep -q '^tec: import cache: hit: ' err; then echo hit; else echo miss; fi; }
expect_run() { expect_cached_run "import cache" "$@"; }
make_model m.onnx 1 /fc/MatMul
make_input x.npy 2 1
cp x.npy x1.npy
expect_run miss m.onnx --input x=x.npy
grep -q '^tec: import cache: 2 weights, 1 of them pieces of the model file, 32 bytes stored$' run.err ||
    { cat run.err; fail "no word on the entry's weights"; }
grep -q '^tec: import cache: entry written: ' run.err || { cat run.err; fail "no entry written"; }
expect_run hit m.onnx --input x=x.npy
cp o/y.npy y1.npy
grep -q '^tec: run cache: hit: ' run.err || { cat run.err; fail "an import-cache hit missed the run cache"; }

# Everything the import reads misses: the model's bytes (one weight, the
# file rewritten in place with its old modification time), an --input
# file's bytes, its shape, a -D value.
cp -p m.onnx m1.onnx
make_model m2.onnx 2 /fc/MatMul
cat m2.onnx >m.onnx
touch -r m1.onnx m.onnx
expect_run miss m.onnx --input x=x.npy
cmp -s o/y.npy y1.npy && fail "the changed model gave the old outputs"
expect_run hit m.onnx --input x=x.npy
make_input x.npy 2 2
expect_run miss m.onnx --input x=x.npy
expect_run hit m.onnx --input x=x.npy
make_input x.npy 3 2
expect_run miss m.onnx --input x=x.npy
expect_run miss -D N=4 m.onnx
expect_run miss -D N=5 m.onnx
expect_run hit -D N=4 m.onnx
# the first model and input again: the first entry
cat m1.onnx >m.onnx
expect_run hit m.onnx --input x=x1.npy
cmp o/y.npy y1.npy || fail "the first entry gave other outputs"

# Damaged entries: cut short, one byte changed, garbage, empty.  The run
# imports the model and writes a good entry again.
rm -rf "$run"
expect_run miss m.onnx --input x=x.npy
e=$(ls "$run"/*.import)
size=$(stat -c %s "$e")
head -c $((size / 2)) "$e" >t && cat t >"$e"
expect_run miss m.onnx --input x=x.npy
grep -q 'import cache: entry .* is damaged' run.err || { cat run.err; fail "a cut entry was not called damaged"; }
expect_run hit m.onnx --input x=x.npy
printf 'X' | dd of="$e" bs=1 seek=$((size / 3)) conv=notrunc 2>/dev/null
expect_run miss m.onnx --input x=x.npy
expect_run hit m.onnx --input x=x.npy
head -c 5000 /dev/urandom >"$e"
expect_run miss m.onnx --input x=x.npy
: >"$e"
expect_run miss m.onnx --input x=x.npy
expect_run hit m.onnx --input x=x.npy
# A checksum that matches but a weight outside the model file: damaged.
"$PYTHON" - "$e" <<'PY' || fail "cannot edit the entry"
import hashlib, re, sys
body = open(sys.argv[1], "rb").read().rsplit(b"sha256 ", 1)[0]
body, n = re.subn(rb" m \d+ 512\n", b" m 999999 512\n", body)
assert n == 1, "no weight of the model file in the entry"
open(sys.argv[1], "wb").write(body + b"sha256 " + hashlib.sha256(body).hexdigest().encode() + b"\n")
PY
expect_run miss m.onnx --input x=x.npy
grep -q 'is damaged' run.err || { cat run.err; fail "a weight outside the model was not called damaged"; }
expect_run hit m.onnx --input x=x.npy

# An entry someone else could write, or a symbolic link, is not used.
chmod g+w "$e"
expect_run miss m.onnx --input x=x.npy
grep -q 'import cache: entry .* writable by group or others' run.err || { cat run.err; fail "no word on a group-writable entry"; }
expect_run hit m.onnx --input x=x.npy
mv "$e" real.import
ln -s "$PWD/real.import" "$e"
expect_run miss m.onnx --input x=x.npy
expect_run hit m.onnx --input x=x.npy

# An input the import renames (`input` is a keyword: `t_input`) is renamed
# on a hit too.
make_model in.onnx 1 /fc/MatMul input
expect_run miss in.onnx --input input=x.npy
expect_run hit in.onnx --input input=x.npy

# A model that may refer to external data is never cached.
make_model ext.onnx 1 /location/MatMul
expect_run miss ext.onnx --input x=x.npy
grep -q 'import cache: not used: ext.onnx may refer to external data' run.err || { cat run.err; fail "no word on external data"; }
expect_run miss ext.onnx --input x=x.npy

# Only runs use it: not --emit=te (which may write the weights' files).
expect_status 0 "$TEC" --verbose m.onnx --input x=x.npy --emit=te --save-weights wdir
grep -q 'import cache' err && { cat err; fail "--emit=te used the import cache"; }
[ -n "$(ls wdir)" ] || fail "--save-weights wrote nothing"
expect_status 0 "$TEC" --verbose m.onnx --input x=x.npy --no-cache
grep -q 'import cache' err && { cat err; fail "--no-cache used the import cache"; }
echo ok
