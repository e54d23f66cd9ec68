# Names a user knows and views without copies: --input takes the model's
# own input name (`input`, a keyword, is the program's t_input); PyTorch's
# scopes are not doubled in layer names (/features/features.1/Relu is layer
# features.1.Relu); Reshape, Transpose, Slice, Squeeze and Unsqueeze of a
# computed tensor are the language's views (no layer of their own), a
# Slice with a negative step down to the first element a kernel; the
# result equals NumPy's.
. "$srcdir/testsuite/cli/lib.inc"
"$PYTHON" - "$srcdir/testsuite/onnx" <<'EOF2' || fail "cannot write the model"
import struct, sys
sys.path.insert(0, sys.argv[1])
from make_hostile import attr_ints, field, model, node, value_info
import numpy as np
INT64 = 7
def ints(name, vals):
    return [field(1, len(vals)), field(2, INT64), field(8, name),
            field(9, struct.pack("<%dq" % len(vals), *vals))]
nodes = [
    node("Relu", ["input"], ["r"], name="/features/features.1/Relu"),
    node("Reshape", ["r", "shape"], ["a"], name="/features/features.1/Reshape"),
    node("Transpose", ["a"], ["t"], name="/features/features.2/Transpose",
         attrs=[attr_ints("perm", [1, 0, 2])]),
    node("Slice", ["t", "starts", "ends", "axes"], ["s"], name="/head/Slice"),
    node("Unsqueeze", ["s", "axes0"], ["u"], name="/head/Unsqueeze"),
    node("Squeeze", ["u", "axes0"], ["q"], name="/head/Squeeze"),
    node("Slice", ["q", "rstart", "rend", "raxes", "rsteps"], ["v"], name="/head/Reverse"),
    node("Neg", ["v"], ["y"], name="/head/Neg"),
]
inits = [ints("shape", [2, 3, 4]), ints("starts", [1]), ints("ends", [3]), ints("axes", [2]),
         ints("axes0", [0]), ints("rstart", [-1]), ints("rend", [-100]), ints("raxes", [2]),
         ints("rsteps", [-1])]
with open("m.onnx", "wb") as f:
    f.write(model(nodes, [value_info("input", [6, 4])], [value_info("y", [3, 2, 2])], inits))
np.save("x.npy", np.arange(-12, 12, dtype=np.float32).reshape(6, 4))
EOF2
expect_status 0 "$TEC" --emit=te m.onnx -o net.te
grep -q '^input t_input: f32\[6, 4\]$' net.te || { cat net.te; fail "no input t_input"; }
grep -q '= relu(t_input) as "features.1.Relu"$' net.te || { cat net.te; fail "layer name doubled"; }
grep -q '= reshape(.*, 2, 3, 4) as "features.1.Reshape"$' net.te &&
    grep -q '= permute(.*, 1, 0, 2) as "features.2.Transpose"$' net.te &&
    grep -q '= slice(.*, 2, 1, 3, 1) as "head.Slice"$' net.te ||
    { cat net.te; fail "Reshape, Transpose and Slice are not views"; }
grep -q 'as "head.Reverse"$' net.te && ! grep -q '= slice(.*as "head.Reverse"$' net.te ||
    { cat net.te; fail "the reversing Slice is not a kernel"; }
# the model's own input name, and the result
expect_status 0 "$TEC" -O2 m.onnx --input input=x.npy --save-outputs o
"$PYTHON" -c "
import numpy as np, sys
x = np.load('x.npy')
want = -np.maximum(x, 0).reshape(2, 3, 4).transpose(1, 0, 2)[:, :, 1:3][:, :, ::-1]
got = np.load('o/y.npy')
sys.exit(0 if got.shape == want.shape and np.array_equal(got, want) else 1)" ||
    fail "wrong result"
# the views make no layers: the profile has the Relu, the reversing Slice
# and the Neg (and whatever copy the output needs), not the view nodes
expect_status 0 "$TEC" -O0 --profile m.onnx --input input=x.npy
! grep -q 'features.1.Reshape\|features.2.Transpose\|head.Unsqueeze\|head.Squeeze' out ||
    { cat out; fail "a view is a layer of the profile"; }
echo ok
