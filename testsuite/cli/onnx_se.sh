# Squeeze-and-excitation as PyTorch exports it (EfficientNet, MobileNetV3,
# RegNetY): GlobalAveragePool, a 1x1 Conv with bias on the 1x1 map, SiLU,
# another, Sigmoid, and Mul by the block's input.  Each Conv on the 1x1 map
# is one kernel `fc_N` (t[n, f] += x * weight; y = t + bias), as a .te model
# writes the fully connected layers, so that -O2 computes the SiLU and the
# Sigmoid after them in their kernels (the .te model's kernels); its params
# are <layer>.weight and <layer>.bias; the result equals NumPy's at -O0
# and -O2.
. "$srcdir/testsuite/cli/lib.inc"
"$PYTHON" - "$srcdir/testsuite/onnx" <<'EOF2' || fail "cannot write the model"
import sys
sys.path.insert(0, sys.argv[1])
from make_hostile import model, node, tensor, value_info
import numpy as np
rng = np.random.default_rng(2)
def init(name, a):
    a = np.asarray(a, np.float32)
    return tensor(name, list(a.shape), a.tobytes())
C, S = 48, 12
w1 = rng.uniform(-0.3, 0.3, (S, C, 1, 1)).astype(np.float32)
b1 = rng.uniform(-1, 1, S).astype(np.float32)
w2 = rng.uniform(-0.3, 0.3, (C, S, 1, 1)).astype(np.float32)
b2 = rng.uniform(-1, 1, C).astype(np.float32)
nodes = [
    node("GlobalAveragePool", ["x"], ["p"], name="/se/avgpool/GlobalAveragePool"),
    node("Conv", ["p", "w1", "b1"], ["f1"], name="/se/fc1/Conv"),
    node("Sigmoid", ["f1"], ["s1"], name="/se/activation/Sigmoid"),
    node("Mul", ["f1", "s1"], ["a"], name="/se/activation/Mul"),
    node("Conv", ["a", "w2", "b2"], ["f2"], name="/se/fc2/Conv"),
    node("Sigmoid", ["f2"], ["g"], name="/se/scale_activation/Sigmoid"),
    node("Mul", ["g", "x"], ["y"], name="/se/Mul"),
]
with open("m.onnx", "wb") as f:
    f.write(model(nodes, [value_info("x", [1, C, 7, 7])], [value_info("y", [1, C, 7, 7])],
                  [init("w1", w1), init("b1", b1), init("w2", w2), init("b2", b2)]))
x = rng.uniform(-1, 1, (1, C, 7, 7)).astype(np.float32)
np.save("x.npy", x)
sig = lambda v: 1 / (1 + np.exp(-v))
p = x.astype(np.float64).mean(axis=(2, 3))
f1 = p @ w1[:, :, 0, 0].T + b1
g = sig((f1 * sig(f1)) @ w2[:, :, 0, 0].T + b2)
import os
os.mkdir("want")
np.save("want/y.npy", (x * g[:, :, None, None]).astype(np.float32))
EOF2
expect_status 0 "$TEC" --emit=te m.onnx -o net.te --save-weights w
grep -q '^f1 = fc_1(p) as "se.fc1.Conv"$' net.te &&
    grep -q '^f2 = fc_2(a) as "se.fc2.Conv"$' net.te &&
    grep -q '^    t\[n, f\] += x\[n, c, 0, 0\] \* weight\[f, c, 0, 0\]$' net.te &&
    grep -q '^    y\[n, f, o0, o1\] = t\[n, f\] + bias\[f\]$' net.te &&
    ! grep -q 'conv2d' net.te || { cat net.te; fail "a Conv on the 1x1 map is not one fc kernel"; }
[ -f w/se.fc1.Conv.weight.npy ] && [ -f w/se.fc1.Conv.bias.npy ] ||
    { ls w; fail "the fc kernel's params are not <layer>.weight and <layer>.bias"; }
expect_status 0 "$TEC" -O2 --profile m.onnx --input x=x.npy --save-outputs o2
grep -q '^ *se.fc1.Conv+activation.Mul  *fused' out &&
    grep -q '^ *se.fc2.Conv+scale_activation.Sigmoid  *fused' out ||
    { cat out; fail "the activations are not computed in the fc kernels"; }
expect_status 0 "$TEC" -O0 m.onnx --input x=x.npy --save-outputs o0
expect_status 0 "$TEC" -O0 net.te --weights w --input x=x.npy --save-outputs ote
cmp o0/y.npy ote/y.npy || fail "the --emit=te program with --save-weights differs from the model"
for d in o0 o2; do
    "$PYTHON" "$srcdir/testsuite/compare.py" want $d || fail "wrong result in $d"
done
echo ok
