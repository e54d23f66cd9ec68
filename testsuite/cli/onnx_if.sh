# If nodes whose condition is known at import time, as PyTorch exports
# x.squeeze(d) of a dimension it could not prove is 1 (LocalResponseNorm):
#     If(Equal(Gather(Shape(x), d), 1), then: Squeeze(x, d), else: Identity(x))
# The branch taken imports in place: 'sq' squeezes r (its last dimension is
# 1), reading the axes from an initializer of the branch; 'keep' takes its
# else branch, which adds the enclosing graph's weight b to r.  Both Ifs are
# listed before the Relu whose output their branches read (by name, not as
# inputs of the If): the import orders them after it.  The results equal
# NumPy's at -O0 and -O2.  A condition computed at run time is refused with
# the chain that computes it (down to a graph input, or to an op of known
# inputs that tec does not compute at import time); so is a branch whose
# outputs are not the node's.
. "$srcdir/testsuite/cli/lib.inc"
"$PYTHON" - "$srcdir/testsuite/onnx" <<'EOF2' || fail "cannot write the models"
import os, sys
sys.path.insert(0, sys.argv[1])
from make_hostile import FLOAT, INT64, array_tensor, field, model, node, value_info
import numpy as np
rng = np.random.default_rng(7)
def attr_graph(name, nodes, outputs, inits=()):
    g = ([field(1, n) for n in nodes] + [field(2, name)] + [field(5, t) for t in inits] +
         [field(12, o) for o in outputs])
    return [field(1, name), field(20, 5), field(6, g)]
def cond(name, dim, size, out):
    # Equal(Gather(Shape(x), dim), size), from constants
    return [node("Shape", ["x"], [name + "_shape"], name=name + "/Shape"),
            node("Gather", [name + "_shape", name + "_dim"], [name + "_d"], name=name + "/Gather"),
            node("Equal", [name + "_d", name + "_size"], [out], name=name + "/Equal")]
def branch_if(name, c, out, then_nodes, then_out, else_nodes, else_out, then_inits=(),
              else_inits=()):
    return node("If", [c], [out], name=name, attrs=[
        attr_graph("then_branch", then_nodes, [value_info(then_out, [1])], then_inits),
        attr_graph("else_branch", else_nodes, [value_info(else_out, [1])], else_inits)])
b = rng.uniform(-1, 1, (1, 4, 5, 1)).astype(np.float32)
ints = lambda name, v: array_tensor(name, np.array(v, np.int64), INT64)
squeeze_axes = ints("sq_axes", [3])
nodes = cond("c1", 3, 1, "c1") + cond("c2", 1, 1, "c2") + [
    branch_if("sq", "c1", "s",
              [node("Squeeze", ["r", "sq_axes"], ["s_then"], name="sq/Squeeze")], "s_then",
              [node("Identity", ["r"], ["s_else"], name="sq/Identity")], "s_else",
              then_inits=[squeeze_axes]),
    branch_if("keep", "c2", "k",
              [node("Squeeze", ["r", "keep_axes"], ["k_then"], name="keep/Squeeze")], "k_then",
              [node("Add", ["r", "b"], ["k_else"], name="keep/Add")], "k_else",
              then_inits=[ints("keep_axes", [1])]),
    node("Relu", ["x"], ["r"], name="relu"),
    node("Reshape", ["k", "flat"], ["kf"], name="flat"),
    node("Reshape", ["s", "flat"], ["sf"], name="sflat"),
    node("Mul", ["kf", "sf"], ["y"], name="mul"),
]
inits = [ints("c1_dim", 3), ints("c1_size", 1), ints("c2_dim", 1), ints("c2_size", 1),
         ints("flat", [1, 20]), array_tensor("b", b, FLOAT)]
with open("m.onnx", "wb") as f:
    f.write(model(nodes, [value_info("x", [1, 4, 5, 1])], [value_info("y", [1, 20])], inits))
x = rng.uniform(-1, 1, (1, 4, 5, 1)).astype(np.float32)
np.save("x.npy", x)
r = np.maximum(x, 0)
os.mkdir("ref")
np.save("ref/y.npy", ((r + b).reshape(1, 20) * r.reshape(1, 20)).astype(np.float32))
def refused(name, nodes, c, inits, then=None):
    """name.onnx: nodes computing c, then If(c): x's Relu (or then), else its Neg."""
    then = then or ([node("Relu", ["x"], ["y_then"], name="t")], [value_info("y_then", [1])])
    nodes = nodes + [node("If", [c], ["y"], name="if_" + name, attrs=[
        attr_graph("then_branch", then[0], then[1]),
        attr_graph("else_branch", [node("Neg", ["x"], ["y_else"], name="e")],
                   [value_info("y_else", [1])])])]
    with open(name + ".onnx", "wb") as f:
        f.write(model(nodes, [value_info("x", [2, 3])], [value_info("y", [2, 3])], inits))
no_keepdims = [[field(1, "keepdims"), field(20, 2), field(3, 0)]]
# the condition from the input's values: known only at run time
refused("dyn", [node("ReduceSum", ["x"], ["total"], name="total", attrs=no_keepdims),
                node("Greater", ["total", "zero"], ["positive"], name="positive")], "positive",
        [array_tensor("zero", np.zeros((), np.float32), FLOAT)])
# the condition from shapes through an op tec does not fold (ReduceProd)
refused("prod", [node("Shape", ["x"], ["s"], name="s"),
                 node("ReduceProd", ["s"], ["numel"], name="numel", attrs=no_keepdims),
                 node("Greater", ["numel", "five"], ["big"], name="big")], "big", [ints("five", 5)])
# a branch with two outputs for the node's one
refused("two", cond("c", 0, 2, "c"), "c", [ints("c_dim", 0), ints("c_size", 2)],
        then=([node("Relu", ["x"], ["y_then"], name="t"), node("Neg", ["x"], ["y_then2"], name="t2")],
              [value_info("y_then", [1]), value_info("y_then2", [1])]))
EOF2
expect_status 0 "$TEC" --emit=te m.onnx -o net.te
grep -q '^s = reshape(s_then, 1, 4, 5) as "sq.then_branch"$' net.te &&
    grep -q '^k = reshape(k_else, 1, 4, 5, 1) as "keep.else_branch"$' net.te &&
    ! grep -q -E '^def (copy|identity)' net.te ||
    { cat net.te; fail "the If's output is not a view of its branch's"; }
for o in O0 O2; do
    expect_status 0 "$TEC" -$o m.onnx --input x=x.npy --save-outputs $o
    "$PYTHON" "$srcdir/testsuite/compare.py" ref $o || fail "wrong result at -$o"
done
expect_status 1 "$TEC" dyn.onnx
expect_err "dyn.onnx: error: node 'if_dyn' (If, opset 13): the condition ('positive') is computed at run time: tec imports an If only when its condition is known at import time (from shapes or constants): 'positive' (Greater) <- 'total' (ReduceSum) <- 'x' (a graph input)"
expect_status 1 "$TEC" prod.onnx
expect_err "prod.onnx: error: node 'if_prod' (If, opset 13): the condition ('big') is computed at run time: tec imports an If only when its condition is known at import time (from shapes or constants): 'big' (Greater) <- 'numel' (ReduceProd), of inputs known at import time, which tec computes at run time"
expect_status 1 "$TEC" two.onnx
expect_err "two.onnx: error: node 'if_two' (If, opset 13): then_branch has 2 outputs but the node 1"
echo ok
