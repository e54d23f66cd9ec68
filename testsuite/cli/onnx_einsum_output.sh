# Einsum's output letters: one twice ("ij->ii", refused by ONNX and numpy)
# and more than tec's 8 dimensions are located errors naming the node, exit
# status 1 (the first gave a program tec then refused as an internal error,
# exit 70; the second wrote past the result's shape array).
. "$srcdir/testsuite/cli/lib.inc"
"$PYTHON" - "$srcdir/testsuite/onnx" <<'PY' || fail "cannot write the models"
import struct, sys
sys.path.insert(0, sys.argv[1])
from make_hostile import field, model, node, value_info, tensor, floats

def equation(eq):
    return [field(1, "equation"), field(20, 3), field(4, eq)]
open("twice.onnx", "wb").write(model(
    [node("Einsum", ["x"], ["y"], name="e", attrs=[equation("ij->ii")])],
    [value_info("x", [3, 3])], [value_info("y", [3, 3])], opset=12))
open("wide.onnx", "wb").write(model(
    [node("Einsum", ["x", "c"], ["y"], name="e",
          attrs=[equation("abcdefgh,ijklmnop->abcdefghijklmnop")])],
    [value_info("x", [1] * 8)], [value_info("y", [1] * 16)],
    [tensor("c", [1] * 8, floats(1))], opset=12))
PY
expect_status 1 "$TEC" twice.onnx
expect_err "twice.onnx: error: node 'e' (Einsum, opset 12): output letter 'i' is in the output twice"
expect_status 1 "$TEC" wide.onnx
expect_err "wide.onnx: error: node 'e' (Einsum, opset 12): output letter 'i' makes the result more than 8-D"
echo ok
