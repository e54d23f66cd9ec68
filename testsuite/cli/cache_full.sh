# A C compiler that cannot write its files on a full disk (the kernel
# cache's, or TMPDIR's) is neither tec's fault (an internal error) nor CC's
# ("check CC", as it was): the message says the disk is full and where to
# free space.  The compiler here is cc, whose assembler finds no space for
# the object file, as on a full cache folder.
. "$srcdir/testsuite/cli/lib.inc"
cat >fullcc <<'SH'
#!/bin/sh
# cc that finds the disk full when it writes an object file or a library
for a; do
    case $a in -c|-shared)
        echo "/tmp/ccX.s: Assembler messages:" >&2
        echo "/tmp/ccX.s: Fatal error: kernels.o: No space left on device" >&2
        exit 1 ;;
    esac
done
exec cc "$@"
SH
chmod +x fullcc
printf 'input x: f32[4]\ny[i] = x[i] * 2\noutput y\n' >p.te
CC=$PWD/fullcc expect_status 1 "$TEC" --no-cache -O1 p.te
head -1 err | grep -q "^tec: error: the C compiler '$PWD/fullcc' could not write its files: the disk is full (of .*, or of TMPDIR); free space there, or give tec another cache folder (XDG_CACHE_HOME, or --no-cache for TMPDIR)$" ||
    { cat err; fail "unexpected diagnostic"; }
grep -q 'No space left on device' err || { cat err; fail "the compiler's message is not shown"; }
