# Graph outputs that are views of each other: a Transpose with the identity
# permutation, a Reshape or Flatten to the same shape, is its input itself,
# so an output of it and an output of its input (in either order), or two
# such views of one value, are each a tensor of their own (once an internal
# error: "'b' is already an output (as 'a')"; found by
# testsuite/random/check_onnx_random.py).
. "$srcdir/testsuite/cli/lib.inc"
"$PYTHON" - "$srcdir/testsuite/onnx" <<'EOF' || fail "cannot write the models"
import sys
sys.path.insert(0, sys.argv[1])
from make_hostile import attr_ints, field, model, node, value_info
import numpy as np

def ints(name, vals):   # an int64 initializer
    a = np.array(vals, np.int64)
    return [field(1, len(vals)), field(2, 7), field(8, name), field(9, a.tobytes())]

X = value_info("x", [2, 3])
def save(name, nodes, outs, inits=()):
    with open(name + ".onnx", "wb") as f:
        f.write(model([node("Relu", ["x"], ["a"])] + nodes, [X],
                      [value_info(o, [2, 3]) for o in outs], inits))

save("perm", [node("Transpose", ["a"], ["b"], attrs=[attr_ints("perm", [0, 1])])], ["a", "b"])
save("perm_first", [node("Transpose", ["a"], ["b"], attrs=[attr_ints("perm", [0, 1])])], ["b", "a"])
save("reshape", [node("Reshape", ["a", "s"], ["b"])], ["a", "b"], [ints("s", [2, 3])])
save("flatten", [node("Flatten", ["a"], ["b"])], ["b", "a"])
save("two_views", [node("Reshape", ["a", "s"], ["b"]), node("Flatten", ["a"], ["c"])], ["b", "c"],
     [ints("s", [2, -1])])
np.save("x.npy", np.array([[-1, 0, 2], [3, -4, 5]], np.float32))
EOF
for m in perm perm_first reshape flatten two_views; do
    rm -rf o
    timeout 120 "$TEC" -O0 $m.onnx --input x=x.npy --save-outputs o >out 2>err ||
        { s=$?; cat err; fail "$m: exit status $s"; }
    outs="a b"
    [ $m = two_views ] && outs="b c"
    for y in $outs; do
        "$PYTHON" -c "
import numpy as np, sys
sys.exit(0 if (np.load('o/$y.npy') == np.maximum(np.load('x.npy'), 0)).all() else 1)" ||
            fail "$m: output $y is not relu(x)"
    done
done
echo ok
