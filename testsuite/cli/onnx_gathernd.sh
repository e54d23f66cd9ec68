# GatherND (PyTorch's torch.diagonal exports EyeLike, NonZero and
# GatherND; they were refused), EyeLike and NonZero: slices (k < rank),
# elements (k = rank, a scalar result from rank-1 indices), batch_dims 1,
# negative indices, f32 and int64 data, against NumPy at -O0 and -O2;
# EyeLike with k and a dtype, and NonZero of a known mask, fold (the
# diagonal model's output is the data's diagonal); NonZero of a run-time
# tensor is refused by name, saying why.
. "$srcdir/testsuite/cli/lib.inc"
"$PYTHON" - "$srcdir/testsuite/onnx" <<'EOF2' || fail "cannot write the models"
import os, sys
sys.path.insert(0, sys.argv[1])
from make_hostile import FLOAT, INT64, array_tensor, field, model, node, value_info
import numpy as np
rng = np.random.default_rng(6)
def attr_int(name, v):
    return [field(1, name), field(20, 2), field(3, v)]
x = rng.standard_normal((3, 4, 5)).astype(np.float32)
xi = rng.integers(-9, 9, (3, 4, 5)).astype(np.int64)
def gather(data, idx, b=0):
    out = np.empty(idx.shape[:-1] + data.shape[b + idx.shape[-1]:], data.dtype)
    for j in np.ndindex(*idx.shape[:-1]):
        out[j] = data[tuple(j[:b]) + tuple(int(i) for i in idx[j])]
    return out
cases = {"slices": (np.array([[0, 1], [2, -1], [-3, 3]], np.int64), 0),        # [3, 2] -> [3, 5]
         "elems": (np.array([[[0, 1, 2]], [[2, 3, -1]]], np.int64), 0),     # [2, 1, 3] -> [2, 1]
         "scalar": (np.array([1, 2, 3], np.int64), 0),                      # [3] -> []
         "batch": (np.array([[1, 4], [0, 0], [3, -5]], np.int64), 1)}       # [3, 2] -> [3]
nodes, outs, inits = [], {}, []
for name, (idx, b) in cases.items():
    inits.append(array_tensor("i_" + name, idx, INT64))
    nodes.append(node("GatherND", ["x", "i_" + name], [name], attrs=[attr_int("batch_dims", b)]))
    outs[name] = gather(x, idx, b)
nodes.append(node("GatherND", ["xi", "i_slices"], ["int"]))
outs["int"] = gather(xi, cases["slices"][0])
# torch.diagonal(x[0, :, :4], 1): EyeLike(k=1) -> NonZero -> GatherND
sq = np.array([4, 4], np.int64)
nodes += [node("Slice", ["x", "st", "en", "ax"], ["x0"]), node("Reshape", ["x0", "sq"], ["m"]),
          node("EyeLike", ["m"], ["eye"], attrs=[attr_int("k", 1), attr_int("dtype", 9)]),
          node("NonZero", ["eye"], ["nz"]), node("Transpose", ["nz"], ["nzt"]),
          node("GatherND", ["m", "nzt"], ["diag"])]
inits += [array_tensor("st", np.array([0, 0, 0], np.int64), INT64),
          array_tensor("en", np.array([1, 4, 4], np.int64), INT64),
          array_tensor("ax", np.array([0, 1, 2], np.int64), INT64), array_tensor("sq", sq, INT64)]
outs["diag"] = np.diagonal(x[0, :, :4], 1).copy()
elem = lambda a: INT64 if a.dtype == np.int64 else FLOAT
with open("m.onnx", "wb") as f:
    f.write(model(nodes, [value_info("x", list(x.shape)), value_info("xi", list(xi.shape), INT64)],
                  [value_info(n, list(a.shape), elem(a)) for n, a in outs.items()], inits, opset=13))
np.save("x.npy", x)
np.save("xi.npy", xi)
os.mkdir("ref")
for n, a in outs.items():
    np.save("ref/%s.npy" % n, a)
with open("nz.onnx", "wb") as f:
    f.write(model([node("NonZero", ["x"], ["y"], name="nz")], [value_info("x", [3])],
                  [value_info("y", [1, 3], INT64)], opset=13))
EOF2
for o in O0 O2; do
    expect_status 0 "$TEC" -$o m.onnx --input x=x.npy --input xi=xi.npy --save-outputs $o
    "$PYTHON" "$srcdir/testsuite/compare.py" ref $o || fail "wrong result at -$o"
done
expect_status 1 "$TEC" nz.onnx
expect_err "nz.onnx: error: node 'nz' (NonZero, opset 13): its output's shape depends on the values of its input (one column per non-zero element), and tec's shapes are fixed when it imports the model: NonZero is computed only of a value known then, but 'x' is computed at run time"
echo ok
