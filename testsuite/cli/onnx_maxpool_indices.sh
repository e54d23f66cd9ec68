# MaxPool's Indices output indexes the flattened input, batch and channel
# included (ONNX; ONNX Runtime): ((n * C + c) * H + h) * W + w, or with
# storage_order 1 ((n * C + c) * W + w) * H + h.  The flat index was
# printed without the parentheses of that Horner form, (n * C + c) * H +
# h * W + w, which is right only for n = c = 0: every other channel's
# indices were wrong (the backend tests have one channel).  Checked against
# indices computed here from the input.
. "$srcdir/testsuite/cli/lib.inc"
"$PYTHON" - "$srcdir/testsuite/onnx" <<'EOF2' || fail "cannot write the models"
import sys
sys.path.insert(0, sys.argv[1])
from make_hostile import attr_ints, field, model, node, value_info
import numpy as np

for order in (0, 1):
    attrs = [attr_ints("kernel_shape", [2, 2]), attr_ints("strides", [2, 1]),
             attr_ints("pads", [0, 0, 1, 1]),
             [field(1, "storage_order"), field(20, 2), field(3, order)]]
    m = model([node("MaxPool", ["x"], ["y", "i"], name="pool", attrs=attrs)],
              [value_info("x", [2, 3, 5, 4])],
              [value_info("y", [2, 3, 3, 4]), value_info("i", [2, 3, 3, 4], 7)])
    open("pool%d.onnx" % order, "wb").write(m)
# distinct values: a window's maximum is at one place
x = np.random.RandomState(3).permutation(2 * 3 * 5 * 4).astype(np.float32).reshape(2, 3, 5, 4)
np.save("x.npy", x)
EOF2
for opt in -O0 -O2; do
    for order in 0 1; do
        out=o_${order}$opt
        timeout 120 "$TEC" $opt pool$order.onnx --input x=x.npy --save-outputs $out >out 2>err ||
            { cat err; fail "pool$order $opt: exit status $?"; }
        "$PYTHON" -c "
import numpy as np, sys
x = np.load('x.npy')
N, C, H, W = x.shape
i = np.load('$out/i.npy')
want = np.zeros(i.shape, np.int64)
for n in range(N):
    for c in range(C):
        for p in range(i.shape[2]):
            for q in range(i.shape[3]):
                hs = range(2 * p, min(2 * p + 2, H))
                ws = range(q, min(q + 2, W))
                h, w = max(((h, w) for h in hs for w in ws), key=lambda hw: x[n, c, hw[0], hw[1]])
                want[n, c, p, q] = ((n * C + c) * W + w) * H + h if $order else ((n * C + c) * H + h) * W + w
sys.exit(0 if np.array_equal(i, want) else 1)" || fail "pool$order $opt: wrong indices"
    done
done
echo ok
