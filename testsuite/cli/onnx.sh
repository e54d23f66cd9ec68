# tec model.onnx: a small model built here (testsuite/onnx/make_hostile.py's
# encoder) with a dynamic batch dimension N; its outputs against numpy; the
# --emit=te program and --save-weights run alone with --weights; -D N=...;
# ONNX TensorProto inputs (.pb); -x onnx.
. "$srcdir/testsuite/cli/lib.inc"

"$PYTHON" - "$srcdir/testsuite/onnx" <<'PY' || fail "cannot build the model"
import struct, sys
import numpy as np
sys.path.insert(0, sys.argv[1])
from make_hostile import field, node, value_info, tensor, model
w = (np.arange(12, dtype=np.float32).reshape(4, 3) - 5) / 7
b = np.array([0.5, -1.0, 2.0], np.float32)
m = model([node("MatMul", ["x", "w"], ["t"], name="/fc/MatMul"),
           node("Add", ["t", "b"], ["u"], name="/fc/Add"),
           node("Relu", ["u"], ["y"], name="/act/Relu")],
          [value_info("x", ["N", 4])], [value_info("y", ["N", 3])],
          [tensor("w", [4, 3], w.tobytes()), tensor("b", [3], b.tobytes())])
open("m.onnx", "wb").write(m)
open("m.bin", "wb").write(m)
x = np.linspace(-1, 1, 8, dtype=np.float32).reshape(2, 4)
np.save("x.npy", x)
open("x.pb", "wb").write(b"".join(field(1, d) for d in x.shape) + field(2, 1) +
                         field(8, "x") + field(9, x.tobytes()))
np.save("want.npy", np.maximum(x @ w + b, 0))
PY

cmp() {   # cmp A.npy B.npy: the same shape and values within 1e-6
    "$PYTHON" -c 'import numpy as np, sys
a, b = np.load(sys.argv[1]), np.load(sys.argv[2])
sys.exit(0 if a.shape == b.shape and np.allclose(a, b, rtol=1e-6, atol=1e-6) else 1)' "$1" "$2"
}

# The program: the dynamic dimension is a let, each node a layer named after it.
expect_status 0 "$TEC" --emit=te -D N=1 m.onnx -o net.te --save-weights w
grep -qx 'let N = 1    # dynamic dimension (-D N=N)' net.te || { cat net.te; fail "no let N"; }
grep -qx 'input x: f32\[N, 4\]' net.te || { cat net.te; fail "input x is not f32[N, 4]"; }
grep -q 'as "fc.MatMul"$' net.te && grep -q '= relu(.*) as "act.Relu"$' net.te ||
    { cat net.te; fail "layers are not named after the nodes"; }
[ -f w/fc.MatMul.B.npy ] && [ -f w/fc.Add.b.npy ] || { ls w; fail "weights not saved by layer"; }

# -D N=2 with the input as .npy and as .pb; the saved program with its weights.
expect_status 0 "$TEC" -D N=2 m.onnx --input x=x.npy --save-outputs o1
cmp o1/y.npy want.npy || fail "tec m.onnx differs from numpy"
expect_status 0 "$TEC" -D N=2 m.onnx --input x=x.pb --save-outputs o2
cmp o2/y.npy want.npy || fail "a .pb input differs from its .npy"
expect_status 0 "$TEC" --emit=te -D N=2 m.onnx -o net2.te --save-weights w2
expect_status 0 "$TEC" net2.te --weights w2 --input x=x.npy --save-outputs o3
cmp o3/y.npy want.npy || fail "the --emit=te program differs from the model"
expect_status 0 "$TEC" -x onnx -D N=2 m.bin --input x=x.npy --save-outputs o4
cmp o4/y.npy want.npy || fail "-x onnx"
# -x onnx - reads the model from standard input (doc/onnx.md).
expect_status 0 "$TEC" -x onnx -D N=2 - --input x=x.npy --save-outputs o5 <m.onnx
cmp o5/y.npy want.npy || fail "-x onnx - (standard input)"
# -D of a dimension is read with a checked parse (the importer's): no value wraps around.
expect_status 1 "$TEC" --emit=te -D N=2199023255552 m.onnx
expect_err "m.onnx: error: -D N=2199023255552: the size of a dynamic dimension must be an integer from 1 to 2^40"
expect_status 1 "$TEC" --emit=te -D N=99999999999999999999 m.onnx
expect_err "m.onnx: error: -D N=99999999999999999999: the size of a dynamic dimension must be an integer from 1 to 2^40"
expect_status 1 "$TEC" -D N=0 m.onnx
expect_err "m.onnx: error: -D N=0: the size of a dynamic dimension must be an integer from 1 to 2^40"
expect_status 1 "$TEC" --emit=te -D N=2.5 m.onnx
expect_err "m.onnx: error: -D N=2.5: the size of a dynamic dimension must be an integer from 1 to 2^40"

# --profile counts the layers; --weights replaces the initializers.
expect_status 0 "$TEC" -D N=2 --profile m.onnx
grep -q '^ *fc.MatMul  *matmul_1 ' out || { cat out; fail "no fc.MatMul row in the profile"; }
expect_status 1 "$TEC" m.onnx --weights nowhere
expect_status 2 "$TEC" --save-weights w m.onnx

# An output name that is not printable ASCII does not reach the program:
# the output takes its .te name.
"$PYTHON" - "$srcdir/testsuite/onnx" <<'PY' || fail "cannot build the model"
import sys
sys.path.insert(0, sys.argv[1])
from make_hostile import node, value_info, model
open("odd.onnx", "wb").write(model([node("Relu", ["x"], ["y\xe7"], name="r")],
                                   [value_info("x", [2, 3])], [value_info("y\xe7", [2, 3])]))
PY
expect_status 0 "$TEC" --emit=te odd.onnx
grep -qx 'output y as "y"' out || { cat out; fail "the odd output name is not replaced"; }
expect_status 0 "$TEC" odd.onnx
