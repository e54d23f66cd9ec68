# PyTorch's Hardswish as exported at opset 13, Mul(x, HardSigmoid(x)) with
# the HardSigmoid read by that Mul alone, is one elementwise kernel
# (`hardswish`, either operand order, any alpha and beta), which -O2 fuses
# into the convolution that computes x, as SiLU is one silu; a
# HardSigmoid read by others (a squeeze-and-excitation gate) stays a layer
# of its own.  The result equals NumPy's at -O0 and -O2.
. "$srcdir/testsuite/cli/lib.inc"
"$PYTHON" - "$srcdir/testsuite/onnx" <<'EOF2' || fail "cannot write the model"
import struct, sys
sys.path.insert(0, sys.argv[1])
from make_hostile import attr_ints, field, model, node, tensor, value_info, varint
import numpy as np
rng = np.random.default_rng(3)
def init(name, a):
    a = np.asarray(a, np.float32)
    return tensor(name, list(a.shape), a.tobytes())
def attr_float(name, v):   # AttributeProto: name, f (fixed32), type FLOAT
    return [field(1, name), varint(2 << 3 | 5) + struct.pack("<f", v), field(20, 1)]
w1 = rng.uniform(-0.5, 0.5, (16, 8, 3, 3)).astype(np.float32)
b1 = rng.uniform(-1, 1, 16).astype(np.float32)
w2 = rng.uniform(-0.5, 0.5, (16, 16, 1, 1)).astype(np.float32)
b2 = rng.uniform(-1, 1, 16).astype(np.float32)
nodes = [
    node("Conv", ["x", "w1", "b1"], ["c1"], name="/c1/Conv", attrs=[attr_ints("pads", [1, 1, 1, 1])]),
    node("HardSigmoid", ["c1"], ["h1"], name="/act1/HardSigmoid",
         attrs=[attr_float("alpha", 1 / 6), attr_float("beta", 0.5)]),
    node("Mul", ["c1", "h1"], ["m1"], name="/act1/Mul"),
    node("Conv", ["m1", "w2", "b2"], ["c2"], name="/c2/Conv"),
    node("HardSigmoid", ["c2"], ["h2"], name="/act2/HardSigmoid",
         attrs=[attr_float("alpha", 0.25), attr_float("beta", 0.375)]),
    node("Mul", ["h2", "c2"], ["m2"], name="/act2/Mul"),
    node("HardSigmoid", ["m2"], ["h3"], name="/gate/HardSigmoid"),
    node("Mul", ["m2", "h3"], ["g"], name="/gate/Mul"),
    node("Add", ["g", "h3"], ["y"], name="/out/Add"),
]
inits = [init("w1", w1), init("b1", b1), init("w2", w2), init("b2", b2)]
with open("m.onnx", "wb") as f:
    f.write(model(nodes, [value_info("x", [1, 8, 12, 12])], [value_info("y", [1, 16, 12, 12])],
                  inits))
x = rng.uniform(-4, 4, (1, 8, 12, 12)).astype(np.float32)
np.save("x.npy", x)
def conv(x, w, b, pad):
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    F, C, R, S = w.shape
    H, W = x.shape[2], x.shape[3]
    y = np.zeros((1, F, H, W))
    for r in range(R):
        for s in range(S):
            y += np.einsum("fc,nchw->nfhw", w[:, :, r, s], xp[:, :, r:r + H, s:s + W])
    return y + b[None, :, None, None]
hs = lambda v, a, b: np.clip(a * v + b, 0, 1)
c1 = conv(x, w1, b1, 1)
m1 = c1 * hs(c1, np.float32(1 / 6), 0.5)
c2 = conv(m1, w2, b2, 0)
m2 = c2 * hs(c2, 0.25, 0.375)
h3 = hs(m2, 0.2, 0.5)
np.save("want.npy", m2 * h3 + h3)
EOF2
expect_status 0 "$TEC" --emit=te m.onnx -o net.te
grep -q '^m1 = hardswish_[0-9]*(c1) as "act1.Mul"$' net.te &&
    grep -q '^m2 = hardswish_[0-9]*(c2) as "act2.Mul"$' net.te &&
    ! grep -q 'act[12].HardSigmoid' net.te || { cat net.te; fail "x * hardsigmoid(x) is not one hardswish"; }
grep -q '^    y\[i0, i1, i2, i3\] = x\[i0, i1, i2, i3\] \* max(0, min(1, 0.25 \* x\[i0, i1, i2, i3\] + 0.375))$' net.te ||
    { cat net.te; fail "the HardSigmoid's alpha and beta are not the kernel's"; }
grep -q '^h3 = hardsigmoid_[0-9]*(m2) as "gate.HardSigmoid"$' net.te &&
    grep -q '^g = mul[_0-9]*(m2, h3) as "gate.Mul"$' net.te ||
    { cat net.te; fail "a HardSigmoid read twice is not a layer of its own"; }
# -O2 computes the bias and the hardswish inside the convolutions' tiles
expect_status 0 "$TEC" -O2 --profile m.onnx --input x=x.npy --save-outputs o2
grep -q '^c1.Conv+Conv.bias+act1.Mul  *fused' out &&
    grep -q '^c2.Conv+Conv.bias+act2.Mul' out ||
    { cat out; fail "the hardswish is not fused into the convolution"; }
expect_status 0 "$TEC" -O0 m.onnx --input x=x.npy --save-outputs o0
"$PYTHON" -c "
import numpy as np, sys
want = np.load('want.npy')
for d in ('o0', 'o2'):
    got = np.load(d + '/y.npy')
    if got.shape != want.shape or np.max(np.abs(got - want)) > 1e-5 * max(1, np.max(np.abs(want))):
        print(d, np.max(np.abs(got - want))); sys.exit(1)" || fail "wrong result"
echo ok
