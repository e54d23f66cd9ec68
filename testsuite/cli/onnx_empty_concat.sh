# An empty ConstantOfShape (its shape [0] computed from shapes, as
# torchvision's detection transform computes its pads) is a value known
# at import time, so it may be empty, and Concat leaves an empty input out
# of the inputs it concatenates at run time (both were refused: "the
# result's shape [0] has no elements"); against NumPy at -O0 and -O2.
. "$srcdir/testsuite/cli/lib.inc"
"$PYTHON" - "$srcdir/testsuite/onnx" <<'EOF2' || fail "cannot write the model"
import os, sys
sys.path.insert(0, sys.argv[1])
from make_hostile import FLOAT, INT64, array_tensor, field, model, node, value_info
import numpy as np
x = np.random.default_rng(3).standard_normal((2, 3)).astype(np.float32)
def attr_int(name, v):
    return [field(1, name), field(20, 2), field(3, v)]
nodes = [node("Shape", ["x"], ["s"]), node("Gather", ["s", "one"], ["c"]),   # 3
         node("Sub", ["three", "c"], ["zero"]),                              # [0]
         node("ConstantOfShape", ["zero"], ["e"]),                           # f32[0]
         node("Reshape", ["x", "flat"], ["xf"]),
         node("Concat", ["xf", "e"], ["tail"], attrs=[attr_int("axis", 0)]),
         node("Concat", ["e", "xf", "e", "xf"], ["twice"], attrs=[attr_int("axis", 0)])]
inits = [array_tensor("one", np.array([1], np.int64), INT64),
         array_tensor("three", np.array([3], np.int64), INT64),
         array_tensor("flat", np.array([6], np.int64), INT64)]
outs = {"tail": x.reshape(6), "twice": np.concatenate([x.reshape(6)] * 2)}
with open("m.onnx", "wb") as f:
    f.write(model(nodes, [value_info("x", [2, 3])],
                  [value_info(n, list(a.shape)) for n, a in outs.items()], inits, opset=13))
np.save("x.npy", x)
os.mkdir("ref")
for n, a in outs.items():
    np.save("ref/%s.npy" % n, a)
EOF2
for o in O0 O2; do
    expect_status 0 "$TEC" -$o m.onnx --input x=x.npy --save-outputs $o
    "$PYTHON" "$srcdir/testsuite/compare.py" ref $o || fail "wrong result at -$o"
done
echo ok
