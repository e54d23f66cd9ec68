# IsNaN and IsInf (torch.nan_to_num, torch.isinf exports): bool results
# (i32 0/1) of NaN, +inf and -inf among finite values, IsInf with each of
# detect_positive and detect_negative off, and a Where that replaces the
# NaNs (nan_to_num's form); equal to NumPy's at -O0 and -O2, in f32 and
# f16.  An integer input is refused by name.
. "$srcdir/testsuite/cli/lib.inc"
"$PYTHON" - "$srcdir/testsuite/onnx" <<'EOF2' || fail "cannot write the models"
import os, sys
sys.path.insert(0, sys.argv[1])
from make_hostile import FLOAT, INT64, array_tensor, field, model, node, value_info
import numpy as np
FLOAT16 = 10
def attr_int(name, v):
    return [field(1, name), field(20, 2), field(3, v)]
for dtype, elem in (("f32", FLOAT), ("f16", FLOAT16)):
    x = np.array([[0.5, np.nan, np.inf, -np.inf], [-0.0, 65504, -np.nan, 1e-3]],
                 np.float32 if dtype == "f32" else np.float16)
    zero = np.zeros((), x.dtype)
    nodes = [node("IsNaN", ["x"], ["nan"], name="nan"),
             node("IsInf", ["x"], ["inf"], name="inf"),
             node("IsInf", ["x"], ["pos"], name="pos", attrs=[attr_int("detect_negative", 0)]),
             node("IsInf", ["x"], ["neg"], name="neg", attrs=[attr_int("detect_positive", 0)]),
             node("Where", ["nan", "zero", "x"], ["clean"], name="clean")]
    outs = [value_info(n, [2, 4], 9) for n in ("nan", "inf", "pos", "neg")]
    with open(dtype + ".onnx", "wb") as f:
        f.write(model(nodes, [value_info("x", [2, 4], elem)],
                      outs + [value_info("clean", [2, 4], elem)], [array_tensor("zero", zero, elem)]))
    np.save(dtype + ".x.npy", x)
    os.makedirs(dtype + ".ref")
    np.save(dtype + ".ref/nan.npy", np.isnan(x).astype(np.int32))
    np.save(dtype + ".ref/inf.npy", np.isinf(x).astype(np.int32))
    np.save(dtype + ".ref/pos.npy", (x == np.inf).astype(np.int32))
    np.save(dtype + ".ref/neg.npy", (x == -np.inf).astype(np.int32))
    np.save(dtype + ".ref/clean.npy", np.where(np.isnan(x), zero, x))
with open("int.onnx", "wb") as f:
    f.write(model([node("IsNaN", ["i"], ["y"], name="nan")], [value_info("i", [3], INT64)],
                  [value_info("y", [3], 9)]))
EOF2
for t in f32 f16; do
    for o in O0 O2; do
        expect_status 0 "$TEC" -$o $t.onnx --input x=$t.x.npy --save-outputs $t.$o
        "$PYTHON" - $t.ref $t.$o <<'EOF2' || fail "$t: wrong result at -$o"
import os, sys
import numpy as np
bad = 0
for f in sorted(os.listdir(sys.argv[1])):
    want, got = np.load(os.path.join(sys.argv[1], f)), np.load(os.path.join(sys.argv[2], f))
    if want.dtype != got.dtype or not np.array_equal(want, got, equal_nan=True):
        print(f, "want", want.dtype, want.tolist(), "got", got.dtype, got.tolist())
        bad += 1
sys.exit(bad)
EOF2
    done
done
expect_status 1 "$TEC" int.onnx
expect_err "int.onnx: error: node 'nan' (IsNaN, opset 13): dtype i64 is not supported by IsNaN (it takes float and double)"
echo ok
