# The run cache without the frontend (driver/runcache.h): a hit checks the
# files the program's imports were resolved to instead of compiling it, so
# every change to them misses -- an import that now resolves elsewhere (a
# file put where it is looked for first), an imported file changed in any
# byte or gone -- while a file touched but unchanged still hits; a
# kernel's failure reads the same from the cache; a kernel table that
# does not parse is a damaged entry; a program's packed default weights
# come from the consts cache.
. "$srcdir/testsuite/cli/lib.inc"
export XDG_CACHE_HOME=$PWD/cache
run=$XDG_CACHE_HOME/tec/run
expect_run() { expect_cached_run "run cache" "$@"; }
mkdir -p inc
cat >inc/ops.te <<'TE'
def scale(x: f32[N]) -> y: f32[N] {
    y[i] = x[i] * 2.0
}
TE
cat >p.te <<'TE'
import "ops.te"
input x: f32[8]
y = scale(x) as "scale"
output y
TE
expect_run miss -I inc p.te
expect_run hit -I inc p.te
cp o/y.npy inc.npy
# touched, its bytes unchanged: still a hit
touch inc/ops.te
expect_run hit -I inc p.te
# the same name beside the program is looked for first: a miss, its result
sed 's/2\.0/3.0/' inc/ops.te >ops.te
expect_run miss -I inc p.te
cmp -s o/y.npy inc.npy && fail "the import beside the program was not used"
expect_run hit -I inc p.te
rm ops.te
expect_run miss -I inc p.te
cmp o/y.npy inc.npy || fail "the import in inc/ was not used again"
# changed in one byte
sed -i 's/2\.0/2.5/' inc/ops.te
expect_run miss -I inc p.te
expect_run hit -I inc p.te
# gone: the error, not the cached result
mv inc/ops.te ops.saved
expect_status 1 "$TEC" --verbose -I inc p.te
grep -q 'cannot find import "ops.te"' err || { cat err; fail "a missing import was not an error"; }
grep -q '^tec: run cache: hit' err && fail "a missing import hit"
mv ops.saved inc/ops.te   # back as it was: the entry holds again
expect_run hit -I inc p.te

# The language is in the key: the same text read as .tir is not the .te
# program's entry (it does not parse).
expect_status 1 "$TEC" --verbose -x tir -I inc p.te
grep -q '^tec: run cache: hit' err && { cat err; fail "-x tir used the .te run's entry"; }

# A kernel that stops (an index from the data out of range) says the same
# from the cache: its messages come from the entry's kernel table.
cp "$srcdir/testsuite/errors/oob_checked_load.tir" oob.tir
expect_status 1 "$TEC" --verbose --passes= oob.tir
grep -v '^tec: [a-z ]*cache\|^tec: running\|^tec: target\|^tec: parallel\|^tec: OpenMP\|^tec: [0-9]' err >o1.err
expect_status 1 "$TEC" --verbose --passes= oob.tir
grep -q '^tec: run cache: hit' err || { cat err; fail "oob.tir twice: no hit"; }
grep -v '^tec: [a-z ]*cache\|^tec: running\|^tec: target\|^tec: parallel\|^tec: OpenMP\|^tec: [0-9]' err >o2.err
grep -q 'out-of-range load x\[_, 7\]' o2.err || { cat err; fail "no index message on a hit"; }
diff -u o1.err o2.err || fail "the kernel's failure differs on a hit"

# A kernel table that does not parse, under a right checksum: damaged.
e=$(grep -l 'oob_checked_load' "$run"/*.run | head -1)
[ -n "$e" ] || fail "no entry for oob.tir"
body=$(sed '$d' "$e" | sed 's/^k \([0-9]*\):tec_k/k \1:tec_q/')
{ printf '%s\n' "$body"; printf 'sha256 %s\n' "$(printf '%s\n' "$body" | sha256sum | cut -d' ' -f1)"; } >"$e"
expect_status 1 "$TEC" --verbose --passes= oob.tir
grep -q 'is damaged' err || { cat err; fail "a bad kernel table was not called damaged"; }
expect_status 1 "$TEC" --verbose --passes= oob.tir
grep -q '^tec: run cache: hit' err || { cat err; fail "no hit after a damaged entry"; }
# A program's packed weights from its default data come from the consts
# cache on the second run (the same outputs); with --weights (params from
# files the key does not cover) never; a changed init range misses.
cat >c.te <<'TE'
import "nn.te"
input x: f32[64, 256]
h = linear(x, 256) as "fc"
y = relu(h) as "act"
output y
TE
expect_cached_run "consts cache" miss c.te
grep -q '^tec: consts cache: entry written' run.err || { cat run.err; fail "c.te: no consts entry"; }
expect_cached_run "consts cache" hit c.te
mkdir -p w
"$PYTHON" -c 'import numpy as np
np.save("w/fc.weight.npy", np.full((256, 256), 0.01, np.float32))
np.save("w/fc.bias.npy", np.zeros(256, np.float32))' || fail "cannot write the weights"
expect_status 0 "$TEC" --verbose --weights w c.te
grep -q 'consts cache' err && { cat err; fail "--weights used the consts cache"; }
sed -i 's/^input x: f32\[64, 256\]$/input x: f32[64, 256] = 0.5/' c.te
expect_cached_run "consts cache" miss c.te
expect_cached_run "consts cache" hit c.te
echo ok
