# tec's default (reuse-aware) model of an untiled GEMM reads the DRAM words
# an optimally managed buffer would: bench/accel_reuse_ref.py replays every
# fold's demands, in the model's fold order, through a buffer of half the
# SRAM with Belady's replacement (an explicitly managed buffer that knows
# the schedule, as Timeloop assumes), and requires tec's per-operand DRAM
# reads (and partial-sum traffic) to match, on os, ws and is, for GEMMs
# that fit, stream, and spill partial sums (testsuite/accel/reuse_gemm.csv).
. "$srcdir/testsuite/cli/lib.inc"
for df in os ws is; do
    cat >$df.cfg <<X
[general]
run_name = ref
[architecture_presets]
ArrayHeight = 4
ArrayWidth = 4
IfmapSramSzkB = 1
FilterSramSzkB = 1
OfmapSramSzkB = 1
Dataflow = $df
[run_presets]
InterfaceBandwidth = CALC
X
    "$PYTHON" "$srcdir/bench/accel_reuse_ref.py" --check --tec "$TEC" $df.cfg \
        "$srcdir/testsuite/accel/reuse_gemm.csv" >ref.$df 2>&1 ||
        { cat ref.$df; fail "$df: tec's DRAM counts differ from the optimal replay"; }
    # the replays are not all the same: a plain LRU buffer reads more somewhere
    awk 'NR > 1 && $6 > $5 { more = 1 } END { exit !more }' ref.$df ||
        { cat ref.$df; fail "$df: no case where LRU reads more than the optimal buffer"; }
done
exit 0
