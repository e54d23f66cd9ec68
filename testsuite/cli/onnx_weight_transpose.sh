# An export without constant folding (torch.onnx.export's
# do_constant_folding=False) keeps nn.Linear's weight transpose in the
# graph: a Transpose of an initializer too large to fold (more than 4096
# elements), read by a MatMul.  Its view was written of a value without a
# .te name ("permute((null), 1, 0)": the program did not compile); the
# transpose is now a layer of its own that the weight is a param of.
. "$srcdir/testsuite/cli/lib.inc"
"$PYTHON" - "$srcdir/testsuite/onnx" <<'PY' || fail "cannot write the model"
import sys
sys.path.insert(0, sys.argv[1])
from make_hostile import field, model, node, value_info, tensor, attr_ints
import numpy as np

rng = np.random.default_rng(0)
w = rng.standard_normal((96, 64)).astype(np.float32)     # [out, in], 6144 elements
x = rng.standard_normal((3, 64)).astype(np.float32)
open("m.onnx", "wb").write(model(
    [node("Transpose", ["w"], ["wt"], name="t", attrs=[attr_ints("perm", [1, 0])]),
     node("MatMul", ["x", "wt"], ["y"], name="mm")],
    [value_info("x", [3, 64])], [value_info("y", [3, 96])],
    [tensor("w", [96, 64], w.tobytes())]))
np.save("x.npy", x)
np.save("want.npy", x.astype(np.float64) @ w.T.astype(np.float64))
PY
for opt in -O0 -O2; do
    expect_status 0 timeout 120 "$TEC" $opt m.onnx --input x=x.npy --save-outputs o$opt
    "$PYTHON" -c "
import numpy as np, sys
y, want = np.load('o$opt/y.npy'), np.load('want.npy')
sys.exit(0 if np.abs(y - want).max() <= 1e-5 * np.abs(want).max() else 1)" ||
        fail "$opt: y differs from x @ w.T"
done
echo ok
