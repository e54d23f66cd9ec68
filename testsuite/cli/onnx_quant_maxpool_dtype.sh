# A MaxPool read by a QuantizeLinear with opset 21's output_dtype int8 and
# no zero point: the pool of the codes (importer/ops_quant.c op_maxpool)
# makes int8 codes as the QuantizeLinear says (it made uint8: the output was
# uint8, saturated to 0..255); against numpy, at -O0, -O2 and --interp;
# uint8 by default and int8 by a zero point as before.
. "$srcdir/testsuite/cli/lib.inc"
"$PYTHON" - "$srcdir/testsuite/onnx" <<'PY' || fail "cannot write the models"
import sys
sys.path.insert(0, sys.argv[1])
from make_hostile import field, model, node, value_info, array_tensor as init
import numpy as np

F, U8, I8 = 1, 2, 3
x = (np.random.default_rng(0).standard_normal((1, 2, 5, 5)) * 40).astype(np.float32)
np.save("x.npy", x)
xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)), constant_values=-np.inf)
pool = np.array([[[[xp[0, c, i:i + 3, j:j + 3].max() for j in range(5)] for i in range(5)]
                  for c in range(2)]])
ints = lambda name, v: [field(1, name), field(20, 7)] + [field(8, e) for e in v]
for name, attrs, zero, lo, hi, dt, elem in (
        ("i8", [[field(1, "output_dtype"), field(20, 2), field(3, I8)]], None, -128, 127, np.int8, I8),
        ("u8", [], None, 0, 255, np.uint8, U8),
        ("zp_i8", [], np.array(3, np.int8), -128, 127, np.int8, I8)):
    inits = [init("s", np.array(0.5, np.float32), F)]
    if zero is not None:
        inits.append(init("z", zero, I8))
    open(name + ".onnx", "wb").write(model(
        [node("MaxPool", ["x"], ["p"], attrs=[ints("kernel_shape", [3, 3]), ints("pads", [1, 1, 1, 1])]),
         node("QuantizeLinear", ["p", "s"] + (["z"] if zero is not None else []), ["y"], attrs=attrs)],
        [value_info("x", [1, 2, 5, 5])], [value_info("y", [1, 2, 5, 5], elem)], inits, opset=21))
    z = 0 if zero is None else int(zero)
    np.save("want_%s.npy" % name, np.clip(np.rint(pool / 0.5) + z, lo, hi).astype(dt))
PY
for m in i8 u8 zp_i8; do
    for opt in -O0 -O2 --interp; do
        expect_status 0 "$TEC" $opt $m.onnx --input x=x.npy --save-outputs o_$m$opt
        "$PYTHON" -c "
import numpy as np, sys
got, want = np.load('o_$m$opt/y.npy'), np.load('want_$m.npy')
sys.exit(0 if got.dtype == want.dtype and np.array_equal(got, want) else 1)" ||
            fail "$m $opt: not the QuantizeLinear's codes"
    done
done
echo ok
