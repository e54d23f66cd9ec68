# Which entries a trim removes (codegen/cache.h): the least recently used
# first, an import entry with its weights file and a consts entry with its
# data file as one entry whose last use is its index file's (the data
# file's own time is that of its writing), until the rest fit the cap.
. "$srcdir/testsuite/cli/lib.inc"
export XDG_CACHE_HOME=$PWD/cache
c=$XDG_CACHE_HOME/tec
mkdir -p "$c/run"
chmod 700 "$XDG_CACHE_HOME" "$c" "$c/run"
k() { printf '%064d' "$1"; }
data() { head -c "$2" /dev/zero >"$1"; }
data "$c/run/$(k 1).import" 1000;  data "$c/run/$(k 1).weights" 100000
data "$c/run/$(k 2).import" 1000;  data "$c/run/$(k 2).weights" 100000
data "$c/run/$(k 3).consts" 1000;  data "$c/run/$(k 3).constdata" 100000
data "$c/$(k 4).so" 20000
data "$c/$(k 5).o" 20000
touch -d '10 days ago' "$c/run/$(k 1).weights"   # written long ago,
touch -d '1 day ago' "$c/run/$(k 1).import"      # used yesterday
touch -d '2 days ago' "$c/run/$(k 2).import" "$c/run/$(k 2).weights"
touch -d '1 hour ago' "$c/run/$(k 3).consts" "$c/run/$(k 3).constdata"
touch -d '3 days ago' "$c/$(k 4).so"
touch -d '5 hours ago' "$c/$(k 5).o"
printf 'input x: f32[4]\ny[i] = x[i] * 2\noutput y\n' >p.te
# 344,000 bytes of old entries and the run's new ones, over a cap of
# 300,000: removing the .so (3 days) and the second import entry (2 days)
# brings them under nine tenths of it
TEC_CACHE_MAX=300000 expect_status 0 "$TEC" -v p.te
grep -q "^tec: cache: trimmed $c to [0-9]* bytes (its cap: 300000): removed the 2 least recently used entries (121000 bytes)$" err ||
    { cat err; fail "not the trim expected"; }
for f in "$c/$(k 4).so" "$c/run/$(k 2).import" "$c/run/$(k 2).weights"; do
    [ ! -e "$f" ] || fail "$f, among the least recently used, was kept"
done
for f in "$c/run/$(k 1).import" "$c/run/$(k 1).weights" "$c/run/$(k 3).consts" \
         "$c/run/$(k 3).constdata" "$c/$(k 5).o"; do
    [ -f "$f" ] || fail "$f, used more recently, was removed"
done
