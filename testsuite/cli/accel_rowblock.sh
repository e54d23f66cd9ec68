# A depthwise convolution whose padded input is copied one block of output
# rows at a time reads the copy relative to the block; the accelerator
# sees the convolution of the unscheduled kernel all the same (the same
# GEMM and the same distinct input, not one read of the input per tap).
# testsuite/accel/rowblock.te has the row-block schedules: stride 1 and 2,
# blocks lower than the window, a window of one row, blocks split around
# the channel loop.
. "$srcdir/testsuite/cli/lib.inc"
cfg=$srcdir/accel/configs/edge_os_32x32.cfg
te=$srcdir/testsuite/accel/rowblock.te
expect_status 0 "$TEC" --passes=flatten --accel "$cfg" --accel-report=plain.csv "$te"
expect_status 0 "$TEC" -O2 --dump-ir=memplan --accel "$cfg" --accel-report=sched.csv "$te"
grep -q 'block x_pad.*vx_pad_at' err || fail "no copy per row block at -O2"
awk -F, 'NR > 1 && $2 == "gemm"' plain.csv >plain
awk -F, 'NR > 1 && $2 == "gemm"' sched.csv >sched
[ "$(wc -l <plain)" -eq 5 ] || fail "expected 5 GEMM layers, got $(wc -l <plain)"
diff -u plain sched || fail "row-block copies give other GEMM layers"
