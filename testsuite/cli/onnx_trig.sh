# The inverse and hyperbolic trigonometric ops (Tan, Atan, Asin, Acos,
# Sinh, Cosh, Asinh, Acosh, Atanh: PyTorch 2's exports of torch.atan2,
# asin ...; they were refused), which the language has no functions for
# and the importer writes with exp, log, sqrt, sin and cos: against NumPy
# (in f64) over the whole range of f32 and f64 inputs - 0, tiny, the
# formulas' switch points, +-1, large, +-inf, NaN - at -O0 and -O2 (the
# vector math), element by element: the same NaNs and infinities, the
# finite values within a few ulp.
. "$srcdir/testsuite/cli/lib.inc"
"$PYTHON" - "$srcdir/testsuite/onnx" <<'EOF2' || fail "cannot write the models"
import os, sys
sys.path.insert(0, sys.argv[1])
from make_hostile import FLOAT, model, node, value_info
import numpy as np
DOUBLE = 11
rng = np.random.default_rng(7)
edge = [0.0, 1e-30, 1e-6, 0.01, 0.1, 0.124, 0.125, 0.126, 0.25, 0.2679, 0.268, 0.4, 0.49, 0.5,
        0.51, 0.9, 0.99, 0.999, 1.0, 1.001, 1.01, 1.5, 1.99, 2.0, 2.01, 3.0, 10.0, 88.0, 89.0,
        700.0, 1e5, 1e8, 2e8, 1e30, np.inf]
vals = np.array(edge + [-v for v in edge] + [np.nan] + list(rng.uniform(-3, 3, 64)) +
                list(np.exp(rng.uniform(-20, 20, 32))))
ops = ["Atan", "Asin", "Acos", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh"]
fn = {"Atan": np.arctan, "Asin": np.arcsin, "Acos": np.arccos, "Sinh": np.sinh, "Cosh": np.cosh,
      "Asinh": np.arcsinh, "Acosh": np.arccosh, "Atanh": np.arctanh, "Tan": np.tan}
t = rng.uniform(-6, 6, 61).tolist() + [0.0, 1e-20, -1e-20, 1.5, -1.5, 1.57, 3.14, 100.0]
for tag, elem, dt in (("f32", FLOAT, np.float32), ("f64", DOUBLE, np.float64)):
    x = vals.astype(dt)
    xt = np.array(t, dt)
    nodes = [node(o, ["x"], [o.lower()], name=o.lower()) for o in ops]
    nodes.append(node("Tan", ["xt"], ["tan"], name="tan"))
    with open(tag + ".onnx", "wb") as f:
        f.write(model(nodes, [value_info("x", [len(x)], elem), value_info("xt", [len(xt)], elem)],
                      [value_info(o.lower(), [len(x)], elem) for o in ops] +
                      [value_info("tan", [len(xt)], elem)], opset=13))
    np.save(tag + "_x.npy", x)
    np.save(tag + "_xt.npy", xt)
    os.makedirs("ref_" + tag)
    with np.errstate(all="ignore"):
        for o in ops + ["Tan"]:
            np.save("ref_%s/%s.npy" % (tag, o.lower()),
                    fn[o]((xt if o == "Tan" else x).astype(np.float64)))
EOF2
cat > cmp.py <<'EOF2'
import os, sys
import numpy as np
ref, got, ulps = sys.argv[1], sys.argv[2], float(sys.argv[3])
bad = False
for f in sorted(os.listdir(ref)):
    e = np.load(os.path.join(ref, f))
    g = np.load(os.path.join(got, f))
    eps = np.finfo(g.dtype).eps
    e = e.astype(g.dtype).astype(np.float64)       # the exact value, rounded once
    g = g.astype(np.float64)
    same = (np.isnan(e) & np.isnan(g)) | (e == g)
    tiny = np.finfo(g.dtype).tiny
    close = np.abs(g - e) <= ulps * eps * np.maximum(np.abs(e), tiny)
    wrong = ~(same | (np.isfinite(e) & close))
    if wrong.any():
        i = np.argmax(wrong)
        print("%s: %d wrong, e.g. %r expected %r" % (f, wrong.sum(), g[i], e[i]))
        bad = True
sys.exit(1 if bad else 0)
EOF2
for o in O0 O2; do
    for t in f32 f64; do
        expect_status 0 "$TEC" -$o $t.onnx --input x=${t}_x.npy --input xt=${t}_xt.npy \
            --save-outputs $o$t
        "$PYTHON" cmp.py ref_$t $o$t 8 || fail "wrong result ($t, -$o)"
    done
done
echo ok
