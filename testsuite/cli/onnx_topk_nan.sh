# TopK ranks by a total order: NaN above every number (first when largest,
# last when smallest), ties (NaNs too) by the lower index.  Places counted
# with plain comparisons once collided on NaN (an index n, out of bounds).
# An input with a dimension of size 0 is refused, not a division by zero.
. "$srcdir/testsuite/cli/lib.inc"
"$PYTHON" - "$srcdir/testsuite/onnx" <<'EOF' || fail "cannot write the models"
import sys
sys.path.insert(0, sys.argv[1])
from make_hostile import field, model, node, value_info
import numpy as np

def init(name, arr, dtype):
    arr = np.asarray(arr)
    return [field(1, d) for d in arr.shape] + [field(2, dtype), field(8, name),
                                               field(9, arr.tobytes())]

def topk(largest, rows, k):
    return model([node("TopK", ["x", "k"], ["v", "i"],
                       attrs=[[field(1, "largest"), field(20, 2), field(3, largest)]])],
                 [value_info("x", [rows, 5])],
                 [value_info("v", [rows, k]), value_info("i", [rows, k], 7)],
                 [init("k", np.array([k], np.int64), 7)])

for largest in (0, 1):
    open("topk_l%d.onnx" % largest, "wb").write(topk(largest, 2, 5))
open("topk_rows0.onnx", "wb").write(topk(1, 0, 1))
nan = float("nan")
np.save("x.npy", np.array([[1, nan, 2, 3, nan], [2, 2, nan, 1, 2]], np.float32))
EOF
for opt in -O0 -O2; do
    for largest in 0 1; do
        out=o_${largest}$opt
        timeout 120 "$TEC" $opt topk_l$largest.onnx --input x=x.npy --save-outputs $out >out 2>err ||
            { cat err; fail "topk_l$largest $opt: exit status $?"; }
        "$PYTHON" -c "
import numpy as np, sys
i = np.load('$out/i.npy').tolist()
v = np.load('$out/v.npy')
want = [[1, 4, 3, 2, 0], [2, 0, 1, 4, 3]] if $largest else [[0, 2, 3, 1, 4], [3, 0, 1, 4, 2]]
x = np.load('x.npy')
same = np.array_equal(v, np.take_along_axis(x, np.array(want), 1), equal_nan=True)
sys.exit(0 if i == want and same else 1)" || fail "topk_l$largest $opt: wrong order"
    done
done
expect_status 1 timeout 20 "$TEC" --emit=te topk_rows0.onnx
expect_err "topk_rows0.onnx: error: node 'v' (TopK, opset 13): input 'x' has shape [0, 5], no elements: tec computes empty tensors only when they are known at import time (doc/onnx.md, empty tensors)"
echo ok
