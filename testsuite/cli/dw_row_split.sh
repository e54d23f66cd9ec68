# A float 3x3 depthwise convolution of stride 1 whose channel exceeds L1
# (16x112x112, 49 KB a channel), of at most 16 channels, on a machine of
# two or more cores (as the other autoschedule tests): its threads take
# blocks of output rows (two per thread: regroup(p, 28)), the channels
# inside, each channel's block of rows copied padded (pad(x, f)), as the
# 1x1 convolution after it splits its map (passes/schedule/auto_window.c,
# depthwise_row_split).  Not with 32 channels, not of stride 2, nor when
# a reader pools each channel whole (a squeeze-and-excitation's global
# average pooling after the activation): those keep their channels on the
# threads and the copies of 8 rows.  Every program equals the interpreter
# on one and on two threads.
. "$srcdir/testsuite/cli/lib.inc"

cat >rows.te <<'EOF'
import "nn.te"
input x: f32[1, 16, 112, 112]
d = conv2d(x, 16, 3, pad=1, groups=16, has_bias=1)
r = relu(d)
y = conv2d(r, 24, 1)
output y
EOF
cat >s2.te <<'EOF'
import "nn.te"
input x: f32[1, 16, 112, 112]
d = conv2d(x, 16, 3, stride=2, pad=1, groups=16, has_bias=1)
y = relu(d)
output y
EOF
sed 's/16, 112/32, 112/; s/conv2d(x, 16/conv2d(x, 32/; s/groups=16/groups=32/' rows.te >wide.te
cat >pooled.te <<'EOF'
import "nn.te"
input x: f32[1, 16, 112, 112]
d = conv2d(x, 16, 3, pad=1, groups=16, has_bias=1)
y = silu(d)
g = global_avgpool(y)
output g
output y
EOF

# schedule_of PROGRAM: the schedule of its convolution d, from err
schedule_of() { sed -n '/^schedule "d" {/,/^}/p' err; }

expect_status 0 env TEC_NUM_THREADS=2 "$TEC" -I "$srcdir/lib" -O2 --no-cache --dump-schedule rows.te --save-outputs rows2
schedule_of >s
grep -q '^    pb, pr = regroup(p, 28)$' s || { cat s; fail "rows: the rows are not split into blocks"; }
grep -q '^    reorder(pb, f)$' s || { cat s; fail "rows: the blocks are not outside the channels"; }
grep -q '^    parallel(pb)$' s || { cat s; fail "rows: the threads do not take the blocks"; }
grep -q '^    x_pad = pad(x, f)$' s || { cat s; fail "rows: the copy is not per channel of a block"; }

for p in wide s2 pooled; do
    expect_status 0 env TEC_NUM_THREADS=2 "$TEC" -I "$srcdir/lib" -O2 --no-cache --dump-schedule $p.te --save-outputs ${p}2
    schedule_of >s
    grep -q 'regroup(p, 28)' s && { cat s; fail "$p: the rows are split among the threads"; }
    grep -q '^    parallel(f)$' s || { cat s; fail "$p: the threads do not take the channels"; }
    grep -q '^    x_pad = pad(x, po)$' s || { cat s; fail "$p: the copy is not per block of 8 rows"; }
done

for p in rows wide s2 pooled; do
    expect_status 0 "$TEC" -I "$srcdir/lib" --interp $p.te --save-outputs ${p}i
    expect_status 0 env TEC_NUM_THREADS=1 "$TEC" -I "$srcdir/lib" -O2 $p.te --save-outputs ${p}1
    "$PYTHON" "$srcdir/testsuite/compare.py" ${p}i ${p}1 >cmp 2>&1 || { cat cmp; fail "$p: one thread differs from the interpreter"; }
    "$PYTHON" "$srcdir/testsuite/compare.py" ${p}i ${p}2 >cmp 2>&1 || { cat cmp; fail "$p: two threads differ from the interpreter"; }
done
exit 0
