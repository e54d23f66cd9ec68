# bf16 products accumulating in f32 on AVX-512 BF16's vdpbf16ps
# (codegen/emit_vector.c, bf16 pairs): bench/bf16_gemm.te's schedule at
# sizes its tiles do not divide (9 x 14 x 40; an odd k
# would leave the pairs' tail guard in the loop, which then stays scalar), bit for bit against the
# interpreter, natively (vdpbf16ps where the processor has it) and for
# x86-64-v4 (no AVX-512 BF16: the interpreter's sums in vector code):
#  - values of magnitudes 2^-30 to 2^30 of both signs, so that sums in
#    another order round differently (the instruction's pairs are added
#    first element first, as the interpreter does);
#  - the same with a row of subnormals, a row of tiny values (products
#    below 2^-126) and a huge value (2^70), which the instruction would
#    flush or fuse differently: the kernel's check sends every pair to the
#    interpreter's sums.
# The same product without a schedule: on a processor with AVX-512 BF16
# the automatic scheduler gives it the pairs (its reduction split by 2,
# passes/schedule/int8.c), with the same results.
. "$srcdir/testsuite/cli/lib.inc"

sed -e 's/^let M = 1024/let M = 9/' -e 's/^let K = 1024/let K = 14/' -e 's/^let N = 1024/let N = 40/' \
    "$srcdir/bench/bf16_gemm.te" >bg.te
"$PYTHON" - <<'PY' || fail "could not write the inputs"
import numpy as np
rng = np.random.default_rng(16)
def bf16(shape):
    m = rng.integers(128, 256, shape)                 # 8 significant bits
    e = rng.integers(-30, 31, shape)
    s = np.where(rng.random(shape) < 0.5, -1.0, 1.0)
    f = (s * m * 2.0 ** (e - 7)).astype(np.float32)
    return (f.view(np.uint32) >> 16).astype(np.uint16)
a, b = bf16((9, 14)), bf16((14, 40))
np.save("a.npy", a)
np.save("b.npy", b)
a[2] = rng.integers(1, 128, 14)        # subnormals (the instruction reads 0)
a[4] = 0x1c00 | rng.integers(0, 128, 14)   # about 2^-71: products below 2^-126
b[6, 7] = 0x6280                       # 2^70
np.save("a_odd.npy", a)
np.save("b_odd.npy", b)
a, b = bf16((9, 200)), bf16((200, 40))   # (a panel of B longer than the cache: packed)
np.save("a2.npy", a)
np.save("b2.npy", b)
a[2] = rng.integers(1, 128, 200)
b[6, 7] = 0x6280
np.save("a2_odd.npy", a)
np.save("b2_odd.npy", b)
PY

expect_status 0 "$TEC" -O2 --emit=c bg.te
grep -q 'tec_dpbf16_f32x16(' out || fail "no bf16 pairs in the kernel"
grep -q 'const int tec_bf16_plain = 1 && tec_bf16_all_plain(A, 126) && tec_bf16_all_plain(B, 560) ? 2 : 0;' out ||
    fail "the kernel does not check its bf16 parameters once (the tile needs no check)"
for set in "" _odd; do
    in=(--input "A=a$set.npy" --input "B=b$set.npy")
    expect_status 0 "$TEC" --interp bg.te "${in[@]}" --save-outputs ref
    for target in native x86-64-v4; do
        expect_status 0 "$TEC" -O2 --target=$target bg.te "${in[@]}" --save-outputs o
        cmp -s ref/C.npy o/C.npy || fail "inputs a$set/b$set at -O2 --target=$target differ from the interpreter's"
    done
done
# the automatic scheduler's bf16 pairs (native only: it decides by the
# processor it runs on)
sed -e '/^schedule bmatmul {/,/^}/d' -e 's/^let K = 14/let K = 200/' bg.te >ba.te
if grep -q -w avx512_bf16 /proc/cpuinfo 2>/dev/null; then
    expect_status 0 "$TEC" -O2 --dump-schedule ba.te
    grep -q 'k_o, k_i = split(k, 2)' err || fail "the automatic schedule does not pair the bf16 products"
    expect_status 0 "$TEC" -O2 --emit=c ba.te
    grep -q 'tec_dpbf16_f32x16(' out || fail "no bf16 pairs in the automatically scheduled kernel"
fi
for set in "" _odd; do
    in=(--input "A=a2$set.npy" --input "B=b2$set.npy")
    expect_status 0 "$TEC" --interp ba.te "${in[@]}" --save-outputs ref
    expect_status 0 "$TEC" -O2 ba.te "${in[@]}" --save-outputs o
    cmp -s ref/C.npy o/C.npy || fail "inputs a2$set/b2$set at -O2 (automatic schedule) differ from the interpreter's"
done
exit 0
