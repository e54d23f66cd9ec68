# A MaxPool whose one reader is a per-tensor QuantizeLinear pools the codes
# (importer/ops_quant.c, op_maxpool): Q(maxpool(x)) = maxpool(Q(x)), since
# QuantizeLinear is monotone.  Small models built here (testsuite/onnx/
# make_hostile.py's encoder) against numpy, bit for bit at -O0, -O2 and
# interpreted:
#  - Relu -> MaxPool -> QuantizeLinear (tools/quantize.py's ResNet stem):
#    a quantize of the pool's input, then a uint8 max pool;
#  - DequantizeLinear -> MaxPool -> QuantizeLinear of the same scale and
#    zero point (ONNX Runtime's quantizer): the codes themselves pooled;
#  - the same with another scale and an int8 zero point: requantized,
#    then pooled;
#  - a MaxPool that another node reads too stays a float pool, and so does
#    one of a 1x1 window (a view of its input).
. "$srcdir/testsuite/cli/lib.inc"

"$PYTHON" - "$srcdir/testsuite/onnx" <<'PY' || fail "cannot build the models"
import sys
import numpy as np
sys.path.insert(0, sys.argv[1])
from make_hostile import field, node, value_info, model, attr_ints

F32, U8, I8 = 1, 2, 3
DT = {np.float32: F32, np.uint8: U8, np.int8: I8}
f32 = np.float32

def init(name, a):
    a = np.asarray(a)
    return [field(1, d) for d in a.shape] + [field(2, DT[a.dtype.type]), field(8, name),
                                             field(9, a.tobytes())]

def pb(name, a):
    open(name + ".pb", "wb").write(b"".join(init(name, a)))

def q(x, s, z, dt):
    lo, hi = np.iinfo(dt).min, np.iinfo(dt).max
    return np.clip(np.rint(x / f32(s)) + z, lo, hi).astype(dt)

def dq(v, s, z):
    return (v.astype(f32) - f32(z)) * f32(s)

def maxpool(x, k, s, pad, low):
    n, c, h, w = x.shape
    xp = np.full((n, c, h + 2 * pad, w + 2 * pad), low, x.dtype)
    xp[:, :, pad:pad + h, pad:pad + w] = x
    oh, ow = (h + 2 * pad - k) // s + 1, (w + 2 * pad - k) // s + 1
    y = np.full((n, c, oh, ow), low, x.dtype)
    for r in range(k):
        for t in range(k):
            y = np.maximum(y, xp[:, :, r:r + s * (oh - 1) + 1:s, t:t + s * (ow - 1) + 1:s])
    return y

rng = np.random.default_rng(11)
x = rng.standard_normal((1, 4, 9, 9)).astype(f32)
s, z = f32(0.02), np.uint8(3)
x.flat[::7] = (np.rint(x.flat[::7] / s) + 0.5) * s   # near ties of the rounding
xq = rng.integers(0, 256, (1, 3, 8, 8)).astype(np.uint8)
s1, z1, s2, z2 = f32(0.05), np.uint8(128), f32(0.07), np.int8(-5)
pool3 = [attr_ints("kernel_shape", [3, 3]), attr_ints("strides", [2, 2]),
         attr_ints("pads", [1, 1, 1, 1])]
nodes = [
    node("Relu", ["x"], ["r"]),
    node("MaxPool", ["r"], ["p"], attrs=pool3),
    node("QuantizeLinear", ["p", "s", "z"], ["pq"]),
    node("DequantizeLinear", ["xq", "s1", "z1"], ["d"]),
    node("MaxPool", ["d"], ["dp"], attrs=[attr_ints("kernel_shape", [2, 2]),
                                          attr_ints("strides", [2, 2])]),
    node("QuantizeLinear", ["dp", "s1", "z1"], ["bq"]),
    node("MaxPool", ["d"], ["dp3"], attrs=[attr_ints("kernel_shape", [3, 3]),
                                           attr_ints("pads", [1, 1, 1, 1])]),
    node("QuantizeLinear", ["dp3", "s2", "z2"], ["cq"]),
    node("MaxPool", ["x"], ["fp"], attrs=pool3),
    node("QuantizeLinear", ["fp", "s", "z"], ["fq"]),
    node("MaxPool", ["x"], ["p1"], attrs=[attr_ints("kernel_shape", [1, 1])]),
    node("QuantizeLinear", ["p1", "s", "z"], ["p1q"]),
]
open("pool.onnx", "wb").write(model(
    nodes, [value_info("x", [1, 4, 9, 9]), value_info("xq", [1, 3, 8, 8], U8)],
    [value_info("pq", [1, 4, 5, 5], U8), value_info("bq", [1, 3, 4, 4], U8),
     value_info("cq", [1, 3, 8, 8], I8), value_info("fp", [1, 4, 5, 5]),
     value_info("fq", [1, 4, 5, 5], U8), value_info("p1q", [1, 4, 9, 9], U8)],
    [init("s", s), init("z", z), init("s1", s1), init("z1", z1), init("s2", s2), init("z2", z2)]))
pb("x", x)
pb("xq", xq)
np.save("want_pq.npy", q(maxpool(np.maximum(x, 0), 3, 2, 1, -np.inf), s, z, np.uint8))
np.save("want_bq.npy", maxpool(xq, 2, 2, 0, 0))
np.save("want_cq.npy", q(maxpool(dq(xq, s1, z1), 3, 1, 1, -np.inf), s2, z2, np.int8))
fp = maxpool(x, 3, 2, 1, -np.inf)
np.save("want_fp.npy", fp)
np.save("want_fq.npy", q(fp, s, z, np.uint8))
np.save("want_p1q.npy", q(x, s, z, np.uint8))
PY

expect_status 0 "$TEC" --emit=te pool.onnx
# the Relu's output quantized, then pooled as bytes
grep -q '^def quantize_[0-9]*(x: f32\[1, 4, 9, 9\]) -> y: u8\[1, 4, 9, 9\]' out ||
    fail "the pool's input is not quantized"
grep -q '^def maxpool_[0-9]*(x: u8\[1, 4, 9, 9\]) -> y: u8\[1, 4, 5, 5\]' out ||
    fail "no uint8 max pool"
grep -q '= quantize_[0-9]*(r) as "MaxPool_[0-9]*.quantize"\|as "[^"]*\.quantize"$' out ||
    fail "the quantize is not the pool's layer"
# the codes of the DequantizeLinear pooled as they are
grep -q '= maxpool_[0-9]*(xq) as' out || fail "the codes are not pooled directly"
grep -q '^def maxpool_[0-9]*(x: i8\[1, 3, 8, 8\]) -> y: i8\[1, 3, 8, 8\]' out ||
    fail "the requantized codes are not pooled as int8"
# a pool that is an output itself stays a float pool
grep -q '= maxpool2d(x, 3, 2, pad=1) as' out || fail "the float pool is gone"

for m in -O0 -O2 --interp; do
    expect_status 0 "$TEC" $m pool.onnx --input x=x.pb --input xq=xq.pb --save-outputs o$m
    for n in pq bq cq fp fq p1q; do
        "$PYTHON" -c 'import numpy as np, sys
a, b = np.load(sys.argv[1]), np.load(sys.argv[2])
sys.exit(0 if a.dtype == b.dtype and a.shape == b.shape and (a == b).all() else 1)' \
            "o$m/$n.npy" "want_$n.npy" || fail "$n at $m differs from numpy"
    done
done
exit 0
