# Compiled .tir code never writes or reads outside its buffers: an index
# codegen cannot prove in range is checked at run time and stops the run
# with the interpreter's message (exit status 1); --unchecked drops the
# checks.  The optimizer's own accesses are all proven: the zoo's C, at
# every -O level, has no check at all, so the checks cost it nothing.
. "$srcdir/testsuite/cli/lib.inc"
store=$srcdir/testsuite/errors/oob_checked_store.tir

for level in -O0 -O1 -O2 -O3; do
    expect_status 1 "$TEC" "$level" "$store"
    cp err compiled.err
    expect_status 1 "$TEC" "$level" --interp "$store"
    diff -u err compiled.err || fail "$level: the compiled check and the interpreter disagree"
done
grep -q 'out-of-range store y\[100000\]: index 0 must be in \[0, 4)' err || fail "message"

expect_status 0 "$TEC" --emit=c "$store"
[ "$(grep -c 'tec_index(' out)" = 2 ] || fail "expected the helper and one checked index"
expect_status 0 "$TEC" --unchecked --emit=c "$store"
! grep -q tec_index out || fail "--unchecked still checks"

for f in "$srcdir"/examples/*.te; do
    for level in -O0 -O1 -O2 -O3; do
        expect_status 0 "$TEC" "$level" -I "$srcdir/lib" --emit=c "$f"
        ! grep -q 'tec_index(' out || fail "$(basename "$f") $level: an index is checked at run time"
    done
done
