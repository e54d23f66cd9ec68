# A float MaxPool window that lies wholly in the padding (dilated taps
# that step over a one-row input) gives the dtype's lowest finite value,
# as ONNX Runtime gives (it starts each window at lowest() and visits only
# the input's elements): -FLT_MAX in f32, -DBL_MAX in f64, -65504 in f16.
# Such windows gave -inf, and a MatMul after the pool NaN (check_onnx_random
# seed 1959 m125, whose MaxPool "a" is here; bench/results/review_s19_late.txt).
# Pool "b" has windows partly in the padding, whose maximum is that of
# their elements of x.  The pools equal NumPy's exactly, the MatMul within
# 1e-4, at -O0, -O2, -O3 and in the interpreter.
. "$srcdir/testsuite/cli/lib.inc"
"$PYTHON" - "$srcdir/testsuite/onnx" <<'EOF2' || fail "cannot write the model"
import os
import sys
sys.path.insert(0, sys.argv[1])
from make_hostile import array_tensor, attr_ints, model, node, value_info
import numpy as np
rng = np.random.default_rng(1959)
ELEM = {np.float32: 1, np.float64: 11, np.float16: 10}


def maxpool(x, k, dil, pads, strides):
    """ONNX Runtime's MaxPool: the largest element of x in each window, or
    the dtype's lowest finite value where the window holds none."""
    nsp = x.ndim - 2
    low = np.finfo(x.dtype).min
    xp = np.pad(x, [(0, 0), (0, 0)] + [(pads[d], pads[nsp + d]) for d in range(nsp)],
                constant_values=-np.inf)
    out = [(xp.shape[2 + d] - dil[d] * (k[d] - 1) - 1) // strides[d] + 1 for d in range(nsp)]
    y = np.full(x.shape[:2] + tuple(out), low, x.dtype)
    for tap in np.ndindex(*k):
        win = tuple(slice(tap[d] * dil[d], tap[d] * dil[d] + (out[d] - 1) * strides[d] + 1, strides[d])
                    for d in range(nsp))
        y = np.maximum(y, xp[(slice(None), slice(None)) + win])
    return y


specs = [  # name, dtype, x shape, kernel, dilations, pads, strides, MatMul weight columns
    ("a", np.float32, [1, 2, 1, 8, 4], [2, 1, 1], [2, 1, 2], [1, 0, 0, 1, 0, 0], [1, 2, 3], 3),
    ("b", np.float32, [1, 3, 3, 5], [2, 2], [3, 1], [1, 0, 1, 1], [1, 2], 0),
    ("c", np.float64, [1, 2, 1, 6], [2, 3], [2, 1], [1, 1, 1, 1], [1, 2], 0),
    ("d", np.float16, [1, 2, 1, 6], [2, 3], [2, 1], [1, 1, 1, 1], [1, 2], 0),
]
nodes, inputs, outputs, inits = [], [], [], []
os.mkdir("in")
os.mkdir("want")
for name, dt, xs, k, dil, pads, strides, cols in specs:
    x = rng.uniform(-1, 1, xs).astype(dt)
    y = maxpool(x, k, dil, pads, strides)
    nodes.append(node("MaxPool", ["x" + name], ["y" + name], name="/%s/MaxPool" % name,
                      attrs=[attr_ints("kernel_shape", k), attr_ints("dilations", dil),
                             attr_ints("pads", pads), attr_ints("strides", strides)]))
    inputs.append(value_info("x" + name, xs, ELEM[dt]))
    outputs.append(value_info("y" + name, list(y.shape), ELEM[dt]))
    np.save("in/x%s.npy" % name, x)
    np.save("want/y%s.npy" % name, y)
    if cols:
        # small weights keep -FLT_MAX * w finite; -inf * w of mixed signs sums to NaN
        w = (rng.uniform(-1, 1, (y.shape[-1], cols)) * 1e-30).astype(dt)
        inits.append(array_tensor("w" + name, w, ELEM[dt]))
        nodes.append(node("MatMul", ["y" + name, "w" + name], ["z" + name], name="/%s/MatMul" % name))
        z = y.astype(np.float64) @ w.astype(np.float64)
        outputs.append(value_info("z" + name, list(z.shape), ELEM[dt]))
        np.save("want/z%s.npy" % name, z.astype(dt))
with open("m.onnx", "wb") as f:
    f.write(model(nodes, inputs, outputs, inits, opset=11))
EOF2
in=$(for v in a b c d; do printf -- "--input x%s=in/x%s.npy " $v $v; done)
for mode in -O0 -O2 -O3 --interp; do
    expect_status 0 "$TEC" $mode m.onnx $in --save-outputs "o$mode"
    "$PYTHON" - "o$mode" <<'PY' || fail "$mode: a MaxPool differs from ONNX Runtime's"
import sys
import numpy as np
got = sys.argv[1]
for v in "abcd":
    w, g = np.load("want/y%s.npy" % v), np.load("%s/y%s.npy" % (got, v))
    assert w.dtype == g.dtype and w.shape == g.shape, (v, g.dtype, g.shape)
    assert np.array_equal(w, g), (v, w.ravel()[:8], g.ravel()[:8])
w, g = np.load("want/za.npy").astype(np.float64), np.load("%s/za.npy" % got).astype(np.float64)
assert np.all(np.isfinite(g)) and np.max(np.abs(g - w)) <= 1e-4 * np.max(np.abs(w)), (w, g)
PY
done
echo ok
