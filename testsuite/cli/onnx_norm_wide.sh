# Normalizations over many elements sum their mean and variance in 64
# lanes of partial sums (one long axis) or in f64 (several axes): summed
# into one f32 number an InstanceNormalization over 200,704 elements
# (PyTorch's export of GroupNorm(1, 64) on 56x56 maps, as PoolFormer's and
# Conv-TasNet's global layer norm) was off by 2-3e-5 of the output's range
# (ONNX Runtime: 1e-6; NumPy's f64 here).  in.onnx: that
# InstanceNormalization (in lanes), its input offset by 3 (the variance's
# cancellation); in2.onnx: one over 160 x 128 maps (lanes along the rows of
# 128); in3.onnx: over 150 x 150 (rows no multiple of 64: f64); gn.onnx: a
# GroupNormalization
# (opset 18) of 2 groups over 16 x 48 x 48 each; ln.onnx: a
# LayerNormalization over the last three axes (32,768 elements).  Each
# within 1e-6 of NumPy at -O0 and -O2.  A layer norm over 512 channels keeps
# its f32 kernel (the row kernels' schedules know it).
. "$srcdir/testsuite/cli/lib.inc"
"$PYTHON" - "$srcdir/testsuite/onnx" <<'EOF2' || fail "cannot write the models"
import os, sys
sys.path.insert(0, sys.argv[1])
from make_hostile import FLOAT, array_tensor, field, model, node, value_info
import numpy as np
rng = np.random.default_rng(27)
def attr_int(name, v):
    return [field(1, name), field(20, 2), field(3, v)]
def norm(x, axes, eps=1e-5):
    x = x.astype(np.float64)
    m = x.mean(axes, keepdims=True)
    return (x - m) / np.sqrt(((x - m) ** 2).mean(axes, keepdims=True) + eps)
def save(name, nodes, x, y, inits, opset):
    with open(name + ".onnx", "wb") as f:
        f.write(model(nodes, [value_info("x", list(x.shape))], [value_info("y", list(y.shape))],
                      inits, opset=opset))
    np.save(name + "_x.npy", x)
    os.mkdir("ref_" + name)
    np.save("ref_%s/y.npy" % name, y)

x = (rng.standard_normal((1, 1, 200704)) + 3).astype(np.float32)
s, b = np.array([1.5], np.float32), np.array([0.25], np.float32)
save("in", [node("InstanceNormalization", ["x", "s", "b"], ["y"])], x, norm(x, 2) * 1.5 + 0.25,
     [array_tensor("s", s, FLOAT), array_tensor("b", b, FLOAT)], 13)

for name, shape in (("in2", (1, 2, 160, 128)), ("in3", (1, 2, 150, 150))):
    x = (rng.standard_normal(shape) * 2 + 5).astype(np.float32)
    s, b = np.array([1.0, 0.5], np.float32), np.array([0.0, 1.0], np.float32)
    y = norm(x, (2, 3)) * s[None, :, None, None] + b[None, :, None, None]
    save(name, [node("InstanceNormalization", ["x", "s", "b"], ["y"])], x, y,
         [array_tensor("s", s, FLOAT), array_tensor("b", b, FLOAT)], 13)

x = (rng.standard_normal((1, 32, 48, 48)) - 2).astype(np.float32)
s, b = np.array([0.5, 2.0], np.float32), np.array([1.0, -1.0], np.float32)
y = norm(x.reshape(1, 2, 16 * 48 * 48), 2).reshape(x.shape)
y = y * np.repeat(s, 16)[None, :, None, None] + np.repeat(b, 16)[None, :, None, None]
save("gn", [node("GroupNormalization", ["x", "s", "b"], ["y"], attrs=[attr_int("num_groups", 2)])],
     x, y, [array_tensor("s", s, FLOAT), array_tensor("b", b, FLOAT)], 18)

x = (rng.standard_normal((2, 8, 64, 64)) + 1).astype(np.float32)
s, b = rng.standard_normal((8, 64, 64)).astype(np.float32), np.zeros((8, 64, 64), np.float32)
save("ln", [node("LayerNormalization", ["x", "s", "b"], ["y"], attrs=[attr_int("axis", 1)])],
     x, norm(x, (1, 2, 3)) * s, [array_tensor("s", s, FLOAT), array_tensor("b", b, FLOAT)], 17)

x = rng.standard_normal((1, 4, 512)).astype(np.float32)
s, b = np.ones(512, np.float32), np.zeros(512, np.float32)
save("ln512", [node("LayerNormalization", ["x", "s", "b"], ["y"], attrs=[attr_int("axis", -1)])],
     x, norm(x, 2), [array_tensor("s", s, FLOAT), array_tensor("b", b, FLOAT)], 17)
EOF2
for m in in in2 in3 gn ln; do
    for mode in -O0 -O2; do
        expect_status 0 "$TEC" $mode $m.onnx --input x=${m}_x.npy --save-outputs o_$m$mode
        "$PYTHON" - ref_$m/y.npy o_$m$mode/y.npy <<'EOF2' || fail "$m $mode: not within 1e-6"
import sys
import numpy as np
e, g = np.load(sys.argv[1]), np.load(sys.argv[2])
err = np.abs(g.astype(np.float64) - e).max() / np.abs(e).max()
print(sys.argv[2], "max relative error %.3g" % err)
sys.exit(0 if err <= 1e-6 else 1)
EOF2
    done
done
expect_status 0 "$TEC" --emit=te in.onnx
grep -q 'part\[i0, i1, l\] += x\[i0, i1, r2 \* 64 + l\] where l in 0..64, r2 in 0..3136$' out ||
    { cat out; fail "the InstanceNormalization is not summed in lanes"; }
expect_status 0 "$TEC" --emit=te in2.onnx
grep -q 'part\[i0, i1, l\] += x\[i0, i1, r2, r3 \* 64 + l\] where l in 0..64, r3 in 0..2$' out ||
    { cat out; fail "the InstanceNormalization over 160 x 128 is not summed in lanes along its rows"; }
expect_status 0 "$TEC" --emit=te in3.onnx
grep -q 'sum\[i0, i1\] += f64(x\[i0, i1, r2, r3\])$' out ||
    { cat out; fail "the InstanceNormalization over 150 x 150 is not summed in f64"; }
expect_status 0 "$TEC" --emit=te ln512.onnx
grep -q 'sum\[i0, i1\] += x\[i0, i1, r2\]$' out || { cat out; fail "the 512-channel layer norm's sum is not f32"; }
grep -q f64 out && { cat out; fail "the 512-channel layer norm reads f64"; }
echo ok
