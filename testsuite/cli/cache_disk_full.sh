# A full disk under the cache folder (codegen/cache.h): the kernels are
# built in a temporary folder (TMPDIR) instead, with one warning, and the
# result is right; a full TMPDIR too is an error that says so.  The
# compiler here finds no space when it writes into the cache folder, as
# on a full disk.
. "$srcdir/testsuite/cli/lib.inc"
export XDG_CACHE_HOME=$PWD/cache
cat >fullcc <<'CC'
#!/bin/sh
# cc that finds the disk full when it writes into $FULL
for a; do
    case $a in "$FULL"/*)
        echo "/tmp/ccX.s: Assembler messages:" >&2
        echo "/tmp/ccX.s: Fatal error: $a: No space left on device" >&2
        exit 1 ;;
    esac
done
exec cc "$@"
CC
chmod +x fullcc
printf 'input x: f32[4, 8]\ny[i, j] = x[i, j] * 2.5 + 1\noutput y\n' >p.te
expect_status 0 "$TEC" --no-cache p.te --save-outputs ref
FULL=$XDG_CACHE_HOME CC=$PWD/fullcc expect_status 0 "$TEC" p.te --save-outputs o
expect_err "tec: warning: no space left on the disk of the cache folder $XDG_CACHE_HOME/tec; building the kernels in a temporary folder (TMPDIR) instead"
cmp o/y.npy ref/y.npy || fail "the run on a full cache disk computed a wrong result"
ls "$XDG_CACHE_HOME"/tec/*.so >/dev/null 2>&1 && fail "a kernel was cached on a full disk"
ls -A "$XDG_CACHE_HOME"/tec | grep -q '^\.tec-' && fail "a build folder was left behind"
# the temporary folder full too: the compiler's message, said as a full disk
mkdir tmp
TMPDIR=$PWD/tmp FULL=$PWD CC=$PWD/fullcc expect_status 1 "$TEC" p.te
head -2 err | tail -1 | grep -q "^tec: error: the C compiler '$PWD/fullcc' could not write its files: the disk is full (of $PWD/tmp/tec-[A-Za-z0-9]*, or of TMPDIR); free space there, or give tec another cache folder (XDG_CACHE_HOME, or --no-cache for TMPDIR)$" ||
    { cat err; fail "unexpected diagnostic"; }
[ -z "$(ls -A tmp)" ] || fail "the temporary folder was left behind: $(ls -A tmp)"
