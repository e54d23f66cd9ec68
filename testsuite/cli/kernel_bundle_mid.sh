# Kernels of 24-40 KB of C share a translation unit too (codegen/compile.c,
# BUNDLE_SMALL): a run of the C compiler costs 0.12 s of CPU to start and
# read the standard headers, a third of what such a kernel costs to
# compile, and since the transposed copies need no <immintrin.h> nothing
# else bundled them (MViT-B's GEMMs of 28-38 KB had a unit each).  Here a
# batched matrix product of 31 KB of C (at -O2 for x86-64-v3, a target
# fixed so that the sizes do not depend on the machine) and one of 10 KB
# are compiled as one unit, beside the glue: 2 units, not 3.  The bundled
# build computes what the interpreter does.
. "$srcdir/testsuite/cli/lib.inc"
export XDG_CACHE_HOME=$PWD/cache
t=--target=x86-64-v3
cat >two.te <<'TE'
import "nn.te"
input s: f32[2, 130, 256]
input v: f32[2, 256, 96]
input u: f32[2, 96, 130]
o = bmm(s, v) as "sv"
w = bmm(u, o) as "uo"
output w
TE
expect_status 0 "$TEC" -O2 $t --emit=c two.te
"$PYTHON" -c "
import re, sys
c = open('out').read()
sizes = [len(k) for k in re.split(r'\n(?=int32_t tec_k)', c)[1:]]
assert len(sizes) == 2 and 24576 <= max(sizes) < 40960, sizes
" || fail "the larger kernel is no longer of 24-40 KB: the test needs another shape"
expect_status 0 "$TEC" -O2 $t -v --save-outputs got two.te
grep -q '^tec: 2 kernels, 2 distinct: 2 translation units (0 from the cache)' err ||
    { cat err; fail "the two products did not share a unit"; }
expect_status 0 "$TEC" --interp --save-outputs ref two.te
"$PYTHON" "$srcdir/testsuite/compare.py" ref got >cmp 2>&1 || { cat cmp; fail "the bundled build differs from the interpreter"; }
echo ok
