# ONNX's narrow dtypes (uint8, int8, int16, float16, bfloat16), uint32 and
# uint64, and empty tensors: small models built here (testsuite/onnx/make_hostile.py's
# encoder), each output against numpy, bit for bit where the dtype rounds.
# Integer arithmetic wraps as in ONNX (computed in i32, stored keeping the
# low bits), integer Div truncates, a cast to f16 rounds once from f64, a
# cast to bf16 rounds to nearest even; f16 MatMul computes in f32.
. "$srcdir/testsuite/cli/lib.inc"

"$PYTHON" - "$srcdir/testsuite/onnx" <<'PY' || fail "cannot build the models"
import sys
import numpy as np
sys.path.insert(0, sys.argv[1])
from make_hostile import field, node, value_info, model

U8, I8, I64, F16, F64, BF16, F32 = 2, 3, 7, 10, 11, 16, 1

def attr_int(name, v):
    return [field(1, name), field(20, 2), field(3, v)]

def pb(name, a, elem, int32_data=False):
    """A TensorProto file: raw bytes, or (f16) the bits in int32_data."""
    t = [field(1, d) for d in a.shape] + [field(2, elem), field(8, name)]
    if int32_data:
        t.append(field(5, [b"".join(__import__("make_hostile").varint(int(v))
                                     for v in a.view(np.uint16).ravel())]))
    else:
        t.append(field(9, a.tobytes()))
    open(name + ".pb", "wb").write(b"".join(t))

# integer arithmetic: uint8 and int8 wrap; int8 Div truncates
a = np.array([200, 3, 0, 255, 17, 128], np.uint8)
b = np.array([100, 5, 1, 1, 17, 128], np.uint8)
c = np.array([-7, 7, -128, 100], np.int8)
d = np.array([2, -2, -1, 3], np.int8)
open("arith.onnx", "wb").write(model(
    [node("Add", ["a", "b"], ["s"]), node("Sub", ["a", "b"], ["t"]),
     node("Mul", ["c", "d"], ["m"]), node("Div", ["c", "d"], ["q"]),
     node("Max", ["a", "b"], ["hi"]), node("Sign", ["a"], ["sg"])],
    [value_info("a", [6], U8), value_info("b", [6], U8), value_info("c", [4], I8),
     value_info("d", [4], I8)],
    [value_info("s", [6], U8), value_info("t", [6], U8), value_info("m", [4], I8),
     value_info("q", [4], I8), value_info("hi", [6], U8), value_info("sg", [6], U8)]))
for n, v, e in (("a", a, U8), ("b", b, U8), ("c", c, I8), ("d", d, I8)):
    pb(n, v, e)
w = lambda v, t: v.astype(np.int32)
np.save("want_s.npy", (w(a, 0) + w(b, 0)).astype(np.uint8))
np.save("want_t.npy", (w(a, 0) - w(b, 0)).astype(np.uint8))
np.save("want_m.npy", (w(c, 0) * w(d, 0)).astype(np.int8))
q = np.abs(w(c, 0)) // np.abs(w(d, 0)) * np.sign(w(c, 0)) * np.sign(w(d, 0))
np.save("want_q.npy", q.astype(np.int8))
np.save("want_hi.npy", np.maximum(a, b))
np.save("want_sg.npy", np.sign(a))

# casts: f64 -> f16 rounds once (1 + 2^-11 + 2^-40 is above the tie), f32 -> bf16
# to nearest even (1 + 2^-8 and 1 + 3*2^-8 are ties)
x64 = np.array([1 + 2**-11 + 2**-40, 65520.0, -0.1, 3.0], np.float64)
x32 = np.array([0.47892547, 1 + 2**-8, 1 + 3 * 2**-8, -2.5, 1e30], np.float32)
open("casts.onnx", "wb").write(model(
    [node("Cast", ["x64"], ["h"], attrs=[attr_int("to", F16)]),
     node("Cast", ["x32"], ["g"], attrs=[attr_int("to", BF16)])],
    [value_info("x64", [4], F64), value_info("x32", [5], F32)],
    [value_info("h", [4], F16), value_info("g", [5], BF16)]))
pb("x64", x64, F64)
pb("x32", x32, F32)
with np.errstate(over="ignore"):   # 65520 rounds to inf
    np.save("want_h.npy", x64.astype(np.float16))
u = x32.view(np.uint32)
np.save("want_g.npy", ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16))

# f16 MatMul and AveragePool, and MaxPool of uint8 with padding; the f16
# input's .pb holds its bits in int32_data
p = (np.arange(6, dtype=np.float32).reshape(2, 3) / 3 - 0.7).astype(np.float16)
r = (np.arange(6, dtype=np.float32).reshape(3, 2) / 5 + 0.1).astype(np.float16)
img = np.array([[[[9, 0, 250, 3], [1, 7, 2, 8], [0, 0, 0, 0], [5, 6, 255, 4]]]], np.uint8)
open("narrow.onnx", "wb").write(model(
    [node("MatMul", ["p", "r"], ["pr"]),
     node("MaxPool", ["img"], ["pool"], attrs=[
         [field(1, "kernel_shape"), field(20, 7), field(8, 3), field(8, 3)],
         [field(1, "pads"), field(20, 7)] + [field(8, 1)] * 4]),
     node("AveragePool", ["p4"], ["avg"], attrs=[
         [field(1, "kernel_shape"), field(20, 7), field(8, 2), field(8, 2)]])],
    [value_info("p", [2, 3], F16), value_info("r", [3, 2], F16),
     value_info("img", [1, 1, 4, 4], U8), value_info("p4", [1, 1, 2, 3], F16)],
    [value_info("pr", [2, 2], F16), value_info("pool", [1, 1, 4, 4], U8),
     value_info("avg", [1, 1, 1, 2], F16)], opset=12))
p4 = p.reshape(1, 1, 2, 3)
pb("p4", p4, F16)
q4 = p4.astype(np.float32)
np.save("want_avg.npy", ((q4[..., :2] + q4[..., 1:]).sum(axis=2, keepdims=True) / 4).astype(np.float16))
pb("p", p, F16, int32_data=True)
pb("r", r, F16)
pb("img", img, U8)
np.save("want_pr.npy", (p.astype(np.float32) @ r.astype(np.float32)).astype(np.float16))
padded = np.pad(img[0, 0].astype(np.int32), 1, constant_values=-1)
np.save("want_pool.npy", np.array([[[[padded[i:i + 3, j:j + 3].max() for j in range(4)]
                                       for i in range(4)]]], np.uint8))

# uint32 and uint64, held in i64: values above 2^31 (and 2^32) read exactly;
# moved and compared, not computed on; a uint64 at 2^63 or above does not fit
U32, U64 = 12, 13
big = np.array([4000000000, 7, 2**31], np.uint32)
other = np.array([5, 4000000001, 1], np.uint32)
open("wide.onnx", "wb").write(model(
    [node("Max", ["big", "other"], ["mx"]), node("Min", ["big", "other"], ["mn"])],
    [value_info("big", [3], U32), value_info("other", [3], U32)],
    [value_info("mx", [3], U32), value_info("mn", [3], U32)]))
pb("big", big, U32)
pb("other", other, U32)
pb("huge", np.array([2**63], np.uint64), U64)
np.save("want_mx.npy", np.maximum(big, other).astype(np.int64))
np.save("want_mn.npy", np.minimum(big, other).astype(np.int64))
open("wide_add.onnx", "wb").write(model(
    [node("Add", ["big", "other"], ["s"], name="add")],
    [value_info("big", [3], U32), value_info("other", [3], U32)], [value_info("s", [3], U32)]))
open("to_u32.onnx", "wb").write(model(
    [node("Cast", ["x"], ["y"], name="c", attrs=[attr_int("to", U32)])],
    [value_info("x", [3])], [value_info("y", [3], U32)]))

# empty tensors: an empty axes input is known at import (ReduceSum sums all);
# an op on an empty tensor is an error
xs = np.arange(6, dtype=np.float32).reshape(2, 3)
open("empty_axes.onnx", "wb").write(model(
    [node("ReduceSum", ["x", "axes"], ["y"])],
    [value_info("x", [2, 3]), value_info("axes", [0], I64)], [value_info("y", [1, 1])]))
np.save("x.npy", xs)
np.save("want_y.npy", xs.sum(keepdims=True))
open("empty_relu.onnx", "wb").write(model(
    [node("Relu", ["e"], ["y"], name="r")], [value_info("e", [0, 3])],
    [value_info("y", [0, 3])]))
PY

same() {   # same NAME: o/NAME.npy equals want_NAME.npy: shape, dtype and bits
    "$PYTHON" -c 'import numpy as np, sys
a, b = np.load("o/%s.npy" % sys.argv[1]), np.load("want_%s.npy" % sys.argv[1])
sys.exit(0 if a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes() else 1)' "$1" ||
        { "$PYTHON" -c 'import numpy as np, sys
print(np.load("o/%s.npy" % sys.argv[1]), np.load("want_%s.npy" % sys.argv[1]))' "$1"; fail "$2"; }
}

expect_status 0 "$TEC" --emit=te arith.onnx
grep -qx 'def add_1(a_u8: u8\[6\], b_u8: u8\[6\]) -> y: u8\[6\] {' out ||
    { cat out; fail "Add of uint8 does not take u8 operands"; }
grep -qx '    y\[i0\] = u8(y_wide\[i0\])' out || { cat out; fail "Add of uint8 is not narrowed"; }
grep -qx '    y\[i0\] = max(a\[i0\], b\[i0\])' out || { cat out; fail "Max of uint8 is widened"; }
expect_status 0 "$TEC" arith.onnx --input a=a.pb --input b=b.pb --input c=c.pb --input d=d.pb \
    --save-outputs o
same s "uint8 Add does not wrap"
same t "uint8 Sub does not wrap"
same m "int8 Mul does not wrap"
same q "int8 Div does not truncate"
same hi "uint8 Max"
same sg "uint8 Sign"

expect_status 0 "$TEC" casts.onnx --input x64=x64.pb --input x32=x32.pb --save-outputs o
same h "Cast from double to float16 does not round once to nearest even"
same g "Cast from float to bfloat16 does not round to nearest even"

expect_status 0 "$TEC" narrow.onnx --input p=p.pb --input r=r.pb --input img=img.pb \
    --input p4=p4.pb --save-outputs o
same pr "float16 MatMul differs from f32 products rounded to f16"
same pool "uint8 MaxPool with padding"
same avg "float16 AveragePool"

expect_status 0 "$TEC" wide.onnx --input big=big.pb --input other=other.pb --save-outputs o
same mx "uint32 Max"
same mn "uint32 Min"
expect_status 1 "$TEC" wide_add.onnx
expect_err "wide_add.onnx: error: node 'add' (Add, opset 13): uint32 arithmetic with an integer result is not supported (tec holds uint32 in i64, which does not wrap as it does)"
expect_status 1 "$TEC" to_u32.onnx
expect_err "to_u32.onnx: error: node 'c' (Cast, opset 13): casting to uint32 is not supported (tec holds it in i64, and a cast to i64 does not wrap as one to uint32 does)"
expect_status 1 "$TEC" --emit=te wide.onnx --input big=huge.pb
expect_err "huge.pb: error: its element 0, 9223372036854775808, does not fit the i64 that tec holds uint64 in"

expect_status 0 "$TEC" --emit=te empty_axes.onnx
grep -q '^input axes' out && { cat out; fail "the empty input is an input of the program"; }
expect_status 0 "$TEC" empty_axes.onnx --input x=x.npy --save-outputs o
same y "ReduceSum with an empty axes input does not sum every axis"
expect_status 1 "$TEC" empty_relu.onnx
expect_err "empty_relu.onnx: error: node 'r' (Relu, opset 13): input 'e' has shape [0, 3], no elements: tec computes empty tensors only when they are known at import time (doc/onnx.md, empty tensors)"
