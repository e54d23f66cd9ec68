# Quantized ONNX models (importer/ops_quant.c, doc/quant.md): small models
# built here (testsuite/onnx/make_hostile.py's encoder) against numpy.
#  - The QDQ form: DequantizeLinear -> Conv / Gemm / MatMul with int8
#    per-channel weights becomes one integer kernel reading the uint8
#    activations and the int8 weights (qdq_conv, qdq_gemm, qdq_matmul);
#    Add between DequantizeLinear and QuantizeLinear computes in f32.  The
#    results are ONNX's (f32 ops on dequantized values) up to the rounding
#    of the f32 sums: quantized outputs within one code, floats within 1e-5.
#  - An int8 QLinearConv is a call of lib/nn.te's qconv2d, bit for bit.
#  - Errors: a scale of the wrong length, a zero point of another dtype.
. "$srcdir/testsuite/cli/lib.inc"

"$PYTHON" - "$srcdir/testsuite/onnx" <<'PY' || fail "cannot build the models"
import sys
import numpy as np
sys.path.insert(0, sys.argv[1])
from make_hostile import field, node, value_info, model, attr_ints

F32, U8, I8, I32 = 1, 2, 3, 6
DT = {np.float32: F32, np.uint8: U8, np.int8: I8, np.int32: I32}

def init(name, a):
    a = np.asarray(a)
    return [field(1, d) for d in a.shape] + [field(2, DT[a.dtype.type]), field(8, name),
                                             field(9, a.tobytes())]

def attr_int(name, v):
    return [field(1, name), field(20, 2), field(3, v)]

def pb(name, a):
    open(name + ".pb", "wb").write(b"".join(init(name, a)))

rng = np.random.default_rng(7)
f32 = np.float32

def q(x, s, z, lo, hi, dt):
    return np.clip(np.rint(x / f32(s)) + z, lo, hi).astype(dt)

def dq(v, s, z, axis=None, ndim=1):
    s, z = np.asarray(s, f32), np.asarray(z).astype(f32)
    if axis is not None:
        shape = [1] * ndim
        shape[axis] = -1
        s, z = s.reshape(shape), z.reshape(shape)
    return (v.astype(f32) - z) * s

# --- the QDQ form
x = rng.standard_normal((1, 3, 6, 6)).astype(f32)
v = rng.standard_normal((2, 8)).astype(f32)
sx, zx, sv, zv, sr, zr, sg, zg, sa, za = (f32(0.03), np.uint8(120), f32(0.025), np.uint8(130),
                                          f32(0.05), np.uint8(0), f32(0.04), np.uint8(128),
                                          f32(0.09), np.uint8(3))
wq = rng.integers(-127, 128, (3, 3, 3, 3)).astype(np.int8)
ws = rng.uniform(0.002, 0.01, 3).astype(f32)
bq = rng.integers(-127, 128, (5, 8)).astype(np.int8)
bs = rng.uniform(0.01, 0.03, 5).astype(f32)
mq = rng.integers(-127, 128, (8, 3)).astype(np.int8)
ms = f32(0.02)
cb = rng.standard_normal(3).astype(f32)
x2 = rng.standard_normal((1, 8, 6, 6)).astype(f32)
w2q = rng.integers(-127, 128, (4, 8, 1, 1)).astype(np.int8)
w2s = rng.uniform(0.002, 0.01, 4).astype(f32)
gb = rng.standard_normal(5).astype(f32)
nodes = [
    node("QuantizeLinear", ["x", "sx", "zx"], ["xq"]),
    node("DequantizeLinear", ["xq", "sx", "zx"], ["xd"]),
    node("DequantizeLinear", ["wq", "ws", "wz"], ["wd"], attrs=[attr_int("axis", 0)]),
    node("Conv", ["xd", "wd", "cb"], ["c"], attrs=[attr_ints("pads", [1, 1, 1, 1])]),
    node("Relu", ["c"], ["r"]),
    node("QuantizeLinear", ["r", "sr", "zr"], ["rq"]),
    node("DequantizeLinear", ["rq", "sr", "zr"], ["rd"]),
    node("Add", ["rd", "xd"], ["a"]),
    node("QuantizeLinear", ["a", "sa", "za"], ["aq"]),
    node("QuantizeLinear", ["v", "sv", "zv"], ["vq"]),
    node("DequantizeLinear", ["vq", "sv", "zv"], ["vd"]),
    node("DequantizeLinear", ["bq", "bs", "bz"], ["bd"], attrs=[attr_int("axis", 0)]),
    node("Gemm", ["vd", "bd", "gb"], ["g"], attrs=[attr_int("transB", 1)]),
    node("QuantizeLinear", ["g", "sg", "zg"], ["gq"]),
    node("DequantizeLinear", ["mq", "ms"], ["md"]),
    node("MatMul", ["vd", "md"], ["mm"]),
    node("QuantizeLinear", ["x2", "sx", "zx"], ["x2q"]),
    node("DequantizeLinear", ["x2q", "sx", "zx"], ["x2d"]),
    node("DequantizeLinear", ["w2q", "w2s"], ["w2d"], attrs=[attr_int("axis", 0)]),
    node("Conv", ["x2d", "w2d"], ["c2"], attrs=[attr_ints("strides", [2, 2])]),
]
inits = [init("sx", sx), init("zx", zx), init("sv", sv), init("zv", zv), init("sr", sr),
         init("zr", zr), init("sg", sg), init("zg", zg), init("sa", sa), init("za", za),
         init("wq", wq), init("ws", ws), init("wz", np.zeros(3, np.int8)), init("cb", cb),
         init("bq", bq), init("bs", bs), init("bz", np.zeros(5, np.int8)), init("gb", gb),
         init("mq", mq), init("ms", ms), init("w2q", w2q), init("w2s", w2s)]
open("qdq.onnx", "wb").write(model(
    nodes, [value_info("x", [1, 3, 6, 6]), value_info("v", [2, 8]), value_info("x2", [1, 8, 6, 6])],
    [value_info("rq", [1, 3, 6, 6], U8), value_info("aq", [1, 3, 6, 6], U8),
     value_info("gq", [2, 5], U8), value_info("mm", [2, 3]), value_info("c2", [1, 4, 3, 3])], inits))
pb("x", x)
pb("v", v)
pb("x2", x2)
xd = dq(q(x, sx, zx, 0, 255, np.uint8), sx, zx)
wd = dq(wq, ws, 0, 0, 4)
xp = np.pad(xd.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
c = np.zeros((1, 3, 6, 6))
for r in range(3):
    for s in range(3):
        c += np.einsum("nchw,fc->nfhw", xp[:, :, r:r + 6, s:s + 6], wd[:, :, r, s].astype(np.float64))
c = (c + cb.reshape(1, 3, 1, 1)).astype(f32)
rq = q(np.maximum(c, 0), sr, zr, 0, 255, np.uint8)
np.save("want_rq.npy", rq)
np.save("want_aq.npy", q(dq(rq, sr, zr) + xd, sa, za, 0, 255, np.uint8))
np.save("xd.npy", xd)   # (the Add of tec's own rq must be exact)
vd = dq(q(v, sv, zv, 0, 255, np.uint8), sv, zv).astype(np.float64)
g = (vd @ dq(bq, bs, 0, 0, 2).astype(np.float64).T + gb).astype(f32)
np.save("want_gq.npy", q(g, sg, zg, 0, 255, np.uint8))
np.save("want_mm.npy", (vd @ dq(mq, ms, 0).astype(np.float64)).astype(f32))
x2d = dq(q(x2, sx, zx, 0, 255, np.uint8), sx, zx).astype(np.float64)[:, :, ::2, ::2]
np.save("want_c2.npy", np.einsum("nchw,fc->nfhw", x2d, dq(w2q, w2s, 0, 0, 4)[:, :, 0, 0].astype(np.float64)).astype(f32))

# --- an int8 QLinearConv: lib/nn.te's qconv2d, requantized as it defines
xi = rng.integers(-128, 128, (1, 2, 5, 5)).astype(np.int8)
wi = rng.integers(-128, 128, (3, 2, 3, 3)).astype(np.int8)
qs, qw, qy = f32(0.05), rng.uniform(0.005, 0.02, 3).astype(f32), f32(0.4)
bias = rng.integers(-500, 500, 3).astype(np.int32)
open("qlinearconv.onnx", "wb").write(model(
    [node("QLinearConv", ["xi", "qs", "qz", "wi", "qw", "wz", "qy", "yz", "bias"], ["yi"],
          attrs=[attr_ints("pads", [1, 1, 1, 1]), attr_ints("strides", [2, 2])])],
    [value_info("xi", [1, 2, 5, 5], I8)], [value_info("yi", [1, 3, 3, 3], I8)],
    [init("qs", qs), init("qz", np.int8(-3)), init("wi", wi), init("qw", qw),
     init("wz", np.zeros(3, np.int8)), init("qy", qy), init("yz", np.int8(5)),
     init("bias", bias)]))
pb("xi", xi)
xp = np.pad(xi.astype(np.int64), ((0, 0), (0, 0), (1, 1), (1, 1)), constant_values=-3) + 3
acc = np.zeros((1, 3, 3, 3), np.int64)
for r in range(3):
    for s in range(3):
        acc += np.einsum("nchw,fc->nfhw", xp[:, :, r:r + 5:2, s:s + 5:2], wi[:, :, r, s].astype(np.int64))
scale = (qs.astype(np.float64) * qw.astype(np.float64) / np.float64(qy)).astype(f32)
y = np.rint((acc + bias.reshape(1, 3, 1, 1)) * scale.astype(np.float64).reshape(1, 3, 1, 1)) + 5
np.save("want_yi.npy", np.clip(y, -128, 127).astype(np.int8))

# --- a ConvInteger over 3 channels (computed over 4, the 4th channel's
# weights their zero point) with per-channel weight zero points, exact
xc = rng.integers(0, 256, (1, 3, 6, 6)).astype(np.uint8)
wc = rng.integers(-128, 128, (4, 3, 3, 3)).astype(np.int8)
wcz = np.array([0, 3, -5, 100], np.int8)
open("convinteger.onnx", "wb").write(model(
    [node("ConvInteger", ["xc", "wc", "xcz", "wcz"], ["yc"], attrs=[attr_ints("pads", [1, 1, 1, 1])])],
    [value_info("xc", [1, 3, 6, 6], U8)], [value_info("yc", [1, 4, 6, 6], I32)],
    [init("wc", wc), init("xcz", np.uint8(17)), init("wcz", wcz)]))
pb("xc", xc)
xp = np.pad(xc.astype(np.int64), ((0, 0), (0, 0), (1, 1), (1, 1)), constant_values=17) - 17
wz4 = wc.astype(np.int64) - wcz.astype(np.int64).reshape(4, 1, 1, 1)
yc = np.zeros((1, 4, 6, 6), np.int64)
for r in range(3):
    for s in range(3):
        yc += np.einsum("nchw,fc->nfhw", xp[:, :, r:r + 6, s:s + 6], wz4[:, :, r, s])
np.save("want_yc.npy", yc.astype(np.int32))

# --- errors
open("bad_scale.onnx", "wb").write(model(
    [node("QLinearConv", ["xi", "qs", "qz", "wi", "qw2", "wz", "qy", "yz"], ["yi"], name="qc")],
    [value_info("xi", [1, 2, 5, 5], I8)], [value_info("yi", [1, 3, 3, 3], I8)],
    [init("qs", qs), init("qz", np.int8(0)), init("wi", wi), init("qw2", qw[:2]),
     init("wz", np.int8(0)), init("qy", qy), init("yz", np.int8(0))]))
open("bad_zero.onnx", "wb").write(model(
    [node("DequantizeLinear", ["xi", "qs", "uz"], ["d"], name="dq")],
    [value_info("xi", [1, 2, 5, 5], I8)], [value_info("d", [1, 2, 5, 5])],
    [init("qs", qs), init("uz", np.uint8(0))]))
PY

# the QDQ model: integer kernels, int8 weights; outputs as ONNX defines them
expect_status 0 "$TEC" --emit=te qdq.onnx
grep -q '^def qdq_conv_1(x: u8\[1, 3, 6, 6\]) -> y: f32\[1, 3, 6, 6\]' out || fail "no integer Conv"
# (3 input channels: computed over 4, the 4th's weights zero, its reads
# beyond x's channels the zero point)
grep -q 'param weight: i8\[3, 4, 3, 3\]' out || fail "the Conv's weight is not int8 over 4 channels"
# (the zero point 120 taken out of the products: 120 * sum w per channel,
# subtracted once per output)
grep -q 'acc\[n, f, o0, o1\] += i32(x\[n, c + 0, o0 + r0 - 1, o1 + r1 - 1\] else 120) \* i32(weight\[f, c, r0, r1\])' out ||
    fail "the Conv does not accumulate the integers"
# (36 products of at most 127 * 135: the sum is exact in f32, and so is
# its product with the scale rounded once: testsuite/cli/onnx_quant_epilogue.sh)
grep -q 'y\[n, f, o0, o1\] = max(f32(acc\[n, f, o0, o1\] - x_zero_sums\[f\]) \* scale\[f\], -3.40282347e38) + bias\[f\]' out ||
    fail "the Conv does not subtract the zero point's sums"
grep -q '^def qdq_gemm_1(A: u8\[2, 8\])' out || fail "no integer Gemm"
grep -q '^def qdq_matmul_1(A: u8\[2, 8\])' out || fail "no integer MatMul"
grep -q '= qdq_conv_1(xq)' out || fail "the Conv does not read the quantized input"
# (the Add of two dequantized activations reads the integers, each
# dequantized as DequantizeLinear does, in one kernel)
grep -q '^def qdq_add_1(a: u8\[1, 3, 6, 6\], b: u8\[1, 3, 6, 6\]) -> y: f32\[1, 3, 6, 6\]' out ||
    fail "no Add of the integers"
grep -q 'y\[i0, i1, i2, i3\] = f32(a\[i0, i1, i2, i3\]) \* 0.0500000007 + (f32(b\[i0, i1, i2, i3\]) - f32(120)) \* 0.0299999993$' out ||
    fail "the Add does not dequantize its operands as DequantizeLinear"
grep -q '= qdq_add_1(rq, xq)' out || fail "the Add does not read the quantized values"
# (a strided 1x1 Conv reads a channels-last copy of the positions it uses)
grep -q 'xs\[n, o0, o1, c\] = x\[n, c, o0 \* 2, o1 \* 2\] where o0 in 0..3, o1 in 0..3' out ||
    fail "the strided 1x1 Conv does not copy its positions channels-last"
grep -q 'acc\[n, f, o0, o1\] += i32(xs\[n, o0, o1, c\]) \* i32(weight\[f, c, r0, r1\])' out ||
    fail "the strided 1x1 Conv does not read the copy"
for m in -O0 -O2; do
    expect_status 0 "$TEC" $m qdq.onnx --input x=x.pb --input v=v.pb --input x2=x2.pb --save-outputs o
    "$PYTHON" - <<'PY' || fail "qdq.onnx at $m differs from numpy"
import numpy as np
for n in ("rq", "aq", "gq"):
    a, b = np.load("o/%s.npy" % n), np.load("want_%s.npy" % n)
    d = np.abs(a.astype(int) - b.astype(int))
    assert a.dtype == b.dtype and a.shape == b.shape, n
    assert d.max() <= 1 and (d > 0).mean() <= 0.03, (n, d.max(), (d > 0).mean())
for n in ("mm", "c2"):
    a, b = np.load("o/%s.npy" % n), np.load("want_%s.npy" % n)
    assert np.abs(a - b).max() <= 1e-5 * np.abs(b).max(), (n, a, b)
# the Add, Relu-free, of tec's rq and x, requantized: exact
f32 = np.float32
rq = np.load("o/rq.npy")
s = (rq.astype(f32) - f32(0)) * f32(0.05) + np.load("xd.npy")
want = np.clip(np.rint(s / f32(0.09)) + 3, 0, 255).astype(np.uint8)
assert (np.load("o/aq.npy") == want).all(), "aq"
PY
done

# the integer kernels compute what the interpreter does, bit for bit
expect_status 0 "$TEC" --interp qdq.onnx --input x=x.pb --input v=v.pb --input x2=x2.pb --save-outputs oi
for n in rq aq gq mm c2; do
    cmp -s o/$n.npy oi/$n.npy || fail "qdq.onnx: $n at -O2 differs from the interpreter's"
done

# exact MODEL INPUT OUTPUT: MODEL's OUTPUT equals want_OUTPUT.npy bit for
# bit at -O0, -O2 and interpreted
exact() {
    for m in -O0 -O2 --interp; do
        expect_status 0 "$TEC" $m "$1" --input "$2=$2.pb" --save-outputs o
        "$PYTHON" -c 'import numpy as np, sys
a, b = np.load("o/%s.npy" % sys.argv[1]), np.load("want_%s.npy" % sys.argv[1])
sys.exit(0 if a.dtype == b.dtype and a.shape == b.shape and (a == b).all() else 1)' "$3" ||
            fail "$1 at $m is not bit for bit"
    done
}

# a ConvInteger over 3 channels with weight zero points: exact at every level
exact convinteger.onnx xc yc

# an int8 QLinearConv is lib/nn.te's qconv2d
expect_status 0 "$TEC" --emit=te qlinearconv.onnx
grep -q '= qconv2d(xi, 3, 3, stride=2, pad=1, x_zero=-3, y_zero=5) as "yi"' out ||
    fail "QLinearConv is not qconv2d"
exact qlinearconv.onnx xi yi

expect_status 1 "$TEC" --emit=te bad_scale.onnx
expect_err "bad_scale.onnx: error: node 'qc' (QLinearConv, opset 13): the scale 'qw2' must have 1 or 3 entries, not 2"
expect_status 1 "$TEC" --emit=te bad_zero.onnx
expect_err "bad_zero.onnx: error: node 'dq' (DequantizeLinear, opset 13): the zero point 'uz' is u8 but 'xi' is i8 (they must have one dtype)"
exit 0
