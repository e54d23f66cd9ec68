# The dequantizing epilogue of a QDQ Conv (importer/ops_quant.c, finish):
# ONNX's f32(f64(acc) * f64(scale)) + bias is computed in f32, as
# max(f32(acc) * scale, lowest f32) + bias, when every accumulator its
# constant weights allow is exact in f32 (at most 2^24: f32_exact), and in
# f64 otherwise.  Conv "small" (8 channels, 3x3, weights up to 127, uint8
# activations with zero point 100) sums at most 72 * 127 * 155 < 2^24;
# Conv "big" (256 channels, 3x3, every weight -127) up to 2304 * 127 * 155
# > 2^24.  Both forms give the interpreter's results bit for bit at -O2
# (where a multiply-add would round once: the max keeps the product
# rounded).
. "$srcdir/testsuite/cli/lib.inc"

"$PYTHON" - "$srcdir/testsuite/onnx" <<'PY' || fail "cannot build the model"
import sys
import numpy as np
sys.path.insert(0, sys.argv[1])
from make_hostile import field, node, value_info, model, attr_ints

F32, U8, I8 = 1, 2, 3
DT = {np.float32: F32, np.uint8: U8, np.int8: I8}

def init(name, a):
    a = np.asarray(a)
    return [field(1, d) for d in a.shape] + [field(2, DT[a.dtype.type]), field(8, name),
                                             field(9, a.tobytes())]

def attr_int(name, v):
    return [field(1, name), field(20, 2), field(3, v)]

rng = np.random.default_rng(11)
f32 = np.float32
nodes, inits = [], [init("sx", f32(0.02)), init("zx", np.uint8(100))]
for name, c in (("small", 8), ("big", 256)):
    w = (rng.integers(-127, 128, (4, c, 3, 3)) if name == "small"
         else np.full((4, c, 3, 3), -127)).astype(np.int8)
    nodes += [node("QuantizeLinear", ["x_" + name, "sx", "zx"], ["q_" + name]),
              node("DequantizeLinear", ["q_" + name, "sx", "zx"], ["d_" + name]),
              node("DequantizeLinear", ["w_" + name, "ws_" + name, "wz_" + name], ["wd_" + name],
                   attrs=[attr_int("axis", 0)]),
              node("Conv", ["d_" + name, "wd_" + name, "b_" + name], ["y_" + name],
                   attrs=[attr_ints("pads", [1, 1, 1, 1])])]
    inits += [init("w_" + name, w), init("ws_" + name, rng.uniform(0.001, 0.01, 4).astype(f32)),
              init("wz_" + name, np.zeros(4, np.int8)),
              init("b_" + name, rng.standard_normal(4).astype(f32))]
    x = (rng.standard_normal((1, c, 4, 4)) * 2).astype(f32)
    open("x_%s.pb" % name, "wb").write(b"".join(init("x_" + name, x)))
open("epilogue.onnx", "wb").write(model(
    nodes, [value_info("x_small", [1, 8, 4, 4]), value_info("x_big", [1, 256, 4, 4])],
    [value_info("y_small", [1, 4, 4, 4]), value_info("y_big", [1, 4, 4, 4])], inits))
PY

expect_status 0 "$TEC" --emit=te epilogue.onnx
grep -q '^def qdq_conv_1(x: u8\[1, 8, 4, 4\])' out || fail "no integer Conv of 8 channels"
grep -q '^def qdq_conv_2(x: u8\[1, 256, 4, 4\])' out || fail "no integer Conv of 256 channels"
sed -n '/^def qdq_conv_1(/,/^}/p' out >small.te
sed -n '/^def qdq_conv_2(/,/^}/p' out >big.te
grep -q 'y\[n, f, o0, o1\] = max(f32(acc\[n, f, o0, o1\] - x_zero_sums\[f\]) \* scale\[f\], -3.40282347e38) + bias\[f\]' small.te ||
    fail "the 8-channel Conv's epilogue is not in f32"
grep -q 'y\[n, f, o0, o1\] = f32(f64(acc\[n, f, o0, o1\] - x_zero_sums\[f\]) \* f64(scale\[f\])) + bias\[f\]' big.te ||
    fail "the 256-channel Conv's epilogue is not in f64"
args="--input x_small=x_small.pb --input x_big=x_big.pb"
expect_status 0 "$TEC" -O2 epilogue.onnx $args --save-outputs o2
expect_status 0 "$TEC" --interp epilogue.onnx $args --save-outputs oi
for n in y_small y_big; do
    cmp -s o2/$n.npy oi/$n.npy || fail "$n at -O2 differs from the interpreter's"
done
exit 0
