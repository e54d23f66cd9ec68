# An int8 depthwise convolution whose output rows are shorter than a
# vector (QDQ MobileNetV2's 3x3s on 14x14 and 7x7) runs channels-last
# (passes/schedule/auto_window.c, depthwise_channels_last): its input
# copied with the channels innermost, a vector of channels per output,
# the row's outputs unrolled; at stride 1 and 2 the results, through the
# requantizing write-back, equal the interpreter's bit for bit.
. "$srcdir/testsuite/cli/lib.inc"

for s in 1 2; do
    n=$(( 7 * s ))
    cat >dw$s.te <<EOF
def dw(x: u8[1, 32, $n, $n]) -> y: u8[1, 32, 7, 7] {
    param weight: i8[32, 1, 3, 3]
    param scale: f32[32]
    acc[n, f, o0, o1] += i32(x[n, f, o0 * $s + r0 - 1, o1 * $s + r1 - 1] else 3) * i32(weight[f, 0, r0, r1]) where o0 in 0..7, o1 in 0..7
    y[n, f, o0, o1] = u8(min(max(rint(f32(acc[n, f, o0, o1]) * scale[f] / 0.05), 0.0), 255.0))
}
input x: u8[1, 32, $n, $n]
y = dw(x) as "dw"
output y
EOF
    expect_status 0 "$TEC" -O2 --dump-schedule dw$s.te --save-outputs o2
    grep -q 'x_pad = pad(x, 1)' err || { cat err; fail "stride $s: the input is not copied channels-last"; }
    grep -q 'reorder(f_o, o0, r0, r1, o1, f_i)' err || { cat err; fail "stride $s: the channels are not innermost"; }
    grep -q 'unroll(o1)' err || { cat err; fail "stride $s: the row's outputs are not unrolled"; }
    expect_status 0 "$TEC" --interp dw$s.te --save-outputs oi
    cmp -s o2/y.npy oi/y.npy || fail "stride $s: -O2 differs from the interpreter"
done
exit 0
