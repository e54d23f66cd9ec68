# Which processors a run's threads may use (doc/codegen.md, "Parallel
# loops"): with one thread tec leaves its process where the system put it
# (two single-threaded runs at once must not share one processor), and with
# several too (a bound thread cannot move off a processor another process
# takes; tec's threads spin a while, or sleep at once while others hold the
# processors), unless OMP_PROC_BIND says otherwise; under --sched the main thread stays unbound and each device's worker is
# placed on its own processors.
. "$srcdir/testsuite/cli/lib.inc"
export XDG_CACHE_HOME=$PWD/cache
# (On a machine with one processor every check holds trivially.)
mine=$(sed -n 's/^Cpus_allowed_list:\s*//p' /proc/self/status)
prog=$srcdir/examples/matmul.te
"$TEC" -O2 "$prog" >/dev/null 2>&1 || fail "cannot run $prog"   # fills the kernel cache

# allowed PID: the processors of PID's main thread once its kernels (and
# with them the OpenMP runtime) are loaded; "gone" if it ended first.
allowed() {
    for _ in $(seq 200); do
        [ -d /proc/$1 ] || { echo gone; return; }
        if grep -q libgomp /proc/$1/maps 2>/dev/null; then
            sleep 0.2
            sed -n 's/^Cpus_allowed_list:\s*//p' /proc/$1/status
            return
        fi
        sleep 0.05
    done
    echo "not loaded"
}
# check WANT(same|bound) ARGS...: starts tec ARGS on a long run and checks
# its main thread's processors.
check() {
    want=$1; shift
    "$@" >/dev/null 2>&1 &
    pid=$!
    got=$(allowed $pid)
    kill $pid 2>/dev/null; wait $pid 2>/dev/null
    case $want:$got in
    same:"$mine") ;;
    bound:[0-9]|bound:[0-9][0-9]|bound:[0-9][0-9][0-9]) ;;
    *) fail "$* runs its main thread on processors '$got', expected $want (this shell: $mine)" ;;
    esac
}
check same "$TEC" -O2 --threads 1 --repeat 1000000 "$prog"
# Several threads: never bound by default, busy machine or not; bound when
# the environment asks for it.
check same "$TEC" -O2 --threads 2 --repeat 1000000 "$prog"
check same env OMP_WAIT_POLICY=active "$TEC" -O2 --threads 2 --repeat 1000000 "$prog"
check bound env OMP_PROC_BIND=true "$TEC" -O2 --threads 2 --repeat 1000000 "$prog"
check same env OMP_PROC_BIND=false "$TEC" -O2 --threads 2 --repeat 1000000 "$prog"
check same env GOMP_SPINCOUNT=100 "$TEC" -O2 --threads 2 --repeat 1000000 "$prog"
check same "$TEC" -O2 --sched=dynamic --devices=cpu:1,cpu:1 --repeat 1000000 "$prog"
echo ok
