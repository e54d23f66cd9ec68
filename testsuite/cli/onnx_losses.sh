# SoftmaxCrossEntropyLoss and NegativeLogLikelihoodLoss (PyTorch's
# F.cross_entropy and F.nll_loss at opset 12 on; they were refused):
# reductions mean, sum and none, with and without weights, an
# ignore_index that is out of the class range (-1) and in the targets,
# [N, C] and [N, C, d] inputs, SoftmaxCrossEntropyLoss's log_prob output;
# and Shrink (lambd, bias).  Against NumPy at -O0 and -O2.
. "$srcdir/testsuite/cli/lib.inc"
"$PYTHON" - "$srcdir/testsuite/onnx" <<'EOF2' || fail "cannot write the models"
import os, sys
sys.path.insert(0, sys.argv[1])
from make_hostile import FLOAT, INT64, array_tensor, field, model, node, value_info, varint
import numpy as np
rng = np.random.default_rng(8)
def attr_int(name, v):
    return [field(1, name), field(20, 2), field(3, v)]
def attr_str(name, v):
    return [field(1, name), field(20, 3), field(4, v)]
def attr_float(name, v):      # AttributeProto.f is a fixed32
    return [field(1, name), field(20, 1), varint(2 << 3 | 5) + np.float32(v).tobytes()]
def nll(lp, t, w, red, ii):
    n = lp.shape[1]
    tc = np.where(t == ii, 0, t) if ii is not None else t
    picked = np.take_along_axis(lp, np.expand_dims(tc, 1), 1)[:, 0]
    wt = (w[tc] if w is not None else np.ones_like(picked))
    if ii is not None:
        wt = np.where(t == ii, 0, wt)
    loss = -picked * wt
    if red == "none":
        return loss.astype(np.float32)
    if red == "sum":
        return np.float32(loss.sum())
    return np.float32(loss.sum() / wt.sum())
def log_softmax(x):
    m = x.max(1, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(1, keepdims=True))
x2 = rng.standard_normal((6, 5)).astype(np.float32)
x3 = rng.standard_normal((3, 5, 4)).astype(np.float32)
t2 = np.array([0, 4, -1, 2, 2, 1], np.int64)
t3 = rng.integers(0, 5, (3, 4)).astype(np.int64)
t3a = t3.copy()        # the targets of the cases without ignore_index
t3[1, 2] = -1
w = rng.uniform(0.5, 2, 5).astype(np.float32)
nodes, outs = [], {}
def case(name, op, x, t, weighted, red, ii, log_prob=False):
    attrs = [attr_str("reduction", red)] + ([attr_int("ignore_index", ii)] if ii is not None else [])
    ins = [x, t] + (["w"] if weighted else [])
    nodes.append(node(op, ins, [name] + ([name + "_lp"] if log_prob else []), attrs=attrs))
    xa, ta = {"x2": x2, "x3": x3}[x], {"t2": t2, "t3": t3, "t3a": t3a}[t]
    lp = log_softmax(xa) if op == "SoftmaxCrossEntropyLoss" else xa
    outs[name] = nll(lp, ta, w if weighted else None, red, ii)
    if log_prob:
        outs[name + "_lp"] = lp.astype(np.float32)
case("sce_mean_w_ii", "SoftmaxCrossEntropyLoss", "x2", "t2", True, "mean", -1)
case("sce_mean", "SoftmaxCrossEntropyLoss", "x3", "t3a", False, "mean", None)
case("sce_none_lp", "SoftmaxCrossEntropyLoss", "x3", "t3", False, "none", -1, log_prob=True)
case("nll_sum_w", "NegativeLogLikelihoodLoss", "x3", "t3a", True, "sum", None)
case("nll_mean_ii", "NegativeLogLikelihoodLoss", "x2", "t2", False, "mean", -1)
nodes.append(node("Shrink", ["x2"], ["shrink"], attrs=[attr_float("lambd", 0.75),
                                                       attr_float("bias", 0.25)]))
outs["shrink"] = np.where(x2 < -0.75, x2 + 0.25, np.where(x2 > 0.75, x2 - 0.25, 0)).astype(np.float32)
inits = [array_tensor("w", w, FLOAT), array_tensor("t2", t2, INT64), array_tensor("t3", t3, INT64),
         array_tensor("t3a", t3a, INT64)]
with open("m.onnx", "wb") as f:
    f.write(model(nodes, [value_info("x2", list(x2.shape)), value_info("x3", list(x3.shape))],
                  [value_info(n, list(a.shape)) for n, a in outs.items()], inits, opset=13))
np.save("x2.npy", x2)
np.save("x3.npy", x3)
os.mkdir("ref")
for n, a in outs.items():
    np.save("ref/%s.npy" % n, np.asarray(a, np.float32))
EOF2
for o in O0 O2; do
    expect_status 0 "$TEC" -$o m.onnx --input x2=x2.npy --input x3=x3.npy --save-outputs $o
    "$PYTHON" "$srcdir/testsuite/compare.py" ref $o || fail "wrong result at -$o"
done
echo ok
