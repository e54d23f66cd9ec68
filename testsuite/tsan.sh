#!/bin/bash
# testsuite/tsan.sh — `make check-tsan`: the tests with parallel kernels under
# ThreadSanitizer.
#
# tec's kernels run parallel loops on OpenMP.  GCC's libgomp is not built
# for ThreadSanitizer (its barriers look like races), LLVM's libomp is, with
# its OMPT tool Archer telling TSan what the runtime synchronizes.  So this
# builds a second tec from a copy of the sources (make distdir) with
#   CC=clang CFLAGS="-fsanitize=thread -g -O1"
# and runs the tests whose kernels have parallel loops — the run tests (at
# -O2 on every core), the schedule, autoschedule and codegen .tir tests
# (several at TEC_NUM_THREADS=2) and three models — and the tests of calls
# running at the same time on worker threads (unit/test_sched, cli/sched, and
# cli/sched_zoo: every strategy on every zoo model), with
#   CC="clang -fsanitize=thread"      kernels instrumented, linked to libomp
#   OMP_TOOL_LIBRARIES=.../libarcher.so
#   TSAN_OPTIONS="halt_on_error=1 exitcode=66 ignore_noninstrumented_modules=1"
# so that a data race stops tec with exit status 66 and fails its test.
# TSAN_TESTS overrides the test selection (a regular expression, as TESTS;
# no '$' in it: make would expand it).
#
# Needs clang, LLVM's OpenMP runtime with Archer and the TSan runtime
# (Debian: apt-get install clang libomp-14-dev).  Ends with the run's
# "N passed, N failed" line.
set -eu
srcdir=$(cd "${srcdir:-.}" && pwd)
builddir=$(cd "${builddir:-.}" && pwd)
archer=
for f in /usr/lib/llvm-14/lib/libarcher.so /usr/lib/llvm-*/lib/libarcher.so; do
    [ -f "$f" ] && { archer=$f; break; }
done
if ! command -v clang >/dev/null 2>&1 || [ -z "$archer" ]; then
    echo "check-tsan: needs clang and LLVM's OpenMP runtime with Archer (apt-get install clang libomp-14-dev)" >&2
    exit 2
fi
work=$builddir/tsan-build
rm -rf "$work"
echo "check-tsan: building a ThreadSanitizer tec in $work/src"
. "$srcdir/testsuite/clang_build.inc"
clang_build "$work" "-fsanitize=thread -g -O1" "-fsanitize=thread"
export CC="clang -fsanitize=thread"
export OMP_TOOL_LIBRARIES=$archer
export TSAN_OPTIONS="halt_on_error=1 exitcode=66 ignore_noninstrumented_modules=1${TSAN_OPTIONS:+ $TSAN_OPTIONS}"
# First a planted race: if ThreadSanitizer does not stop tec on it, the
# setup is broken and the other tests' silence proves nothing.
set +e
TEC_NUM_THREADS=2 XDG_CACHE_HOME=$work/cache ./tec -x tir -O2 "$srcdir/testsuite/tsan_race.tir" \
    >"$work/race.log" 2>&1
race=$?
set -e
if [ "$race" != 66 ] || ! grep -q "WARNING: ThreadSanitizer: data race" "$work/race.log"; then
    echo "check-tsan: ThreadSanitizer did not catch the planted race in testsuite/tsan_race.tir (exit status $race):" >&2
    tail -20 "$work/race.log" >&2
    exit 1
fi
echo "check-tsan: the planted race is caught (exit status 66)"
tests=${TSAN_TESTS:-'^(run/|tir/passes/(schedule|autoschedule)|tir/codegen/|models/(resnet18|googlenet|mobilenet_v2)|unit/test_sched$|cli/sched$|cli/sched_zoo$)'}
echo "check-tsan: tests matching $tests"
TESTS=$tests make -s check-local
