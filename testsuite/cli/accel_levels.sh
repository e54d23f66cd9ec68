# The accelerator's view of a network does not depend on the optimization
# level: every example model's GEMM layers (shape, batch, folds, MACs and
# compute cycles) are the same at -O0 as at -O1.  At -O0 the index
# expressions are unsimplified (a convolution's input index keeps
# floordiv(f, 16) with f in [0, 15]); the classifier must see through them.
. "$srcdir/testsuite/cli/lib.inc"
cfg=$srcdir/accel/configs/edge_os_32x32.cfg
for te in "$srcdir"/examples/*.te; do
    for O in 0 1; do
        expect_status 0 "$TEC" -O$O --accel "$cfg" --accel-report=r$O.csv "$te"
        # M, N, K, batch, folds, macs, compute_cycles of every GEMM row, in order
        awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
                 $c["kind"] == "gemm" { print $c["M"], $c["N"], $c["K"], $c["batch"], $c["folds"],
                                        $c["macs"], $c["compute_cycles"] }' r$O.csv >g$O
    done
    [ -s g0 ] || fail "$te: no GEMM layers at -O0"
    diff -u g0 g1 || fail "$te: GEMM layers differ between -O0 and -O1"
done
