# A Div or Mul of an f32 tensor that no kernel computes (a view, or a
# graph input) by a known scalar whose factor is a power of two, read by
# nothing but a MatMul (ViT's query / sqrt(64), a view of the fused q, k, v,
# before its product with the keys), makes no layer: the MatMul multiplies
# the operand itself and scales its product in a layer "<layer>.scale",
# which the fuse pass computes in the product's write-back — the same
# numbers, as a power of two commutes with the rounding.  Kept as a kernel:
# a factor that is not a power of two (Div by 3), a Div read twice, a Mul
# by a tensor, a Div of what a kernel computes (a Relu: the fuse pass
# computes the Div in that kernel).  The
# outputs equal NumPy's (float64, within 1e-5) at -O0, -O2 and in the
# interpreter, and equal those of the same graph without the fold (the
# Div also an output) bit for bit at -O0 and -O2.
. "$srcdir/testsuite/cli/lib.inc"
"$PYTHON" - "$srcdir/testsuite/onnx" <<'EOF2' || fail "cannot write the model"
import os
import sys
sys.path.insert(0, sys.argv[1])
from make_hostile import array_tensor, model, node, value_info
import numpy as np
rng = np.random.default_rng(24)
FLOAT = 1
# name, op, the scalar (None: a tensor), which MatMul operand, folds
specs = [
    ("a", "Div", 8.0, 0, True),
    ("b", "Mul", 0.5, 1, True),
    ("c", "Div", 3.0, 0, False),
    ("d", "Div", 8.0, 0, False),    # read twice
    ("e", "Mul", None, 0, False),   # by a tensor
    ("f", "Div", 8.0, 1, False),    # of a Relu's output
]
nodes, inputs, outputs, inits = [], [], [], []
os.mkdir("in")
os.mkdir("want")
folds = []
for name, op, c, side, fold in specs:
    x = rng.uniform(-2, 2, (2, 5, 6)).astype(np.float32)
    o = rng.uniform(-2, 2, (2, 6, 5) if side == 0 else (2, 4, 5)).astype(np.float32)
    np.save("in/x%s.npy" % name, x)
    np.save("in/o%s.npy" % name, o)
    inputs += [value_info("x" + name, list(x.shape)), value_info("o" + name, list(o.shape))]
    cv = np.array(c, np.float32) if c is not None else rng.uniform(-1, 1, (6,)).astype(np.float32)
    inits.append(array_tensor("c" + name, cv, FLOAT))
    xin = "x" + name
    if name == "f":
        nodes.append(node("Relu", [xin], ["rx" + name], name="/%s/Relu" % name))
        xin = "rx" + name
        x = np.maximum(x, 0)
    nodes.append(node(op, [xin, "c" + name], ["s" + name], name="/%s/%s" % (name, op)))
    s = x.astype(np.float64) / cv if op == "Div" else x.astype(np.float64) * cv
    mm = ["s" + name, "o" + name] if side == 0 else ["o" + name, "s" + name]
    nodes.append(node("MatMul", mm, ["y" + name], name="/%s/MatMul" % name))
    y = s @ o if side == 0 else o.astype(np.float64) @ s
    outputs.append(value_info("y" + name, list(y.shape)))
    np.save("want/y%s.npy" % name, y)
    if name == "d":
        nodes.append(node("Relu", ["s" + name], ["r" + name], name="/%s/Relu" % name))
        outputs.append(value_info("r" + name, list(s.shape)))
        np.save("want/r%s.npy" % name, np.maximum(s, 0))
    folds.append("%s %s %d" % (name, op, fold))
with open("m.onnx", "wb") as f:
    f.write(model(nodes, inputs, outputs, inits, opset=13))
# "a" again with its Div an output too: not folded
with open("unfolded.onnx", "wb") as f:
    f.write(model(nodes[:2], inputs[:2], [outputs[0], value_info("sa", [2, 5, 6])], inits[:1],
                  opset=13))
with open("folds", "w") as f:
    f.write("\n".join(folds) + "\n")
EOF2
in=$(for v in a b c d e f; do printf -- "--input x%s=in/x%s.npy --input o%s=in/o%s.npy " $v $v $v $v; done)
expect_status 0 "$TEC" --emit=te m.onnx -o net.te
while read -r v op fold; do
    if [ "$fold" = 1 ]; then
        ! grep -q "as \"$v.$op\"" net.te && grep -q "as \"$v.MatMul.scale\"$" net.te ||
            { cat net.te; fail "the $op $v before its MatMul is not the MatMul's scale"; }
    else
        grep -q "as \"$v.$op\"" net.te && ! grep -q "as \"$v.MatMul.scale\"" net.te ||
            { cat net.te; fail "the $op $v must stay a kernel"; }
    fi
done <folds
grep -q '^ya = scale_1(ya_unscaled) as "a.MatMul.scale"$' net.te &&
    grep -q '    y\[i0, i1, i2\] = x\[i0, i1, i2\] \* 0.125$' net.te ||
    { cat net.te; fail "Div by 8 is not a scale by 0.125"; }
for mode in -O0 -O2 --interp; do
    expect_status 0 "$TEC" $mode m.onnx $in --save-outputs "o$mode"
    "$PYTHON" "$srcdir/testsuite/cli/onnx_want.py" "o$mode" 1e-5 ||
        fail "$mode: an output differs from NumPy's"
done
# the fold changes no bit: "a" equals the unfolded graph's at -O0 and -O2
for mode in -O0 -O2; do
    expect_status 0 "$TEC" $mode unfolded.onnx --input xa=in/xa.npy --input oa=in/oa.npy \
        --save-outputs "u$mode"
    cmp "o$mode/ya.npy" "u$mode/ya.npy" || fail "$mode: the fold changed the result's bits"
done
echo ok
