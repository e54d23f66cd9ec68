# A select on a lane's condition in a vectorized loop: && || ! of f32 (or
# i32) comparisons, under NaN tests, as one vector mask and a blend of both
# arms (ir/vectorize.c, vector_mask_select; codegen/emit_vector.c), where
# each lane was a scalar select: TopK's masked maximum after its last
# choice, and its first index of the maximum in index numbers of f32
# (importer/ops_nn.c, topk_select), then an elementwise select and an i32
# one; not a select whose arm casts to an integer (checked: an infinity in
# a lane that chose the other arm would fail the kernel).  Rows of 96 (6
# vectors); NaN, infinities, ties and -0 among the values, a row of NaNs,
# one of equal numbers, a NaN threshold.  The
# outputs equal the interpreter's bit for bit at -O2 on one and two
# threads and at -O0; the C has a mask in every kernel and no lane-by-lane
# vector of x's elements; the vector IR printed reads back the same.
. "$srcdir/testsuite/cli/lib.inc"
cat >vm.te <<'EOT'
input x: f32[64, 96]
input t: f32[64]
input p: f32[64]
input k: f32[96]
input a: i32[64, 96]
input b: i32[64, 96]
def masked(x: f32[64, 96], t: f32[64], p: f32[64], k: f32[96]) -> m: f32[64] {
    m[i] max= t[i] != t[i] ? (x[i, j] == x[i, j] ? x[i, j] : -inf) : (x[i, j] < t[i] || x[i, j] == t[i] && k[j] > p[i] ? x[i, j] : -inf)
}
def first(x: f32[64, 96], m: f32[64], k: f32[96]) -> c: f32[64] {
    c[i] min= x[i, j] != x[i, j] ? k[j] : x[i, j] == m[i] ? 96 + k[j] : 192
}
def blend(x: f32[64, 96]) -> y: f32[64, 96] {
    y[i, j] = x[i, j] != x[i, j] || x[i, j] > 0.5 && !(x[i, j] == 1.0) ? x[i, j] * 2.0 : x[i, j] - 1.0
}
def guarded(x: f32[64, 96]) -> w: f32[64, 96] {
    w[i, j] = x[i, j] >= 0.0 && x[i, j] < 1000.0 ? f32(i32(x[i, j] * 1000.0)) : -1.0
}
def ints(a: i32[64, 96], b: i32[64, 96]) -> z: i32[64, 96] {
    z[i, j] = a[i, j] > b[i, j] || a[i, j] == 0 ? a[i, j] : b[i, j] - 1
}

schedule ints {
    vectorize(j)
}

m = masked(x, t, p, k)
c = first(x, m, k)
y = blend(x)
z = ints(a, b)
w = guarded(x)
output m
output c
output y
output z
output w
EOT
"$PYTHON" -c "
import numpy as np
r = np.random.default_rng(29)
v = np.array([np.nan, np.inf, -np.inf, 0.0, 1.0, 0.5, 2.0, -3.0], np.float32)
x = v[r.integers(0, len(v), (64, 96))]
x[5] = np.nan; x[6] = 1.0; x[8, ::3] = -0.0
np.save('x.npy', x)
t = x[np.arange(64), r.integers(0, 96, 64)]; t[7] = np.nan
np.save('t.npy', t.astype(np.float32))
np.save('p.npy', r.integers(0, 96, 64).astype(np.float32))
np.save('k.npy', np.arange(96, dtype=np.float32))
np.save('a.npy', r.integers(-3, 4, (64, 96)).astype(np.int32))
np.save('b.npy', r.integers(-3, 4, (64, 96)).astype(np.int32))
" || fail "cannot write the inputs"
IN="--input x=x.npy --input t=t.npy --input p=p.npy --input k=k.npy --input a=a.npy --input b=b.npy"
expect_status 0 "$TEC" --interp vm.te $IN --save-outputs ref
expect_status 0 "$TEC" -O2 vm.te $IN --save-outputs o2
expect_status 0 env TEC_NUM_THREADS=2 "$TEC" -O2 vm.te $IN --save-outputs t2
expect_status 0 "$TEC" -O0 vm.te $IN --save-outputs o0
for d in o2 t2 o0; do
    for o in m c y z w; do
        cmp ref/$o.npy $d/$o.npy || fail "$d: $o differs from the interpreter"
    done
done
expect_status 0 "$TEC" -O2 --emit=c vm.te
for f in m c y z; do
    sed -n "/^int32_t tec_k[0-9]*_$f(/,/^}/p" out >k_$f.c
    grep -q 'const tec_m[fi]32x16 tec_k = ' k_$f.c || { cat k_$f.c; fail "$f: no vector mask"; }
    if grep -q '(tec_f32x16){x\[' k_$f.c; then cat k_$f.c; fail "$f: x built lane by lane"; fi
done
# the vector IR prints and reads back as it was
expect_status 0 "$TEC" -O2 --emit=tir vm.te
cp out vm.tir
grep -q 'select(x\[ramp(' vm.tir || fail "no vector select in the printed IR"
expect_status 0 "$TEC" -x tir -O2 --emit=tir vm.tir
diff -u vm.tir out || fail "the printed vector IR reads back otherwise"
exit 0
