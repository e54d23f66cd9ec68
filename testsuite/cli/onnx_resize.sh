# Resize as PyTorch exports F.interpolate (segmentation heads: LRASPP,
# DeepLabV3, FCN): bilinear with half_pixel coordinates by scales, nearest
# (round_prefer_floor) by sizes, and bilinear with align_corners; each
# equals NumPy's interpolation (written here from the formulas, a clamped
# read at the edges) at -O0 and -O2; an axis of one position made longer
# holds copies of it (below).  A mode tec does not have and scales
# given with sizes are errors naming the node.
. "$srcdir/testsuite/cli/lib.inc"
"$PYTHON" - "$srcdir/testsuite/onnx" <<'EOF2' || fail "cannot write the models"
import os, sys
sys.path.insert(0, sys.argv[1])
from make_hostile import FLOAT, INT64, field, model, node, value_info
import numpy as np
def const(name, a, elem=FLOAT):
    return [field(1, d) for d in a.shape] + [field(2, elem), field(8, name), field(9, a.tobytes())]
def sattr(name, s):
    return [field(1, name), field(4, s), field(20, 3)]
empty = const("none", np.zeros(0, np.float32))
scales = const("scales", np.array([1, 1, 2, 1.5], np.float32))
sizes = const("sizes", np.array([1, 2, 5, 7], np.int64), INT64)
x_info = [value_info("x", [1, 2, 3, 4])]
def write(path, nodes, out_shape, inits):
    with open(path, "wb") as f:
        f.write(model(nodes, x_info, [value_info("y", out_shape)], inits))
write("linear.onnx", [node("Resize", ["x", "none", "scales"], ["y"], name="r",
                           attrs=[sattr("mode", "linear")])], [1, 2, 6, 6], [empty, scales])
write("nearest.onnx", [node("Resize", ["x", "none", "none", "sizes"], ["y"], name="r")],
      [1, 2, 5, 7], [empty, sizes])
write("corners.onnx", [node("Resize", ["x", "none", "none", "sizes"], ["y"], name="r",
                            attrs=[sattr("mode", "linear"),
                                   sattr("coordinate_transformation_mode", "align_corners")])],
      [1, 2, 5, 7], [empty, sizes])
write("area.onnx", [node("Resize", ["x", "none", "scales"], ["y"], name="r",
                         attrs=[sattr("mode", "area")])], [1, 2, 6, 6], [empty, scales])
write("both.onnx", [node("Resize", ["x", "none", "scales", "sizes"], ["y"], name="r")],
      [1, 2, 6, 6], [empty, scales, sizes])
rng = np.random.default_rng(3)
x = rng.uniform(-1, 1, (1, 2, 3, 4)).astype(np.float32)
np.save("x.npy", x)
def coords(n_in, n_out, mode):
    o = np.arange(n_out, dtype=np.float64)
    if mode == "corners":
        return o * (n_in - 1) / (n_out - 1)
    return (o + 0.5) * n_in / n_out - 0.5
def linear(x, h_out, w_out, mode):
    def axis(n_in, n_out):
        c = coords(n_in, n_out, mode)
        f = np.floor(c)
        return (np.clip(f, 0, n_in - 1).astype(int), np.clip(f + 1, 0, n_in - 1).astype(int),
                c - f)
    h0, h1, lh = axis(x.shape[2], h_out)
    w0, w1, lw = axis(x.shape[3], w_out)
    x = x.astype(np.float64)
    rows = x[:, :, h0, :] * (1 - lh)[:, None] + x[:, :, h1, :] * lh[:, None]
    return rows[:, :, :, w0] * (1 - lw) + rows[:, :, :, w1] * lw
def nearest(x, h_out, w_out):
    def axis(n_in, n_out):
        c = coords(n_in, n_out, "half")
        f = np.floor(c)
        return np.clip(np.where(c - f > 0.5, f + 1, f), 0, n_in - 1).astype(int)
    return x[:, :, axis(x.shape[2], h_out)][:, :, :, axis(x.shape[3], w_out)]
# An axis of one position made longer (a 1-wide map upsampled): every
# output position reads that one with weights that sum to 1, so each is a
# copy of it, bit for bit, in every mode, as ONNX Runtime gives it (a sum
# of its products by the weights rounded apart from it and from one
# another, 0x1.72c62c vs 0x1.72c62a, and an ArgMax over the copies found
# no tie); the other axis is interpolated as before.
scales3 = const("scales", np.array([1, 1, 2, 3], np.float32))
for mode in ("linear", "cubic", "nearest"):
    attrs = [sattr("mode", mode), sattr("coordinate_transformation_mode", "pytorch_half_pixel")]
    with open("one-%s.onnx" % mode, "wb") as f:
        f.write(model([node("Resize", ["x", "none", "scales"], ["y"], name="r", attrs=attrs)],
                      [value_info("x", [1, 2, 3, 1])], [value_info("y", [1, 2, 6, 3])],
                      [empty, scales3]))
np.save("x1.npy", x[:, :, :, :1])
os.makedirs("want-one")
np.save("want-one/y.npy", np.repeat(linear(x[:, :, :, :1], 6, 1, "half"), 3, axis=3).astype(np.float32))
for name, y in (("linear", linear(x, 6, 6, "half")), ("nearest", nearest(x, 5, 7)),
                ("corners", linear(x, 5, 7, "corners"))):
    os.makedirs("want-" + name)
    np.save("want-%s/y.npy" % name, y.astype(np.float32))
EOF2
for m in linear nearest corners; do
    expect_status 0 "$TEC" --emit=te $m.onnx -o $m.te
    # the taps' indices: a table, or arithmetic of the position where it is exact
    grep -q -e 'state ix2_0: i32\[' -e 'min(max(' $m.te || { cat $m.te; fail "$m: no indices"; }
    for o in O0 O2; do
        expect_status 0 "$TEC" -$o $m.onnx --input x=x.npy --save-outputs $m-$o
        "$PYTHON" "$srcdir/testsuite/compare.py" want-$m $m-$o || fail "$m at -$o differs"
    done
done
for mode in linear cubic nearest; do
    for o in O0 O2; do
        expect_status 0 "$TEC" -$o one-$mode.onnx --input x=x1.npy --save-outputs one-$mode-$o
        "$PYTHON" - one-$mode-$o/y.npy <<'EOF' || fail "one-$mode at -$o"
import sys
import numpy as np
y = np.load(sys.argv[1])
assert y.shape == (1, 2, 6, 3), y.shape
for j in (1, 2):
    assert (y[..., j] == y[..., 0]).all(), f"column {j} is not column 0: {y[..., j] - y[..., 0]}"
EOF
    done
done
"$PYTHON" "$srcdir/testsuite/compare.py" want-one one-linear-O2 || fail "one-linear differs"
expect_status 1 "$TEC" area.onnx
expect_err "area.onnx: error: node 'r' (Resize, opset 13): mode 'area' is not supported (nearest, linear and cubic)"
expect_status 1 "$TEC" both.onnx
expect_err "both.onnx: error: node 'r' (Resize, opset 13): give either scales or sizes (both are given)"
echo ok
