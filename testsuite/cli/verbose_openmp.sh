# -v says how tec set up the OpenMP threads (doc/codegen.md, "Threads").
. "$srcdir/testsuite/cli/lib.inc"
export XDG_CACHE_HOME=$PWD/cache
unset OMP_PROC_BIND OMP_WAIT_POLICY
expect_status 0 "$TEC" -v --threads 1 "$srcdir/examples/mlp.te"
grep -qx "tec: OpenMP threads: libgomp's defaults" err || { cat err; fail "one thread"; }
OMP_WAIT_POLICY=passive expect_status 0 "$TEC" -v --threads 2 "$srcdir/examples/mlp.te"
grep -qx "tec: OpenMP threads: OMP_PROC_BIND and OMP_WAIT_POLICY from the environment" err ||
    { cat err; fail "the environment's policy"; }
# Whether the machine is busy depends on the moment: either answer.
expect_status 0 "$TEC" -v --threads 2 "$srcdir/examples/mlp.te"
grep -qx "tec: OpenMP threads: \(bound, waiting spinning\|unbound, waiting asleep: the machine is busy\)" err ||
    { cat err; fail "two threads"; }
echo ok
