# -v says how tec set up the OpenMP threads (doc/codegen.md, "Threads"):
# unbound and spinning a while before they sleep between parallel loops,
# unless the environment says otherwise, whatever the thread count and the
# machine's load; on several threads, that a run takes fewer while other
# processes hold the processors (unless OMP_DYNAMIC=false), and after the
# run in how many calls it did (how many depends on the machine's load).
. "$srcdir/testsuite/cli/lib.inc"
export XDG_CACHE_HOME=$PWD/cache
unset OMP_PROC_BIND OMP_WAIT_POLICY GOMP_SPINCOUNT OMP_DYNAMIC
policy="unbound, spinning 10000 times before sleeping (tec's default)"
env_policy="OMP_PROC_BIND, OMP_WAIT_POLICY or GOMP_SPINCOUNT from the environment"
adapt="fewer threads while other processes hold the processors"
expect_status 0 "$TEC" -v --threads 1 "$srcdir/examples/mlp.te"
grep -qx "tec: OpenMP threads: $policy; the thread count stays" err || { cat err; fail "1 thread"; }
grep -q "calls ran on fewer" err && { cat err; fail "1 thread: a count of calls on fewer threads"; }
expect_status 0 "$TEC" -v --threads 2 "$srcdir/examples/mlp.te"
grep -qx "tec: OpenMP threads: $policy; $adapt" err || { cat err; fail "2 threads"; }
grep -Eqx "tec: [0-9]+ of [0-9]+ calls ran on fewer than 2 threads \(other processes held the processors\)" err ||
    { cat err; fail "2 threads: the count of calls on fewer threads"; }
for v in OMP_WAIT_POLICY=active OMP_PROC_BIND=true GOMP_SPINCOUNT=1000; do
    env "$v" "$TEC" -v --threads 2 "$srcdir/examples/mlp.te" >out 2>err || fail "$v: exit $?"
    grep -qx "tec: OpenMP threads: $env_policy; $adapt" err ||
        { cat err; fail "the environment's policy ($v)"; }
done
OMP_DYNAMIC=false "$TEC" -v --threads 2 "$srcdir/examples/mlp.te" >out 2>err || fail "OMP_DYNAMIC: exit $?"
grep -qx "tec: OpenMP threads: $policy; the thread count stays (OMP_DYNAMIC=false)" err ||
    { cat err; fail "OMP_DYNAMIC=false"; }
grep -q "calls ran on fewer" err && { cat err; fail "OMP_DYNAMIC=false: a count of calls on fewer threads"; }
# --sched places its own threads
"$TEC" -v --sched=serial --threads 2 "$srcdir/examples/mlp.te" >out 2>err || fail "--sched: exit $?"
grep -q "calls ran on fewer" err && { cat err; fail "--sched: a count of calls on fewer threads"; }
echo ok
