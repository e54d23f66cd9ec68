#!/bin/sh
# tools/check-layers.sh [SRCDIR] — checks that every floor of tec imports
# only what doc/architecture.md allows it.  A floor may include the headers
# of the folders it names (DIR/...) and the single headers it names
# (DIR/FILE.h: a documented exception, with its reason in the doc):
#
#   ir/        ir/ (and libc, GMP)
#   passes/    ir/, passes/
#   codegen/   ir/, codegen/ (and the build's config.h)
#   frontend/  ir/, frontend/
#   importer/  ir/, importer/, onnx/ (the generated protobuf reader),
#              frontend/, runtime/tensor.h, runtime/npy.h, runtime/exec.h,
#              runtime/weight_set.h (the imported weights it fills)
#   runtime/   ir/, codegen/, runtime/; passes/analyze.h (the static
#              counts of the profile and the schedulers' graph);
#              accel/workload.h, accel/cli.h, accel/accel.h (the
#              accelerator columns of the reports, the model as a device)
#   accel/     ir/, accel/; runtime/profile.h (the profile a chart plots);
#              passes/analyze.h, passes/passes.h (the static counts, staging
#              copies and the simplifier the GEMM mapping reads)
#
# driver/ (the tec command and the C API) is the top floor: it may include
# everything.  Every floor may include config.h.
#
# Inside frontend/ the parts of the language are ordered too (below).
#
# Prints one line per forbidden #include, "FILE:LINE: FOLDER/ may not
# include "HEADER"", and exits 1 if there is any; exits 0 otherwise.
# `make check` runs it (testsuite/cli/layers.sh).
srcdir=${1:-.}
cd "$srcdir" || exit 2
status=0
for floor in ir passes codegen frontend importer runtime accel; do
    case $floor in
    ir) allowed='ir' ;;
    passes) allowed='ir passes' ;;
    codegen) allowed='ir codegen' ;;
    frontend) allowed='ir frontend' ;;
    importer) allowed='ir importer onnx frontend runtime/tensor.h runtime/npy.h runtime/exec.h runtime/weight_set.h' ;;
    runtime) allowed='ir codegen runtime passes/analyze.h accel/workload.h accel/cli.h accel/accel.h' ;;
    accel) allowed='ir accel runtime/profile.h passes/analyze.h passes/passes.h' ;;
    esac
    [ -d "$floor" ] || continue
    for f in $(find "$floor" \( -name '*.[ch]' -o -name '*.inc' -o -name '*.y' -o -name '*.l' \) \
                   ! -name '*.pb-c.*' ! -name 'parser.[ch]' ! -name 'lexer.c' | LC_ALL=C sort); do
        # "#include "dir/x.h"": dir or dir/x.h must be allowed; no dir: config.h only
        bad=$(awk -v allowed=" $allowed " -v file="$f" -v floor="$floor" '
            /^[ \t]*#[ \t]*include[ \t]*"/ {
                h = $0
                sub(/^[^"]*"/, "", h)
                sub(/".*$/, "", h)
                dir = h
                if (index(dir, "/") == 0) {
                    ok = (h == "config.h")
                } else {
                    sub(/\/.*$/, "", dir)
                    ok = index(allowed, " " dir " ") > 0 || index(allowed, " " h " ") > 0
                }
                if (!ok)
                    printf "%s:%d: %s/ may not include \"%s\"\n", file, FNR, floor, h
            }' "$f")
        if [ -n "$bad" ]; then
            printf '%s\n' "$bad"
            status=1
        fi
    done
done

# Inside frontend/, the parts of the language stand in an order, each
# including only its own header and those of the parts below it, and each
# header declaring only functions its own .c defines (so that no part
# calls one above it):
#
#   ast, frontend (the folder's API), parse (lexer.l, parser.y, parse.h)
#   < env < lower < stage < view < kernel < sema < compile
#
# A violation prints "FILE:LINE: frontend/PART may not include "HEADER""
# or "frontend/PART.h:LINE: declares NAME, which PART.c does not define".
fe_rank() {
    case $1 in
    ast|frontend|parse|parser|lexer) echo 0 ;;
    env) echo 1 ;; lower) echo 2 ;; stage) echo 3 ;; view) echo 4 ;;
    kernel) echo 5 ;; sema) echo 6 ;; compile) echo 7 ;;
    *) echo 99 ;;
    esac
}
if [ -d frontend ]; then
    for f in $(find frontend \( -name '*.[ch]' -o -name '*.y' -o -name '*.l' \) \
                   ! -name 'parser.[ch]' ! -name 'lexer.c' | LC_ALL=C sort); do
        part=$(basename "$f"); part=${part%.*}
        rank=$(fe_rank "$part")
        if [ "$rank" = 99 ]; then
            printf '%s: frontend/%s has no place in the order of tools/check-layers.sh\n' "$f" "$part"
            status=1
            continue
        fi
        for h in $(sed -n 's/^[ \t]*#[ \t]*include[ \t]*"frontend\/\([^"]*\)\.h".*/\1/p' "$f"); do
            [ "$h" = "$part" ] && continue
            if [ "$(fe_rank "$h")" -gt "$rank" ]; then
                line=$(grep -n "#[ \t]*include[ \t]*\"frontend/$h\.h\"" "$f" | head -1 | cut -d: -f1)
                printf '%s:%s: frontend/%s may not include "frontend/%s.h"\n' "$f" "$line" "$part" "$h"
                status=1
            fi
        done
        case $f in *.h) ;; *) continue ;; esac
        [ -f "frontend/$part.c" ] || continue
        # the functions the header declares (fe_NAME( on a line of its own
        # declaration, not static inline) must be defined in PART.c
        bad=$(awk '/^[A-Za-z_]/ && !/^(static|typedef|struct|enum|#)/ && match($0, /fe_[a-z0-9_]+\(/) {
                      print FNR, substr($0, RSTART, RLENGTH - 1)
                  }' "$f" | while read -r line name; do
                  grep -q "^[A-Za-z_][^;]*[ *]$name(" "frontend/$part.c" ||
                      printf '%s:%s: declares %s, which frontend/%s.c does not define\n' \
                          "$f" "$line" "$name" "$part"
              done)
        if [ -n "$bad" ]; then
            printf '%s\n' "$bad"
            status=1
        fi
    done
fi
exit $status
