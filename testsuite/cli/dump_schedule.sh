# --dump-schedule: the schedule -O2 chose for every kernel, printed as
# `schedule "LAYER" { ... }` blocks; pasted into the program they give the
# same loop nests (now marked scheduled by the program) and the same
# outputs.
. "$srcdir/testsuite/cli/lib.inc"
export XDG_CACHE_HOME=$PWD/cache
prog=$srcdir/examples/conv.te

expect_status 0 "$TEC" -O2 --dump-schedule "$prog" --save-outputs auto
grep -q '^schedule "conv" {$' err || { cat err; fail "no schedule block for layer conv"; }
grep -q '^    x_pad = pad(x)$' err || { cat err; fail "conv's schedule does not pad its input"; }

# the printed blocks, pasted into the program, are what -O2 chose
{ sed "s#^import \"nn.te\"#import \"$srcdir/lib/nn.te\"#" "$prog"; grep -v '^#' err; } >pinned.te
expect_status 0 "$TEC" -O2 --dump-schedule pinned.te --save-outputs pinned
grep -q '^# @conv: scheduled by the program$' err || { cat err; fail "the pasted schedule was not used"; }
"$TEC" -O2 --emit=tir "$prog" | sed -n '/^func @conv/,/^}/p' | sed 1d >auto.tir
"$TEC" -O2 --emit=tir pinned.te | sed -n '/^func @conv/,/^}/p' | sed 1d >pinned.tir
diff -u auto.tir pinned.tir >/dev/null || { diff -u auto.tir pinned.tir | head -20; fail "pasted schedule gives other loops"; }
"$PYTHON" "$srcdir/testsuite/compare.py" auto pinned >/dev/null || fail "pasted schedule changes the outputs"

# prepack's load functions (packing weights, folding batchnorm at load)
# carry their kernel's layer but have no schedule: one block per kernel
cat >bn.te <<EOF
import "$srcdir/lib/nn.te"
input x: f32[1, 8, 6, 6]
c = conv2d(x, 64, 3, pad=1) as "conv"
b = batchnorm(c) as "bn"
y = relu(b) as "relu"
output y
EOF
expect_status 0 "$TEC" -O2 --dump-schedule bn.te
[ "$(grep -c '^schedule "conv" {$' err)" = 1 ] || { cat err; fail "not one schedule block for conv"; }
grep -q 'prepack' err && { cat err; fail "a load function's schedule was printed"; }
"$TEC" -O2 --emit=tir bn.te | grep -q '^  load @conv.load.weightp(' || fail "bn.te's weights are not packed at load"
echo ok
