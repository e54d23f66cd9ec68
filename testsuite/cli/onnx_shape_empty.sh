# Shape of a scalar is an empty 1-D tensor, known at import time (it was
# refused: "the shape is empty"): PyTorch's export of x.sum() that is then
# reshaped (torch.sort of a flattened sum, Concat of its Shape's Slice with
# a constant) reads it.  m.onnx: the Shape of a ReduceSum over every axis
# (keepdims 0), sliced and concatenated with [1] into the shape of a
# Reshape; the Shape of x with start 2 and end 1 (empty) concatenated with
# [2, 3] into another.  Against NumPy at -O0 and -O2.
. "$srcdir/testsuite/cli/lib.inc"
"$PYTHON" - "$srcdir/testsuite/onnx" <<'EOF2' || fail "cannot write the models"
import os, sys
sys.path.insert(0, sys.argv[1])
from make_hostile import INT64, array_tensor, field, model, node, value_info
import numpy as np
def attr_int(name, v):
    return [field(1, name), field(20, 2), field(3, v)]
x = np.arange(6, dtype=np.float32).reshape(6) - 2.5
nodes = [node("ReduceSum", ["x"], ["s"], attrs=[attr_int("keepdims", 0)]),
         node("Shape", ["s"], ["ss"]),
         node("Slice", ["ss", "zero", "big"], ["sl"]),
         node("Concat", ["sl", "one"], ["shp"], attrs=[attr_int("axis", 0)]),
         node("Reshape", ["s", "shp"], ["a"]),
         node("Shape", ["x"], ["e"], attrs=[attr_int("start", 2), attr_int("end", 1)]),
         node("Concat", ["e", "twothree"], ["shp2"], attrs=[attr_int("axis", 0)]),
         node("Reshape", ["x", "shp2"], ["b"])]
inits = [array_tensor("zero", np.array([0], np.int64), INT64),
         array_tensor("big", np.array([9], np.int64), INT64),
         array_tensor("one", np.array([1], np.int64), INT64),
         array_tensor("twothree", np.array([2, 3], np.int64), INT64)]
with open("m.onnx", "wb") as f:
    f.write(model(nodes, [value_info("x", [6])], [value_info("a", [1]), value_info("b", [2, 3])],
                  inits, opset=15))
np.save("x.npy", x)
os.mkdir("ref")
np.save("ref/a.npy", np.array([x.sum()], np.float32))
np.save("ref/b.npy", x.reshape(2, 3))
EOF2
for mode in -O0 -O2; do
    expect_status 0 "$TEC" $mode m.onnx --input x=x.npy --save-outputs o$mode
    "$PYTHON" "$srcdir/testsuite/compare.py" ref o$mode || fail "$mode: wrong result"
done
echo ok
