# check-onnx-random's TopK generator and checks (testsuite/random/
# check_onnx_random.py op_topk, topk_rule, topk_ok): the stable order of
# equal values, indices out of order, repeated or out of range refused; and
# chains of TopK alone from the generator run by tec and checked by run_tec
# against numpy's stable sort (no ONNX Runtime needed) -- then the same with
# one of tec's index outputs planted wrong, which run_tec must report.
. "$srcdir/testsuite/cli/lib.inc"
"$PYTHON" -c 'import onnx' 2>/dev/null || { echo "skip: no onnx module"; exit 77; }
"$PYTHON" - "$srcdir/testsuite/random" "$TEC" <<'EOF' || fail "TopK checks"
import os, random, sys
sys.path.insert(0, sys.argv[1])
import numpy as np
import onnx
from onnx import numpy_helper
import check_onnx_random as c

x = np.array([[0, 3, 0, 3, 1]], np.float32)
assert c.topk_rule(x, 1, True, 3).tolist() == [[1, 3, 4]]
assert c.topk_rule(x, 1, False, 3).tolist() == [[0, 2, 4]]
xf = x.astype(np.float64)
assert c.topk_ok(xf, np.array([[1., 3, 4]]), 1, True, 3, 1e-4)
assert c.topk_ok(xf, np.array([[3., 1, 4]]), 1, True, 3, 1e-4)       # a tie either way
assert not c.topk_ok(xf, np.array([[1., 1, 4]]), 1, True, 3, 1e-4)   # repeated
assert not c.topk_ok(xf, np.array([[1., 3, 0]]), 1, True, 3, 1e-4)   # not the extremes
assert not c.topk_ok(xf, np.array([[0., 4, 2]]), 1, False, 3, 1e-4)  # out of order
assert not c.topk_ok(xf, np.array([[1., 3, 5]]), 1, True, 3, 1e-4)   # out of range

c.OPS = [(c.op_topk, 1)]
rng = random.Random(7)
runs = 0
for k in range(16):
    model, inputs, outputs, ops, ties = c.gen(rng, k, 7)
    if "TopK" not in ops or set(ops) - {"TopK", "Relu"}:
        continue   # (a quantized section, which numpy here does not compute)
    d = f"m{k}"
    os.makedirs(d + "/in"), os.makedirs(d + "/ort")
    onnx.save(model, d + "/model.onnx")
    for name, v in inputs.items():
        np.save(f"{d}/in/{name}.npy", v)
    # the reference: each node in numpy (TopK by the stable order)
    env = dict(inputs)
    env.update({t.name: numpy_helper.to_array(t) for t in model.graph.initializer})
    for n in model.graph.node:
        a = {at.name: onnx.helper.get_attribute_value(at) for at in n.attribute}
        if n.op_type == "TopK":
            v = env[n.input[0]]
            ax = a["axis"] % v.ndim
            i = c.topk_rule(v, ax, a["largest"] == 1, int(env[n.input[1]][0]))
            env[n.output[0]], env[n.output[1]] = np.take_along_axis(v, i, ax), i
        elif n.op_type == "Cast":
            env[n.output[0]] = env[n.input[0]].astype(np.float32)
        else:
            env[n.output[0]] = np.maximum(env[n.input[0]], 0)   # the chain's closing Relu
    for o in outputs:
        np.save(f"{d}/ort/{o}.npy", env[o])
    status, why = c.run_tec(sys.argv[2], d, "-O2", outputs, ties, 1)
    assert status == "ok", (d, ops, status, why)
    # a wrong index planted in tec's output (the first two swapped where
    # their values differ): a wrapper that rewrites it after tec ran
    idx = next(iter(ties))
    ref = np.load(f"{d}/ort/{idx}.npy")
    t = ties[idx]
    src = env[t["x"]]
    vals = np.take_along_axis(src, ref.astype(np.int64), t["axis"])
    if ref.shape[t["axis"]] >= 2 and not np.all(np.take(vals, 0, t["axis"]) == np.take(vals, 1, t["axis"])):
        with open("wrap", "w") as f:
            f.write(f"""#!/bin/sh
"{sys.argv[2]}" "$@" || exit $?
exec "{sys.executable}" -c 'import numpy as np, sys
p = sys.argv[1]; a = np.load(p); ax = {t["axis"]}
s = [slice(None)] * a.ndim; s[ax] = [1, 0]; b = a.copy(); s2 = list(s); s2[ax] = [0, 1]
b[tuple(s2)] = a[tuple(s)]; np.save(p, b)' "$4/{idx}.npy"
""")
        os.chmod("wrap", 0o755)
        status, why = c.run_tec(os.path.abspath("wrap"), d, "-O2", outputs, ties, 1)
        assert status == "mismatch", (d, status, why)
    runs += 1
assert runs >= 3, runs
EOF
