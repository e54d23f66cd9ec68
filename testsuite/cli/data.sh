# --input/--weights/--save-outputs: files are checked against the program.
. "$srcdir/testsuite/cli/lib.inc"
mm=$srcdir/examples/matmul.te
"$PYTHON" - <<'PY' || fail "making fixtures"
import numpy as np
np.save("a_ok.npy", np.ones((128, 256), np.float32))
np.save("a_shape.npy", np.ones((128, 255), np.float32))
np.save("a_f64.npy", np.ones((128, 256), np.float64))
open("trunc.npy", "wb").write(open("a_ok.npy", "rb").read()[:-4])
open("garbage.npy", "wb").write(b"not a numpy file at all")
PY
expect_status 0 "$TEC" "$mm" --input A=a_ok.npy --save-outputs outdir
[ -f outdir/C.npy ] || fail "no outdir/C.npy"
"$PYTHON" -c "
import numpy as np
c = np.load('outdir/C.npy')
assert c.shape == (128, 64) and c.dtype == np.float32, (c.shape, c.dtype)
" || fail "C.npy has the wrong shape or dtype"
expect_status 1 "$TEC" "$mm" --input A=a_shape.npy
expect_err "tec: error: input A: a_shape.npy is f32[128, 255] but the program declares f32[128, 256]"
expect_status 1 "$TEC" "$mm" --input A=a_f64.npy
expect_err "tec: error: input A: a_f64.npy is f64[128, 256] but the program declares f32[128, 256]"
expect_status 1 "$TEC" "$mm" --input Z=a_ok.npy
expect_err "tec: error: --input Z=a_ok.npy: the program has no input named 'Z'"
expect_status 1 "$TEC" "$mm" --input A=trunc.npy
grep -q '^tec: error: trunc.npy: truncated' err || { cat err; fail "truncated file"; }
expect_status 1 "$TEC" "$mm" --input A=garbage.npy
grep -q '^tec: error: garbage.npy: ' err || { cat err; fail "garbage file"; }
expect_status 2 "$TEC" "$mm" --input A=a_ok.npy --input A=a_shape.npy
expect_err "tec: error: --input A=a_shape.npy: input A is already given (--input A=a_ok.npy)
tec: try 'tec --help'"
mkdir -p w
expect_status 1 "$TEC" "$srcdir/examples/mlp.te" --weights w
grep -q "^tec: error: --weights w: no file for parameter net.fc1.weight (f32\[128, 784\])" err ||
    { cat err; fail "missing weight"; }
cp a_ok.npy w/stray.npy
expect_status 1 "$TEC" "$srcdir/examples/mlp.te" --weights w
grep -q "^tec: error: --weights w: stray.npy matches no parameter of the program" err ||
    { cat err; fail "extra weight"; }

# The output summary prints integer tensors exactly, not with %g.
printf 'input a: i64[3] = uniform(0, 1)\nb[i] = a[i] + 339271727 + i\noutput b\n' >ints.te
expect_status 0 "$TEC" ints.te
grep -qx 'b: i64\[3\]  min 339271727  max 339271729  mean 3.39272e+08  first \[339271727, 339271728, 339271729\]' out ||
    { cat out; fail "integer summary"; }

# The README's example: the saved product equals numpy's on the same
# (default) inputs.
expect_status 0 "$TEC" -O2 "$mm" --save-outputs mmout
"$PYTHON" - "$srcdir/testsuite" <<'PY' || fail "examples/matmul.te differs from numpy"
import sys
sys.path.insert(0, sys.argv[1])
import numpy as np
from tecref import default
A = default("A", (128, 256)).astype(np.float64)
B = default("B", (256, 64)).astype(np.float64)
C = np.load("mmout/C.npy")
err = np.max(np.abs(C - A @ B)) / np.max(np.abs(A @ B))
assert err < 1e-5, err
PY
echo ok
