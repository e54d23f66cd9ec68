# With GCC, light units (cc -O2, codegen/compile.c setup_build) and cold
# ones (cc -O1) also get -fpeel-loops: GCC's -O2 unrolls a loop of known
# trip count completely only when the code does not grow, -O1 not at all,
# and a loop over a small local array (a write-back of accumulators, a
# pool's row) then stays in memory (bench/results/det_s15.txt,
# unseen_s17.txt).  The units at -O3 do not get it.
. "$srcdir/testsuite/cli/lib.inc"
export XDG_CACHE_HOME=$PWD/cache
"${CC:-cc}" --version 2>/dev/null | grep -qi 'free software foundation' ||
    exit 0   # not GCC: no light unit gets the flag
# kernel_light.sh's program, whose softmax units are light
sed -n "/^cat >light.te <<'TE'$/,/^TE$/p" "$srcdir/testsuite/cli/kernel_light.sh" | sed '1d;$d' >light.te
grep -q softmax light.te || fail "kernel_light.sh's program not found"
expect_status 0 "$TEC" -v light.te
grep '^tec: running: .* -c ' err | sed 's/ -o .*//' >commands
grep -- ' -O2 ' commands | grep -q -- ' -fpeel-loops' ||
    { cat err; fail "the light unit was built without -fpeel-loops"; }
! grep -- ' -O1 ' commands | grep -vq -- ' -fpeel-loops' ||
    { cat err; fail "a cold unit was built without -fpeel-loops"; }
! grep -v -- ' -O[12] ' commands | grep -q -- ' -fpeel-loops' ||
    { cat err; fail "a unit at -O3 got -fpeel-loops"; }
