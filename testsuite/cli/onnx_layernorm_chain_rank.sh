# A layer norm chain (ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div, Mul,
# Add) whose exponent 2 or epsilon is a one-element tensor of more
# dimensions than x broadcasts the result to that rank: Pow(d, [[[[2]]]])
# of x [2, 5, 24] gives [1, 2, 5, 24].  Such a chain imports node by node
# (it was one LayerNormalization of x's shape when the exponent had more
# dimensions); its result has numpy's shape and values at -O2 and
# interpreted.
. "$srcdir/testsuite/cli/lib.inc"
"$PYTHON" - "$srcdir/testsuite/onnx" <<'EOF2' || fail "cannot write the models"
import sys
sys.path.insert(0, sys.argv[1])
from make_hostile import array_tensor, attr_ints, model, node, value_info, FLOAT
import numpy as np
rng = np.random.default_rng(17)
x = (rng.standard_normal((2, 5, 24)) * 3 + 1).astype(np.float32)
np.save("x.npy", x)
f32 = lambda name, a: array_tensor(name, np.asarray(a, np.float32), FLOAT)
g = rng.uniform(0.5, 1.5, 24).astype(np.float32)
b = rng.uniform(-1, 1, 24).astype(np.float32)
for name, e_shape, eps_shape in [("exponent", (1, 1, 1, 1), ()), ("epsilon", (), (1, 1, 1, 1))]:
    nodes = [node("ReduceMean", ["x"], ["m"], attrs=[attr_ints("axes", [-1])]),
             node("Sub", ["x", "m"], ["d"]), node("Pow", ["d", "e"], ["p"]),
             node("ReduceMean", ["p"], ["v"], attrs=[attr_ints("axes", [-1])]),
             node("Add", ["v", "eps"], ["ve"]), node("Sqrt", ["ve"], ["s"]),
             node("Div", ["d", "s"], ["n"], name="/ln/Div"), node("Mul", ["n", "g"], ["ng"]),
             node("Add", ["ng", "b"], ["y"])]
    inits = [f32("e", np.full(e_shape, 2)), f32("eps", np.full(eps_shape, 1e-5)), f32("g", g),
             f32("b", b)]
    open(name + ".onnx", "wb").write(model(nodes, [value_info("x", list(x.shape))],
                                           [value_info("y", [1, 2, 5, 24])], inits))
xd = x.astype(np.float64)
d = xd - xd.mean(axis=-1, keepdims=True)
np.save("want.npy", (d / np.sqrt((d * d).mean(axis=-1, keepdims=True) + 1e-5) * g + b)[None])
EOF2
for m in exponent epsilon; do
    expect_status 0 "$TEC" --emit=te $m.onnx -o $m.te
    ! grep -q layernorm $m.te || { cat $m.te; fail "$m: the chain is one layer norm"; }
    for mode in -O2 --interp; do
        expect_status 0 "$TEC" $mode $m.onnx --input x=x.npy --save-outputs "o$m$mode"
        "$PYTHON" -c "
import numpy as np, sys
want = np.load('want.npy'); got = np.load('o$m$mode/y.npy')
sys.exit(int(got.shape != want.shape or np.max(np.abs(got - want)) > 1e-5 * np.max(np.abs(want))))" ||
            fail "$m $mode: wrong shape or values"
    done
done
echo ok
