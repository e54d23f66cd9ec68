# A float MaxPool whose dilated window lies wholly in the padding (kernel
# 2 at dilation 2 with a pad of 1 on a map of height 1: rows -1 and +1)
# gives the lowest finite float there, as ONNX Runtime does (it starts each
# window's max at -FLT_MAX and visits only x's elements), not -inf: a Mul
# by zero after it gives 0, not NaN (a MatMul after it gave NaN where ORT
# gave finite values, check-onnx-random seed 1959 m125).  A second MaxPool
# with ordinary padding keeps its maxima.  At -O0, -O2 and interpreted.
. "$srcdir/testsuite/cli/lib.inc"
"$PYTHON" - "$srcdir/testsuite/onnx" <<'EOF2' || fail "cannot write the model"
import os
import sys
sys.path.insert(0, sys.argv[1])
from make_hostile import attr_ints, model, node, tensor, value_info
import numpy as np
rng = np.random.default_rng(7)
xa = rng.uniform(-1, 1, (1, 2, 1, 4)).astype(np.float32)
xb = rng.uniform(-1, 1, (1, 2, 4, 5)).astype(np.float32)
zero = np.zeros((1,), np.float32)
nodes = [
    node("MaxPool", ["xa"], ["ya"], name="/a/MaxPool",
         attrs=[attr_ints("kernel_shape", [2, 1]), attr_ints("dilations", [2, 1]),
                attr_ints("pads", [1, 0, 1, 0])]),
    node("Mul", ["ya", "zero"], ["za"], name="/a/Mul"),
    node("MaxPool", ["xb"], ["yb"], name="/b/MaxPool",
         attrs=[attr_ints("kernel_shape", [3, 3]), attr_ints("pads", [1, 1, 1, 1])]),
]
inputs = [value_info("xa", [1, 2, 1, 4]), value_info("xb", [1, 2, 4, 5])]
outputs = [value_info("ya", [1, 2, 1, 4]), value_info("za", [1, 2, 1, 4]), value_info("yb", [1, 2, 4, 5])]
with open("m.onnx", "wb") as f:
    f.write(model(nodes, inputs, outputs, [tensor("zero", [1], zero.tobytes())], opset=11))
os.mkdir("in")
np.save("in/xa.npy", xa)
np.save("in/xb.npy", xb)
xp = np.pad(xb, [(0, 0), (0, 0), (1, 1), (1, 1)], constant_values=-np.inf)
yb = np.max([xp[:, :, i:i + 4, j:j + 5] for i in range(3) for j in range(3)], axis=0)
np.save("yb.npy", yb)
EOF2
in="--input xa=in/xa.npy --input xb=in/xb.npy"
for o in -O0 -O2 --interp; do
    expect_status 0 "$TEC" $o m.onnx $in --save-outputs out$o
    "$PYTHON" - out$o <<'PY' || fail "$o: wrong result"
import sys
import numpy as np
d = sys.argv[1]
ya, za, yb = (np.load("%s/%s.npy" % (d, n)) for n in ("ya", "za", "yb"))
assert (ya == np.finfo(np.float32).min).all(), ya
assert (za == 0).all(), za
assert (yb == np.load("yb.npy")).all(), (yb, np.load("yb.npy"))
PY
done
echo ok
