# Views cost nothing: no copy loop, no buffer, no activation memory; the
# consumer reads the viewed storage through rewritten indices.  A copy is
# made only where the layout allows no view.
. "$srcdir/testsuite/cli/lib.inc"

# GPT-2's q, k and v are views of c_attn's output, and its merged heads a
# view of attn_mix's.
expect_status 0 "$TEC" --passes= --emit=tir -D T=4 -D LAYERS=1 "$srcdir/examples/gpt2.te"
grep -q 'op = "head_view"' out && fail "gpt2: head_view made a function"
grep -q 'temp h\.0\.attn\.[qkv]:' out && fail "gpt2: q, k or v has a buffer"
# A kernel takes each view as a parameter of its own (q and k below), which
# the call passes c_attn's buffer to.
grep -qF 'func @h.0.attn.scores(q: f32[1, 4, 3, 12, 64], k: f32[1, 4, 3, 12, 64], s: f32[1, 12, 4, 4])' out ||
    fail "gpt2: attn_scores does not take c_attn's output as [1, 4, 3, 12, 64]"
grep -qF 'qk[vb, vh, vi, vj] + q[0, vi, 0, vh, vd] * k[0, vj, 1, vh, vd]' out ||
    fail "gpt2: attn_scores does not read q and k through qkv"
grep -qF 'call @h.0.attn.scores(h.0.attn.c_attn, h.0.attn.c_attn, h.0.attn.scores)' out ||
    fail "gpt2: the graph does not pass c_attn's buffer to attn_scores"
# The heads merge back by a free reshape: attn_mix writes [B, T, H, D].
grep -qF 'call @h.0.attn.c_proj(h.0.attn.mix, ' out || fail "gpt2: c_proj does not read attn_mix's buffer"
grep -q 'op = "merge_heads"' out && fail "gpt2: the heads are merged by a copy"

# A flatten and a transpose feeding a matmul: one layer, and the profile's
# activations are the input (4096 B) and the output (16 B) alone.
cat >views.te <<'TE'
def matmul(A: f32[M, K], B: f32[K, N]) -> C: f32[M, N] {
    C[i, j] += A[i, k] * B[k, j]
}
input x: f32[2, 64, 8]
f = flatten(x, 1)
t = transpose(f, 0, 1)
y = matmul(f, t)
output y
TE
expect_status 0 "$TEC" --passes= --emit=tir views.te
[ "$(grep -c '^func' out)" = 1 ] || fail "flatten/transpose: a copy function was made"
grep -qF 'C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vj, vk]' out || fail "flatten/transpose: the rewritten reads"
grep -qF 'func @y(A: f32[2, 512], B: f32[2, 512], C: f32[2, 2])' out || fail "flatten/transpose: x seen as [2, 512]"
grep -qF 'call @y(x, x, y)' out || fail "flatten/transpose: the call"
expect_status 0 "$TEC" -O2 --profile views.te
grep -qF 'activations: 4112B planned (4112B unplanned)' out || { cat out; fail "flatten/transpose: activation memory"; }

# Merging dimensions a transpose reordered copies once, in a layer named
# after the reshape, whose op is reshape.
cat >copy.te <<'TE'
input x: f32[2, 3, 4]
t = transpose(x, 1, 2)
m = reshape(t, 2, 12)
y[i, j] = m[i, j] * 2.0
output y
TE
expect_status 0 "$TEC" --passes= --emit=tir copy.te
grep -qF 'func @m(x: f32[2, 3, 4], m: f32[2, 4, 3]) attrs(layer = "m", op = "reshape"' out || fail "copy: the copy"
grep -qF 'm[vi0, vi1, vi2] = x[vi0, vi2, vi1]' out || fail "copy: the copy's loop"
grep -qF 'func @y(m: f32[2, 12], y: f32[2, 12])' out || fail "copy: the reshape of the copy"
# Reshapes of reshapes share one storage parameter per shape.
cat >chain.te <<'TE'
input x: f32[4, 6]
w = reshape(x, 2, 12)
s = reshape(x, 24)
u = reshape(w, 24)
b = reshape(u, 4, 6)
y[i] = u[i] + s[i]
z[i, j] = b[i, j] * 2.0
output y
output z
TE
expect_status 0 "$TEC" --passes= --emit=tir chain.te
grep -qF 'func @y(x: f32[24], b: f32[4, 6], y: f32[24], z: f32[4, 6])' out ||
    fail "chain: u and s are not one parameter"
grep -qF 'y[vi] = x[vi] + x[vi]' out || fail "chain: the reads of u and s"
grep -qF 'call @y(x, x, y, z)' out || fail "chain: a reshape back to x's shape is not x itself"
echo ok
