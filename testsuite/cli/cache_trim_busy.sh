# A trim while another process holds the cache folder's lock shared (a
# split build does from finding its objects until its link): within the
# cap it does not wait for the lock but appends what it wrote to the lock
# file, which the next trim adds; over the cap it waits a while, then
# leaves the trim to the next writer (codegen/cache.h).
. "$srcdir/testsuite/cli/lib.inc"
export XDG_CACHE_HOME=$PWD/cache
c=$XDG_CACHE_HOME/tec
for k in 1 2 3 4; do
    printf 'input x: f32[4, 8]\ny[i, j] = x[i, j] * %s.5 + 1\noutput y\n' "$k" >p$k.te
done
export TEC_CACHE_MAX=unlimited
expect_cached_run "run cache" miss p1.te   # counts the folder into the lock file
head -1 "$c/.lock" | grep -q '^tec cache usage [0-9]* bytes counted at [0-9]*$' ||
    fail "no usage in the lock file: $(cat "$c/.lock")"
# another process holds the lock shared until the fifo is written
mkfifo go
flock -s "$c/.lock" sh -c 'read x <go' &
holder=$!
while flock -n -x "$c/.lock" true; do   # until it holds it
    kill -0 "$holder" 2>/dev/null || fail "flock(1) did not take the lock"
    sleep 0.1
done
expect_cached_run "run cache" miss p2.te
grep -q 'not trimmed' run.err && { cat run.err; fail "a trim within the cap waited"; }
grep -q '^tec cache wrote [1-9][0-9]* bytes$' "$c/.lock" ||
    fail "what p2 wrote is not in the lock file: $(cat "$c/.lock")"
# over the cap: the trim waits for the lock, then says it left the trim
export TEC_CACHE_MAX=1
expect_cached_run "run cache" miss p3.te
grep -q "^tec: cache: not trimmed: its lock $c/.lock is busy" run.err ||
    { cat run.err; fail "an over-cap trim did not wait for the busy lock"; }
echo >go
wait "$holder"
# free again: the next trim counts the folder (over the cap) and trims it
expect_cached_run "run cache" miss p4.te
grep -q "^tec: cache: trimmed $c" run.err || { cat run.err; fail "no trim after the lock was let go"; }
[ "$(wc -l <"$c/.lock")" = 1 ] || fail "the lock file was not rewritten: $(cat "$c/.lock")"
