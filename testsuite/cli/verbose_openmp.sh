# -v says how tec set up the OpenMP threads (doc/codegen.md, "Threads"):
# unbound and spinning a while before they sleep between parallel loops,
# asleep at once while other processes hold the processors, unless the
# environment says otherwise, whatever the thread count and the machine's
# load; after a run on several threads, in how many calls the threads
# slept at once (how many depends on the machine's load).
. "$srcdir/testsuite/cli/lib.inc"
export XDG_CACHE_HOME=$PWD/cache
unset OMP_PROC_BIND OMP_WAIT_POLICY GOMP_SPINCOUNT
policy="unbound, spinning 10000 times before sleeping, asleep at once while other processes hold the processors (tec's default)"
env_policy="OMP_PROC_BIND, OMP_WAIT_POLICY or GOMP_SPINCOUNT from the environment"
calls="tec: [0-9]+ of [0-9]+ calls ran (with threads asleep between parallel loops|on one thread) \(other processes held the processors\)"
expect_status 0 "$TEC" -v --threads 1 "$srcdir/examples/mlp.te"
grep -qx "tec: OpenMP threads: $policy" err || { cat err; fail "1 thread"; }
grep -q "calls ran" err && { cat err; fail "1 thread: a count of calls"; }
expect_status 0 "$TEC" -v --threads 2 "$srcdir/examples/mlp.te"
grep -qx "tec: OpenMP threads: $policy" err || { cat err; fail "2 threads"; }
grep -Eqx "$calls" err || { cat err; fail "2 threads: the count of calls"; }
# the environment's choice stays as it is
for v in OMP_WAIT_POLICY=active OMP_PROC_BIND=true GOMP_SPINCOUNT=1000; do
    env "$v" "$TEC" -v --threads 2 "$srcdir/examples/mlp.te" >out 2>err || fail "$v: exit $?"
    grep -qx "tec: OpenMP threads: $env_policy" err ||
        { cat err; fail "the environment's policy ($v)"; }
    grep -q "calls ran" err && { cat err; fail "$v: a count of calls"; }
done
# --sched places its own threads
"$TEC" -v --sched=serial --threads 2 "$srcdir/examples/mlp.te" >out 2>err || fail "--sched: exit $?"
grep -q "calls ran" err && { cat err; fail "--sched: a count of calls"; }
echo ok
