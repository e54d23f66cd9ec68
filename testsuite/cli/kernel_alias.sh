# A split build defines each exported kernel whose forwarder would only
# pass its parameters on as an alias of the shared code (the link's
# linker script): repeated layers export one address, the glue unit holds
# no function for them, and the outputs are the interpreter's.  A link
# that does not take the script links a forwarder for each instead.
# Under --profile every forwarder passes its layer's ids, so none is an
# alias, and each layer still has its own row.
. "$srcdir/testsuite/cli/lib.inc"
export XDG_CACHE_HOME=$PWD/cache
command -v nm >/dev/null || { echo "skip: no nm"; exit 77; }
cat >deep.te <<'TE'
import "nn.te"
def block(x: f32[B, I]) -> y {
    h = linear(x, 64) as "fc"
    y = relu(h) as "act"
}
input x: f32[4, 64]
a = block(x) as "b1"
b = block(a) as "b2"
c = block(b) as "b3"
output c
TE
expect_status 0 "$TEC" -v --save-outputs split deep.te
grep -q '^tec: 6 kernels, 2 distinct: 3 translation units' err ||
    { cat err; fail "the model was not split into shared kernels"; }
so=$(ls cache/tec/*.so)
[ "$(echo "$so" | wc -l)" = 1 ] || fail "expected one cached shared object, got: $so"
nm -D --defined-only "$so" >syms || fail "nm cannot read $so"
# the three fc layers: one address, that of a tec_c_ function
addrs=$(grep ' tec_k[0-9]*_b[123]_fc$' syms | awk '{print $1}' | sort -u)
[ "$(grep -c ' tec_k[0-9]*_b[123]_fc$' syms)" = 3 ] || { cat syms; fail "not three exported fc kernels"; }
[ "$(echo "$addrs" | wc -l)" = 1 ] || { cat syms; fail "the fc kernels are not aliases of one function"; }
grep -q "^$addrs [TtW] tec_c_" syms || { cat syms; fail "the fc kernels' address is no shared kernel's"; }
# the interpreter's outputs (a --no-cache build makes the same aliases)
expect_status 0 "$TEC" --interp --save-outputs ref deep.te
"$PYTHON" "$srcdir/testsuite/compare.py" ref split >cmp.log ||
    { cat cmp.log; fail "the build with aliases differs from the interpreter"; }
# a compiler whose link does not take the aliases' script: the build links
# a forwarder for each kernel instead, and its outputs are still right
cat >cc-no-scripts <<'SH'
#!/bin/sh
for a; do case $a in *.ld) echo "cc-no-scripts: $a: file format not recognized" >&2; exit 1;; esac; done
exec gcc "$@"
SH
chmod +x cc-no-scripts
rm -rf cache
CC=$PWD/cc-no-scripts expect_status 0 "$TEC" -v --save-outputs noalias deep.te
grep -q '^tec: the link with the kernels. aliases failed: linked with a forwarder each' err ||
    { cat err; fail "no fallback from the aliases said"; }
"$PYTHON" "$srcdir/testsuite/compare.py" ref noalias >cmp.log ||
    { cat cmp.log; fail "the build without aliases differs from the interpreter"; }
so=$(ls cache/tec/*.so)
nm -D --defined-only "$so" >syms || fail "nm cannot read $so"
[ "$(grep ' tec_k[0-9]*_b[123]_fc$' syms | awk '{print $1}' | sort -u | wc -l)" = 3 ] ||
    { cat syms; fail "the build without aliases has aliases"; }
# --profile: forwarders with the layers' ids, three rows
rm -rf cache
expect_status 0 "$TEC" --profile --save-outputs prof deep.te
cmp split/c.npy prof/c.npy || fail "the profiled build's outputs differ"
for l in b1 b2 b3; do grep -q "^ *$l" out || { cat out; fail "no profile row for $l"; }; done
so=$(ls cache/tec/*.so)
nm -D --defined-only "$so" >syms || fail "nm cannot read $so"
[ "$(grep ' tec_k[0-9]*_b[123]_fc$' syms | awk '{print $1}' | sort -u | wc -l)" = 3 ] ||
    { cat syms; fail "profiled layers share an address: their ids would be lost"; }
echo ok
