# f16 and bf16 arithmetic in a .tir program (the language itself makes a
# kernel widen them first): compiled code rounds every result to its format
# as the interpreter does, so -O0, -O2 and -O3 write the interpreter's bits.
. "$srcdir/testsuite/cli/lib.inc"
cat >half.tir <<'TIR'
module "half"

func @f(a: f16[64], b: bf16[64], y: f16[64], z: bf16[64], w: f16[64]) attrs(layer = "f") {
  for i in 0..64 {
    block f(vi: spatial[64] = i) reads(a, b) writes(y, z, w) {
      y[vi] = a[vi] * 3.0f16 + cast<f16>(b[vi]) / a[vi] - exp(a[vi])
      z[vi] = -(b[vi] * b[vi]) + sqrt(cast<bf16>(a[vi] * a[vi])) + 0.1bf16
      w[vi] = min(a[vi] * a[vi] * a[vi] * 10000.0f16, 65504.0f16) + cast<f16>(cast<f64>(a[vi]) * 0.1)
    }
  }
}

graph {
  input a: f16[64] init(-3, 3)
  input b: bf16[64] init(-3, 3)
  output y: f16[64]
  output z: bf16[64]
  output w: f16[64]
  call @f(a, b, y, z, w)
}
TIR
expect_status 0 "$TEC" --interp half.tir --save-outputs ref
for o in -O0 -O2 -O3; do
    expect_status 0 "$TEC" $o half.tir --save-outputs "out$o"
    for t in y z w; do
        cmp "ref/$t.npy" "out$o/$t.npy" || fail "$o: $t differs from the interpreter's"
    done
done
# Some f16 products overflow to infinity: min() clamps +inf to 65504, and
# -inf stays.
"$PYTHON" - <<'PY' || fail "values"
import numpy as np
w = np.load("ref/w.npy")
assert w.dtype == np.float16 and (w == 65504).any() and (w == -np.inf).any(), w
PY
exit 0
