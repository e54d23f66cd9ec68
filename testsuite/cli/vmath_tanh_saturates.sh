# The vector tanh reaches +-1 exactly where tanh rounds to +-1 in f32
# (|x| >= 9.011), as the interpreter's libm does: the AVX-512 variant
# clamped |x| at 9, where tanh is 1 - 3.05e-8 and rounds to 0.99999994, so
# every larger |x| gave 0.99999994: 1 + tanh(x) was 6e-8 instead of 0 for
# x <= -9.02 and GELU's tanh form at -inf was -inf where the interpreter
# (and numpy) give NaN (-inf * 0).  -O2 on this machine and on x86-64-v3
# (the generic variant) against --interp, bit for bit at these inputs.
. "$srcdir/testsuite/cli/lib.inc"
"$PYTHON" -c "
import numpy as np
x = np.array([9.0, -9.0, 9.02, -9.02, 9.5, -9.5, 10.0, -10.0, 30.0, -30.0, 1e4, -1e4, np.inf,
              -np.inf, 0.5, -2.0, 4.0, 8.99] + [0.0] * 14, np.float32)
np.save('x.npy', x)" || fail "cannot write the input"
cat >t.te <<'TE'
input x: f32[32]
t[i] = tanh(x[i]) where i in 0..32
u[i] = 1.0 + tanh(x[i]) where i in 0..32
g[i] = 0.5 * x[i] * (1.0 + tanh(0.7978845608028654 * (x[i] + 0.044715 * x[i] * x[i] * x[i]))) where i in 0..32
output t
output u
output g
TE
expect_status 0 "$TEC" --interp t.te --input x=x.npy --save-outputs ref
for target in native x86-64-v3; do
    expect_status 0 "$TEC" -O2 --target=$target t.te --input x=x.npy --save-outputs "o-$target"
    "$PYTHON" -c "
import numpy as np, sys
ok = True
for k in 't', 'u', 'g':
    a, b = np.load('ref/%s.npy' % k), np.load('o-$target/%s.npy' % k)
    same = (a == b) | (np.isnan(a) & np.isnan(b))
    if not same.all():
        i = int(np.argmin(same))
        print('$target %s: %r at x=%r, the interpreter %r' % (k, b[i], np.load('x.npy')[i], a[i]))
        ok = False
sys.exit(0 if ok else 1)" || fail "$target: tanh does not saturate as the interpreter's"
done
echo ok
