# -v says how tec set up the OpenMP threads (doc/codegen.md, "Threads"):
# unbound and asleep between parallel loops unless the environment says
# otherwise, whatever the thread count and the machine's load.
. "$srcdir/testsuite/cli/lib.inc"
export XDG_CACHE_HOME=$PWD/cache
unset OMP_PROC_BIND OMP_WAIT_POLICY GOMP_SPINCOUNT
for n in 1 2; do
    expect_status 0 "$TEC" -v --threads $n "$srcdir/examples/mlp.te"
    grep -qx "tec: OpenMP threads: unbound, waiting asleep (tec's default)" err ||
        { cat err; fail "$n threads"; }
done
for v in OMP_WAIT_POLICY=active OMP_PROC_BIND=true GOMP_SPINCOUNT=1000; do
    env "$v" "$TEC" -v --threads 2 "$srcdir/examples/mlp.te" >out 2>err || fail "$v: exit $?"
    grep -qx "tec: OpenMP threads: OMP_PROC_BIND, OMP_WAIT_POLICY or GOMP_SPINCOUNT from the environment" err ||
        { cat err; fail "the environment's policy ($v)"; }
done
echo ok
