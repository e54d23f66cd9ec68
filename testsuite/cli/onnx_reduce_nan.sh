# ReduceLogSumExp without overflow and ArgMax/ArgMin on rows with NaN
# (review of session 16), against numpy: log(e^1000 + e^1000) is 1000.69,
# not inf (the reduction reads x less its maximum; a row of -inf stays
# -inf, one with +inf is inf, one with NaN NaN), over one axis and over
# all; ArgMax and ArgMin give a row's first NaN (select_last_index: its
# last) as numpy and PyTorch do, where a row of NaN only used to give the
# index 2^63 - 1 (or -1).
. "$srcdir/testsuite/cli/lib.inc"
"$PYTHON" - "$srcdir/testsuite/onnx" <<'PY' || fail "cannot write the models"
import sys
sys.path.insert(0, sys.argv[1])
from make_hostile import field, model, node, value_info, array_tensor as init
import numpy as np

def a_int(name, v):
    return [field(1, name), field(20, 2), field(3, v)]
I64 = 7
inf, nan = np.inf, np.nan
x = np.array([[1000, 1000, -inf, 3], [-inf, -inf, -inf, -inf], [1, inf, 2, 3],
              [1, nan, 2, 3], [-88, -90, -100, -87.5]], np.float32)
np.save("x.npy", x)
np.save("b.npy", x[[0, 4]])
xd = x.astype(np.float64)
with np.errstate(all="ignore"):
    m = np.where(np.isfinite(xd.max(1, keepdims=True)), xd.max(1, keepdims=True), 0)
    lse = np.log(np.exp(xd - m).sum(1)) + m[:, 0]
    b = xd[[0, 4]]              # over all axes: the rows without NaN and +inf
    lse_all = np.log(np.exp(b - b.max()).sum()) + b.max()
np.save("want_lse.npy", lse.astype(np.float32))
np.save("want_lse_all.npy", np.array([[lse_all]], np.float32))
open("lse.onnx", "wb").write(model(
    [node("ReduceLogSumExp", ["x", "axes"], ["lse"], attrs=[a_int("keepdims", 0)]),
     node("ReduceLogSumExp", ["b"], ["lse_all"])],
    [value_info("x", [5, 4]), value_info("b", [2, 4])], [value_info("lse", [5]), value_info("lse_all", [1, 1])],
    [init("axes", np.array([-1], np.int64), I64)], opset=18))

a = np.array([[nan, nan, nan], [1, nan, 3], [nan, 2, 2], [2, 5, 5], [-inf, -inf, 1]], np.float32)
np.save("a.npy", a)
def last(idx_of_row):
    return np.array([idx_of_row(r) for r in a], np.int64)
np.save("want_amax.npy", np.argmax(a, 1))
np.save("want_amin.npy", np.argmin(a, 1))
np.save("want_amax_last.npy", last(lambda r: len(r) - 1 - np.argmax(r[::-1])))
np.save("want_amin_last.npy", last(lambda r: len(r) - 1 - np.argmin(r[::-1])))
open("arg.onnx", "wb").write(model(
    [node("ArgMax", ["a"], ["amax"], attrs=[a_int("axis", 1), a_int("keepdims", 0)]),
     node("ArgMin", ["a"], ["amin"], attrs=[a_int("axis", 1), a_int("keepdims", 0)]),
     node("ArgMax", ["a"], ["amax_last"], attrs=[a_int("axis", 1), a_int("keepdims", 0),
                                                 a_int("select_last_index", 1)]),
     node("ArgMin", ["a"], ["amin_last"], attrs=[a_int("axis", 1), a_int("keepdims", 0),
                                                 a_int("select_last_index", 1)])],
    [value_info("a", [5, 3])], [value_info(n, [5], I64) for n in
                                ("amax", "amin", "amax_last", "amin_last")], opset=13))
PY
for opt in -O0 -O2 --interp; do
    expect_status 0 "$TEC" $opt lse.onnx --input x=x.npy --input b=b.npy --save-outputs o_lse$opt
    expect_status 0 "$TEC" $opt arg.onnx --input a=a.npy --save-outputs o_arg$opt
    for y in o_lse$opt/lse o_lse$opt/lse_all o_arg$opt/amax o_arg$opt/amin o_arg$opt/amax_last \
             o_arg$opt/amin_last; do
        "$PYTHON" -c "
import numpy as np, sys
got, want = np.load('$y.npy'), np.load('want_${y##*/}.npy')
if want.dtype.kind == 'f':
    ok = (got.shape == want.shape and np.array_equal(np.isnan(got), np.isnan(want)) and
          np.allclose(got, want, rtol=1e-6, atol=0, equal_nan=True))
else:
    ok = got.dtype == want.dtype and np.array_equal(got, want)
print('$y', got, want)
sys.exit(0 if ok else 1)" || fail "$y is not numpy's"
    done
done
echo ok
