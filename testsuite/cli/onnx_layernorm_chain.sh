# PyTorch's layer norm as exported before opset 17 (ReduceMean, Sub, Pow 2,
# ReduceMean, Add eps, Sqrt, Div, Mul scale, Add bias, each value read by
# the next node alone) imports as one LayerNormalization kernel, either
# operand order of the Mul and the Add, axes as an attribute or (opset 18)
# an input, over the last axis or the last two; a chain whose difference
# x - mean is read by another node too, or whose exponent is not 2 (a
# fourth power), stays node by node (and its Pow(x, 2) is x * x).  Each
# model's result equals NumPy's at -O0, -O2 and interpreted; a chain whose
# ReduceMean has no input is an error naming the node, not a crash.
. "$srcdir/testsuite/cli/lib.inc"
"$PYTHON" - "$srcdir/testsuite/onnx" <<'EOF2' || fail "cannot write the models"
import sys
sys.path.insert(0, sys.argv[1])
from make_hostile import array_tensor, attr_ints, model, node, value_info, FLOAT, INT64
import numpy as np
rng = np.random.default_rng(5)
x = (rng.standard_normal((2, 5, 24)) * 3 + 1).astype(np.float32)
np.save("x.npy", x)
f32 = lambda name, a: array_tensor(name, np.asarray(a, np.float32), FLOAT)

def chain(axes, exponent, swap, opset, extra_reader=False, hollow=False):
    mean = lambda i, o: (node("ReduceMean", [i, "axes"], [o], name="/ln/" + o) if opset >= 18 else
                         node("ReduceMean", [] if hollow and o == "v" else [i], [o], name="/ln/" + o,
                              attrs=[attr_ints("axes", axes)]))
    nodes = [mean("x", "m"), node("Sub", ["x", "m"], ["d"], name="/ln/Sub"),
             node("Pow", ["d", "e"], ["p"], name="/ln/Pow"), mean("p", "v"),
             node("Add", ["eps", "v"] if swap else ["v", "eps"], ["ve"], name="/ln/Add"),
             node("Sqrt", ["ve"], ["s"], name="/ln/Sqrt"), node("Div", ["d", "s"], ["n"], name="/ln/Div"),
             node("Mul", ["g", "n"] if swap else ["n", "g"], ["ng"], name="/ln/Mul"),
             node("Add", ["b", "ng"] if swap else ["ng", "b"], ["y"], name="/ln/Add_1")]
    shape = [x.shape[a] for a in axes]
    g = rng.uniform(0.5, 1.5, shape).astype(np.float32)
    b = rng.uniform(-1, 1, shape[-1:]).astype(np.float32)
    inits = [f32("e", exponent), f32("eps", 1e-5), f32("g", g), f32("b", b)]
    if opset >= 18:
        inits.append(array_tensor("axes", np.array(axes, np.int64), INT64))
    outs = [value_info("y", list(x.shape))]
    if extra_reader:   # d read by a third node: the chain is not one kernel
        nodes.append(node("Neg", ["d"], ["z"], name="/other/Neg"))
        outs.append(value_info("z", list(x.shape)))
    xd = x.astype(np.float64)
    ax = tuple(axes)
    d = xd - xd.mean(axis=ax, keepdims=True)
    want = d / np.sqrt((d ** exponent).mean(axis=ax, keepdims=True) + 1e-5) * g + b
    return model(nodes, [value_info("x", list(x.shape))], outs, inits, opset=opset), want

for name, args in [("last", ([-1], 2.0, False, 13)), ("swapped", ([2], 2.0, True, 13)),
                   ("two_axes", ([-2, -1], 2.0, False, 18)), ("fourth", ([-1], 4.0, False, 13)),
                   ("read_twice", ([-1], 2.0, False, 13, True))]:
    data, want = chain(*args)
    open(name + ".onnx", "wb").write(data)
    np.save(name + ".want.npy", want)
# the chain's wiring with a ReduceMean of no input: an error, not a crash
data, _ = chain([-1], 2.0, False, 13, hollow=True)
open("no_input.onnx", "wb").write(data)
EOF2
for m in last swapped two_axes; do
    expect_status 0 "$TEC" --emit=te $m.onnx -o $m.te
    grep -q '^y = layernorm_[0-9]*(x) as "ln.LayerNormalization"$' $m.te &&
        [ "$(grep -c '^[a-z0-9_]* = .* as "' $m.te)" = 1 ] || { cat $m.te; fail "$m: the chain is not one layer norm"; }
done
grep -q 'sq\[i0\] += (x\[i0, r1, r2\] - sum\[i0\] / 120) \* (x\[i0, r1, r2\] - sum\[i0\] / 120)$' \
    two_axes.te || { cat two_axes.te; fail "two_axes: not normalized over the last two axes"; }
expect_status 0 "$TEC" --emit=te fourth.onnx -o fourth.te
grep -q 'as "ln.Pow"$' fourth.te && ! grep -q layernorm fourth.te ||
    { cat fourth.te; fail "fourth: a chain of Pow(x, 4) is one layer norm"; }
expect_status 0 "$TEC" --emit=te read_twice.onnx -o read_twice.te
grep -q 'y\[i0, i1, i2\] = a\[i0, i1, i2\] \* a\[i0, i1, i2\]$' read_twice.te &&
    ! grep -q layernorm read_twice.te ||
    { cat read_twice.te; fail "read_twice: not node by node, or Pow(x, 2) is not x * x"; }
expect_status 1 "$TEC" --emit=te no_input.onnx
grep -q "ReduceMean" err || { cat err; fail "no_input: the error does not name the node"; }
for m in last swapped two_axes fourth read_twice; do
    for mode in -O0 -O2 --interp; do
        expect_status 0 "$TEC" $mode $m.onnx --input x=x.npy --save-outputs "o$mode"
        "$PYTHON" -c "
import numpy as np, sys
want = np.load('$m.want.npy'); got = np.load('o$mode/y.npy')
sys.exit(int(got.shape != want.shape or np.max(np.abs(got - want)) > 1e-5 * np.max(np.abs(want))))" ||
            fail "$m $mode: wrong result"
    done
    cmp -s o-O2/y.npy o--interp/y.npy || "$PYTHON" -c "
import numpy as np, sys
a, b = np.load('o-O2/y.npy'), np.load('o--interp/y.npy')
sys.exit(int(np.max(np.abs(a - b)) > 1e-6 * np.max(np.abs(b))))" || fail "$m: -O2 differs from --interp"
done
