# ScatterElements of known inputs is folded: PyTorch's index_copy and
# index_fill scatter into a Shape to build the shape of an Expand, which
# must be known (it was an error naming the chain back to the Scatter).
# Here a shape [2, 5] with 3 scattered at axis 1 position 0, an add of 2
# and 0.5 at position 1 of a known f32 tensor, and its product with
# duplicate indices; and reduction mul (PyTorch's scatter_reduce "prod")
# of a run-time tensor, against NumPy at -O0 and -O2.
. "$srcdir/testsuite/cli/lib.inc"
"$PYTHON" - "$srcdir/testsuite/onnx" <<'EOF2' || fail "cannot write the models"
import os, sys
sys.path.insert(0, sys.argv[1])
from make_hostile import FLOAT, INT64, array_tensor, field, model, node, value_info
import numpy as np
def attr_int(name, v):
    return [field(1, name), field(20, 2), field(3, v)]
def attr_str(name, v):
    return [field(1, name), field(20, 3), field(4, v)]
x = np.arange(5, dtype=np.float32).reshape(1, 5)
w = np.array([[1, 2, 3, 4, 5]], np.float32)
nodes = [node("Shape", ["q"], ["s0"]), node("Unsqueeze", ["s0", "ax0"], ["s"]),
         node("ScatterElements", ["s", "i", "u"], ["shape"], attrs=[attr_int("axis", 1)]),
         node("Reshape", ["shape", "flat"], ["shape1"]),
         node("Expand", ["x", "shape1"], ["y"], name="expand"),
         node("ScatterElements", ["w", "i1", "u1"], ["w2"], attrs=[attr_str("reduction", "add"),
                                                                   attr_int("axis", 1)]),
         node("Add", ["y", "w2"], ["z"]),
         node("ScatterElements", ["w", "i1", "u1"], ["w3"], attrs=[attr_str("reduction", "mul"),
                                                                   attr_int("axis", 1)]),
         node("ScatterElements", ["x", "i2", "u2"], ["p"], attrs=[attr_str("reduction", "mul"),
                                                                  attr_int("axis", 1)])]
inits = [array_tensor("ax0", np.array([0], np.int64), INT64),
         array_tensor("i", np.array([[0]], np.int64), INT64),
         array_tensor("u", np.array([[3]], np.int64), INT64),
         array_tensor("flat", np.array([-1], np.int64), INT64),
         array_tensor("w", w, FLOAT), array_tensor("i1", np.array([[1, -4]], np.int64), INT64),
         array_tensor("u1", np.array([[2, 0.5]], np.float32), FLOAT),
         array_tensor("i2", np.array([[4, 0, -1]], np.int64), INT64)]
w2 = w.copy()
w2[0, 1] += 2.5
w3 = w.copy()
w3[0, 1] *= 1.0
u2 = np.array([[3, -2, 0.5]], np.float32)
p = x.copy()
p[0, 4] *= 3 * 0.5
p[0, 0] *= -2
with open("m.onnx", "wb") as f:
    f.write(model(nodes, [value_info("x", [1, 5]), value_info("u2", [1, 3]), value_info("q", [2, 5])],
                  [value_info("z", [3, 5]), value_info("w3", [1, 5]), value_info("p", [1, 5])],
                  inits, opset=16))
np.save("x.npy", x)
np.save("u2.npy", u2)
np.save("q.npy", np.zeros((2, 5), np.float32))
os.mkdir("ref")
np.save("ref/z.npy", np.broadcast_to(x, (3, 5)) + w2)
np.save("ref/w3.npy", w3)
np.save("ref/p.npy", p)
EOF2
for o in O0 O2; do
    expect_status 0 "$TEC" -$o m.onnx --input x=x.npy --input u2=u2.npy --input q=q.npy --save-outputs $o
    "$PYTHON" "$srcdir/testsuite/compare.py" ref $o || fail "wrong result at -$o"
done
echo ok
