# bench/accel_scalesim.sh's bookkeeping: each config is compared with
# SCALE-Sim's own time for that config, from
# bench/results/accel_scalesim_reference.txt (not numbers typed into the
# script), and doc/accel.md quotes the same times.  Only the bookkeeping
# is checked: no time is asserted.
. "$srcdir/testsuite/cli/lib.inc"
ref=$srcdir/bench/results/accel_scalesim_reference.txt
srcdir=$srcdir sh "$srcdir/bench/accel_scalesim.sh" >bench.out 2>bench.err ||
    { cat bench.err; fail "bench/accel_scalesim.sh failed"; }
for cfg in os_32x32 ws_128x128 is_16x16; do
    want=$(awk -v c="$cfg" '$1 == c { print $2 }' "$ref")
    [ -n "$want" ] || fail "$ref has no time for $cfg"
    got=$(awk -v c="$cfg" '$1 == c && $2 == "tec" { for (i = 1; i < NF; i++) if ($i == "SCALE-Sim") print $(i + 1) }' bench.out)
    [ "$got" = "$want" ] || { cat bench.out; fail "$cfg compared with SCALE-Sim's $got s, measured $want s"; }
done
# the reference itself: os32 274 s, ws128 83 s, is16 1407 s
[ "$(awk '!/^#/ { printf "%s=%s ", $1, $2 }' "$ref")" = "os_32x32=274 ws_128x128=83 is_16x16=1407 " ] ||
    fail "unexpected reference times: $(cat "$ref")"
grep -q "SCALE-Sim takes 274 s (os32), 83 s (ws128) and 1407 s (is16)" "$srcdir/doc/accel.md" ||
    fail "doc/accel.md does not quote the reference times"
exit 0
