# Det (torch.det and torch.linalg.det; it was refused) of 1x1 to 4x4
# matrices by the expansion in cofactors: one matrix (a scalar result) and
# batches [2, 3, n, n], f32 and f64, against NumPy's LU determinant at -O0
# and -O2; a 5x5 matrix is refused by name.
. "$srcdir/testsuite/cli/lib.inc"
"$PYTHON" - "$srcdir/testsuite/onnx" <<'EOF2' || fail "cannot write the models"
import os, sys
sys.path.insert(0, sys.argv[1])
from make_hostile import FLOAT, model, node, value_info
import numpy as np
DOUBLE = 11
rng = np.random.default_rng(9)
nodes, ins, outs = [], {}, {}
for n in (1, 2, 3, 4):
    for tag, elem, dt in (("f32", FLOAT, np.float32), ("f64", DOUBLE, np.float64)):
        for shape in ((n, n), (2, 3, n, n)):
            name = "d%d_%s_%d" % (n, tag, len(shape))
            a = rng.standard_normal(shape).astype(dt)
            ins["x" + name] = (a, elem)
            nodes.append(node("Det", ["x" + name], [name]))
            outs[name] = (np.asarray(np.linalg.det(a.astype(np.float64)), dt), elem)
with open("m.onnx", "wb") as f:
    f.write(model(nodes, [value_info(k, list(a.shape), e) for k, (a, e) in ins.items()],
                  [value_info(k, list(a.shape), e) for k, (a, e) in outs.items()], opset=13))
with open("args", "w") as f:
    f.write(" ".join("--input %s=%s.npy" % (k, k) for k in ins))
for k, (a, e) in ins.items():
    np.save(k + ".npy", a)
os.mkdir("ref")
for k, (a, e) in outs.items():
    np.save("ref/%s.npy" % k, a)
with open("big.onnx", "wb") as f:
    f.write(model([node("Det", ["x"], ["y"], name="det")], [value_info("x", [5, 5])],
                  [value_info("y", [])], opset=13))
EOF2
for o in O0 O2; do
    expect_status 0 "$TEC" -$o m.onnx $(cat args) --save-outputs $o
    "$PYTHON" "$srcdir/testsuite/compare.py" ref $o || fail "wrong result at -$o"
done
expect_status 1 "$TEC" big.onnx
expect_err "big.onnx: error: node 'det' (Det, opset 13): the determinant of 5x5 matrices is not supported (tec computes those of at most 4x4, by their expansion in cofactors)"
echo ok
