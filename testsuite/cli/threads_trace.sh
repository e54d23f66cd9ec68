# TEC_THREADS_TRACE=1 on several threads: besides each run's choices, the
# runtime's first decision of how the threads wait (spinning, or asleep when
# more other processes are runnable than processors) and each change of it
# with the window that decided (runtime/threads.c).  Without the variable,
# none of it.
. "$srcdir/testsuite/cli/lib.inc"
cat >chain.te <<'TE'
import "nn.te"
input x: f32[16, 256]
h1 = linear(x, 256) as "fc1"
a1 = relu(h1) as "act1"
y = linear(a1, 10) as "fc2"
output y
TE
export TEC_NUM_THREADS=2 TEC_THREADS_TRACE=1
expect_status 0 "$TEC" -O2 chain.te --repeat 4
[ "$(grep -c '^tec: threads \(spinning\|asleep\) from the start: [0-9]* other runnable threads, [0-9]* processors' err)" = 1 ] ||
    { cat err; fail "not one line with the first decision"; }
# it is made at the first call, before the warm-up run ends
sed -n '1,/^tec: run 1:/p' err | grep -q '^tec: threads .* from the start' ||
    { cat err; fail "the first decision does not come before the first run's line"; }
# a change comes with its window
grep '^tec: threads .* after a window' err | grep -qv 'after a window of [0-9.]* ms: run-queue wait [0-9]*% of its thread time, [0-9]* calls of [0-9.]* ms (asleep before: [0-9.]* of them)' &&
    { cat err; fail "a malformed change line"; }
unset TEC_THREADS_TRACE
expect_status 0 "$TEC" -O2 chain.te --repeat 4
grep -q '^tec: threads ' err && { cat err; fail "a trace without TEC_THREADS_TRACE"; }
exit 0
