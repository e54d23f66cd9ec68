# The cache folder's size cap (codegen/cache.h): TEC_CACHE_MAX bytes of
# entries at most; a run that writes entries removes the least recently
# used ones (an entry used by a hit is recent again) until the rest fit;
# results stay right, from the cache or not; concurrent runs sharing a
# small cache all agree; a cap of 0 keeps nothing and still computes; a
# value that is not a size is said once and the default used.
. "$srcdir/testsuite/cli/lib.inc"
export XDG_CACHE_HOME=$PWD/cache
c=$XDG_CACHE_HOME/tec
for k in 1 2 3 4 5 6 7 8; do
    printf 'input x: f32[4, 8]\ny[i, j] = x[i, j] * %s.5 + 1\noutput y\n' "$k" >p$k.te
done
# the bytes of the entries' files (not the lock, folders or temporaries)
entries() {
    find "$c" -type f \( -name '*.so' -o -name '*.o' -o -path '*/run/*' \) \
        ! -name '*.tmp.*' -printf '%s\n' | awk '{ s += $1 } END { print s + 0 }'
}
state() { if grep -q '^tec: run cache: hit: ' err; then echo hit; else echo miss; fi; }
# A and B, uncapped, give the cap: both fit (in the nine tenths of the
# cap a trim keeps), a third entry does not
export TEC_CACHE_MAX=unlimited
expect_cached_run "run cache" miss p1.te
expect_cached_run "run cache" miss p2.te
cap=$(( $(entries) * 6 / 5 ))
export TEC_CACHE_MAX=$cap
# A used again (a hit), then C: B, the least recently used, goes
expect_cached_run "run cache" hit p1.te
expect_cached_run "run cache" miss p3.te
grep -q "^tec: cache: trimmed $c to [0-9]* bytes (its cap: $cap): removed the [1-9][0-9]* least recently used entries" run.err ||
    { cat run.err; fail "no trim said"; }
[ "$(entries)" -le "$cap" ] || fail "the cache holds $(entries) bytes, over its cap of $cap"
expect_cached_run "run cache" hit p1.te
expect_cached_run "run cache" miss p2.te
# many runs, each kept under the cap, each right
for k in 4 5 6 7 8 4 5; do
    expect_cached_run "run cache" miss p$k.te
    [ "$(entries)" -le "$cap" ] || fail "p$k: the cache holds $(entries) bytes, over $cap"
done
# concurrent runs on one small cache: each right (--no-cache's output)
for k in 1 2 3 4 5 6 7 8; do
    "$TEC" --no-cache p$k.te --save-outputs ref$k >/dev/null 2>&1 || fail "p$k --no-cache"
done
pids=
for r in 1 2 3; do
    for k in 1 2 3 4 5 6 7 8; do
        "$TEC" p$k.te --save-outputs c$r-$k >c$r-$k.out 2>c$r-$k.err & pids="$pids $!"
    done
done
for p in $pids; do wait "$p" || fail "a concurrent run failed: $(cat c*.err)"; done
for r in 1 2 3; do
    for k in 1 2 3 4 5 6 7 8; do
        cmp c$r-$k/y.npy ref$k/y.npy || fail "concurrent run $r of p$k: wrong output"
        [ -s c$r-$k.err ] && { cat c$r-$k.err; fail "concurrent run $r of p$k said something"; }
    done
done
[ "$(entries)" -le "$cap" ] || fail "after the concurrent runs: $(entries) bytes, over $cap"
# a cap of 0: a run that writes entries (a new program) keeps none, and
# its result is still right
printf 'input x: f32[4, 8]\ny[i, j] = x[i, j] * 9.5 + 1\noutput y\n' >p9.te
"$TEC" --no-cache p9.te --save-outputs ref9 >/dev/null 2>&1 || fail "p9 --no-cache"
TEC_CACHE_MAX=0 expect_status 0 "$TEC" p9.te --save-outputs z
cmp z/y.npy ref9/y.npy || fail "TEC_CACHE_MAX=0: wrong output"
[ "$(entries)" = 0 ] || fail "TEC_CACHE_MAX=0 left $(entries) bytes"
# not a size
TEC_CACHE_MAX=12Q expect_status 0 "$TEC" p6.te
expect_err "tec: warning: TEC_CACHE_MAX=12Q is not a size (bytes, or a number with K, M, G or T, or 'unlimited'); the cache is kept to 2048 MiB"
