# Kernel cache entries are loaded only when they are regular files of the
# user's that no one else can write; anything else found under the right
# key (planted while the directory was open) is never loaded, but rebuilt.
# A loadable entry that is not the build of its key is rebuilt too.
. "$srcdir/testsuite/cli/lib.inc"
export XDG_CACHE_HOME=$PWD/cache
prog=$srcdir/examples/matmul.te
cc=${CC:-cc}

expect_status 0 "$TEC" "$prog"
cp out want
entry=$(ls "$PWD"/cache/tec/*.so)
[ "$(echo "$entry" | wc -l)" = 1 ] || fail "expected one cache entry: $entry"
[ "$(stat -c %a "$entry")" = 755 ] || [ "$(stat -c %a "$entry")" = 700 ] ||
    fail "entry mode $(stat -c %a "$entry")"

# A shared object whose constructor leaves a mark when it is loaded.
printf '#include <fcntl.h>\n__attribute__((constructor)) static void mark(void) { creat("%s/LOADED", 0644); }\n' \
    "$PWD" >planted.c
$cc -shared -fPIC -o planted.so planted.c || fail "cannot build planted.so"

# plant HOW: replaces the entry; tec must not load it, and must rebuild it.
check_planted() {
    rm -f LOADED
    expect_status 0 "$TEC" "$prog"
    [ ! -e LOADED ] || fail "$1: the planted entry was loaded"
    grep -q "^tec: warning: kernel cache entry $entry $2; not loading it, rebuilding it\$" err ||
        { cat err; fail "$1: no warning"; }
    diff -u want out || fail "$1: wrong output"
    [ -f "$entry" ] && [ ! -L "$entry" ] || fail "$1: the entry is not a new file"
    [ -z "$(find "$entry" -perm /022)" ] || fail "$1: rebuilt entry writable by others"
    expect_status 0 "$TEC" "$prog"
    [ ! -s err ] || { cat err; fail "$1: the rebuilt entry is not used quietly"; }
}

cp planted.so "$entry" && chmod 666 "$entry"
check_planted "mode 0666" "is writable by group or others (mode 0666)"
cp planted.so "$entry" && chmod 664 "$entry"
check_planted "mode 0664" "is writable by group or others (mode 0664)"
rm "$entry" && ln -s "$PWD/planted.so" "$entry"
check_planted "symbolic link" "is a symbolic link"
if [ "$(id -u)" = 0 ]; then   # only root can give a file away
    cp planted.so "$entry" && chmod 755 "$entry" && chown 65534 "$entry"
    check_planted "another owner" "is owned by uid 65534, not by you"
fi

# A loadable object of the user's without the kernels: rebuilt, not an
# internal error.
echo 'int unrelated = 1;' >stray.c
$cc -shared -fPIC -o "$entry" stray.c || fail "cannot build stray.so"
expect_status 0 "$TEC" "$prog"
diff -u want out || fail "stray entry: wrong output"
[ ! -s err ] || { cat err; fail "stray entry: unexpected diagnostics"; }
expect_status 0 "$TEC" --verbose "$prog"
grep -q "kernel cache hit" err || fail "the rebuilt entry is not a cache hit"

# A cache directory that was open to others: tec says to remove it.
chmod 777 cache/tec
expect_status 1 "$TEC" "$prog"
grep -q "so anyone could have put kernels in it; remove it" err || { cat err; fail "open dir message"; }
chmod 700 cache/tec

# Under umask 002 the entries are still not writable by the group.
rm -rf cache
(umask 002 && "$TEC" "$prog" >out 2>err) || fail "umask 002 run"
[ -z "$(find cache/tec -name '*.so' -perm /022)" ] || fail "entry writable by the group under umask 002"
(umask 002 && "$TEC" "$prog" >out 2>err) || fail "umask 002 second run"
[ ! -s err ] || { cat err; fail "umask 002: entry not reused quietly"; }

# The cache removed while tec compiles (rm -rf): made again, and built.
rm -rf cache removed
printf '#!/bin/sh\ncase "$1" in --version) exec %s --version;; esac\nif [ ! -e "%s/removed" ]; then touch "%s/removed"; rm -rf "%s/cache"; fi\nexec %s "$@"\n' \
    "$cc" "$PWD" "$PWD" "$PWD" "$cc" >rmcache.sh
chmod +x rmcache.sh
CC=$PWD/rmcache.sh expect_status 0 "$TEC" "$prog"
[ -e removed ] || fail "the cache was not removed during the build"
diff -u want out || fail "cache removed: wrong output"
[ "$(ls cache/tec/*.so | wc -l)" = 1 ] || fail "cache removed: no entry"
echo ok
