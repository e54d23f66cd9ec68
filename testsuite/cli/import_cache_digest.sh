# The import cache's digest of a model (driver/runcache.c, digest_bytes):
# the model is hashed in chunks of 32 MiB on several threads.  A model of
# more than one chunk whose bytes change only in its second chunk, in
# place (the same size and modification time), misses the import and
# consts caches and gives the new outputs; the word "location" (of an
# external-data entry) split between two chunks is found.
. "$srcdir/testsuite/cli/lib.inc"
export XDG_CACHE_HOME=$PWD/cache
run=$XDG_CACHE_HOME/tec/run
# big.onnx: y = x w, x f32[1, 8400] (ones), w f32[8400, 1000] (33.6 MB,
# its raw data from offset OFF of the file on; the first chunk ends within w)
"$PYTHON" - "$srcdir/testsuite/onnx" <<'PY' || fail "cannot build the model"
import sys
import numpy as np
sys.path.insert(0, sys.argv[1])
from make_hostile import node, value_info, tensor, model
w = (np.random.default_rng(5).standard_normal((8400, 1000)) / 64).astype(np.float32)
b = model([node("MatMul", ["x", "w"], ["y"])], [value_info("x", [1, 8400])],
          [value_info("y", [1, 1000])], [tensor("w", [8400, 1000], w.tobytes())])
assert len(b) > 32 << 20 and b.find(w.tobytes()[:64]) < 1000
open("big.onnx", "wb").write(b)
np.save("x.npy", np.ones((1, 8400), np.float32))
PY
# bytes BYTES AT: BYTES written over big.onnx at offset AT, its size and
# modification time kept
bytes() {
    cp -p big.onnx keep.onnx
    printf '%s' "$1" | dd of=big.onnx bs=1 seek="$2" conv=notrunc 2>/dev/null
    touch -r keep.onnx big.onnx
    [ "$(stat -c %s big.onnx)" = "$(stat -c %s keep.onnx)" ] || fail "the size changed"
}
consts() { if grep -q '^tec: consts cache: hit: ' run.err; then echo hit; else echo miss; fi; }
sleep 0.2   # older than a tick of the file system's clock: stamped
expect_cached_run "import cache" miss big.onnx --input x=x.npy
expect_cached_run "import cache" hit big.onnx --input x=x.npy
[ "$(consts)" = hit ] || { cat run.err; fail "the consts cache missed"; }
cp o/y.npy y1.npy
# four bytes of the second chunk (a weight in the middle of w's last rows)
bytes 'AAAA' $(((32 << 20) + 4096))
expect_cached_run "import cache" miss big.onnx --input x=x.npy
grep -q '^tec: import cache: model .* not hashed$' run.err && { cat run.err; fail "a changed model was not hashed"; }
[ "$(consts)" = miss ] || { cat run.err; fail "a changed model used the old consts"; }
cmp -s o/y.npy y1.npy && fail "the changed model gave the old outputs"
sleep 0.2
expect_cached_run "import cache" hit big.onnx --input x=x.npy
# "location" across the end of the first chunk: may refer to external data
bytes 'location' $(((32 << 20) - 4))
expect_cached_run "import cache" miss big.onnx --input x=x.npy
grep -q 'import cache: not used: big.onnx may refer to external data' run.err ||
    { cat run.err; fail "no word on external data across two chunks"; }
echo ok
