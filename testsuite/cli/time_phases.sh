# --time-phases: where the time to the first result goes, one row per
# phase, written to stderr when tec ends (the outputs are unchanged); the
# kernel build's row says how it was built.
. "$srcdir/testsuite/cli/lib.inc"
export XDG_CACHE_HOME=$PWD/cache
cat >p.te <<'TE'
import "nn.te"
input x: f32[4, 64]
h = linear(x, 64) as "fc"
y = relu(h) as "act"
output y
TE
expect_status 0 "$TEC" p.te
cp out plain.out
[ ! -s err ] || { cat err; fail "a plain run wrote to stderr"; }
expect_status 0 "$TEC" --time-phases --no-cache p.te
cmp out plain.out || fail "--time-phases changed the outputs"
head -1 err | grep -qx 'tec: time by phase, ms: elapsed, CPU of tec, CPU of the C compiler' ||
    { cat err; fail "no table header"; }
# every row: a name, then three numbers (and maybe a note)
for row in compile load 'run setup' '  data' run other total; do
    grep -Eq "^ +$row +[0-9]+\.[0-9] +[0-9]+\.[0-9] +[0-9]+\.[0-9]" err ||
        { cat err; fail "no row '$row'"; }
done
grep -Eq '^ +compile .*  one translation unit$' err || { cat err; fail "no note for a whole build"; }
expect_status 0 "$TEC" --time-phases p.te
expect_status 0 "$TEC" --time-phases p.te
grep -Eq '^ +compile .*  from the cache$' err || { cat err; fail "no note for a cache hit"; }
# not in --help's promise only: documented in the manual
grep -q 'time\\-phases' "$srcdir/doc/tec.1" || fail "doc/tec.1 does not describe --time-phases"
echo ok
