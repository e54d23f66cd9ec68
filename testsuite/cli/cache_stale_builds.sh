# A run killed (SIGKILL) while it builds leaves its build folder,
# .tec-XXXXXX, in the kernel cache.  A later run removes those a day old or
# more and leaves younger ones (a run still building) and other files
# alone.
. "$srcdir/testsuite/cli/lib.inc"
export XDG_CACHE_HOME=$PWD/cache
c=$XDG_CACHE_HOME/tec
mkdir -p "$c/.tec-aaaaaa" "$c/.tec-bbbbbb" "$c/.tec-keepme-too"
chmod 700 "$XDG_CACHE_HOME" "$c"
echo 'int x;' >"$c/.tec-aaaaaa/kernels.c"
echo 'int y;' >"$c/.tec-bbbbbb/kernels.c"
echo 'int z;' >"$c/.tec-keepme-too/kernels.c"
touch -d '2 days ago' "$c/.tec-aaaaaa" "$c/.tec-keepme-too"
touch -d '2 hours ago' "$c/.tec-bbbbbb"
printf 'input x: f32[4]\ny[i] = x[i] * 2\noutput y\n' >p.te
expect_status 0 "$TEC" -O1 p.te
[ ! -e "$c/.tec-aaaaaa" ] || fail "a killed run's build folder, two days old, is left"
[ -f "$c/.tec-bbbbbb/kernels.c" ] || fail "a build folder two hours old was removed"
[ -f "$c/.tec-keepme-too/kernels.c" ] || fail "a folder tec does not make was removed"
ls "$c"/*.so >/dev/null 2>&1 || fail "the kernel was not cached"
