# The row kernels of lib/nn.te and of ONNX's Softmax and
# LayerNormalization divide once per row: the output is the row's values
# times the reciprocal of its sum (softmax) or of its standard deviation
# (layer norm), as PyTorch and ONNX Runtime compute them, and the C
# compiler hoists `1.0f / s[0]` out of the row's vector loop.  A vector
# division per 16 elements took a fifth of ViT-B/16's attention softmax
# (12 x 197 x 197: 290 to 226 us alone on one thread;
# bench/results/rows_s26.txt).  Checked on the generated C of softmax,
# causal softmax and layer norm over rows of 197 (row kernels), and the
# causal softmax's exponentials are vector calls; the
# results against numpy are run/row_kernels and run/nn_softmax's.
. "$srcdir/testsuite/cli/lib.inc"
cp "$srcdir/lib/nn.te" .
cat >rk.te <<'TE'
import "nn.te"
input a: f32[2, 3, 197] = uniform(-8, 8)
input att: f32[1, 2, 130, 130] = uniform(-8, 8)
input t: f32[1, 5, 197] = uniform(-2, 3)
sm = softmax(a) as "sm"
causal = causal_softmax(att) as "causal"
ln = layernorm(t) as "ln"
output sm
output causal
output ln
TE
expect_status 0 "$TEC" -O2 --emit=c rk.te -o rk.c
# each layer's kernel: from its comment to the next one
for layer in sm causal ln; do
    awk -v l="/* @$layer " 'index($0, l) == 1 {on = 1; print; next} /^\/\* @/ {on = 0} on' rk.c >"$layer.c"
    [ -s "$layer.c" ] || fail "no kernel for layer $layer in the generated C"
    grep -q 'schedule_auto: compute_at' "$layer.c" || fail "$layer is not scheduled as a row kernel"
    # stores of vectors to the output: none divides
    if grep -E '^\s*\*\(tec_f32x[0-9]+ \*\)&y\[' "$layer.c" | grep -q ') / ('; then
        grep -E '^\s*\*\(tec_f32x[0-9]+ \*\)&y\[' "$layer.c" | grep ') / ('
        fail "$layer divides per vector"
    fi
    grep -E '^\s*\*\(tec_f32x[0-9]+ \*\)&y\[' "$layer.c" | grep -q '1.0f / ' ||
        fail "$layer does not multiply by a reciprocal"
done
# the causal softmax's exponentials are vectors (its select, built lane by
# lane, inside exp's argument): no scalar expf in its kernel
! grep -q 'expf(' causal.c || fail "the causal softmax calls the scalar expf"
grep -q 'tec_vexp_f32x' causal.c || fail "the causal softmax has no vector exp"
exit 0
