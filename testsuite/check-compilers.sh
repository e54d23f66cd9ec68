#!/bin/bash
# testsuite/check-compilers.sh — `make check-compilers`: the run tests
# (testsuite/run/, compiled at -O0 and -O2 and compared with numpy) under
# every C compiler installed: gcc, clang and their versioned names
# (gcc-12, clang-14, ...), each once however many names it has.  tec's
# kernels go through the system C compiler, which is part of its trusted
# base: a miscompile shows as a run test that fails under one compiler only.
#
# Environment: srcdir, builddir (set by make), COMPILERS (a space-separated
# list instead of the installed ones), TESTS (run-tests' selection, default
# ^run/).  Prints each compiler's summary line;
# exits 1 if a test failed under any of them.
set -u
srcdir=${srcdir:-.}
builddir=${builddir:-.}
found=()
seen=" "
candidates=${COMPILERS:-$(compgen -c | grep -E '^(gcc|clang)(-[0-9]+(\.[0-9]+)*)?$' | sort -u)}
for cc in $candidates; do
    path=$(command -v "$cc" 2>/dev/null) || { echo "check-compilers: no compiler '$cc'"; exit 2; }
    real=$(readlink -f "$path")
    case $seen in *" $real "*) continue ;; esac
    seen="$seen$real "
    found+=("$cc")
done
[ ${#found[@]} -gt 0 ] || { echo "check-compilers: no C compiler found"; exit 2; }
echo "check-compilers: ${found[*]}"
status=0
for cc in "${found[@]}"; do
    out=$builddir/testsuite/out/compilers/$cc
    log=$out.log
    mkdir -p "$(dirname "$out")"
    CC=$cc TESTS=${TESTS:-^run/} OUT=$out srcdir=$srcdir builddir=$builddir \
        bash "$srcdir/testsuite/run-tests" >"$log" 2>&1 || status=1
    echo "$cc ($("$cc" --version | head -1)): $(tail -1 "$log")"
    grep '^FAIL' "$log" | sed 's/^/    /'
done
exit $status
