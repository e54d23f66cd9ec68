# CastLike (opset 15: Cast to the dtype of a second input; it was refused):
# to f64 and f16 targets, to a bool target (a comparison's output, seen
# through an Unsqueeze and Squeeze: x != 0), to an int32 target (a Cast to
# int32, a Where of an Add of it: truncation), to a graph input declared
# bool; an int32 constant
# target, which could be a bool (tec holds bool in int32), is refused.
# Against NumPy at -O0.
. "$srcdir/testsuite/cli/lib.inc"
"$PYTHON" - "$srcdir/testsuite/onnx" <<'EOF2' || fail "cannot write the models"
import os, sys
sys.path.insert(0, sys.argv[1])
from make_hostile import FLOAT, INT64, array_tensor, field, model, node, value_info
import numpy as np
DOUBLE, FLOAT16, INT32, BOOL = 11, 10, 6, 9
def attr_int(name, v):
    return [field(1, name), field(20, 2), field(3, v)]
x = np.array([0.0, 0.5, -1.75, 2.25, -0.25, 3.0], np.float32)
nodes = [node("Constant", [], ["d"], attrs=[[field(1, "value"), field(20, 4),
                                             field(5, array_tensor("", np.zeros(1), DOUBLE))]]),
         node("CastLike", ["x", "d"], ["to_f64"]),
         node("Cast", ["x"], ["h"], attrs=[attr_int("to", FLOAT16)]),
         node("CastLike", ["x", "h"], ["to_f16"]),
         node("Greater", ["x", "x"], ["g"]),
         node("Unsqueeze", ["g", "ax"], ["g1"]), node("Squeeze", ["g1", "ax"], ["g2"]),
         node("CastLike", ["x", "g2"], ["to_bool"]),
         node("Cast", ["x"], ["i"], attrs=[attr_int("to", INT32)]),
         node("CastLike", ["x", "i"], ["to_i32"]),
         node("Add", ["i", "i"], ["ii"]), node("Where", ["g", "ii", "i"], ["wi"]),
         node("CastLike", ["x", "wi"], ["to_sum_i32"]),
         node("CastLike", ["x", "b"], ["to_input_bool"])]
outs = {"to_f64": x.astype(np.float64), "to_f16": x.astype(np.float16),
        "to_bool": (x != 0).astype(np.int32), "to_i32": x.astype(np.int32),
        "to_sum_i32": x.astype(np.int32),
        "to_input_bool": (x != 0).astype(np.int32)}
elem = {np.float64: DOUBLE, np.float16: FLOAT16, np.int32: INT32}
with open("m.onnx", "wb") as f:
    f.write(model(nodes, [value_info("x", [6]), value_info("b", [1], BOOL)],
                  [value_info(n, list(a.shape), elem[a.dtype.type]) for n, a in outs.items()],
                  [array_tensor("ax", np.array([0], np.int64), INT64)], opset=15))
np.save("x.npy", x)
np.save("b.npy", np.array([1], np.int32))     # (bool inputs are given as int32)
os.mkdir("ref")
for n, a in outs.items():
    np.save("ref/%s.npy" % n, a)
with open("const.onnx", "wb") as f:
    f.write(model([node("CastLike", ["x", "c"], ["y"], name="cl")], [value_info("x", [6])],
                  [value_info("y", [6], INT32)],
                  [array_tensor("c", np.zeros(1, np.int32), INT32)], opset=15))
EOF2
expect_status 0 "$TEC" -O0 m.onnx --input x=x.npy --input b=b.npy --save-outputs o
"$PYTHON" "$srcdir/testsuite/compare.py" ref o || fail "wrong result"
expect_status 1 "$TEC" const.onnx
expect_err "const.onnx: error: node 'cl' (CastLike, opset 15): target 'c' is an int32 or bool constant, which tec cannot tell apart (it holds bool in int32)"
echo ok
