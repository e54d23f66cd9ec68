# An int8 depthwise convolution (i32 sums of widened u8 activations times
# i8 weights, as a QDQ model's grouped Conv imports) gets the schedule of
# a float one (passes/schedule/int8.c, sch_int8_vector_store): its window
# loops outside a vector of i32 lanes along the output row, the row summed
# in a tile whose write-back computes the epilogue; at stride 1 and 2 the
# results equal the interpreter's bit for bit.  (Rows of 20 outputs, longer
# than a vector: shorter ones go channels-last, int8_depthwise_nhwc.sh.)
. "$srcdir/testsuite/cli/lib.inc"

for s in 1 2; do
    o=$(( (40 * s + 2 - 3) / s + 1 ))
    n=$(( 40 * s ))
    cat >dw$s.te <<EOF
def dw(x: u8[1, 16, $n, $n]) -> y: f32[1, 16, $o, $o] {
    param weight: i8[16, 1, 3, 3]
    param scale: f32[16]
    acc[n, f, o0, o1] += i32(x[n, f, o0 * $s + r0 - 1, o1 * $s + r1 - 1] else 0) * i32(weight[f, 0, r0, r1]) where o0 in 0..$o, o1 in 0..$o
    y[n, f, o0, o1] = max(f32(acc[n, f, o0, o1]) * scale[f], -3.40282347e38)
}
input x: u8[1, 16, $n, $n]
y = dw(x) as "dw"
output y
EOF
    expect_status 0 "$TEC" -O2 --dump-schedule dw$s.te --save-outputs o2
    grep -q 'reorder(f, o0, r0, r1, o1)' err || { cat err; fail "stride $s: the window does not run outside the row"; }
    grep -q '^    vectorize(o1)$' err || { cat err; fail "stride $s: the row is not a vector loop"; }
    grep -q 'cache_write(acc, o0)' err || { cat err; fail "stride $s: the row is not summed in a tile"; }
    expect_status 0 "$TEC" --interp dw$s.te --save-outputs oi
    cmp -s o2/y.npy oi/y.npy || fail "stride $s: -O2 differs from the interpreter"
done
exit 0
