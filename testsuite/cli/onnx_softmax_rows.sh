# ONNX Softmax over the innermost axis of a rank-5 tensor (MaxViT's
# attention, [1, windows, heads, 49, 49]: lib/nn.te's softmax takes ranks
# 2 to 4) imports with its exponentials in a temporary, computed once:
# `e = exp(x - m)`, `s += e`, `y = e * (1 / s)`, which -O2 schedules as a
# row kernel (rows of 49: 3 vectors of 16 and 1), one row of `e` on the
# stack; the exponentials were computed twice before, once for the sum and
# once for the output (MaxViT-T's grid attention softmax alone 326 -> 242
# us on one thread, bench/results/rows_s26.txt).  A softmax over another
# axis keeps the two passes of exp (no temporary the size of x), and so
# does LogSoftmax.  Every output equals NumPy's (within 1e-6) at -O0, -O2
# and in the interpreter.
. "$srcdir/testsuite/cli/lib.inc"
"$PYTHON" - "$srcdir/testsuite/onnx" <<'EOF2' || fail "cannot write the model"
import os
import sys
sys.path.insert(0, sys.argv[1])
from make_hostile import model, node, value_info
import numpy as np
rng = np.random.default_rng(26)


def attr_int(name, v):
    from make_hostile import field
    return [field(1, name), field(20, 2), field(3, v)]


def softmax(s, axis):
    e = np.exp(s - s.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


os.mkdir("in")
os.mkdir("want")
specs = [("a", (1, 3, 2, 49, 49), -1, "Softmax"),     # rows of 49, rank 5
         ("b", (2, 5, 40), 1, "Softmax"),             # not the innermost axis
         ("c", (1, 2, 2, 7, 33), -1, "LogSoftmax")]
nodes, inputs, outputs = [], [], []
for name, shape, axis, op in specs:
    x = rng.uniform(-8, 8, shape).astype(np.float32)
    x.flat[::17] = -100.0   # masked scores: exponentials below 2^-126
    np.save("in/x%s.npy" % name, x)
    inputs.append(value_info("x" + name, list(shape)))
    outputs.append(value_info("y" + name, list(shape)))
    nodes.append(node(op, ["x" + name], ["y" + name], name="/%s/%s" % (name, op),
                      attrs=[attr_int("axis", axis)]))
    want = softmax(x.astype(np.float64), axis)
    np.save("want/y%s.npy" % name, np.log(want) if op == "LogSoftmax" else want)
with open("m.onnx", "wb") as f:
    f.write(model(nodes, inputs, outputs, (), opset=13))
EOF2
in=$(for v in a b c; do printf -- "--input x%s=in/x%s.npy " $v $v; done)
expect_status 0 "$TEC" --emit=te m.onnx -o net.te
# the kernel of each softmax: its def, up to the closing brace
kernel() { awk -v c="$1" '/^def / {on = index($0, "def " c "(") == 1} on' net.te; }
ka=$(grep -o '^ya = [a-z_0-9]*' net.te | sed 's/^ya = //')
kb=$(grep -o '^yb = [a-z_0-9]*' net.te | sed 's/^yb = //')
[ -n "$ka" ] && [ -n "$kb" ] || { cat net.te; fail "no softmax calls"; }
[ "$(kernel "$ka" | grep -o 'exp(' | wc -l)" = 1 ] && kernel "$ka" | grep -q '^    e\[' ||
    { kernel "$ka"; fail "the rank-5 softmax does not compute its exponentials once"; }
[ "$(kernel "$kb" | grep -o 'exp(' | wc -l)" = 2 ] ||
    { kernel "$kb"; fail "the softmax over axis 1 is not two passes of exp"; }
expect_status 0 "$TEC" -O2 --emit=c m.onnx -o net.c
grep -A6 '^/\* @a.Softmax ' net.c | grep -q 'schedule_auto: compute_at(s, ' ||
    { grep -A6 '^/\* @a.Softmax ' net.c; fail "the rank-5 softmax is not a row kernel"; }
for mode in -O0 -O2 --interp; do
    expect_status 0 "$TEC" $mode m.onnx $in --save-outputs "o$mode"
    "$PYTHON" "$srcdir/testsuite/cli/onnx_want.py" "o$mode" 1e-6 ||
        fail "$mode: an output differs from NumPy's"
done
echo ok
