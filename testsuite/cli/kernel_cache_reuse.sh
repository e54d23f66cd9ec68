# The kernel cache across models: a model that shares a kernel with one
# built before takes its object from the cache, and a model whose kernels
# changed (a unit of its own, or one of several small kernels compiled
# together) never gets a stale object: its outputs are those of a build
# without the cache.
. "$srcdir/testsuite/cli/lib.inc"
export XDG_CACHE_HOME=$PWD/cache
# One target (AVX2) for every run, so that which kernels count as small
# and share a translation unit (codegen/compile.c: kernels under 40 KB are
# bundled, up to 96 KB a unit) does not depend on the machine: here the
# five convolutions (13-19 KB of C each) share a unit, and the pool (30 KB)
# does not fit in it.
t=--target=x86-64-v3
# model NAME C3 POOL: five convolutions (the last with C3 filters), then
# a max pool of window POOL (0: none); large enough to be split.
model() {
    {
        echo 'import "nn.te"'
        echo 'input x: f32[1, 16, 14, 14]'
        echo 'a1 = conv2d(x, 32, 3, pad=1) as "c1"'
        echo 'a = relu(a1) as "r1"'
        echo 'b1 = conv2d(a, 32, 3, pad=1) as "c2"'
        echo 'b = relu(b1) as "r2"'
        echo 'd1 = conv2d(b, 64, 3, pad=1) as "c4"'
        echo 'd = relu(d1) as "r4"'
        echo 'e1 = conv2d(d, 32, 1) as "c5"'
        echo 'e = relu(e1) as "r5"'
        echo "c1 = conv2d(e, $2, 3, pad=1) as \"c3\""
        if [ "$3" = 0 ]; then
            echo 'c = relu(c1) as "r3"'
        else
            echo 'r = relu(c1) as "r3"'
            echo "c = maxpool2d(r, $3, $3) as \"pool\""
        fi
        echo 'output c'
    } >"$1.te"
}
# units NAME: "UNITS CACHED" of the run's -v line in err
units() {
    sed -nE 's/^tec: [0-9]+ kernels, [0-9]+ distinct: ([0-9]+) translation units \(([0-9]+) from the cache\).*/\1 \2/p' err
}
# run NAME: builds and runs NAME.te with the cache and without, and checks
# that they agree; leaves the cached run's -v output in err.
run() {
    expect_status 0 "$TEC" -O2 $t --no-cache --save-outputs "$1.ref" "$1.te"
    expect_status 0 "$TEC" -O2 $t -v --save-outputs "$1.out" "$1.te"
    cmp "$1.out/c.npy" "$1.ref/c.npy" || fail "$1: the cached build's output differs"
}
model one 48 0
model two 48 2
model three 40 2
model four 40 3
run one
set -- $(units)
[ "${2:-x}" = 0 ] || { cat err; fail "one: objects in an empty cache"; }
# two shares the five convolutions with one: only the pool is new (and
# the units a pool changes, the glue and the load-time packing)
run two
set -- $(units)
[ -n "${2:-}" ] && [ "$2" -ge 2 ] || { cat err; fail "two did not reuse one's convolutions"; }
# three changes the last convolution, four the pool after it too
run three
set -- $(units)
[ -n "${2:-}" ] && [ "$2" -lt "$1" ] || { cat err; fail "three: nothing was rebuilt"; }
run four
set -- $(units)
[ -n "${2:-}" ] && [ "$2" -lt "$1" ] || { cat err; fail "four: nothing was rebuilt"; }
# and back: one again is a cache hit of the whole library
expect_status 0 "$TEC" -O2 $t -v one.te
grep -q '^tec: kernel cache hit: ' err || { cat err; fail "one again missed the cache"; }
echo ok
