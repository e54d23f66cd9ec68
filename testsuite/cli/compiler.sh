# A missing C compiler is a clear user-environment error (exit 1), and the
# kernel cache is private and reused.
. "$srcdir/testsuite/cli/lib.inc"
export XDG_CACHE_HOME=$PWD/cache
CC=/nonexistent/cc expect_status 1 "$TEC" --no-cache "$srcdir/examples/matmul.te"
grep -q "^tec: error: cannot run C compiler '/nonexistent/cc'" err || { cat err; fail "missing compiler"; }
expect_status 0 "$TEC" "$srcdir/examples/matmul.te"
mode=$(stat -c %a cache/tec)
[ "$mode" = 700 ] || fail "cache directory mode $mode, expected 700"
n=$(ls cache/tec/*.so | wc -l)
[ "$n" = 1 ] || fail "expected one cached kernel library, found $n"
expect_status 0 "$TEC" "$srcdir/examples/matmul.te"
[ "$(ls cache/tec/*.so | wc -l)" = 1 ] || fail "the second run did not reuse the cache"
expect_status 0 "$TEC" -O1 "$srcdir/examples/matmul.te"
[ "$(ls cache/tec/*.so | wc -l)" = 2 ] || fail "-O1 did not get its own cache entry"
echo ok
