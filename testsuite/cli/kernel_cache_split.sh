# The kernels of a model are built as one translation unit per distinct
# kernel (repeated layers share one), cached one by one: a model that
# shares kernels with one built before compiles only what is new, and the
# results are those of the whole-file build.
. "$srcdir/testsuite/cli/lib.inc"
export XDG_CACHE_HOME=$PWD/cache
cat >deep.te <<'TE'
import "nn.te"
def block(x: f32[B, I]) -> y {
    h = linear(x, 64) as "fc"
    y = relu(h) as "act"         # fused into fc's kernel: with its load-time packing, 2 kernels a block
}
input x: f32[4, 64]
a = block(x) as "b1"
b = block(a) as "b2"
c = block(b) as "b3"
output c
TE
sed 's/"b3"/"b4"/' deep.te >renamed.te
expect_status 0 "$TEC" -v --save-outputs split deep.te
grep -q '^tec: 6 kernels, 2 distinct: 3 translation units (0 from the cache)' err ||
    { cat err; fail "three repeated blocks did not share their kernels"; }
expect_status 0 "$TEC" -v renamed.te
grep -q '^tec: 6 kernels, 2 distinct: 3 translation units (2 from the cache), compiled 1 at a time' err ||
    { cat err; fail "a renamed layer did not reuse the cached kernels"; }
expect_status 0 "$TEC" -v renamed.te
grep -q '^tec: kernel cache hit: ' err || { cat err; fail "the second run missed the cache"; }
# The same outputs without the cache (the temporary objects are removed).
expect_status 0 "$TEC" --no-cache --save-outputs nocache deep.te
cmp split/c.npy nocache/c.npy || fail "the split build and the --no-cache build differ"
# A cached object that others could write is not linked.
chmod 666 cache/tec/*.o
sed 's/"b3"/"b5"/' deep.te >deep5.te
expect_status 0 "$TEC" deep5.te
grep -q "warning: kernel cache entry .* is not a private, non-empty regular file; not using it" err ||
    { cat err; fail "a group-writable cached object was used"; }
# A compiler that fails every unit alike is reported once.
CC=false expect_status 1 "$TEC" deep5.te
[ "$(grep -c "^tec: error: the C compiler 'false' failed" err)" = 1 ] ||
    { cat err; fail "one failure per unit"; }
echo ok
