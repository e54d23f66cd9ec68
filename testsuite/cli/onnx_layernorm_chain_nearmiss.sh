# Layer norm chains (ReduceMean, Sub, Pow 2, ReduceMean, Add eps, Sqrt, Div,
# Mul, Add) near the one that imports as a LayerNormalization kernel: a
# scale and bias broadcast over the other axes ([5, 1] and [2, 1, 1]) and
# means over axes (2, 1) and (1, 2) are one kernel; a Mul also read as a
# graph output ends the kernel there (the Add reads it); means over other
# axes than each other's or than the last ones, a mean that is also a graph
# output, and f64 stay node by node.  Each result equals numpy's at -O2 and
# interpreted.
. "$srcdir/testsuite/cli/lib.inc"
"$PYTHON" - "$srcdir/testsuite/onnx" <<'EOF2' || fail "cannot write the models"
import sys
sys.path.insert(0, sys.argv[1])
from make_hostile import array_tensor, attr_ints, model, node, value_info, FLOAT
import numpy as np
DOUBLE = 11
rng = np.random.default_rng(23)
x = (rng.standard_normal((2, 5, 24)) * 3 + 1)
np.save("x.npy", x.astype(np.float32))
np.save("x64.npy", x)

def chain(name, axes1, axes2, gshape, bshape, outs=("y",), dtype=np.float32):
    elem = FLOAT if dtype == np.float32 else DOUBLE
    t = lambda n, a: array_tensor(n, np.asarray(a, dtype), elem)
    nodes = [node("ReduceMean", ["x"], ["m"], attrs=[attr_ints("axes", axes1)]),
             node("Sub", ["x", "m"], ["d"]), node("Pow", ["d", "e"], ["p"]),
             node("ReduceMean", ["p"], ["v"], attrs=[attr_ints("axes", axes2)]),
             node("Add", ["v", "eps"], ["ve"]), node("Sqrt", ["ve"], ["s"]),
             node("Div", ["d", "s"], ["n"], name="/ln/Div"), node("Mul", ["n", "g"], ["ng"]),
             node("Add", ["ng", "b"], ["y"])]
    g = rng.uniform(0.5, 1.5, gshape)
    b = rng.uniform(-1, 1, bshape)
    inits = [t("e", 2), t("eps", 1e-5), t("g", g), t("b", b)]
    xd = x.astype(dtype).astype(np.float64)
    m = xd.mean(axis=tuple(axes1), keepdims=True)
    d = xd - m
    ng = d / np.sqrt((d * d).mean(axis=tuple(axes2), keepdims=True) + 1e-5) * g
    want = {"y": ng + b, "m": m, "ng": ng}
    open(name + ".onnx", "wb").write(model(nodes, [value_info("x", list(x.shape), elem)],
                                           [value_info(o, list(want[o].shape), elem) for o in outs],
                                           inits))
    for o in outs:
        np.save("%s.%s.want.npy" % (name, o), want[o])

chain("bcast", [-1], [-1], (5, 1), (2, 1, 1))
chain("two_axes", [2, 1], [1, 2], (5, 24), (24,))
chain("mul_out", [-1], [-1], (24,), (24,), outs=("y", "ng"))
chain("mixed_axes", [-1], [-2, -1], (24,), (24,))
chain("inner_axes", [0, 2], [0, 2], (24,), (24,))
chain("mean_out", [-1], [-1], (24,), (24,), outs=("y", "m"))
chain("f64", [-1], [-1], (24,), (24,), dtype=np.float64)
EOF2
for m in bcast two_axes mul_out mixed_axes inner_axes mean_out f64; do
    expect_status 0 "$TEC" --emit=te $m.onnx -o $m.te
    case $m in bcast|two_axes|mul_out) want=1 ;; *) want=0 ;; esac
    [ "$(grep -c '= layernorm_[0-9]*(' $m.te)" = $want ] ||
        { cat $m.te; fail "$m: expected $want layer norm kernels"; }
    input=x.npy
    [ $m = f64 ] && input=x64.npy
    for mode in -O2 --interp; do
        expect_status 0 "$TEC" $mode $m.onnx --input x=$input --save-outputs "o$m$mode"
        for want in $m.*.want.npy; do
            out=${want#$m.}
            out=${out%.want.npy}
            "$PYTHON" -c "
import numpy as np, sys
want = np.load('$want'); got = np.load('o$m$mode/$out.npy')
sys.exit(int(got.shape != want.shape or np.max(np.abs(got - want)) > 1e-5 * np.max(np.abs(want))))" ||
                fail "$m $mode: $out is wrong"
        done
    done
done
echo ok
