# Loops whose trip count and condition are known at import time, and
# sequences, as PyTorch exports a `for` over a constant range in scripted
# code (MViT's torch.split over a list): the body imports once per
# iteration.  m.onnx: a Loop of 4 iterations carrying a tensor, with a scan
# output, its body reading an initializer of its own (one shared constant
# for all iterations, w_loop1) and the graph's b by name; a Loop of up to 10
# iterations whose body's condition (i < 1) ends it after 2, its iteration
# numbers a scan output; a Loop of 70 scan outputs (Concats of at most 64
# inputs, nested).  s.onnx: sequences built (SequenceEmpty, Insert at the
# back, the front and -1, Erase, Construct, SplitToSequence by a chunk size
# and into rows without the axis) and read (SequenceAt of negative
# positions, SequenceLength, ConcatFromSequence with and without a new
# axis), and MViT's Loop inserting x[i:i+1] into a carried sequence.  The
# results equal NumPy's at -O0 and -O2.  Refused, with the reason: a trip
# count computed at run time (with the chain that computes it), more
# iterations than tec unrolls, a body's condition computed at run time, a
# sequence as a graph output and as a tensor op's input.  nested.onnx:
# Loops in a Loop, an If in the inner body.  A trip count that is a graph
# input given with --input is known (the program is made for that value),
# else refused.
. "$srcdir/testsuite/cli/lib.inc"
"$PYTHON" - "$srcdir/testsuite/onnx" <<'EOF2' || fail "cannot write the models"
import os, sys
sys.path.insert(0, sys.argv[1])
from make_hostile import FLOAT, INT64, array_tensor, attr_ints, field, model, node, value_info
import numpy as np
BOOL = 9
rng = np.random.default_rng(5)
def graph_attr(name, nodes, inputs, outputs, inits=()):
    g = ([field(1, n) for n in nodes] + [field(2, name)] + [field(5, t) for t in inits] +
         [field(11, i) for i in inputs] + [field(12, o) for o in outputs])
    return [field(1, name), field(20, 5), field(6, g)]
def attr_int(name, v):
    return [field(1, name), field(20, 2), field(3, v)]
ints = lambda name, v: array_tensor(name, np.array(v, np.int64), INT64)
flag = lambda name, v: array_tensor(name, np.array(v, np.bool_), BOOL)
def loop(name, m, c, carried, outs, nodes, inputs, outputs, inits=()):
    return node("Loop", [m, c] + carried, outs, name=name,
                attrs=[graph_attr("body", nodes, inputs, outputs, inits)])
x = rng.uniform(-1, 1, (2, 3)).astype(np.float32)
w = rng.uniform(-1, 1, (3,)).astype(np.float32)
b = rng.uniform(-1, 1, (2, 3)).astype(np.float32)
# m.onnx: acc = acc * w + b + i for i < 4 (w the body's initializer, b the
# graph's read by name), each iteration's relu(acc) a scan output; then a
# Loop of up to 10 iterations whose body's condition i < 1 ends it after 2:
# z = z + x, the iteration numbers its scan output
nodes = [
    loop("acc", "four", "yes", ["x"], ["acc_last", "acc_all"], [
        node("Cast", ["i"], ["fi"], name="cast", attrs=[attr_int("to", FLOAT)]),
        node("Mul", ["acc_in", "w"], ["aw"], name="mul"),
        node("Add", ["aw", "b"], ["awb"], name="addb"),
        node("Add", ["awb", "fi"], ["acc_out"], name="addi"),
        node("Relu", ["acc_out"], ["acc_scan"], name="relu"),
        node("Identity", ["c_in"], ["c_out"], name="keep")],
        [value_info("i", [], INT64), value_info("c_in", [], BOOL), value_info("acc_in", [2, 3])],
        [value_info("c_out", [], BOOL), value_info("acc_out", [2, 3]),
         value_info("acc_scan", [2, 3])], inits=[array_tensor("w", w, FLOAT)]),
    loop("early", "ten", "", ["x"], ["z", "its"], [
        node("Add", ["z_in", "x"], ["z_out"], name="addx"),
        node("Less", ["j", "one"], ["go"], name="less"),
        node("Identity", ["j"], ["j_scan"], name="jscan")],
        [value_info("j", [], INT64), value_info("c2", [], BOOL), value_info("z_in", [2, 3])],
        [value_info("go", [], BOOL), value_info("z_out", [2, 3]), value_info("j_scan", [], INT64)]),
    # 70 scan outputs: Concats of at most 64 inputs, nested
    loop("times", "seventy", "yes", [], ["xi"], [
        node("Cast", ["q"], ["fq"], name="castq", attrs=[attr_int("to", FLOAT)]),
        node("Mul", ["x", "fq"], ["xq"], name="mulq"),
        node("Identity", ["cq"], ["cq_out"], name="cq")],
        [value_info("q", [], INT64), value_info("cq", [], BOOL)],
        [value_info("cq_out", [], BOOL), value_info("xq", [2, 3])]),
]
inits = [ints("four", 4), ints("ten", 10), flag("yes", True), ints("one", 1),
         array_tensor("b", b, FLOAT), ints("seventy", 70)]
with open("m.onnx", "wb") as f:
    f.write(model(nodes, [value_info("x", [2, 3])],
                  [value_info("acc_last", [2, 3]), value_info("acc_all", [4, 2, 3]),
                   value_info("z", [2, 3]), value_info("its", [2], INT64),
                   value_info("xi", [70, 2, 3])], inits))
np.save("x.npy", x)
acc, scans = x.copy(), []
for i in range(4):
    acc = (acc * w + b + np.float32(i)).astype(np.float32)
    scans.append(np.maximum(acc, 0))
os.mkdir("ref")
np.save("ref/acc_last.npy", acc)
np.save("ref/acc_all.npy", np.stack(scans))
np.save("ref/z.npy", (x + x + x).astype(np.float32))
np.save("ref/its.npy", np.array([0, 1], np.int64))
np.save("ref/xi.npy", np.stack([x * np.float32(q) for q in range(70)]))

# s.onnx: sequences built and read
xs = rng.uniform(-1, 1, (4, 6)).astype(np.float32)
nodes = [
    node("Relu", ["x"], ["a"], name="a"), node("Neg", ["x"], ["bn"], name="bn"),
    node("Exp", ["x"], ["c"], name="c"),
    node("SequenceEmpty", [], ["s0"], name="s0"),
    node("SequenceInsert", ["s0", "a"], ["s1"], name="s1"),              # [a]
    node("SequenceInsert", ["s1", "bn", "zero"], ["s2"], name="s2"),     # [b, a]
    node("SequenceInsert", ["s2", "c", "minus1"], ["s3"], name="s3"),    # [b, c, a]
    node("SequenceLength", ["s3"], ["n"], name="n"),
    node("SequenceErase", ["s3", "zero"], ["s4"], name="s4"),           # [c, a]
    node("SequenceAt", ["s4", "minus1"], ["e"], name="e"),              # a
    node("ConcatFromSequence", ["s4"], ["y1"], name="y1", attrs=[attr_int("axis", 0)]),
    node("ConcatFromSequence", ["s4"], ["y2"], name="y2",
         attrs=[attr_int("axis", -1), attr_int("new_axis", 1)]),
    node("SplitToSequence", ["x", "four"], ["t"], name="t", attrs=[attr_int("axis", 1)]),
    node("SequenceAt", ["t", "one"], ["y3"], name="y3"),                 # x[:, 4:6]
    node("SplitToSequence", ["x"], ["u"], name="u", attrs=[attr_int("keepdims", 0)]),
    node("SequenceAt", ["u", "two"], ["y4"], name="y4"),                 # x[2]
    node("SequenceConstruct", ["a", "c"], ["v"], name="v"),
    node("ConcatFromSequence", ["v"], ["y5"], name="y5", attrs=[attr_int("axis", 1)]),
    # MViT's pattern: a Loop inserting x[i:i+1] into a sequence for i < 3
    node("SequenceEmpty", [], ["e0"], name="e0"),
    loop("rows", "three", "yes", ["e0"], ["rows_seq"], [
        node("Add", ["k", "one1"], ["k1"], name="k1"),
        node("Slice", ["x", "k", "k1", "zero1"], ["row"], name="row"),
        node("SequenceInsert", ["seq_in", "row"], ["seq_out"], name="ins"),
        node("Identity", ["ck"], ["ck_out"], name="ck")],
        [value_info("k", [1], INT64), value_info("ck", [], BOOL),
         value_info("seq_in", [], FLOAT)],
        [value_info("ck_out", [], BOOL), value_info("seq_out", [], FLOAT)],
        inits=[ints("one1", [1]), ints("zero1", [0])]),
    node("ConcatFromSequence", ["rows_seq"], ["y6"], name="y6", attrs=[attr_int("axis", 0)]),
]
inits = [ints("zero", 0), ints("minus1", -1), ints("one", 1), ints("two", 2), ints("four", 4),
         ints("three", 3), flag("yes", True)]
outs = ["n", "e", "y1", "y2", "y3", "y4", "y5", "y6"]
with open("s.onnx", "wb") as f:
    f.write(model(nodes, [value_info("x", [4, 6])], [value_info(o, [1]) for o in outs], inits))
np.save("xs.npy", xs)
a, c = np.maximum(xs, 0), np.exp(xs)
os.mkdir("sref")
for nm, v in [("n", np.array(3, np.int64)), ("e", a), ("y1", np.concatenate([c, a])),
              ("y2", np.stack([c, a], -1)), ("y3", xs[:, 4:6]), ("y4", xs[2]),
              ("y5", np.concatenate([a, c], 1)), ("y6", xs[:3])]:
    np.save("sref/%s.npy" % nm, v.astype(v.dtype if v.dtype == np.int64 else np.float32))

# nested.onnx: Loops in a Loop's body, an If in the inner one's (j == 0:
# acc + x * (2i + j), else acc - x * (2i + j)), for i < 3, j < 2
def if_node(name, c, out, then_nodes, then_out, else_nodes, else_out):
    return node("If", [c], [out], name=name, attrs=[
        graph_attr("then_branch", then_nodes, [], [value_info(then_out, [2, 3])]),
        graph_attr("else_branch", else_nodes, [], [value_info(else_out, [2, 3])])])
inner = [node("Cast", ["oi"], ["fi"], name="fi", attrs=[attr_int("to", FLOAT)]),
         node("Cast", ["oj"], ["fj"], name="fj", attrs=[attr_int("to", FLOAT)]),
         node("Mul", ["fi", "twof"], ["f2"], name="f2"), node("Add", ["f2", "fj"], ["f"], name="f"),
         node("Mul", ["x", "f"], ["xs"], name="xs"), node("Equal", ["oj", "zero"], ["isz"], name="isz"),
         if_node("choose", "isz", "delta", [node("Identity", ["xs"], ["d_then"], name="dt")],
                 "d_then", [node("Neg", ["xs"], ["d_else"], name="de")], "d_else"),
         node("Add", ["a_in", "delta"], ["a_out"], name="acc"),
         node("Identity", ["cj"], ["cj_out"], name="cj")]
outer = [loop("inner", "two", "", ["acc_in"], ["acc_out"], inner,
              [value_info("oj", [], INT64), value_info("cj", [], BOOL), value_info("a_in", [2, 3])],
              [value_info("cj_out", [], BOOL), value_info("a_out", [2, 3])]),
         node("Identity", ["ci"], ["ci_out"], name="ci")]
with open("nested.onnx", "wb") as f:
    f.write(model([loop("outer", "three", "", ["x"], ["y"], outer,
                        [value_info("oi", [], INT64), value_info("ci", [], BOOL),
                         value_info("acc_in", [2, 3])],
                        [value_info("ci_out", [], BOOL), value_info("acc_out", [2, 3])])],
                  [value_info("x", [2, 3])], [value_info("y", [2, 3])],
                  [ints("three", 3), ints("two", 2), ints("zero", 0),
                   array_tensor("twof", np.array(2, np.float32), FLOAT)]))
acc = x.copy()
for i in range(3):
    for j in range(2):
        acc = acc + (1 if j == 0 else -1) * x * np.float32(2 * i + j)
os.mkdir("nref")
np.save("nref/y.npy", acc.astype(np.float32))
# given.onnx: the trip count is the graph input n, known when given with
# --input: y = x * (n + 1)
with open("given.onnx", "wb") as f:
    f.write(model([loop("given", "n", "", ["x"], ["y"],
                        [node("Add", ["g_in", "x"], ["g_out"], name="gadd"),
                         node("Identity", ["gc"], ["gc_out"], name="gc")],
                        [value_info("gi", [], INT64), value_info("gc", [], BOOL),
                         value_info("g_in", [2, 3])],
                        [value_info("gc_out", [], BOOL), value_info("g_out", [2, 3])])],
                  [value_info("x", [2, 3]), value_info("n", [], INT64)], [value_info("y", [2, 3])]))
np.save("n.npy", np.array(3, np.int64))
os.mkdir("gref")
np.save("gref/y.npy", (x * 4).astype(np.float32))

# refused: a trip count computed at run time; more iterations than tec
# unrolls; a body's condition computed at run time; a sequence as a graph
# output, and as a tensor op's input
no_keepdims = [attr_int("keepdims", 0)]
body = lambda cond_nodes, cond: ([node("Add", ["r_in", "x"], ["r_out"], name="add")] + cond_nodes,
    [value_info("it", [], INT64), value_info("cin", [], BOOL), value_info("r_in", [2, 3])],
    [value_info(cond, [], BOOL), value_info("r_out", [2, 3])])
def refused(name, pre, m, cond_nodes, cond, inits):
    ns, ins, outs = body(cond_nodes, cond)
    with open(name + ".onnx", "wb") as f:
        f.write(model(pre + [loop("loop_" + name, m, "yes", ["x"], ["y"], ns, ins, outs)],
                      [value_info("x", [2, 3])], [value_info("y", [2, 3])],
                      inits + [flag("yes", True)]))
keep = [node("Identity", ["cin"], ["cout"], name="keep")]
refused("dyn", [node("ReduceSum", ["x"], ["total"], name="total", attrs=no_keepdims),
                node("Cast", ["total"], ["m"], name="m", attrs=[attr_int("to", INT64)])],
        "m", keep, "cout", [])
refused("long", [], "many", keep, "cout", [ints("many", 5000)])
refused("cond", [], "three", [node("ReduceSum", ["r_out"], ["rs"], name="rs", attrs=no_keepdims),
                              node("Less", ["rs", "zf"], ["cdyn"], name="cdyn")], "cdyn",
        [ints("three", 3), array_tensor("zf", np.zeros((), np.float32), FLOAT)])
with open("seqout.onnx", "wb") as f:
    f.write(model([node("SequenceConstruct", ["x", "x"], ["y"], name="sc")],
                  [value_info("x", [2, 3])], [value_info("y", [2, 3])]))
with open("seqop.onnx", "wb") as f:
    f.write(model([node("SequenceConstruct", ["x", "x"], ["s"], name="sc"),
                   node("Relu", ["s"], ["y"], name="relu")],
                  [value_info("x", [2, 3])], [value_info("y", [2, 3])]))
EOF2
expect_status 0 "$TEC" --emit=te m.onnx -o m.te
grep -q '^w_loop1 = constant_1() as "w_loop1"$' m.te ||
    fail "the body's initializer is not one constant of all iterations"
for o in O0 O2; do
    expect_status 0 "$TEC" -$o m.onnx --input x=x.npy --save-outputs m$o
    "$PYTHON" "$srcdir/testsuite/compare.py" ref m$o || fail "m.onnx: wrong result at -$o"
    expect_status 0 "$TEC" -$o s.onnx --input x=xs.npy --save-outputs s$o
    "$PYTHON" "$srcdir/testsuite/compare.py" sref s$o || fail "s.onnx: wrong result at -$o"
done
expect_status 0 "$TEC" -O0 nested.onnx --input x=x.npy --save-outputs n
"$PYTHON" "$srcdir/testsuite/compare.py" nref n || fail "nested.onnx: wrong result"
expect_status 0 "$TEC" -O0 given.onnx --input x=x.npy --input n=n.npy --save-outputs g
"$PYTHON" "$srcdir/testsuite/compare.py" gref g || fail "given.onnx: wrong result"
expect_status 1 "$TEC" given.onnx
expect_err "given.onnx: error: node 'given' (Loop, opset 13): the trip count ('n') is computed at run time: tec unrolls a Loop when it imports the model, so its trip count and condition must be known then (from shapes or constants, or a graph input given with --input): 'n' (a graph input)"
expect_status 1 "$TEC" dyn.onnx
expect_err "dyn.onnx: error: node 'loop_dyn' (Loop, opset 13): the trip count ('m') is computed at run time: tec unrolls a Loop when it imports the model, so its trip count and condition must be known then (from shapes or constants, or a graph input given with --input): 'm' (Cast) <- 'total' (ReduceSum) <- 'x' (a graph input)"
expect_status 1 "$TEC" long.onnx
expect_err "long.onnx: error: node 'loop_long' (Loop, opset 13): the Loop runs more than 4096 iterations: tec unrolls a Loop when it imports the model, and at most 4096 iterations of one"
expect_status 1 "$TEC" cond.onnx
expect_err "cond.onnx: error: node 'loop_cond' (Loop, opset 13): the body's condition ('cdyn@loop1/0') is computed at run time: tec unrolls a Loop when it imports the model, so its trip count and condition must be known then (from shapes or constants, or a graph input given with --input): 'cdyn@loop1/0' (Less) <- 'rs@loop1/0' (ReduceSum) <- 'r_out@loop1/0' (Add) <- 'x' (a graph input)"
expect_status 1 "$TEC" seqout.onnx
expect_err "seqout.onnx: error: graph output 'y' is a sequence: tec's outputs are tensors (ConcatFromSequence or SequenceAt makes one of it)"
expect_status 1 "$TEC" seqop.onnx
expect_err "seqop.onnx: error: node 'relu' (Relu, opset 13): input 1 ('s') is a sequence, but Relu takes tensors"
echo ok
