# At tec -O2 (cc -O3) the distinct kernels that do least of the model's
# estimated work, together at most a tenth of it, are built as light code
# at cc -O2 (codegen/compile.c, light_units): here the two softmaxes (one
# row kernel each) and the sigmoid of 64 values beside a 64x128x256 and a
# 64x256x256 matrix product, in one unit.  No kernel is built at -O1, not
# even the sigmoid, within the work's hundredth; the contractions stay at
# -O3, the prepack unit at -O1, the glue (forwarders only) at -O0, and
# the outputs are the interpreter's.
# At tec -O1 every unit is built at -O1: nothing is light.
. "$srcdir/testsuite/cli/lib.inc"
export XDG_CACHE_HOME=$PWD/cache
cat >light.te <<'TE'
import "nn.te"
input x: f32[64, 128]
input z: f32[4, 16]
h = linear(x, 256) as "fc1"
p = softmax(h) as "sm"
y = linear(p, 256) as "fc2"
q = softmax(y) as "sm2"
t = sigmoid(z) as "tiny"
output q
output t
TE
expect_status 0 "$TEC" -v --save-outputs light light.te
grep -q '^tec: 7 kernels, 4 distinct: 4 translation units (0 from the cache)' err ||
    { cat err; fail "not the units expected"; }
# the optimization level of each unit's command: its last -O word
grep '^tec: running: .* -c ' err | sed 's/ -o .*//' |
    awk '{ l = ""; for (i = 1; i <= NF; i++) if ($i ~ /^-O[0-9]$/) l = $i; print l }' | sort | uniq -c |
    awk '{ printf "%s %s\n", $2, $1 }' >levels
grep -qx -- '-O0 1' levels && grep -qx -- '-O1 1' levels && grep -qx -- '-O2 1' levels &&
    grep -qx -- '-O3 1' levels ||
    { cat levels err; fail "expected the glue at -O0, the prepack unit at -O1, the softmaxes and sigmoid at -O2, the products at -O3"; }
expect_status 0 "$TEC" --interp --save-outputs ref light.te
"$PYTHON" "$srcdir/testsuite/compare.py" ref light >cmp.log ||
    { cat cmp.log; fail "the build with light code differs from the interpreter"; }
# once more from the cache: the same entry
expect_status 0 "$TEC" -v light.te
grep -q '^tec: kernel cache hit: ' err || { cat err; fail "the second run missed the cache"; }
# tec -O1: no unit is light (every unit is built at -O1 anyway)
rm -rf cache
expect_status 0 "$TEC" -O1 -v light.te
! grep '^tec: running: .* -c ' err | grep -q -- ' -O2 ' || { cat err; fail "a light unit at tec -O1"; }
