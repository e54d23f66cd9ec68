# ScatterElements of run-time data (torch.scatter and scatter_add, a GNN's
# message sums; it was refused), and Scatter, its name before opset 11:
# along axis 1 and 0 (as -2), negative indices counting from the end,
# duplicate indices (reduction none: the last one's update; add: the sum),
# indices smaller than the data in the other dimension (the rest of the
# data is kept), f32 and int64 data; equal to NumPy's at -O0 and -O2.  A
# reduction other than none, add and mul (testsuite/cli/onnx_scatter_fold.sh)
# is refused by name.
. "$srcdir/testsuite/cli/lib.inc"
"$PYTHON" - "$srcdir/testsuite/onnx" <<'EOF2' || fail "cannot write the models"
import os, sys
sys.path.insert(0, sys.argv[1])
from make_hostile import FLOAT, INT64, array_tensor, field, model, node, value_info
import numpy as np
rng = np.random.default_rng(4)
def attr_int(name, v):
    return [field(1, name), field(20, 2), field(3, v)]
def attr_str(name, v):
    return [field(1, name), field(20, 3), field(4, v)]
def scatter(data, idx, upd, axis, add):
    y = data.copy()
    for pos in np.ndindex(*idx.shape):       # in order: a later duplicate wins
        at = list(pos)
        at[axis] = idx[pos] % data.shape[axis]
        y[tuple(at)] = y[tuple(at)] + upd[pos] if add else upd[pos]
    return y
x = rng.standard_normal((3, 5)).astype(np.float32)
xi = rng.integers(-9, 9, (3, 5)).astype(np.int64)
i1 = np.array([[0, 4, -1, 2], [1, 1, 3, -5]], np.int64)       # axis 1, rows 0-1 of 3, duplicates
i0 = np.array([[2, -1, 0], [0, 1, -3]], np.int64)              # axis 0, columns 0-2 of 5
u1 = rng.standard_normal(i1.shape).astype(np.float32)
u0 = rng.standard_normal(i0.shape).astype(np.float32)
ui = rng.integers(-9, 9, i1.shape).astype(np.int64)
nodes = [node("ScatterElements", ["x", "i1", "u1"], ["none1"], name="none1", attrs=[attr_int("axis", 1)]),
         node("ScatterElements", ["x", "i1", "u1"], ["add1"], name="add1",
              attrs=[attr_int("axis", 1), attr_str("reduction", "add")]),
         node("ScatterElements", ["x", "i0", "u0"], ["none0"], name="none0", attrs=[attr_int("axis", -2)]),
         node("ScatterElements", ["x", "i0", "u0"], ["add0"], name="add0",
              attrs=[attr_str("reduction", "add")]),
         node("ScatterElements", ["xi", "i1", "ui"], ["int1"], name="int1", attrs=[attr_int("axis", 1)])]
outs = {"none1": scatter(x, i1, u1, 1, False), "add1": scatter(x, i1, u1, 1, True),
        "none0": scatter(x, i0, u0, 0, False), "add0": scatter(x, i0, u0, 0, True),
        "int1": scatter(xi, i1, ui, 1, False)}
ins = {"x": x, "xi": xi, "u1": u1, "u0": u0, "ui": ui}
elem = lambda a: INT64 if a.dtype == np.int64 else FLOAT
with open("m.onnx", "wb") as f:
    f.write(model(nodes, [value_info(n, list(a.shape), elem(a)) for n, a in ins.items()],
                  [value_info(n, list(a.shape), elem(a)) for n, a in outs.items()],
                  [array_tensor("i1", i1, INT64), array_tensor("i0", i0, INT64)], opset=16))
for n, a in ins.items():
    np.save(n + ".npy", a)
os.mkdir("ref")
for n, a in outs.items():
    np.save("ref/%s.npy" % n, a)
# Scatter (opset 9), the same op
with open("old.onnx", "wb") as f:
    f.write(model([node("Scatter", ["x", "i1", "u1"], ["y"], name="old", attrs=[attr_int("axis", 1)])],
                  [value_info("x", [3, 5]), value_info("u1", list(i1.shape))], [value_info("y", [3, 5])],
                  [array_tensor("i1", i1, INT64)], opset=9))
os.mkdir("oldref")
np.save("oldref/y.npy", outs["none1"])
with open("max.onnx", "wb") as f:
    f.write(model([node("ScatterElements", ["x", "i1", "u1"], ["y"], name="max",
                        attrs=[attr_int("axis", 1), attr_str("reduction", "max")])],
                  [value_info("x", [3, 5]), value_info("u1", list(i1.shape))], [value_info("y", [3, 5])],
                  [array_tensor("i1", i1, INT64)], opset=16))
EOF2
for o in O0 O2; do
    expect_status 0 "$TEC" -$o m.onnx --input x=x.npy --input xi=xi.npy --input u1=u1.npy \
        --input u0=u0.npy --input ui=ui.npy --save-outputs $o
    "$PYTHON" "$srcdir/testsuite/compare.py" ref $o || fail "wrong result at -$o"
    expect_status 0 "$TEC" -$o old.onnx --input x=x.npy --input u1=u1.npy --save-outputs old$o
    "$PYTHON" "$srcdir/testsuite/compare.py" oldref old$o || fail "Scatter: wrong result at -$o"
done
expect_status 1 "$TEC" max.onnx
expect_err "max.onnx: error: node 'max' (ScatterElements, opset 16): reduction 'max' is not supported (none, add and mul are)"
echo ok
