# An elementwise layer that narrows its input (a quantize of an f32
# convolution's output into u8) is computed in the convolution's tile
# write-back, which then stores the u8 values (passes/fuse.c); one that
# widens (a dequantize of those u8 values back to f32) stays a layer of its
# own.  Both results equal the interpreter's bit for bit.
. "$srcdir/testsuite/cli/lib.inc"
cat >q.te <<'TE'
import "nn.te"
def quant(y: f32[N, C, H, W]) -> q: u8[N, C, H, W] {
    q[n, c, h, w] = sat_u8(rint(y[n, c, h, w] / 0.03) + 128)
}
def dequant(q: u8[N, C, H, W]) -> d: f32[N, C, H, W] {
    d[n, c, h, w] = (f32(q[n, c, h, w]) - 128) * 0.03
}
input x: f32[1, 16, 9, 10]
y = conv2d(x, 24, 3, pad=1) as "conv"
q = quant(y) as "q"
d = dequant(q) as "d"
output d
TE
expect_status 0 "$TEC" -O2 --emit=tir q.te
grep -q '^  call @conv(x, q, ' out || { grep '^  call' out; fail "the quantize is not in the convolution's kernel"; }
grep -q '^  call @d(q, d)$' out || { grep '^  call' out; fail "the dequantize is not a kernel of its own"; }
expect_status 0 "$TEC" --interp q.te --save-outputs ref
expect_status 0 "$TEC" -O2 q.te --save-outputs o2
cmp ref/d.npy o2/d.npy || fail "-O2 differs from the interpreter"
echo ok
