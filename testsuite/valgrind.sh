#!/bin/bash
# testsuite/valgrind.sh — `make check-valgrind`: a sample of the suite with
# every tec process under valgrind's memcheck.
#
# Runs testsuite/run-tests with $TEC a wrapper that runs the built tec as
#   valgrind -q --error-exitcode=99 --leak-check=full
#            --errors-for-leak-kinds=definite --show-leak-kinds=definite
#            --log-file=LOGS/%p.log
# so that an invalid read or write, a use of uninitialized memory or a
# definite leak makes that tec exit 99 (its test fails) and leaves a log.
# Valgrind does not run AVX-512 code, and the compiler's -march=native
# would use it here: kernels are compiled by a wrapper of $CC that adds
# -march=x86-64-v3 (AVX2, which valgrind runs) last, where it wins.
# tec itself sees valgrind's processor (no AVX-512) and picks its vector
# width from that.  The C compiler and other programs tec starts are not
# traced.  VALGRIND_TESTS overrides the sample (a regular expression, as
# TESTS; no '$' in it).  A planted invalid write is checked to be caught
# first.  Ends with the run's "N passed, N failed" line and
# prints every non-empty valgrind log; exits 1 if a test failed.
set -u
srcdir=$(cd "${srcdir:-.}" && pwd)
builddir=$(cd "${builddir:-.}" && pwd)
command -v valgrind >/dev/null 2>&1 ||
    { echo "check-valgrind: needs valgrind (apt-get install valgrind)" >&2; exit 2; }
work=$builddir/valgrind-check
rm -rf "$work"
mkdir -p "$work/logs"
cat >"$work/tec" <<EOF
#!/bin/sh
exec valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \\
    --show-leak-kinds=definite \\
    --log-file='$work/logs/%p.log' '$builddir/tec' "\$@"
EOF
cat >"$work/cc" <<EOF
#!/bin/sh
exec ${CC:-cc} "\$@" -march=x86-64-v3
EOF
chmod +x "$work/tec" "$work/cc"
export CC=$work/cc
export XDG_CACHE_HOME=$work/cache
# First a planted error: errors/oob_checked_store.tir's store 16 elements
# past its 4-element output, compiled --unchecked.  If memcheck does not
# catch it, the setup is broken and the sample's silence proves nothing.
sed 's/+ 100000\]/+ 16]/' "$srcdir/testsuite/errors/oob_checked_store.tir" >"$work/planted.tir"
"$work/tec" --unchecked -x tir "$work/planted.tir" >"$work/planted.out" 2>&1
planted=$?
if [ "$planted" != 99 ] || ! grep -q 'Invalid write of size 4' "$work"/logs/*.log; then
    echo "check-valgrind: memcheck did not catch the planted write of $work/planted.tir (exit status $planted)" >&2
    cat "$work/planted.out" "$work"/logs/*.log >&2
    exit 1
fi
echo "check-valgrind: the planted out-of-bounds write is caught (exit status 99)"
rm -f "$work"/logs/*.log
# The frontend's diagnostics, every run/ program at -O0, -O2 and --interp,
# and the hostile names and files of security/ (not fault_injection, whose
# preloaded library and valgrind's allocator exclude each other, nor
# resources, whose time limits are for a native run).
tests=${VALGRIND_TESTS:-'^(errors/|run/|security/(bounds_checks|cache_entries|limits|plot_injection|save_outputs))'}
echo "check-valgrind: tests matching $tests"
srcdir=$srcdir builddir=$work OUT=$work/out TESTS=$tests bash "$srcdir/testsuite/run-tests"
status=$?
for log in "$work"/logs/*.log; do
    [ -s "$log" ] || continue
    echo "check-valgrind: $log:"
    head -40 "$log" | sed 's/^/    /'
    status=1
done
echo "check-valgrind: $(ls "$work/logs" | wc -l) tec processes under memcheck"
exit $status
