#!/bin/sh
# tools/check-layers.sh [SRCDIR] — checks that the low floors of tec import
# only what doc/architecture.md allows them:
#
#   ir/       ir/ (and libc, GMP)
#   passes/   ir/, passes/
#   codegen/  ir/, codegen/ (and the build's config.h)
#
# Prints one line per forbidden #include, "FILE:LINE: FOLDER/ may not
# include "HEADER"", and exits 1 if there is any; exits 0 otherwise.
# `make check` runs it (testsuite/cli/layers.sh).
srcdir=${1:-.}
cd "$srcdir" || exit 2
status=0
for floor in ir passes codegen; do
    case $floor in
    ir) allowed='ir' ;;
    passes) allowed='ir passes' ;;
    codegen) allowed='ir codegen' ;;
    esac
    for f in $(find "$floor" -name '*.[ch]' | LC_ALL=C sort); do
        # "#include "dir/x.h"": the dir must be allowed; no dir: config.h only
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
                    ok = index(allowed, " " dir " ") > 0
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
exit $status
