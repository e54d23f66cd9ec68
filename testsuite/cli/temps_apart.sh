# A run on several threads may place the memory plan's temps apart, each in
# bytes of its own (runtime/exec.h): TEC_TEMPS_APART=1 places them apart in
# every run, 0 never, and the outputs are the same either way (and the
# interpreter's); TEC_THREADS_TRACE=1 prints each run's choices.
. "$srcdir/testsuite/cli/lib.inc"
cat >chain.te <<'TE'
import "nn.te"
input x: f32[16, 256]
h1 = linear(x, 256) as "fc1"
a1 = relu(h1) as "act1"
h2 = linear(a1, 256) as "fc2"
a2 = relu(h2) as "act2"
h3 = linear(a2, 256) as "fc3"
y = linear(h3, 10) as "fc4"
output y
TE
# the plan reuses bytes (else there is nothing to place apart)
expect_status 0 "$TEC" -O2 --emit=tir chain.te
[ "$(grep -c '^  temp .* arena(0)$' out)" -ge 2 ] || { cat out; fail "no temps share bytes"; }
expect_status 0 "$TEC" -O0 --interp chain.te --save-outputs ref
export TEC_NUM_THREADS=2 TEC_THREADS_TRACE=1
for apart in 1 0; do
    TEC_TEMPS_APART=$apart expect_status 0 "$TEC" -O2 chain.te --repeat 4 --save-outputs o$apart
    "$PYTHON" "$srcdir/testsuite/compare.py" ref o$apart || fail "TEC_TEMPS_APART=$apart: outputs differ"
    # (a run may try one thread where the partner thread did not come: a loaded machine)
    [ "$(grep -c '^tec: run [0-9]*: \(all threads\|1 thread\), .* ms (round trip -\{0,1\}[0-9]* ns)$' err)" = 5 ] ||
        { cat err; fail "TEC_TEMPS_APART=$apart: not one trace line per run (a warm-up and 4)"; }
done
grep -q 'temps apart' err && { cat err; fail "TEC_TEMPS_APART=0 placed temps apart"; }
TEC_TEMPS_APART=1 expect_status 0 "$TEC" -O2 chain.te --repeat 4
[ "$(grep -c '^tec: run .*\(temps apart\|1 thread\)' err)" = 5 ] || { cat err; fail "TEC_TEMPS_APART=1: not every run on all threads apart"; }
# without the variable: no trace
unset TEC_THREADS_TRACE
expect_status 0 "$TEC" -O2 chain.te --repeat 4
grep -q '^tec: run ' err && { cat err; fail "a trace without TEC_THREADS_TRACE"; }
exit 0
