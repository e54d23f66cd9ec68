# GridSample (F.grid_sample at opset 16: spatial transformers, optical
# flow; it was refused): bilinear and nearest, zeros and border padding,
# align_corners 0 and 1, grid points beyond [-1, 1], exactly on the
# corners and at a tie of nearest's rounding (to even); equal to NumPy's at
# -O0 and -O2, one model per combination.  bicubic is refused by name.
. "$srcdir/testsuite/cli/lib.inc"
"$PYTHON" - "$srcdir/testsuite/onnx" <<'EOF2' || fail "cannot write the models"
import itertools, os, sys
sys.path.insert(0, sys.argv[1])
from make_hostile import field, model, node, value_info
import numpy as np
rng = np.random.default_rng(3)
def attr_str(name, v):
    return [field(1, name), field(20, 3), field(4, v)]
def attr_int(name, v):
    return [field(1, name), field(20, 2), field(3, v)]
def grid_sample(x, g, mode, pad, corners):
    n, c, H, W = x.shape
    y = np.zeros((n, c) + g.shape[1:3])
    def coord(v, size):
        p = (v + 1) / 2 * (size - 1) if corners else ((v + 1) * size - 1) / 2
        return np.clip(p, 0, size - 1) if pad == "border" else p
    def at(b, yy, xx):
        return x[b, :, yy, xx] if 0 <= yy < H and 0 <= xx < W else np.zeros(c)
    for b, h, w in np.ndindex(n, *g.shape[1:3]):
        px, py = coord(g[b, h, w, 0], W), coord(g[b, h, w, 1], H)
        if mode == "nearest":
            y[b, :, h, w] = at(b, int(np.rint(py)), int(np.rint(px)))
            continue
        x0, y0 = int(np.floor(px)), int(np.floor(py))
        fx, fy = px - x0, py - y0
        y[b, :, h, w] = ((1 - fy) * (1 - fx) * at(b, y0, x0) + (1 - fy) * fx * at(b, y0, x0 + 1) +
                         fy * (1 - fx) * at(b, y0 + 1, x0) + fy * fx * at(b, y0 + 1, x0 + 1))
    return y.astype(np.float32)
x = rng.standard_normal((2, 3, 5, 6)).astype(np.float32)
g = rng.uniform(-1.3, 1.3, (2, 4, 3, 2)).astype(np.float32)
# the corners, and the centre: x at pixel 2.5 of 6 (both alignments), a tie rint rounds to 2
g[0, 0, 0], g[0, 0, 1], g[1, 1, 1] = (1, -1), (-1, 1), (0, 0)
np.save("x.npy", x)
np.save("g.npy", g)
for mode, pad, corners in itertools.product(("bilinear", "nearest"), ("zeros", "border"), (0, 1)):
    name = "%s_%s_%d" % (mode, pad, corners)
    y = grid_sample(x.astype(np.float64), g.astype(np.float64), mode, pad, corners)
    with open(name + ".onnx", "wb") as f:
        f.write(model([node("GridSample", ["x", "g"], ["y"], name="sample", attrs=[
                          attr_str("mode", mode), attr_str("padding_mode", pad),
                          attr_int("align_corners", corners)])],
                      [value_info("x", list(x.shape)), value_info("g", list(g.shape))],
                      [value_info("y", list(y.shape))], opset=16))
    os.makedirs(name + ".ref")
    np.save(name + ".ref/y.npy", y)
with open("bicubic.onnx", "wb") as f:
    f.write(model([node("GridSample", ["x", "g"], ["y"], name="sample",
                        attrs=[attr_str("mode", "bicubic")])],
                  [value_info("x", list(x.shape)), value_info("g", list(g.shape))],
                  [value_info("y", [2, 3, 4, 3])], opset=16))
EOF2
for m in bilinear_zeros_0 bilinear_zeros_1 bilinear_border_0 bilinear_border_1 \
         nearest_zeros_0 nearest_zeros_1 nearest_border_0 nearest_border_1; do
    for o in O0 O2; do
        expect_status 0 "$TEC" -$o $m.onnx --input x=x.npy --input g=g.npy --save-outputs $m.$o
        "$PYTHON" "$srcdir/testsuite/compare.py" $m.ref $m.$o || fail "$m: wrong result at -$o"
    done
done
expect_status 1 "$TEC" bicubic.onnx
expect_err "bicubic.onnx: error: node 'sample' (GridSample, opset 16): mode 'bicubic' is not supported (bilinear, linear and nearest are)"
echo ok
