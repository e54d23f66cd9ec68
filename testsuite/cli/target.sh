# The target: --print-target shows what tec detected (ISA, vector width,
# cores, caches from sysfs), --target names another machine, --threads and
# TEC_NUM_THREADS set the threads of parallel loops, and kernels built for
# two targets are two cache entries.
. "$srcdir/testsuite/cli/lib.inc"
export XDG_CACHE_HOME=$PWD/cache
unset TEC_NUM_THREADS TEC_SYSFS_CPU
mm=$srcdir/examples/matmul.te

# ---- --print-target: every field, against what the system says.
expect_status 0 "$TEC" --print-target
field() { sed -n "s/^$1: //p" out; }
[ "$(field target)" = native ] || fail "--print-target: target is '$(field target)'"
[ "$(field march)" = native ] || fail "--print-target: march is '$(field march)'"
case $(field vector-bits) in 128|256|512) ;; *) fail "vector-bits '$(field vector-bits)'" ;; esac
case $(field fma) in yes|no) ;; *) fail "fma '$(field fma)'" ;; esac
ncpu=$(nproc)
[ "$(field cores)" = "$ncpu" ] || fail "cores $(field cores), nproc says $ncpu"
[ "$(field threads)" = "$ncpu (default: the cores)" ] || fail "threads '$(field threads)'"
[ "$(field runs-here)" = yes ] || fail "native does not run here: $(field runs-here)"
bytes() { field "$1" | sed -n 's/^\([0-9][0-9]*\) bytes (.*) \(per core\|in all\)$/\1/p'; }
l1d=$(bytes l1d) l2=$(bytes l2) l3=$(bytes l3)
[ -n "$l1d" ] && [ -n "$l2" ] && [ -n "$l3" ] || { cat out; fail "cache lines malformed"; }
[ "$l1d" -gt 0 ] && [ "$l1d" -le "$l2" ] && [ "$l2" -le "$l3" ] ||
    fail "caches out of order: l1d $l1d, l2 $l2, l3 $l3"
# The level-1 data cache is CPU 0's as the kernel lists it.
sysfs_size() {   # LEVEL TYPE: bytes of cpu0's cache of that level and type, or nothing
    for d in /sys/devices/system/cpu/cpu0/cache/index*; do
        [ "$(cat "$d/level" 2>/dev/null)" = "$1" ] || continue
        [ "$(cat "$d/type" 2>/dev/null)" = "$2" ] || continue
        s=$(cat "$d/size")
        case $s in *K) echo $((${s%K} * 1024)) ;; *M) echo $((${s%M} * 1048576)) ;; *) echo "$s" ;; esac
        return
    done
}
want=$(sysfs_size 1 Data)
[ -z "$want" ] || [ "$want" = "$l1d" ] || fail "l1d $l1d, sysfs says $want"
want=$(sysfs_size 2 Unified)
[ -z "$want" ] || [ "$want" = "$l2" ] || fail "l2 $l2, sysfs says $want"

# One processor allowed: one core, and the default thread count follows.
if command -v taskset >/dev/null; then
    taskset -c 0 "$TEC" --print-target >out 2>err || fail "taskset -c 0 --print-target"
    [ "$(field cores)" = 1 ] || fail "taskset -c 0: cores $(field cores)"
    [ "$(field threads)" = "1 (default: the cores)" ] || fail "taskset -c 0: threads"
fi

# ---- Caches from a made-up sysfs (TEC_SYSFS_CPU): L1d/L2 per core, the
# L3 summed over its distinct instances on the processors tec may use.
"$PYTHON" - <<'PY' || fail "cannot make the fake sysfs trees"
import os
cpus = sorted(os.sched_getaffinity(0))
def index(root, cpu, i, level, typ, size, shared=None):
    d = "%s/cpu%d/cache/index%d" % (root, cpu, i)
    os.makedirs(d)
    for name, value in (("level", level), ("type", typ), ("size", size), ("shared_cpu_list", shared)):
        if value is not None:
            open(os.path.join(d, name), "w").write("%s\n" % value)
pairs = set()
for c in cpus:
    # sys-a: L3 instances shared by pairs of processors (0-1, 2-3, ...);
    # sys-b: no L3; sys-c: an L3 without shared_cpu_list; sys-d: one L3
    # per processor.
    pair = "%d-%d" % (c // 2 * 2, c // 2 * 2 + 1)
    pairs.add(pair)
    for root, l3, shared in (("sys-a", True, pair), ("sys-b", False, None),
                             ("sys-c", True, None), ("sys-d", True, str(c))):
        index(root, c, 0, 1, "Data", "48K", str(c))
        index(root, c, 1, 1, "Instruction", "32K", str(c))
        index(root, c, 2, 2, "Unified", "2048K", str(c))
        if l3:
            index(root, c, 3, 3, "Unified", "16384K", shared)
os.makedirs("sys-empty")
open("l3-pairs", "w").write("%d\n" % (len(pairs) * 16 << 20))
open("l3-each", "w").write("%d\n" % (len(cpus) * 16 << 20))
PY
TEC_SYSFS_CPU=$PWD/sys-a expect_status 0 "$TEC" --print-target
[ "$(field l1d)" = "49152 bytes (48 KiB) per core" ] || fail "fake sysfs: l1d '$(field l1d)'"
[ "$(field l2)" = "2097152 bytes (2 MiB) per core" ] || fail "fake sysfs: l2 '$(field l2)'"
[ "$(bytes l3)" = "$(cat l3-pairs)" ] || fail "L3 per pair: l3 $(bytes l3), expected $(cat l3-pairs)"
TEC_SYSFS_CPU=$PWD/sys-d expect_status 0 "$TEC" --print-target
[ "$(bytes l3)" = "$(cat l3-each)" ] || fail "L3 per cpu: l3 $(bytes l3), expected $(cat l3-each)"
# No level 3: the L2 is the last level.
TEC_SYSFS_CPU=$PWD/sys-b expect_status 0 "$TEC" --print-target
[ "$(field l3)" = "2097152 bytes (2 MiB) in all" ] || fail "no L3: l3 '$(field l3)'"
# An L3 whose sharing is not listed counts once.
TEC_SYSFS_CPU=$PWD/sys-c expect_status 0 "$TEC" --print-target
[ "$(field l3)" = "16777216 bytes (16 MiB) in all" ] || fail "unlisted sharing: l3 '$(field l3)'"
# Nothing listed: what the C library reports, else fixed sizes; never 0.
TEC_SYSFS_CPU=$PWD/sys-empty expect_status 0 "$TEC" --print-target
for c in l1d l2 l3; do
    [ "$(bytes $c)" -gt 0 ] || fail "empty sysfs: $c '$(field $c)'"
done

# ---- Named targets.
expect_status 0 "$TEC" --print-target --target=x86-64-v3
[ "$(field target)" = x86-64-v3 ] && [ "$(field march)" = x86-64-v3 ] &&
    [ "$(field vector-bits)" = 256 ] && [ "$(field fma)" = yes ] || { cat out; fail "x86-64-v3"; }
expect_status 0 "$TEC" --print-target --target x86-64
[ "$(field vector-bits)" = 128 ] && [ "$(field fma)" = no ] &&
    [ "$(field runs-here)" = yes ] || { cat out; fail "x86-64"; }
# x86-64-v3 code: 32-byte vectors at most, compiled with -march=x86-64-v3.
expect_status 0 "$TEC" -O2 --target=x86-64-v3 --emit=c "$mm" -o v3.c
grep -q 'vector_size(32)' v3.c || fail "x86-64-v3: no 32-byte vectors in the C"
grep -q 'vector_size(64)' v3.c && fail "x86-64-v3: 64-byte vectors in the C"
expect_status 0 "$TEC" -v -O2 --target=x86-64-v3 --emit=so -o v3.so "$mm"
grep -q '^tec: target: x86-64-v3 (-march=x86-64-v3), 256-bit vectors, fma, ' err ||
    { cat err; fail "--verbose prints no target line"; }
grep -q '^tec: running: .* -march=x86-64-v3 ' err || { cat err; fail "no -march=x86-64-v3"; }
[ -s v3.so ] || fail "--emit=so wrote no v3.so"
# Run where it can; where it cannot, a clear error rather than SIGILL.
for t in x86-64-v3 x86-64-v4; do
    "$TEC" --print-target --target=$t >out 2>err || fail "--print-target --target=$t"
    if [ "$(field runs-here)" = yes ]; then
        expect_status 0 "$TEC" -O2 --target=$t "$mm" --save-outputs out-$t
    else
        expect_status 1 "$TEC" -O2 --target=$t "$mm"
        grep -q "^tec: error: cannot run kernels built for --target=$t on this machine: it lacks " err ||
            { cat err; fail "$t on a machine without it"; }
    fi
done
expect_status 0 "$TEC" --interp --passes= "$mm" --save-outputs out-ref
if [ -d out-x86-64-v3 ]; then
    "$PYTHON" "$srcdir/testsuite/compare.py" out-ref out-x86-64-v3 >cmp || { cat cmp; fail "x86-64-v3 results"; }
fi

# Unknown target: a usage error naming the known ones.
expect_status 2 "$TEC" --target=pentium4 "$mm"
expect_err "tec: error: unknown target 'pentium4' (known: native, x86-64, x86-64-v2, x86-64-v3, x86-64-v4)
tec: try 'tec --help'"
expect_status 2 "$TEC" --print-target --target=
expect_err "tec: error: unknown target '' (known: native, x86-64, x86-64-v2, x86-64-v3, x86-64-v4)
tec: try 'tec --help'"

# ---- Compiler flags: contraction into FMA from -O2 on, never below.
expect_status 0 "$TEC" -v -O1 --emit=so -o o1.so "$mm"
grep -q '^tec: running: .* -ffp-contract=off .* -march=native ' err || { cat err; fail "-O1 flags"; }
expect_status 0 "$TEC" -v -O2 --emit=so -o o2.so "$mm"
grep -q '^tec: running: .* -ffp-contract=fast .* -march=native ' err || { cat err; fail "-O2 flags"; }
grep -q 'ffp-contract=off' err && fail "-O2 also passes -ffp-contract=off"

# ---- Threads: --threads wins over TEC_NUM_THREADS, which wins over the cores.
expect_status 0 "$TEC" --print-target --threads 3
[ "$(field threads)" = "3 (--threads)" ] || fail "--threads 3: '$(field threads)'"
TEC_NUM_THREADS=5 expect_status 0 "$TEC" --print-target
[ "$(field threads)" = "5 (TEC_NUM_THREADS)" ] || fail "TEC_NUM_THREADS=5: '$(field threads)'"
TEC_NUM_THREADS=abc expect_status 0 "$TEC" --print-target --threads 1024
[ "$(field threads)" = "1024 (--threads)" ] || fail "--threads does not win over TEC_NUM_THREADS"
TEC_NUM_THREADS= expect_status 0 "$TEC" --print-target
[ "$(field threads)" = "$ncpu (default: the cores)" ] || fail "empty TEC_NUM_THREADS"
for bad in 0 -1 1025 abc 2x '' ' 4'; do
    expect_status 2 "$TEC" --threads "$bad" "$mm"
    expect_err "tec: error: --threads expects a count from 1 to 1024, got '$bad'
tec: try 'tec --help'"
done
for bad in 0 -3 abc 99999999999999999999; do
    TEC_NUM_THREADS=$bad expect_status 2 "$TEC" "$mm"
    expect_err "tec: error: the environment variable TEC_NUM_THREADS expects a count from 1 to 1024, got '$bad'
tec: try 'tec --help'"
done
# The loader hands the count to the kernels' parallel loops (this IR has
# one), and the results do not depend on it: at -O1 they are the
# interpreter's, bit for bit, on any number of threads.
par=$srcdir/testsuite/tir/roundtrip/matmul.tir
TEC_NUM_THREADS=3 expect_status 0 "$TEC" -v -O1 "$par" --save-outputs par-t3
grep -q '^tec: parallel loops run on 3 threads (TEC_NUM_THREADS)$' err ||
    { cat err; fail "TEC_NUM_THREADS=3 not applied"; }
expect_status 0 "$TEC" -v -O1 --threads 1 "$par" --save-outputs par-t1
grep -q '^tec: parallel loops run on 1 thread (--threads)$' err || { cat err; fail "--threads 1"; }
expect_status 0 "$TEC" -v -O1 "$par" --save-outputs par-default
grep -q "^tec: parallel loops run on $ncpu threads\? (default: the cores)\$" err ||
    { cat err; fail "default thread count"; }
expect_status 0 "$TEC" -O1 --interp "$par" --save-outputs par-interp
for t in t1 t3 default; do
    cmp par-interp/C.npy par-$t/C.npy || fail "-O1 on threads $t differs from the interpreter"
done
# Without parallel loops there is nothing to set.
expect_status 0 "$TEC" -v -O0 --threads 4 "$mm"
grep -q 'parallel loops run' err && { cat err; fail "-O0 matmul has no parallel loop"; }

# ---- The kernel cache: one entry per target, none per thread count.
rm -rf cache
expect_status 0 "$TEC" -O2 --target=x86-64 "$mm"
[ "$(ls cache/tec/*.so | wc -l)" = 1 ] || fail "expected one cache entry"
expect_status 0 "$TEC" -O2 --target=x86-64-v2 "$mm"
[ "$(ls cache/tec/*.so | wc -l)" = 2 ] || fail "x86-64-v2 did not get its own cache entry"
expect_status 0 "$TEC" -O2 --target=x86-64 --threads 2 "$mm"
expect_status 0 "$TEC" -v -O2 --target=x86-64-v2 --threads 1 "$mm"
grep -q '^tec: kernel cache hit: ' err || { cat err; fail "x86-64-v2 was rebuilt"; }
[ "$(ls cache/tec/*.so | wc -l)" = 2 ] || fail "the thread count changed the cache key"
echo ok
