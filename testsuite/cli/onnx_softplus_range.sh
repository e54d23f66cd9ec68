# Softplus and Mish over f32's whole range against numpy's log1p form:
# softplus(x) = max(x, 0) + log1p(e^-|x|).  log(exp(x) + 1) was inf from
# x = 88.8 on (softplus(89) is 89) and lost every digit below x = -17
# (softplus(-20) was 0, not 2.1e-9).  Bound: 4 ulp, NaN and infinities
# where numpy has them, at -O0, -O2 and --interp (subnormal results aside).
. "$srcdir/testsuite/cli/lib.inc"
"$PYTHON" - "$srcdir/testsuite/onnx" <<'PY' || fail "cannot write the models"
import sys
sys.path.insert(0, sys.argv[1])
from make_hostile import model, node, value_info
import numpy as np
x = np.array([-np.inf, -1e4, -87, -40, -30, -20, -17, -15, -10, -5, -1, -1e-3, -1e-8, -0.0,
              0.0, 1e-8, 1e-3, 1, 5, 10, 15, 17, 20, 30, 88, 89, 100, 1e4, np.inf, np.nan,
              0.5, -0.5], np.float32)
np.save("x.npy", x)
xd = x.astype(np.float64)
with np.errstate(all="ignore"):
    sp = np.maximum(xd, 0) + np.log1p(np.exp(-np.abs(xd)))
    sp[np.isnan(xd)] = np.nan
    np.save("want_softplus.npy", sp)
    np.save("want_mish.npy", xd * np.tanh(sp))
for op, opset in (("Softplus", 13), ("Mish", 18)):
    open(op.lower() + ".onnx", "wb").write(model(
        [node(op, ["x"], ["y"])], [value_info("x", [32])], [value_info("y", [32])], opset=opset))
PY
for op in softplus mish; do
    for opt in -O0 -O2 --interp; do
        expect_status 0 "$TEC" $opt $op.onnx --input x=x.npy --save-outputs o_$op$opt
        "$PYTHON" -c "
import numpy as np, sys
got, want = np.load('o_$op$opt/y.npy').astype(np.float64), np.load('want_$op.npy')
x = np.load('x.npy')
w32 = want.astype(np.float32)
ulp = np.spacing(np.abs(w32)).astype(np.float64)
with np.errstate(all='ignore'):
    err = np.where(np.isfinite(want), np.abs(got - want) / ulp, 0)
bad = (np.isnan(got) != np.isnan(want)) | (np.isinf(want) & (got != want)) | (err > 4)
bad &= ~(np.abs(w32) < 1.2e-38) & ~np.isnan(want) | (np.isnan(got) != np.isnan(want))
for i in np.flatnonzero(bad)[:5]:
    print('$op $opt: x=%r got %r want %r' % (x[i], got[i], want[i]))
sys.exit(1 if bad.any() else 0)" || fail "$op $opt is not numpy's"
    done
done
echo ok
