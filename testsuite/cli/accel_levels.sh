# The accelerator's view of a network does not depend on the optimization
# level: every example model's GEMM layers (every column of the report but
# the layer's name, which fusion extends) are the same at -O0, -O1 and -O2.
# At -O0 the index expressions are unsimplified (a convolution's input
# index keeps floordiv(f, 16) with f in [0, 15]); at -O2 the optimizer
# stages operands in packed local tiles (cache_read), partitions loops
# (two copies of a block), splits reductions (rfactor) and replaces weights
# by the consts prepack computes at load.  The classifier must see through
# all of it.  testsuite/accel/scheduled.te has each rewrite in a written
# schedule, compared with the same kernels unscheduled.
. "$srcdir/testsuite/cli/lib.inc"
cfg=$srcdir/accel/configs/edge_os_32x32.cfg
gemms() { # the GEMM rows of report $1 without their names
    awk -F, 'NR > 1 && $2 == "gemm"' "$1" | cut -d, -f2-
}
for te in "$srcdir"/examples/*.te; do
    for O in 0 1 2; do
        expect_status 0 "$TEC" -O$O --accel "$cfg" --accel-report=r$O.csv "$te"
        gemms r$O.csv >g$O
    done
    [ -s g0 ] || fail "$te: no GEMM layers at -O0"
    diff -u g0 g1 || fail "$te: GEMM layers differ between -O0 and -O1"
    diff -u g0 g2 || fail "$te: GEMM layers differ between -O0 and -O2"
done
te=$srcdir/testsuite/accel/scheduled.te
expect_status 0 "$TEC" --passes=flatten --accel "$cfg" --accel-report=plain.csv "$te"
expect_status 0 "$TEC" -O2 --accel "$cfg" --accel-report=sched.csv "$te"
awk -F, 'NR > 1 && $2 == "gemm" { print $1, $3, $4, $5, $6 }' plain.csv >plain
cat >want <<'X'
s 32 32 16 4
y 24 1 64 1
c 20 24 64 1
X
diff -u want plain || fail "unscheduled kernels: unexpected GEMMs"
awk -F, 'NR > 1 && $2 == "gemm"' plain.csv >plain
awk -F, 'NR > 1 && $2 == "gemm"' sched.csv >sched
diff -u plain sched || fail "scheduled kernels give other GEMM layers"
