# The vector math of optimized kernels (exp, sigmoid, tanh, erf and GELU on
# f32 vectors: tec's inline polynomials, codegen/emit_prelude.c) against
# double-precision references, element by element, on a million inputs:
# magnitudes from 1e-40 (subnormal) to 120 of both signs, a dense sweep of
# [-12, 12], and the edges (+-0, +-inf, NaN, the overflow and underflow
# thresholds, the branch points).  Bounds (doc/language.md): exp 2 ulp,
# and exactly 0 where the result is below 2^-126 (no subnormal results:
# codegen/emit_vmath.c), tanh 3 ulp, erf and GELU
# 5e-7 absolute, sigmoid 1.5e-7 absolute; NaN exactly where the reference
# is NaN, infinities equal.  Run for this machine's vectors and for
# x86-64-v3's (8 lanes without AVX-512: the generic code).
. "$srcdir/testsuite/cli/lib.inc"
"$PYTHON" - <<'PY' || fail "could not write the inputs"
import numpy as np
rng = np.random.default_rng(7)
N = 1 << 20
mag = np.exp(rng.uniform(np.log(1e-40), np.log(120.0), N // 2))
mag *= np.where(rng.random(N // 2) < 0.5, -1.0, 1.0)
edge = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 1e-45, -1e-45, 1e-40, -1e-40,
                 1.17549435e-38, 88.72283, 88.72284, 89.0, 100.0, 3.4e38, -3.4e38, -87.33,
                 -87.34, -103.9, -103.98, -104.0, -150.0, 0.625, -0.625, 0.62499, 0.5, -0.5,
                 0.49999, 0.50001, 3.9, 5.0, -5.1, 9.0, -9.01, 44.5, -44.5])
x = np.concatenate([mag, rng.uniform(-12.0, 12.0, N // 2 - len(edge)), edge]).astype(np.float32)
np.save("x.npy", x)
PY
cat >vm.te <<'TE'
input x: f32[1048576]
e[i] = exp(x[i]) where i in 0..1048576
s[i] = sigmoid(x[i]) where i in 0..1048576
t[i] = tanh(x[i]) where i in 0..1048576
r[i] = erf(x[i]) where i in 0..1048576
g[i] = 0.5 * x[i] * (1.0 + erf(x[i] * 0.7071067811865476)) where i in 0..1048576
output e
output s
output t
output r
output g
TE
for target in native x86-64-v3; do
    expect_status 0 "$TEC" -O2 --target=$target vm.te --input x=x.npy --save-outputs "o-$target"
    grep -q "tec_vexp_f32x" <("$TEC" -O2 --target=$target --emit=c vm.te) ||
        fail "$target: the kernels do not use tec's vector exp"
    "$PYTHON" - "o-$target" <<'PY' || fail "$target: vector math out of its bounds"
import math, sys
import numpy as np
d = sys.argv[1]
x = np.load("x.npy").astype(np.float64)
erf = np.vectorize(math.erf)
np.seterr(all="ignore")
if True:
    ref = {"e": np.exp(x), "s": 1.0 / (1.0 + np.exp(-x)), "t": np.tanh(x), "r": erf(x),
           "g": 0.5 * x * (1.0 + erf(x * 0.7071067811865476))}
# name: (bound, in ulp or absolute)
bounds = {"e": (2.0, "ulp"), "t": (3.0, "ulp"), "r": (5e-7, "abs"), "g": (5e-7, "rel"),
          "s": (1.5e-7, "abs")}
ok = True
for k, want in ref.items():
    got = np.load("%s/%s.npy" % (d, k)).astype(np.float64)
    w32 = want.astype(np.float32).astype(np.float64)
    if not np.array_equal(np.isnan(got), np.isnan(want)):
        i = int(np.argmax(np.isnan(got) != np.isnan(want)))
        print("%s: NaN where the reference is not (or not where it is) at x=%r: %r vs %r"
              % (k, x[i], got[i], want[i])); ok = False; continue
    inf = np.isinf(w32)
    if not np.array_equal(got[inf], w32[inf]) or np.isinf(got[~inf & ~np.isnan(w32)]).any():
        print("%s: infinities differ" % k); ok = False; continue
    fin = np.isfinite(w32)
    if k == "e":   # no subnormal results: 0 below 2^-126, within 2 ulp above
        sub = fin & (want < 2.0 ** -126)
        if (got[sub] != 0).any():
            i = int(np.argmax(sub & (got != 0)))
            print("e: %r at x=%r, below 2^-126: not 0" % (got[i], x[i])); ok = False; continue
        fin &= ~sub
    err = np.where(fin, np.abs(got - want), 0.0)
    b, unit = bounds[k]
    if unit == "ulp":
        ulp = np.maximum(np.spacing(np.abs(w32).astype(np.float32)).astype(np.float64), 2.0 ** -149)
        err = err / ulp
    elif unit == "rel":   # GELU: absolute, scaled by |x| where |x| > 1
        err = err / np.maximum(np.abs(x), 1.0)
    err = np.where(fin, err, 0.0)
    i = int(np.argmax(err))
    print("%s: max error %.3g %s at x=%r (%r, reference %r)" % (k, err[i], unit, x[i], got[i], want[i]))
    if not err[i] <= b:
        print("%s: above the bound %g %s" % (k, b, unit)); ok = False
sys.exit(0 if ok else 1)
PY
done
