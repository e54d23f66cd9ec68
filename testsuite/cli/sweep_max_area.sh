# tec takes --sweep-max-area as tec-accel does: configurations larger than
# the bound are left out, and a bound that leaves none is an error.
. "$srcdir/testsuite/cli/lib.inc"
cfg=$srcdir/accel/configs/edge_os_32x32.cfg
expect_status 1 "$TEC" --accel "$cfg" --sweep --sweep-arrays 8x8,32x32 --sweep-sram 64 \
    --sweep-dataflows os --sweep-max-area 0.0001 --sweep-out sw "$srcdir/examples/mlp.te"
grep -q '^tec: error: --sweep-max-area 0.0001: every one of the 2 configurations is larger' err ||
    { cat err; fail "an area bound below every configuration"; }
expect_status 0 "$TEC" --accel "$cfg" --sweep --sweep-arrays 8x8,128x128 --sweep-sram 64 \
    --sweep-dataflows os --sweep-max-area 1 --sweep-out sw "$srcdir/examples/mlp.te"
n=$(cut -d, -f2 sw/sweep.csv | sed 1d | sort -u | tr '\n' ';')
[ "$n" = "8x8 os 64kB;" ] || fail "expected only 8x8 under 1 mm^2, got $n"
expect_status 2 "$TEC" --accel "$cfg" --sweep-max-area 1 "$srcdir/examples/mlp.te"
grep -q 'need --sweep' err || { cat err; fail "--sweep-max-area without --sweep"; }
echo ok
