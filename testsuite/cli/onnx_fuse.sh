# The imported graph is what a .te author writes, so it optimizes alike: a
# Conv's bias is a layer of its own ("<layer>.bias"), which the fuse pass
# computes inside the convolution's tile with the activation and residual
# add after it (a .te model's conv2d -> batchnorm -> relu6), and PyTorch's
# SiLU, Mul(x, Sigmoid(x)) with the Sigmoid read by that Mul alone, is one
# call of nn.te's silu (either operand order), while a Sigmoid read by
# others stays a layer; Clip(0, 6) is relu6; the result equals NumPy's at
# -O0 and -O2.
. "$srcdir/testsuite/cli/lib.inc"
"$PYTHON" - "$srcdir/testsuite/onnx" <<'EOF2' || fail "cannot write the model"
import struct, sys
sys.path.insert(0, sys.argv[1])
from make_hostile import attr_ints, field, model, node, tensor, value_info
import numpy as np
rng = np.random.default_rng(1)
def init(name, a):
    a = np.asarray(a, np.float32)
    return tensor(name, list(a.shape), a.tobytes())
w1 = rng.uniform(-0.5, 0.5, (16, 8, 3, 3)).astype(np.float32)
b1 = rng.uniform(-1, 1, 16).astype(np.float32)
w2 = rng.uniform(-0.5, 0.5, (16, 16, 1, 1)).astype(np.float32)
b2 = rng.uniform(-1, 1, 16).astype(np.float32)
nodes = [
    node("Conv", ["x", "w1", "b1"], ["c1"], name="/c1/Conv", attrs=[attr_ints("pads", [1, 1, 1, 1])]),
    node("Sigmoid", ["c1"], ["s1"], name="/act1/Sigmoid"),
    node("Mul", ["c1", "s1"], ["m1"], name="/act1/Mul"),
    node("Conv", ["m1", "w2", "b2"], ["c2"], name="/c2/Conv"),
    node("Clip", ["c2", "lo", "hi"], ["r2"], name="/c2/Clip"),
    node("Add", ["r2", "m1"], ["a"], name="/Add"),
    node("Sigmoid", ["a"], ["s2"], name="/act2/Sigmoid"),
    node("Mul", ["s2", "a"], ["m2"], name="/act2/Mul"),
    node("Sigmoid", ["m2"], ["s3"], name="/gate/Sigmoid"),
    node("Mul", ["m2", "s3"], ["g"], name="/gate/Mul"),
    node("Add", ["g", "s3"], ["y"], name="/out/Add"),
]
inits = [init("w1", w1), init("b1", b1), init("w2", w2), init("b2", b2),
         init("lo", np.float32(0)), init("hi", np.float32(6))]
with open("m.onnx", "wb") as f:
    f.write(model(nodes, [value_info("x", [1, 8, 12, 12])], [value_info("y", [1, 16, 12, 12])],
                  inits))
x = rng.uniform(-1, 1, (1, 8, 12, 12)).astype(np.float32)
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
sig = lambda v: 1 / (1 + np.exp(-v))
c1 = conv(x, w1, b1, 1)
m1 = c1 * sig(c1)
a = np.clip(conv(m1, w2, b2, 0), 0, 6) + m1
m2 = a * sig(a)
np.save("want.npy", m2 * sig(m2) + sig(m2))
EOF2
expect_status 0 "$TEC" --emit=te m.onnx -o net.te --save-weights w
[ -f w/c1.Conv.weight.npy ] && [ -f w/c1.Conv.bias.bias.npy ] || { ls w; fail "weights not named <layer>.weight and <layer>.bias.bias"; }
grep -q '^c1_conv = conv2d(x, 16, 3, pad=1) as "c1.Conv"$' net.te &&
    grep -q '^c1 = bias_1(c1_conv) as "c1.Conv.bias"$' net.te &&
    ! grep -q 'has_bias' net.te || { cat net.te; fail "the Conv's bias is not a layer of its own"; }
grep -q '^r2 = relu6(c2) as "c2.Clip"$' net.te || { cat net.te; fail "Clip(0, 6) is not relu6"; }
grep -q '^m1 = silu(c1) as "act1.Mul"$' net.te &&
    grep -q '^m2 = silu(a) as "act2.Mul"$' net.te &&
    ! grep -q 'act[12].Sigmoid' net.te || { cat net.te; fail "x * sigmoid(x) is not silu"; }
grep -q '^s3 = sigmoid(m2) as "gate.Sigmoid"$' net.te &&
    grep -q "^g = mul(m2, s3) as \"gate.Mul\"$" net.te ||
    { cat net.te; fail "a Sigmoid read twice is not a layer of its own"; }
# -O2 computes the bias, SiLU, Clip and Add inside the convolutions' tiles
expect_status 0 "$TEC" -O2 --profile m.onnx --input x=x.npy --save-outputs o2
grep -q '^c1.Conv+Conv.bias+act1.Mul  *fused' out &&
    grep -q '^c2.Conv+Conv.bias+Clip+Add+act2.Mul  *fused' out ||
    { cat out; fail "the bias and what follows it are not fused into the convolution"; }
expect_status 0 "$TEC" -O0 m.onnx --input x=x.npy --save-outputs o0
expect_status 0 "$TEC" -O0 net.te --weights w --input x=x.npy --save-outputs ote
cmp o0/y.npy ote/y.npy || fail "the --emit=te program with --save-weights differs from the model"
"$PYTHON" -c "
import numpy as np, sys
want = np.load('want.npy')
for d in ('o0', 'o2'):
    got = np.load(d + '/y.npy')
    if got.shape != want.shape or np.max(np.abs(got - want)) > 1e-5 * max(1, np.max(np.abs(want))):
        print(d, np.max(np.abs(got - want))); sys.exit(1)" || fail "wrong result"
echo ok
