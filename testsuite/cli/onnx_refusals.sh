# Ops that tec does not take say why, not just "not supported": an output
# shape that depends on values (Unique), random numbers (RandomNormalLike),
# loops tec does not unroll (Scan), optionals (Optional); an unknown op
# keeps the pointer to the list of supported ops.  (Loop and the sequence
# ops are taken when known at import time: onnx_loop.sh.)
. "$srcdir/testsuite/cli/lib.inc"
"$PYTHON" - "$srcdir/testsuite/onnx" <<'EOF2' || fail "cannot write the models"
import sys
sys.path.insert(0, sys.argv[1])
from make_hostile import model, node, value_info
for op in ["Unique", "RandomNormalLike", "Scan", "Optional", "Frobnicate"]:
    with open(op + ".onnx", "wb") as f:
        f.write(model([node(op, ["x"], ["y"], name="n")], [value_info("x", [3])],
                      [value_info("y", [3])], opset=13))
EOF2
check() {
    expect_status 1 "$TEC" $1.onnx
    expect_err "$1.onnx: error: node 'n' ($1, opset 13): op $1 is not supported$2"
}
check Unique ": its output's shape depends on the values of its inputs, and tec's shapes are fixed when it imports the model"
check RandomNormalLike ": it draws random numbers, which tec does not (a model for inference should not)"
check Scan ": tec does not run subgraphs repeatedly (a Loop is unrolled when its trip count and condition are known at import time, and an If is taken when its condition is)"
check Optional ": tec's values are tensors, and sequences known at import time: optionals are not supported"
check Frobnicate " (doc/onnx.md lists the supported ops)"
echo ok
