# Nodes that change nothing, and taps that read only padding, as exporters
# write them in models tec was not tuned on.  Identity, a Concat of one
# input (DenseNet's first dense layers), a Pad of zeros (DenseNet's
# transitions, before their AveragePool) and an AveragePool of a 1x1
# window at stride 1 (AlexNet's AdaptiveAvgPool2d to the size it has) are
# views of their input: no kernel copies it.  A 3x3 convolution at
# dilation 4, pad 4 on a 3x3 map (DeepLabV3's atrous rates beyond its
# map) reads x at its centre tap only: it is a 1x1 convolution of the
# centre weights; at dilation 1 it stays 3x3.  The results equal NumPy's
# at -O0 and -O2.
. "$srcdir/testsuite/cli/lib.inc"
"$PYTHON" - "$srcdir/testsuite/onnx" <<'EOF2' || fail "cannot write the model"
import os, sys
sys.path.insert(0, sys.argv[1])
from make_hostile import INT64, attr_ints, field, model, node, tensor, value_info
import numpy as np
rng = np.random.default_rng(5)
def init(name, a):
    return tensor(name, list(a.shape), a.astype(np.float32).tobytes())
def init64(name, a):
    return [field(1, d) for d in a.shape] + [field(2, INT64), field(8, name), field(9, a.tobytes())]
def attr_int(name, v):
    return [field(1, name), field(20, 2), field(3, v)]
C, F = 4, 6
wd = rng.uniform(-1, 1, (F, C, 3, 3)).astype(np.float32)
w1 = rng.uniform(-1, 1, (F, C, 3, 3)).astype(np.float32)
conv = lambda name, x, w, y, d: node("Conv", [x, w], [y], name=name, attrs=[
    attr_ints("kernel_shape", [3, 3]), attr_ints("pads", [d, d, d, d]),
    attr_ints("dilations", [d, d])])
nodes = [
    node("Relu", ["x"], ["r"], name="/relu/Relu"),
    node("Identity", ["r"], ["i"], name="/id/Identity"),
    node("Concat", ["i"], ["c"], name="/cat/Concat", attrs=[attr_int("axis", 1)]),
    node("Pad", ["c", "pads"], ["p"], name="/pool/Pad"),
    node("AveragePool", ["p"], ["a"], name="/pool/AveragePool",
         attrs=[attr_ints("kernel_shape", [1, 1]), attr_ints("strides", [1, 1])]),
    conv("/atrous/Conv", "a", "wd", "yd", 4),
    conv("/plain/Conv", "a", "w1", "y1", 1),
    node("Add", ["yd", "y1"], ["y"], name="/Add"),
]
with open("m.onnx", "wb") as f:
    f.write(model(nodes, [value_info("x", [1, C, 3, 3])], [value_info("y", [1, F, 3, 3])],
                  [init("wd", wd), init("w1", w1), init64("pads", np.zeros(8, np.int64))]))
x = rng.uniform(-1, 1, (1, C, 3, 3)).astype(np.float32)
np.save("x.npy", x)
r = np.maximum(x.astype(np.float64), 0)
yd = np.einsum("fc,nchw->nfhw", wd[:, :, 1, 1], r)
rp = np.pad(r, ((0, 0), (0, 0), (1, 1), (1, 1)))
y1 = sum(np.einsum("fc,nchw->nfhw", w1[:, :, i, j], rp[:, :, i:i + 3, j:j + 3])
         for i in range(3) for j in range(3))
os.mkdir("want")
np.save("want/y.npy", (yd + y1).astype(np.float32))
EOF2
expect_status 0 "$TEC" --emit=te m.onnx -o net.te
grep -q '^i = reshape(r, 1, 4, 3, 3) as "id.Identity"$' net.te &&
    grep -q '^c = reshape(i, 1, 4, 3, 3) as "cat.Concat"$' net.te &&
    grep -q '^p = reshape(c, 1, 4, 3, 3) as "pool.Pad"$' net.te &&
    grep -q '^a = reshape(p, 1, 4, 3, 3) as "pool.AveragePool"$' net.te &&
    ! grep -q -E '^def (copy|concat|pad|avgpool)' net.te ||
    { cat net.te; fail "a node that changes nothing is not a view"; }
grep -q '^yd = conv2d(a, 6, 1) as "atrous.Conv"$' net.te &&
    grep -q '^y1 = conv2d(a, 6, 3, pad=1) as "plain.Conv"$' net.te ||
    { cat net.te; fail "the taps that read only padding are not dropped (only those)"; }
for o in O0 O2; do
    expect_status 0 "$TEC" -$o m.onnx --input x=x.npy --save-outputs $o
    "$PYTHON" "$srcdir/testsuite/compare.py" want $o || fail "wrong result at -$o"
done
echo ok
