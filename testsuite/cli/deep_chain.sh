# A program of 10,000 chained statements (t1[i] = t0[i] + 1, ...) compiles,
# runs right and prints IR that reads back: a stage holds at most 64
# statements (frontend/kernel.c), so the allocations of its temporaries
# nest at most that deep (10,000 nested ones overflowed the stack of the
# verifier; the .tir reader takes 200).  The same in a def of 300
# statements (a kernel of one layer, split into several functions), run
# compiled and interpreted.
. "$srcdir/testsuite/cli/lib.inc"
n=10000
{
    echo 'input x: f32[4] = 1'
    echo 't0[i] = x[i] + 1'
    k=1
    while [ $k -lt $n ]; do echo "t$k[i] = t$((k - 1))[i] + 1"; k=$((k + 1)); done
    echo "y[i] = t$((n - 1))[i] * 2"
    echo 'output y'
} >chain.te
expect_status 0 "$TEC" --interp chain.te
grep -q '^y: f32\[4\]  min 20002  max 20002 ' out || fail "10,000 statements: $(cat out)"
expect_status 0 "$TEC" -O2 --emit=tir chain.te
mv out chain.tir
expect_status 0 "$TEC" -x tir --passes= --emit=tir chain.tir
cmp out chain.tir || fail "the IR of 10,000 statements does not read back the same"

{
    echo 'def deep(x: f32[N]) -> y: f32[N] {'
    echo '    t0[i] = x[i] * 0.5'
    k=1
    while [ $k -lt 300 ]; do echo "    t$k[i] = t$((k - 1))[i] + 0.5"; k=$((k + 1)); done
    echo '    y[i] = t299[i] - x[i]'
    echo '}'
    echo 'input x: f32[16] = 2'
    echo 'y = deep(x)'
    echo 'output y'
} >def.te
expect_status 0 "$TEC" def.te
grep -q '^y: f32\[16\]  min 148.5  max 148.5 ' out || fail "a def of 300 statements: $(cat out)"
expect_status 0 "$TEC" --interp def.te
grep -q '^y: f32\[16\]  min 148.5  max 148.5 ' out || fail "a def of 300 statements, interpreted: $(cat out)"
echo ok
