# An imported ONNX model's program imports tec's op library, nn.te, from
# tec's own folders (-I, the build or installed tree): a file named nn.te
# beside the model (in a downloaded model's folder, say) is not taken for
# it, so it cannot change what the model's ops compute.  A .te program
# still imports from its own folder first.
. "$srcdir/testsuite/cli/lib.inc"
"$PYTHON" - "$srcdir/testsuite/onnx" <<'PY' || fail "cannot build the model"
import sys
sys.path.insert(0, sys.argv[1])
from make_hostile import node, value_info, model
open("m.onnx", "wb").write(model([node("Relu", ["x"], ["y"], name="r")],
                                 [value_info("x", [2, 3])], [value_info("y", [2, 3])], []))
PY
expect_status 0 "$TEC" --interp m.onnx
mv out want
# a planted library whose relu multiplies by 1000
printf 'def relu(x: f32[N, C]) -> y: f32[N, C] {\n    y[n, c] = x[n, c] * 1000\n}\n' >nn.te
expect_status 0 "$TEC" --interp m.onnx
diff -u want out || fail "nn.te beside the model replaced tec's op library"
expect_status 0 "$TEC" -O1 m.onnx
diff -u want out || fail "nn.te beside the model replaced tec's op library (-O1)"
# a .te program beside it imports it, as documented
printf 'import "nn.te"\ninput x: f32[2, 3]\ny = relu(x)\noutput y\n' >p.te
expect_status 0 "$TEC" --interp p.te
grep -q '^y: f32\[2, 3\]  min -' out || { cat out; fail "p.te did not import the nn.te beside it"; }
