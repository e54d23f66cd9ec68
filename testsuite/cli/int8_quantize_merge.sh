# A quantize kernel (f32 to u8) between a 1x1 convolution that does not
# merge its map (its write-back stores channels 14x14 apart, so fuse keeps
# the quantize a kernel of its own) and an int8 depthwise convolution that
# pads its input one channel at a time (no border that layout could place)
# runs along the whole contiguous tensor, its loops merged, instead of
# rows of 14 as 8 + 4 lanes and 2 scalars (passes/schedule/auto_window.c,
# merge_elementwise); -O2 equals the interpreter bit for bit.
. "$srcdir/testsuite/cli/lib.inc"

cat >qm.te <<'EOF'
import "nn.te"
def quantize(x: f32[1, 576, 14, 14]) -> y: u8[1, 576, 14, 14] {
    y[i0, i1, i2, i3] = u8(min(max(rint(x[i0, i1, i2, i3] / 0.0001), 0.0), 255.0))
}
def dw(x: u8[1, 576, 14, 14]) -> y: f32[1, 576, 14, 14] {
    param weight: i8[576, 1, 3, 3]
    param scale: f32[576]
    acc[n, f, o0, o1] += i32(x[n, f, o0 + r0 - 1, o1 + r1 - 1] else 0) * i32(weight[f, 0, r0, r1]) where o0 in 0..14, o1 in 0..14
    y[n, f, o0, o1] = max(f32(acc[n, f, o0, o1]) * scale[f], -3.40282347e38)
}
input x: f32[1, 96, 14, 14]
a = conv2d(x, 576, 1) as "expand"
b = relu6(a) as "relu"
q = quantize(b) as "q"
y = dw(q) as "dw"
output q
output y
EOF
expect_status 0 "$TEC" -O2 --dump-schedule qm.te --save-outputs o2
sed -n '/^# @q,/,/^}/p' err >q.sched
grep -q 'i2i3 = merge(i2, i3)' q.sched || { cat err; fail "the quantize's rows are not merged"; }
grep -q 'vectorize(i1i2i3' q.sched || { cat q.sched; fail "the quantize does not run along the merged tensor"; }
expect_status 0 "$TEC" --interp qm.te --save-outputs oi
for o in q y; do
    cmp -s o2/$o.npy oi/$o.npy || fail "$o: -O2 differs from the interpreter"
done
exit 0
