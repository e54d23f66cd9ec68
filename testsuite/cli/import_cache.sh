# The import cache (driver/runcache.h, doc/codegen.md "The import cache"):
# a run of an ONNX model whose file, -D values and --input files are the
# same takes the imported program and weights from the cache, without
# importing the model; any change of them imports it again; a damaged or
# planted entry is never used (the run imports and gives the right result).
. "$srcdir/testsuite/cli/lib.inc"
export XDG_CACHE_HOME=$PWD/cache
run=$XDG_CACHE_HOME/tec/run
# MODEL.onnx: y = relu(x w + b), x f32[N, 16] (N dynamic), w f32[16, 8], b
# f32[8]; K scales the weights, NAME names the MatMul node.
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
# hashed: whether the last run read and hashed the model (not its stamp)
hashed() { if grep -q '^tec: import cache: model .* not hashed$' run.err; then echo no; else echo yes; fi; }
make_model m.onnx 1 /fc/MatMul
make_input x.npy 2 1
cp x.npy x1.npy
# (older than a tick of the file system's clock: its stamp is written)
sleep 0.2
expect_run miss m.onnx --input x=x.npy
grep -q "^tec: import cache: 2 weights, $(getconf PAGESIZE) bytes in .*\.weights\$" run.err ||
    { cat run.err; fail "no word on the entry's weights"; }
grep -q '^tec: import cache: entry written: ' run.err || { cat run.err; fail "no entry written"; }
[ "$(hashed)" = yes ] || { cat run.err; fail "a model without a stamp was not hashed"; }
ls "$run"/*.stamp >/dev/null 2>&1 || fail "no stamp written"
expect_run hit m.onnx --input x=x.npy
[ "$(hashed)" = no ] || { cat run.err; fail "an unchanged model was hashed again"; }
cp o/y.npy y1.npy
grep -q '^tec: run cache: hit: ' run.err || { cat run.err; fail "an import-cache hit missed the run cache"; }

# Everything the import reads misses: the model's bytes (one weight, the
# file rewritten in place with its old size and modification time: its
# stamp, which the last run used, no longer applies), an --input file's
# bytes, its shape, a -D value.
cp -p m.onnx m1.onnx
make_model m2.onnx 2 /fc/MatMul
[ "$(stat -c %s m2.onnx)" = "$(stat -c %s m.onnx)" ] || fail "the two models differ in size"
cat m2.onnx >m.onnx
touch -r m1.onnx m.onnx
expect_run miss m.onnx --input x=x.npy
[ "$(hashed)" = yes ] || { cat run.err; fail "a model changed in place was not hashed"; }
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
# A checksum that matches but a weight outside the weights file, or not
# 64-byte aligned: damaged.
for off in 999999 4; do
    "$PYTHON" - "$e" "$off" <<'PY' || fail "cannot edit the entry"
import hashlib, re, sys
body = open(sys.argv[1], "rb").read().rsplit(b"sha256 ", 1)[0]
body, n = re.subn(rb" \d+ 512\n", b" " + sys.argv[2].encode() + b" 512\n", body)
assert n == 1, "no weight of 512 bytes in the entry"
open(sys.argv[1], "wb").write(body + b"sha256 " + hashlib.sha256(body).hexdigest().encode() + b"\n")
PY
    expect_run miss m.onnx --input x=x.npy
    grep -q 'is damaged' run.err || { cat run.err; fail "a weight at $off was not called damaged"; }
    expect_run hit m.onnx --input x=x.npy
done
# The weights file changed (one byte, the same size), cut short, or gone:
# not used, the model is imported again and the right outputs come out.
w=${e%.import}.weights
printf 'X' | dd of="$w" bs=1 seek=8 conv=notrunc 2>/dev/null
expect_run miss m.onnx --input x=x.npy
grep -q 'its weights file is not the one' run.err || { cat run.err; fail "a changed weights file was used"; }
expect_run hit m.onnx --input x=x.npy
truncate -s 100 "$w"
expect_run miss m.onnx --input x=x.npy
expect_run hit m.onnx --input x=x.npy
rm "$w"
expect_run miss m.onnx --input x=x.npy
expect_run hit m.onnx --input x=x.npy
# A damaged stamp: the model is hashed again.
for s in "$run"/*.stamp; do head -c 50 /dev/urandom >"$s"; done
expect_run hit m.onnx --input x=x.npy
[ "$(hashed)" = yes ] || { cat run.err; fail "a damaged stamp was used"; }

# An entry someone else could write, or a symbolic link, is not used.
chmod g+w "$e"
expect_run miss m.onnx --input x=x.npy
grep -q 'import cache: entry .* writable by group or others' run.err || { cat run.err; fail "no word on a group-writable entry"; }
expect_run hit m.onnx --input x=x.npy
mv "$e" real.import
ln -s "$PWD/real.import" "$e"
expect_run miss m.onnx --input x=x.npy
expect_run hit m.onnx --input x=x.npy

# Weights of a megabyte or more are mapped from the weights file, each on
# pages of its own: a model with two (and a small one between them) gives
# the outputs of a run without the cache, from the cache as well.
"$PYTHON" - "$srcdir/testsuite/onnx" big.onnx <<'PY' || fail "cannot build the big model"
import sys
import numpy as np
sys.path.insert(0, sys.argv[1])
from make_hostile import node, value_info, tensor, model
rng = np.random.default_rng(3)
w1 = (rng.standard_normal((256, 1100)) / 16).astype(np.float32)
w2 = (rng.standard_normal((1100, 300)) / 32).astype(np.float32)
b = np.linspace(-1, 1, 1100, dtype=np.float32)
open(sys.argv[2], "wb").write(model([node("MatMul", ["x", "w1"], ["t"]), node("Add", ["t", "b"], ["u"]),
                                     node("Relu", ["u"], ["r"]), node("MatMul", ["r", "w2"], ["y"])],
                                    [value_info("x", [2, 256])], [value_info("y", [2, 300])],
                                    [tensor("w1", [256, 1100], w1.tobytes()), tensor("b", [1100], b.tobytes()),
                                     tensor("w2", [1100, 300], w2.tobytes())]))
PY
"$PYTHON" -c "import numpy as np; np.save('xb.npy', np.random.default_rng(4).standard_normal((2, 256)).astype(np.float32))"
expect_run miss big.onnx --input x=xb.npy
expect_run hit big.onnx --input x=xb.npy
expect_run hit big.onnx --input x=xb.npy --profile

# The consts cache: the packed weights the load calls made, written by the
# first plain run, used by the next (no load calls run); not by --profile.
# A changed or cut data file is not used; a model whose weights changed
# (in place, same size and mtime) does not find the old consts.
consts() { if grep -q '^tec: consts cache: hit: ' run.err; then echo hit; else echo miss; fi; }
rm -rf "$run"
expect_run miss big.onnx --input x=xb.npy
grep -q '^tec: consts cache: entry written: ' run.err || { cat run.err; fail "no consts written"; }
expect_run hit big.onnx --input x=xb.npy
[ "$(consts)" = hit ] || { cat run.err; fail "the consts cache missed"; }
cp o/y.npy yb1.npy
expect_run hit big.onnx --input x=xb.npy --profile
grep -q 'consts cache' run.err && { cat run.err; fail "--profile used the consts cache"; }
c=$(ls "$run"/*.constdata)
printf 'X' | dd of="$c" bs=1 seek=100 conv=notrunc 2>/dev/null
expect_run hit big.onnx --input x=xb.npy
[ "$(consts)" = miss ] || { cat run.err; fail "a changed consts data file was used"; }
grep -q 'consts cache: entry .* its data file is not the one' run.err || { cat run.err; fail "no word on the changed data file"; }
expect_run hit big.onnx --input x=xb.npy
[ "$(consts)" = hit ] || { cat run.err; fail "the consts were not written again"; }
truncate -s 4096 "$c"
expect_run hit big.onnx --input x=xb.npy
[ "$(consts)" = miss ] || { cat run.err; fail "a cut consts data file was used"; }
cp -p big.onnx big1.onnx
"$PYTHON" - big.onnx <<'PY' || fail "cannot change the weights"
import sys
b = bytearray(open(sys.argv[1], "rb").read())
b[-5000:-4000] = bytes(1000)   # zeros over part of the last weight, w2
open(sys.argv[1], "r+b").write(b)
PY
touch -r big1.onnx big.onnx
expect_run miss big.onnx --input x=xb.npy
[ "$(consts)" = miss ] || { cat run.err; fail "a changed model used the old consts"; }
cmp -s o/y.npy yb1.npy && fail "the changed model gave the old outputs"
expect_run hit big.onnx --input x=xb.npy
[ "$(consts)" = hit ] || { cat run.err; fail "the changed model's consts were not cached"; }

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
