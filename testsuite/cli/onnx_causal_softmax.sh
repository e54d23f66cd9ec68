# A causal attention's mask as PyTorch exports it (GPT-2: Trilu(ones, 1)
# cast to bool, Where(mask, -inf, scores), Softmax over the last axis)
# imports as nn.te's causal_softmax of the scores: the Trilu folds at
# import, and the Where makes no layer.  So does the other orientation
# (Where(keep, scores, lowest) with keep the lower triangle).  A Where whose
# mask is not the future (j > i + 1), whose fill is finite and larger than
# f32's lowest, or whose output another node reads too stays a where
# kernel.  Every output equals NumPy's (within 1e-6) at -O0, -O2 and in the
# interpreter.
. "$srcdir/testsuite/cli/lib.inc"
"$PYTHON" - "$srcdir/testsuite/onnx" <<'EOF2' || fail "cannot write the model"
import os
import sys
sys.path.insert(0, sys.argv[1])
from make_hostile import INT64, array_tensor, attr_ints, field, model, node, value_info
import numpy as np
rng = np.random.default_rng(23)
FLOAT, BOOL = 1, 9
T = 7
LOWEST = np.finfo(np.float32).min


def attr_int(name, v):
    return [field(1, name), field(20, 2), field(3, v)]


def softmax(s):
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


# name, Trilu's upper and k, whether the mask is where the fill goes (else
# where the scores stay), the fill, a second reader, folds to causal_softmax
specs = [
    ("a", 1, 1, True, -np.inf, False, True),
    ("b", 0, 0, False, LOWEST, False, True),
    ("c", 1, 2, True, -np.inf, False, False),    # masks j > i + 1 only
    ("d", 1, 1, True, -1e4, False, False),       # a finite fill
    ("e", 1, 1, True, -np.inf, True, False),     # the Where read twice
]
nodes, inputs, outputs, inits = [], [], [], []
os.mkdir("in")
os.mkdir("want")
folds = []
inits.append(array_tensor("ones", np.ones((T, T), np.float32), FLOAT))
for name, upper, k, fill_first, fill, twice, fold in specs:
    s = rng.uniform(-3, 3, (1, 2, T, T)).astype(np.float32)
    np.save("in/s%s.npy" % name, s)
    inputs.append(value_info("s" + name, list(s.shape)))
    inits.append(array_tensor("k" + name, np.array(k, np.int64), INT64))
    inits.append(array_tensor("f" + name, np.array(fill, np.float32), FLOAT))
    nodes.append(node("Trilu", ["ones", "k" + name], ["tri" + name], name="/%s/Trilu" % name,
                      attrs=[attr_int("upper", upper)]))
    nodes.append(node("Cast", ["tri" + name], ["m" + name], name="/%s/Cast" % name,
                      attrs=[attr_int("to", BOOL)]))
    ins = ["m" + name, "f" + name, "s" + name] if fill_first else ["m" + name, "s" + name, "f" + name]
    nodes.append(node("Where", ins, ["w" + name], name="/%s/Where" % name))
    nodes.append(node("Softmax", ["w" + name], ["y" + name], name="/%s/Softmax" % name,
                      attrs=[attr_int("axis", -1)]))
    tri = np.triu(np.ones((T, T)), k) if upper else np.tril(np.ones((T, T)), k)
    w = np.where(tri != 0, fill, s) if fill_first else np.where(tri != 0, s, fill)
    outputs.append(value_info("y" + name, list(s.shape)))
    np.save("want/y%s.npy" % name, softmax(w.astype(np.float64)))
    if twice:
        nodes.append(node("Relu", ["w" + name], ["r" + name], name="/%s/Relu" % name))
        outputs.append(value_info("r" + name, list(s.shape)))
        np.save("want/r%s.npy" % name, np.maximum(w, 0))
    folds.append("%s %d" % (name, fold))
with open("m.onnx", "wb") as f:
    f.write(model(nodes, inputs, outputs, inits, opset=14))
with open("folds", "w") as f:
    f.write("\n".join(folds) + "\n")
EOF2
in=$(for v in a b c d e; do printf -- "--input s%s=in/s%s.npy " $v $v; done)
expect_status 0 "$TEC" --emit=te m.onnx -o net.te
! grep -q '\.Trilu"' net.te || { cat net.te; fail "a Trilu of a constant did not fold"; }
while read -r v fold; do
    if [ "$fold" = 1 ]; then
        grep -q "^y$v = causal_softmax(s$v) as \"$v.Softmax\"$" net.te &&
            ! grep -q "as \"$v.Where\"" net.te || { cat net.te; fail "Where $v + Softmax is not causal_softmax"; }
    else
        grep -q "as \"$v.Where\"" net.te && ! grep -q "^y$v = causal_softmax" net.te ||
            { cat net.te; fail "Where $v must stay a where kernel"; }
    fi
done <folds
for mode in -O0 -O2 --interp; do
    expect_status 0 "$TEC" $mode m.onnx $in --save-outputs "o$mode"
    "$PYTHON" "$srcdir/testsuite/cli/onnx_want.py" "o$mode" 1e-6 ||
        fail "$mode: an output differs from NumPy's"
done
echo ok
