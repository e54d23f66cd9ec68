# ScatterND of run-time tensors (PyTorch's slice assignment `x[:, 1:3] = v`
# and index_put; it was computed only when every input was known): indices
# known at import time (a table of the last slice writing each position)
# and given at run time (each position matches the slices' indices), rows
# (k = 1) and elements (k = 2), batch dimensions 0 to 2, duplicates (the
# last one wins), negative indices, reductions add and mul, f32 and int64
# data; equal to NumPy's loop at -O0 and -O2.  An index out of range known
# at import time and the reduction max are refused by name.
. "$srcdir/testsuite/cli/lib.inc"
"$PYTHON" - "$srcdir/testsuite/onnx" <<'EOF2' || fail "cannot write the models"
import os, sys
sys.path.insert(0, sys.argv[1])
from make_hostile import FLOAT, INT64, array_tensor, field, model, node, value_info
import numpy as np
rng = np.random.default_rng(5)
def attr_str(name, v):
    return [field(1, name), field(20, 3), field(4, v)]
def scatter(data, idx, upd, red):
    y = data.copy()
    k = idx.shape[-1]
    for j in np.ndindex(*idx.shape[:-1]):      # in order: a later duplicate wins
        at = tuple(int(i) % data.shape[d] for d, i in enumerate(idx[j]))
        if red == "add":
            y[at] = y[at] + upd[j]
        elif red == "mul":
            y[at] = y[at] * upd[j]
        else:
            y[at] = upd[j]
    return y
x = rng.standard_normal((4, 5, 3)).astype(np.float32)
xi = rng.integers(-9, 9, (4, 5, 3)).astype(np.int64)
cases = {   # name: indices, reduction
    "rows": (np.array([[[0], [2]], [[-1], [2]]], np.int64), "none"),        # B = [2, 2], k = 1
    "elems": (np.array([[1, 4], [3, -5], [1, 4]], np.int64), "none"),       # B = [3], k = 2
    "one": (np.array([2, 1, 0], np.int64), "none"),                         # B = [], k = 3
    "add": (np.array([[1, 4], [3, -5], [1, 4]], np.int64), "add"),
    "mul": (np.array([[0], [3], [0]], np.int64), "mul"),
}
nodes, ins, outs, inits = [], {"x": x, "xi": xi}, {}, []
for name, (idx, red) in cases.items():
    ushape = idx.shape[:-1] + x.shape[idx.shape[-1]:]
    u = rng.standard_normal(ushape).astype(np.float32)
    ins["u_" + name] = u
    attrs = [] if red == "none" else [attr_str("reduction", red)]
    # indices known (an initializer) and given at run time (a graph input)
    inits.append(array_tensor("k_" + name, idx, INT64))
    ins["r_" + name] = idx
    nodes.append(node("ScatterND", ["x", "k_" + name, "u_" + name], ["known_" + name], attrs=attrs))
    nodes.append(node("ScatterND", ["x", "r_" + name, "u_" + name], ["run_" + name], attrs=attrs))
    outs["known_" + name] = outs["run_" + name] = scatter(x, idx, u, red)
ui = rng.integers(-9, 9, (2, 2, 5, 3)).astype(np.int64)
ins["ui"] = ui
nodes.append(node("ScatterND", ["xi", "k_rows", "ui"], ["int_rows"]))
outs["int_rows"] = scatter(xi, cases["rows"][0], ui, "none")
elem = lambda a: INT64 if a.dtype == np.int64 else FLOAT
with open("m.onnx", "wb") as f:
    f.write(model(nodes, [value_info(n, list(a.shape), elem(a)) for n, a in ins.items()],
                  [value_info(n, list(a.shape), elem(a)) for n, a in outs.items()], inits, opset=16))
with open("args", "w") as f:
    f.write(" ".join("--input %s=%s.npy" % (n, n) for n in ins))
for n, a in ins.items():
    np.save(n + ".npy", a)
os.mkdir("ref")
for n, a in outs.items():
    np.save("ref/%s.npy" % n, a)
def one(path, idx, red, opset=16):
    with open(path, "wb") as f:
        f.write(model([node("ScatterND", ["x", "i", "u"], ["y"], name="s",
                            attrs=[attr_str("reduction", red)] if red else [])],
                      [value_info("x", [4, 5, 3]), value_info("u", [1, 5, 3])],
                      [value_info("y", [4, 5, 3])], [array_tensor("i", idx, INT64)], opset=opset))
one("range.onnx", np.array([[4]], np.int64), None)
one("max.onnx", np.array([[1]], np.int64), "max", opset=18)
EOF2
for o in O0 O2; do
    expect_status 0 "$TEC" -$o m.onnx $(cat args) --save-outputs $o
    "$PYTHON" "$srcdir/testsuite/compare.py" ref $o || fail "wrong result at -$o"
done
expect_status 1 "$TEC" range.onnx
expect_err "range.onnx: error: node 's' (ScatterND, opset 16): index 4 is out of range for dimension 0 of size 4"
expect_status 1 "$TEC" max.onnx
expect_err "max.onnx: error: node 's' (ScatterND, opset 18): reduction 'max' is not supported (none, add and mul are)"
echo ok
