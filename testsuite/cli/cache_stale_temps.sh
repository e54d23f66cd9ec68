# What runs killed while they wrote (SIGKILL: nothing cleans up) leave,
# besides build folders (cache_stale_builds): a run, import or consts
# entry's temporary file CACHE/run/KEY.EXT.tmp.PID, and a --no-cache
# build's folder TMPDIR/tec-XXXXXX.  A later run removes those a day old
# or more and leaves younger ones (a run still writing) and other files
# alone.
. "$srcdir/testsuite/cli/lib.inc"
export XDG_CACHE_HOME=$PWD/cache TMPDIR=$PWD/tmp
c=$XDG_CACHE_HOME/tec
key=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
mkdir -p "$c/run" tmp/tec-aaaaaa/.tec-bbbbbb tmp/tec-cccccc tmp/tec-dddddd/keep tmp/other-eeeeee
chmod 700 "$XDG_CACHE_HOME" "$c" "$c/run"
echo x >"$c/run/$key.weights.tmp.4242"
echo x >"$c/run/$key.run.tmp.4343"
echo x >"$c/run/notes.tmp.1"
echo x >tmp/tec-aaaaaa/kernels.so
echo x >tmp/tec-aaaaaa/.tec-bbbbbb/kernels.c
echo x >tmp/tec-cccccc/kernels.so
echo x >tmp/tec-dddddd/keep/file
echo x >tmp/other-eeeeee/kernels.so
touch -d '2 days ago' "$c/run/$key.weights.tmp.4242" "$c/run/notes.tmp.1" \
    tmp/tec-aaaaaa/.tec-bbbbbb tmp/tec-aaaaaa tmp/tec-dddddd tmp/other-eeeeee
touch -d '2 hours ago' "$c/run/$key.run.tmp.4343" tmp/tec-cccccc
printf 'input x: f32[4]\ny[i] = x[i] * 2\noutput y\n' >p.te
expect_status 0 "$TEC" p.te
[ ! -e "$c/run/$key.weights.tmp.4242" ] || fail "a killed run's entry file, two days old, is left"
[ -f "$c/run/$key.run.tmp.4343" ] || fail "an entry file two hours old was removed"
[ -f "$c/run/notes.tmp.1" ] || fail "a file tec does not make was removed"
expect_status 0 "$TEC" --no-cache p.te
[ ! -e tmp/tec-aaaaaa ] || fail "a killed --no-cache run's folder, two days old, is left"
[ -f tmp/tec-cccccc/kernels.so ] || fail "a --no-cache folder two hours old was removed"
[ -f tmp/tec-dddddd/keep/file ] || fail "a folder tec does not make was emptied"
[ -f tmp/other-eeeeee/kernels.so ] || fail "a folder tec does not make was removed"
