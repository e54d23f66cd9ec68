# An int8 first convolution of stride 2 (3 -> 32 channels, padded to 4,
# 3x3, u8 activations, i32 sums: a QDQ MobileNetV2's stem) runs its vectors
# along the weight's 32 output channels, not along the map, whose lanes
# would gather each 4-byte group 8 bytes apart from the channels-last copy
# (passes/schedule/auto.c, strided_int_columns); -O2 equals the
# interpreter bit for bit on one and two threads.
. "$srcdir/testsuite/cli/lib.inc"

cat >stem.te <<'EOF'
def stem(x: u8[1, 3, 40, 40]) -> y: f32[1, 32, 20, 20] {
    param weight: i8[32, 4, 3, 3]
    param scale: f32[32]
    acc[n, f, o0, o1] += i32(x[n, c + 0, o0 * 2 + r0 - 1, o1 * 2 + r1 - 1] else 126) * i32(weight[f, c, r0, r1]) where o0 in 0..20, o1 in 0..20
    y[n, f, o0, o1] = max(f32(acc[n, f, o0, o1]) * scale[f], -3.40282347e38)
}
input x: u8[1, 3, 40, 40]
y = stem(x) as "stem"
output y
EOF
expect_status 0 "$TEC" -O2 --dump-schedule stem.te --save-outputs o1
grep -q 'f_o, f_i = split(f, 32)' err || { cat err; fail "the stem's vectors do not run along its output channels"; }
grep -q 'weightp = cache_read(weight, f_o)' err || { cat err; fail "the stem's weights are not packed"; }
TEC_NUM_THREADS=2 expect_status 0 "$TEC" -O2 stem.te --save-outputs o2
expect_status 0 "$TEC" --interp stem.te --save-outputs oi
cmp -s o1/y.npy oi/y.npy || fail "-O2 differs from the interpreter"
cmp -s o2/y.npy oi/y.npy || fail "-O2 on two threads differs from the interpreter"
exit 0
