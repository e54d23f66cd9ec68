#!/bin/bash
# testsuite/fuzz.sh — `make fuzz FUZZ_SECONDS=N`: tec's readers under
# libFuzzer, AddressSanitizer and UndefinedBehaviorSanitizer.
#
# Builds tec's library from a copy of the sources (make distdir) with
#   CC=clang CFLAGS="-g -O1 -fsanitize=fuzzer-no-link,address,undefined"
# links the harnesses of testsuite/fuzz/ (fuzz_te: the .te frontend and the
# -O1 passes; fuzz_tir: the .tir parser, verifier, printer round trip and
# passes; fuzz_npy: the .npy reader and writer; fuzz_cfg: the accelerator
# .cfg and topology readers; fuzz_onnx: the ONNX importer and the .te
# frontend on the program it writes) with -fsanitize=fuzzer, and runs each for
# FUZZ_SECONDS (default 60) on a corpus seeded from the tree (examples,
# tests, configs, generated .npy files, the hostile models of
# testsuite/errors/onnx and the small models of ONNX's backend tests when
# they are installed) with its dictionary.  FUZZ_TARGETS
# picks harnesses (default: all).  A crash, a hang (10 s per input), a
# sanitizer report or an internal error stops a harness and leaves the
# input in fuzz-build/crashes/; copy it to testsuite/fuzz/crashers/HARNESS/
# so that security/fuzz_crashers runs it through tec in every make check.
# Ends with one line per harness and exits 1 if any found something.
set -eu
srcdir=$(cd "${srcdir:-.}" && pwd)
builddir=$(cd "${builddir:-.}" && pwd)
seconds=${FUZZ_SECONDS:-60}
targets=${FUZZ_TARGETS:-te tir npy cfg onnx}
onnx_testdata=${ONNX_TESTDATA:-/usr/share/libonnx-testdata/data}
if ! command -v clang >/dev/null 2>&1; then
    echo "fuzz: needs clang with libFuzzer (apt-get install clang)" >&2
    exit 2
fi
work=$builddir/fuzz-build
mkdir -p "$work/crashes"
echo "fuzz: building a libFuzzer tec library in $work/src"
san="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
. "$srcdir/testsuite/clang_build.inc"
clang_build "$work" "-g -O1 -fsanitize=fuzzer-no-link $san" "$san" libteccore.la
libs=$(sed -n -e 's/^GMP_LIBS = //p' -e 's/^FFI_LIBS = //p' -e 's/^INIH_LIBS = //p' \
       -e 's/^PROTOBUF_C_LIBS = //p' \
       -e 's/^PTHREAD_LIBS = //p' -e 's/^LIBS = //p' Makefile | tr '\n' ' ')
status=0
summary=()
for t in $targets; do
    harness=$srcdir/testsuite/fuzz/fuzz_$t.c
    [ -f "$harness" ] || { echo "fuzz: no harness $harness" >&2; exit 2; }
    # shellcheck disable=SC2086
    clang -g -O1 -fsanitize=fuzzer $san -I. -I"$srcdir" -I"$srcdir/frontend" \
        -DTEC_FUZZ_LIB="\"$srcdir/lib\"" -o "$work/fuzz_$t" "$harness" .libs/libteccore.a \
        $libs -lm -ldl -lpthread >>"$work/build.log" 2>&1 ||
        { tail -20 "$work/build.log" >&2; exit 2; }
    corpus=$work/corpus/$t
    mkdir -p "$corpus"
    case $t in
    te)  find "$srcdir/examples" "$srcdir/lib" "$srcdir/testsuite/run" "$srcdir/testsuite/errors" \
             -name '*.te' -size -64k -exec cp {} "$corpus/" \; ;;
    tir) find "$srcdir/testsuite/tir" -name '*.tir' -size -64k -exec cp {} "$corpus/" \; ;;
    npy) "${PYTHON:-/usr/bin/python3}" "$srcdir/testsuite/fuzz/npy_seeds.py" "$corpus" ;;
    onnx) cp "$srcdir"/testsuite/errors/onnx/*.onnx "$corpus/"
         if [ -d "$onnx_testdata/node" ]; then
             for m in "$onnx_testdata"/node/*/model.onnx; do
                 [ "$(stat -c %s "$m")" -lt 4096 ] && cp "$m" "$corpus/$(basename "$(dirname "$m")").onnx"
             done
         fi ;;
    cfg) cp "$srcdir"/accel/configs/*.cfg "$corpus/"
         find "$srcdir/testsuite/accel" -name '*.csv' -size -64k -exec cp {} "$corpus/" \; ;;
    esac
    [ -d "$srcdir/testsuite/fuzz/crashers/$t" ] && cp "$srcdir/testsuite/fuzz/crashers/$t"/* "$corpus/" 2>/dev/null
    dict=$srcdir/testsuite/fuzz/$t.dict
    echo "fuzz: fuzz_$t for $seconds s ($(ls "$corpus" | wc -l) seeds)"
    # A timeout whose input then runs alone well within the limit was the
    # machine being busy (a shared machine can stall a process for many
    # seconds), not a hang: it is noted and fuzzing goes on for the time left.
    log=$work/fuzz_$t.log
    : >"$log"
    deadline=$((SECONDS + seconds))
    stalls=0
    while :; do
        left=$((deadline - SECONDS))
        [ "$left" -gt 0 ] || { rc=0; break; }
        set +e
        "$work/fuzz_$t" -max_total_time="$left" -timeout=10 -rss_limit_mb=4096 -max_len=65536 \
            ${dict:+$( [ -f "$dict" ] && echo "-dict=$dict")} \
            -artifact_prefix="$work/crashes/$t-" -print_final_stats=1 "$corpus" >>"$log" 2>&1
        rc=$?
        set -e
        [ "$rc" = 0 ] && break
        unit=$(sed -n 's/^.*Test unit written to //p' "$log" | tail -1)
        grep -q 'ERROR: libFuzzer: timeout' "$log" && [ -f "$unit" ] || break
        timeout 5 "$work/fuzz_$t" "$unit" >/dev/null 2>&1 || break
        echo "fuzz: fuzz_$t: a timeout that does not reproduce ($unit runs alone in under 5 s): the machine was busy; going on"
        rm -f "$unit"
        sed -i 's/ERROR: libFuzzer: timeout/(not reproduced) libFuzzer timeout/' "$log"
        stalls=$((stalls + 1))
    done
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | awk '{n += $1} END {print n + 0}')
    note=
    [ "$stalls" -gt 0 ] && note=" ($stalls timeouts that did not reproduce)"
    if [ "$rc" = 0 ]; then
        summary+=("fuzz_$t: ${runs:-?} runs, nothing found$note")
    else
        status=1
        summary+=("fuzz_$t: FOUND SOMETHING (exit $rc) after ${runs:-?} runs; see $log and $work/crashes/")
        grep -m3 -E 'ERROR|SUMMARY|fuzz:' "$log" >&2 || true
    fi
done
printf '%s\n' "${summary[@]}"
exit $status
