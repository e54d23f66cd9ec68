# OneHot (PyTorch's F.one_hot exports it; it was refused): int64 indices
# with negative ones (counting from the end) and ones out of range (all
# off), the new axis last, first and in the middle, float values (off -1,
# on 3) and int64 ones, float indices (truncated, as ONNX Runtime casts
# them); equal to NumPy's at -O0 and -O2.  A depth computed at run time is
# refused by name.
. "$srcdir/testsuite/cli/lib.inc"
"$PYTHON" - "$srcdir/testsuite/onnx" <<'EOF2' || fail "cannot write the models"
import os, sys
sys.path.insert(0, sys.argv[1])
from make_hostile import FLOAT, INT64, array_tensor, field, model, node, value_info
import numpy as np
def attr_int(name, v):
    return [field(1, name), field(20, 2), field(3, v)]
def one_hot(idx, depth, off, on, axis):
    i = np.trunc(idx).astype(np.int64)
    i = np.where(i < 0, i + depth, i)
    y = (i[..., None] == np.arange(depth)).astype(np.float64) * (on - off) + off
    return np.moveaxis(y, -1, axis if axis >= 0 else axis + idx.ndim + 1)
idx = np.array([[0, 3, -1, 5], [2, -4, -5, 1], [4, 4, 0, -2]], np.int64)
fidx = np.array([[0.5, 3.9, -1.2, 2.0]], np.float32)
depth = 4
nodes = [node("OneHot", ["i", "depth", "fvals"], ["last"], name="last"),
         node("OneHot", ["i", "depth", "ivals"], ["first"], name="first",
              attrs=[attr_int("axis", 0)]),
         node("OneHot", ["i", "depth", "fvals"], ["mid"], name="mid",
              attrs=[attr_int("axis", -2)]),
         node("OneHot", ["f", "depth", "fvals"], ["ff"], name="ff")]
outs = {"last": one_hot(idx, depth, -1, 3, -1).astype(np.float32),
        "first": one_hot(idx, depth, 0, 1, 0).astype(np.int64),
        "mid": one_hot(idx, depth, -1, 3, -2).astype(np.float32),
        "ff": one_hot(fidx, depth, -1, 3, -1).astype(np.float32)}
with open("m.onnx", "wb") as f:
    f.write(model(nodes, [value_info("i", [3, 4], INT64), value_info("f", [1, 4])],
                  [value_info(n, list(v.shape), INT64 if v.dtype == np.int64 else FLOAT)
                   for n, v in outs.items()],
                  [array_tensor("depth", np.array(depth, np.int64), INT64),
                   array_tensor("fvals", np.array([-1, 3], np.float32), FLOAT),
                   array_tensor("ivals", np.array([0, 1], np.int64), INT64)]))
np.save("i.npy", idx)
np.save("f.npy", fidx)
os.mkdir("ref")
for n, v in outs.items():
    np.save("ref/%s.npy" % n, v)
with open("dyn.onnx", "wb") as f:
    f.write(model([node("ReduceMax", ["i"], ["d"], name="d", attrs=[attr_int("keepdims", 0)]),
                   node("OneHot", ["i", "d", "fvals"], ["y"], name="hot")],
                  [value_info("i", [3], INT64)], [value_info("y", [3, 4])],
                  [array_tensor("fvals", np.array([0, 1], np.float32), FLOAT)]))
EOF2
for o in O0 O2; do
    expect_status 0 "$TEC" -$o m.onnx --input i=i.npy --input f=f.npy --save-outputs $o
    "$PYTHON" "$srcdir/testsuite/compare.py" ref $o || fail "wrong result at -$o"
done
expect_status 1 "$TEC" dyn.onnx
expect_err "dyn.onnx: error: node 'hot' (OneHot, opset 13): depth ('d') must be one value known at import time"
echo ok
