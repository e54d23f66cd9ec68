# What opsets 18 to 21 added, against numpy computing the ONNX spec's
# formulas: Gelu (20, exact and tanh; a 4-D input is nn.te's gelu, a 1-D
# one a kernel of the same formula), Mish (18), Split's num_outputs (18:
# parts of ceil(D / n), the last what is left), Pad's axes input (18),
# Resize's axes (18: equal bit for bit to the same resize of every axis)
# and half_pixel_symmetric (19), QuantizeLinear's output_dtype (21),
# GroupNormalization (18: scale and bias per group; 21: per channel).
. "$srcdir/testsuite/cli/lib.inc"
"$PYTHON" - "$srcdir/testsuite/onnx" <<'PY' || fail "cannot write the models"
import math, struct, sys
sys.path.insert(0, sys.argv[1])
from make_hostile import field, model, node, value_info, varint, array_tensor as init
import numpy as np

def a_int(name, v):
    return [field(1, name), field(20, 2), field(3, v)]
def a_str(name, v):
    return [field(1, name), field(20, 3), field(4, v)]
def a_ints(name, vals):
    return [field(1, name), field(20, 7)] + [field(8, v) for v in vals]
def a_float(name, v):
    return [field(1, name), field(20, 1), varint(2 << 3 | 5) + struct.pack("<f", v)]
F, I8, I64 = 1, 3, 7
rng = np.random.default_rng(0)
erf = np.vectorize(math.erf)

def save(name, onnx, inputs, wants):
    open(name + ".onnx", "wb").write(onnx)
    for k, v in inputs.items():
        np.save("%s_%s.npy" % (name, k), v)
    for k, v in wants.items():
        np.save("%s_want_%s.npy" % (name, k), v)

for shape, tag in (([2, 3, 4, 5], "4d"), ([7], "1d")):
    x = (3 * rng.standard_normal(shape)).astype(np.float32)
    xd = x.astype(np.float64)
    for approx in ("none", "tanh"):
        want = (0.5 * xd * (1 + erf(xd / math.sqrt(2))) if approx == "none" else
                0.5 * xd * (1 + np.tanh(math.sqrt(2 / math.pi) * (xd + 0.044715 * xd ** 3))))
        save("gelu_%s_%s" % (approx, tag),
             model([node("Gelu", ["x"], ["y"], attrs=[a_str("approximate", approx)])],
                   [value_info("x", shape)], [value_info("y", shape)], opset=20),
             {"x": x}, {"y": want})
    save("mish_" + tag, model([node("Mish", ["x"], ["y"])], [value_info("x", shape)],
                              [value_info("y", shape)], opset=18),
         {"x": x}, {"y": xd * np.tanh(np.log1p(np.exp(xd)))})

x = rng.standard_normal((2, 10)).astype(np.float32)
save("split", model([node("Split", ["x"], ["a", "b", "c"],
                          attrs=[a_int("axis", 1), a_int("num_outputs", 3)])],
                    [value_info("x", [2, 10])],
                    [value_info("a", [2, 4]), value_info("b", [2, 4]), value_info("c", [2, 2])],
                    opset=18),
     {"x": x}, {"a": x[:, :4], "b": x[:, 4:8], "c": x[:, 8:]})

x = rng.standard_normal((2, 3, 5)).astype(np.float32)
save("pad_axes", model([node("Pad", ["x", "pads", "", "axes"], ["y"],
                             attrs=[a_str("mode", "reflect")])],
                       [value_info("x", [2, 3, 5])], [value_info("y", [2, 3, 8])],
                       [init("pads", np.array([1, 2], np.int64), I64),
                        init("axes", np.array([-1], np.int64), I64)], opset=18),
     {"x": x}, {"y": np.pad(x, ((0, 0), (0, 0), (1, 2)), mode="reflect")})

x = rng.standard_normal((1, 2, 4, 6)).astype(np.float32)
lin = [a_str("mode", "linear")]
open("resize_axes.onnx", "wb").write(model(
    [node("Resize", ["x", "", "scales"], ["y"], attrs=lin + [a_ints("axes", [3, -2])])],
    [value_info("x", [1, 2, 4, 6])], [value_info("y", [1, 2, 8, 9])],
    [init("scales", np.array([1.5, 2], np.float32), F)], opset=18))
open("resize_all.onnx", "wb").write(model(
    [node("Resize", ["x", "", "scales"], ["y"], attrs=lin)],
    [value_info("x", [1, 2, 4, 6])], [value_info("y", [1, 2, 8, 9])],
    [init("scales", np.array([1, 1, 2, 1.5], np.float32), F)], opset=13))
np.save("resize_x.npy", x)

x = rng.standard_normal((1, 1, 1, 5)).astype(np.float32)
scale, n = np.float32(1.7), 5
O = int(math.floor(n * float(scale)))
want = np.zeros(O)
for o in range(O):
    length = n * float(scale)
    c = n / 2 * (1 - O / length) + (o + 0.5) / float(scale) - 0.5
    f = math.floor(c)
    lo, hi = min(max(f, 0), n - 1), min(max(f + 1, 0), n - 1)
    want[o] = x[0, 0, 0, lo] * (1 - (c - f)) + x[0, 0, 0, hi] * (c - f)
save("resize_sym", model(
    [node("Resize", ["x", "", "scales"], ["y"],
          attrs=lin + [a_str("coordinate_transformation_mode", "half_pixel_symmetric")])],
    [value_info("x", [1, 1, 1, 5])], [value_info("y", [1, 1, 1, O])],
    [init("scales", np.array([1, 1, 1, scale], np.float32), F)], opset=19),
     {"x": x}, {"y": want.reshape(1, 1, 1, O)})

for opset, per in ((18, 3), (21, 6)):   # scale and bias per group, then per channel
    x = rng.standard_normal((2, 6, 3, 4)).astype(np.float32)
    sc = rng.standard_normal(per).astype(np.float32)
    bi = rng.standard_normal(per).astype(np.float32)
    g = x.astype(np.float64).reshape(2, 3, -1)
    z = ((g - g.mean(2, keepdims=True)) / np.sqrt(g.var(2, keepdims=True) + 1e-3)).reshape(x.shape)
    rep = 2 if per == 3 else 1
    want = z * np.repeat(sc, rep)[None, :, None, None] + np.repeat(bi, rep)[None, :, None, None]
    save("groupnorm%d" % opset, model(
        [node("GroupNormalization", ["x", "s", "b"], ["y"],
              attrs=[a_int("num_groups", 3), a_float("epsilon", 1e-3)])],
        [value_info("x", [2, 6, 3, 4])], [value_info("y", [2, 6, 3, 4])],
        [init("s", sc, F), init("b", bi, F)], opset=opset), {"x": x}, {"y": want})

x = np.array([-1.3, 0.4, 200, -0.75, 0.25], np.float32)
save("quantize_i8", model(
    [node("QuantizeLinear", ["x", "s"], ["y"], attrs=[a_int("output_dtype", I8)])],
    [value_info("x", [5])], [value_info("y", [5], I8)],
    [init("s", np.array(0.5, np.float32), F)], opset=21),
     {"x": x}, {"y": np.array([-3, 1, 127, -2, 0], np.int8)})
PY
check() {   # check MODEL OUTPUT...: y (and the others) as numpy computed them
    m=$1; shift
    for opt in -O0 -O2; do
        expect_status 0 timeout 120 "$TEC" $opt $m.onnx --input x=${m}_x.npy --save-outputs o_$m$opt
        for y in "$@"; do
            "$PYTHON" -c "
import numpy as np, sys
got, want = np.load('o_$m$opt/$y.npy'), np.load('${m}_want_$y.npy')
if want.dtype.kind == 'f':
    ok = got.shape == want.shape and np.abs(got - want).max() <= 1e-5 * np.abs(want).max()
else:
    ok = got.dtype == want.dtype and np.array_equal(got, want)
sys.exit(0 if ok else 1)" || fail "$m $opt: $y is not what the spec says"
        done
    done
}
for t in 4d 1d; do
    check gelu_none_$t y
    check gelu_tanh_$t y
    check mish_$t y
done
check split a b c
check pad_axes y
check resize_sym y
check quantize_i8 y
check groupnorm18 y
check groupnorm21 y
for m in resize_axes resize_all; do
    expect_status 0 timeout 120 "$TEC" -O2 $m.onnx --input x=resize_x.npy --save-outputs o_$m
done
cmp o_resize_axes/y.npy o_resize_all/y.npy || fail "resize over axes [3, -2] differs"
echo ok
