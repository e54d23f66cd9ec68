# Mid-size kernels share a translation unit: each run of the C compiler
# costs its start and its headers, as much as several KB of kernel code
# (codegen/compile.c, BUNDLE_SMALL), so three convolutions of 13-19 KB of C
# each (at -O2 for x86-64-v3, a target fixed so that the sizes do not
# depend on the machine) are compiled as one unit, beside the glue and the
# load-time packing: 3 units, not 5.  The bundled build computes what the
# interpreter does, and a second model with the same three convolutions
# takes their unit from the cache.
. "$srcdir/testsuite/cli/lib.inc"
export XDG_CACHE_HOME=$PWD/cache
t=--target=x86-64-v3
cat >three.te <<'TE'
import "nn.te"
input x: f32[1, 16, 14, 14]
a1 = conv2d(x, 32, 3, pad=1) as "c1"
a = relu(a1) as "r1"
b1 = conv2d(a, 32, 3, pad=1) as "c2"
b = relu(b1) as "r2"
c1 = conv2d(b, 48, 3, pad=1) as "c3"
c = relu(c1) as "r3"
output c
TE
expect_status 0 "$TEC" -O2 $t -v --save-outputs got three.te
grep -q '^tec: 6 kernels, 5 distinct: 3 translation units (0 from the cache)' err ||
    { cat err; fail "the three convolutions did not share a unit"; }
expect_status 0 "$TEC" --interp --save-outputs ref three.te
"$PYTHON" "$srcdir/testsuite/compare.py" ref got >cmp 2>&1 || { cat cmp; fail "the bundled build differs from the interpreter"; }
# the same layers under other names: the bundle's object is reused
sed 's/"c3"/"conv3"/; s/"r3"/"relu3"/' three.te >renamed.te
expect_status 0 "$TEC" -O2 $t -v renamed.te
grep -q '^tec: 6 kernels, 5 distinct: 3 translation units ([1-9]' err ||
    { cat err; fail "the renamed model did not reuse the bundle"; }
echo ok
