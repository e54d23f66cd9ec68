#!/bin/bash
# testsuite/faults/run.sh — fault injection over one tec run.
#
#   run.sh WORKDIR PROGRAM [TEC ARGS...]        (TEC, CC and srcdir from the environment)
#
# Builds testsuite/faults/faultinject.c as an LD_PRELOAD library, runs
#   tec -O2 --threads 1 ARGS PROGRAM --profile --report=r.json --save-outputs o
# once to record every allocation and write site of tec's code (the kernel
# cache is warm, so the run loads, runs, profiles and saves), then once per
# site with the first call of that site failing.  Each of those runs must
# end with exit status 0 and the outputs of a run without faults, or with
# exit status 1 and an error message; and whatever files it left must be
# whole: every .npy in o/ equal to the faultless run's (within the
# tolerance of testsuite/compare.py), r.json (if there) readable JSON, no
# temporary left in o/.  A crash, a hang (300 s), an
# internal error (70) or a sanitizer's report (any other status) fails.
# With tec built by ./configure --enable-asan the library goes before the
# ASan runtime (verify_asan_link_order=0) and passes on what it does not
# fail to ASan's allocator, so LeakSanitizer checks that every run, failed
# or not, leaks nothing (a sanitizer's report ends a run with status 23; a
# planted leak is checked to be caught first).  ASan's own strdup and the
# like do not call malloc: their sites are not failed in that build.  The
# library keeps its frame pointers, so that LeakSanitizer unwinds through
# it to tec's caller (and knows the dynamic linker's blocks by their module:
# testsuite/lsan.supp).
# Prints one line per finding and a summary; exits 1 when there was one.
set -u
work=$1
prog=$2
shift 2
TEC=${TEC:-tec}
srcdir=$(cd "${srcdir:-.}" && pwd)   # before the cd below
PYTHON=${PYTHON:-/usr/bin/python3}
mkdir -p "$work"
cd "$work" || exit 2
lib=$PWD/libfaultinject.so
${CC:-cc} -shared -fPIC -O1 -fno-omit-frame-pointer -o "$lib" "$srcdir/testsuite/faults/faultinject.c" -ldl -lpthread ||
    { echo "faults: cannot build the fault-injection library" >&2; exit 2; }
export XDG_CACHE_HOME=$PWD/cache
# An ASan build of tec takes the library before its runtime; LeakSanitizer
# (the caller's LSAN_OPTIONS, else the suite's suppressions) checks leaks.
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$srcdir/testsuite/lsan.supp}
# A sanitizer's report ends the run with status 23 (ASan's own default, 1,
# would pass for tec's clean error).
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0:exitcode=23
run=("$TEC" -O2 --threads 1 "$@" "$prog" --profile --report=r.json --save-outputs o)

rm -rf o r.json ref
"${run[@]}" >/dev/null 2>err || { cat err; echo "faults: the run fails without faults" >&2; exit 2; }
mv o ref
rm -f sites.log r.json
LD_PRELOAD=$lib TEC_FAULT_MODE=count TEC_FAULT_LOG=$PWD/sites.log "${run[@]}" >/dev/null 2>err ||
    { cat err; echo "faults: the counting run failed" >&2; exit 2; }
# In an ASan build, first a planted leak (the library drops a block of its
# own at tec's first allocation): if LeakSanitizer does not report it, the
# setup is broken and the runs' silence would prove nothing.
if ldd "$TEC" 2>/dev/null | grep -q libasan; then
    LD_PRELOAD=$lib TEC_FAULT_MODE=leak TEC_FAULT_N=1 "${run[@]}" >/dev/null 2>err
    rc=$?
    if [ "$rc" != 23 ] || ! grep -q 'ERROR: LeakSanitizer: detected memory leaks' err; then
        cat err
        echo "faults: LeakSanitizer did not report the planted leak (exit status $rc)" >&2
        exit 2
    fi
    echo "faults: LeakSanitizer reports a planted leak (exit status 23)"
fi
# the first call of each site
awk '!seen[$1 " " $3]++ {print $1, $2, $3}' sites.log >firsts
nalloc=$(grep -c '^alloc' firsts)
nwrite=$(grep -c '^write' firsts)

# What a run left is whole: every output there equal to the faultless one
# (within compare.py's tolerance: a fallback, such as running unscheduled
# when the scheduler cannot allocate, may round differently), a readable
# report, no temporaries.
whole() {
    rm -rf sub
    mkdir sub
    for f in o/*; do
        [ -e "$f" ] || continue
        case $f in
        *.npy) [ -e "ref/${f#o/}" ] && cp "ref/${f#o/}" sub/ || { echo "a stray file $f"; return; } ;;
        *) echo "a stray file $f"; return ;;
        esac
    done
    if [ -n "$(ls sub)" ] && ! "$PYTHON" "$srcdir/testsuite/compare.py" sub o >cmp 2>&1; then
        echo "a partial or wrong output: $(tail -1 cmp)"
        return
    fi
    if [ -e r.json ] && ! "$PYTHON" -c 'import json, sys; json.load(open(sys.argv[1]))' r.json 2>/dev/null; then
        echo "a partial report r.json"
    fi
}

findings=0
while read -r kind k site; do
    rm -rf o r.json
    # (env after timeout: the library takes itself out of the environment
    # of the process it is loaded in, which must be tec)
    timeout 300 env LD_PRELOAD="$lib" TEC_FAULT_MODE="$kind" TEC_FAULT_N="$k" "${run[@]}" >out 2>err
    rc=$?
    why=
    case $rc in
    0) [ "$(ls o 2>/dev/null | wc -l)" = "$(ls ref | wc -l)" ] || why="exit 0 without every output" ;;
    1) grep -q 'error' err || why="exit 1 without an error message" ;;
    *) why="exit status $rc" ;;
    esac
    [ -n "$why" ] || why=$(whole)
    if [ -n "$why" ]; then
        findings=$((findings + 1))
        echo "FINDING: $kind call $k ($site) failed: $why"
        head -c 600 err | sed 's/^/    /'
    fi
done <firsts
echo "faults: $nalloc allocation sites and $nwrite write sites of $(basename "$prog") failed once each: $findings findings"
[ "$findings" = 0 ]
