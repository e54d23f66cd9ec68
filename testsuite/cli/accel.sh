# tec --accel: the accelerator model on a compiled program and on a
# SCALE-Sim topology; reports, topology export, sweeps and errors.
. "$srcdir/testsuite/cli/lib.inc"
cfg=$srcdir/accel/configs/edge_os_32x32.cfg

# examples/conv.te: a 3x3 convolution, stride 2, padding 1, on 1x3x32x32
# with 16 filters, then a ReLU.  im2col: M = 16*16 outputs, N = 16, K = 27.
# On the 32x32 os array one fold takes 2*32 + 32 + 27 - 2 = 121 cycles and
# M = 256 needs 8 row folds: 968 compute cycles (doc/accel.md, (3)).
expect_status 0 "$TEC" --accel "$cfg" --accel-report=r.json --export-topology t.csv \
    "$srcdir/examples/conv.te"
row=$(awk '$1 == "conv" && $7 == "mnk"' out)
[ -n "$row" ] || { cat out; fail "no conv row in the accelerator table"; }
set -- $row
[ "$2 $3 $4 $5" = "256 16 27 1" ] || fail "conv is M N K batch = $2 $3 $4 $5, expected 256 16 27 1"
[ "$8" = 968 ] || fail "conv compute cycles $8, expected 968"
grep -q '^relu  *-  *-  *-  *-  *vector ' out || { cat out; fail "no vector row for relu"; }
grep -q '^total: 110592 MACs' out || { cat out; fail "no total line with 110592 MACs"; }
grep -q '"name": "conv"' r.json && grep -q '"M": 256' r.json || fail "r.json lacks the conv layer"
grep -q '"total": {' r.json || fail "r.json lacks the total"
# The geometry SCALE-Sim reads: the padded rows the windows touch, 15*2 + 3.
printf '%s\n' "Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels, Num Filter, Stride Height, Stride Width," \
    "conv, 33, 33, 3, 3, 3, 16, 2, 2," >want
diff -u want t.csv || fail "exported topology"

# The exported topology read back gives the same conv row.
expect_status 0 "$TEC" --topology t.csv --accel "$cfg"
set -- $(awk '$1 == "conv"' out)
[ "$2 $3 $4 $8" = "256 16 27 968" ] || fail "topology round trip: $*"

# SCALE-Sim's ResNet-18 topology: 21 layers, 1,814,073,344 MACs.
expect_status 0 "$TEC" --topology "$srcdir/testsuite/accel/resnet18.csv" --accel "$cfg" \
    --accel-report=r18.csv
n=$(awk '$7 ~ /^[mnk][mnk][mnk]$/ && $2 ~ /^[0-9]+$/' out | wc -l)
[ "$n" = 21 ] || { cat out; fail "$n GEMM rows for ResNet-18, expected 21"; }
set -- $(awk '$1 == "conv1"' out)
[ "$2 $3 $4" = "12544 64 147" ] || fail "conv1 is $2 $3 $4, expected 12544 64 147"
grep -q '^total: 1814073344 MACs' out || { cat out; fail "ResNet-18 MAC total"; }
[ "$(wc -l <r18.csv)" = 23 ] || fail "r18.csv: expected a header, 21 layers and a total"

# A sweep: 2 arrays x 1 dataflow x 1 SRAM size, one CSV and the charts.
expect_status 0 "$TEC" --accel "$cfg" --sweep --sweep-out sw --sweep-arrays 8x8,32x32 \
    --sweep-dataflows os --sweep-sram 64 "$srcdir/examples/conv.te"
[ "$(wc -l <sw/sweep.csv)" = 7 ] || fail "sweep.csv: expected 1 + 2 configurations x 3 rows"
grep -q '^1,32x32 os 64kB,32,32,1,os,64,conv,gemm,256,16,27,1,untiled,110592,968,' sw/sweep.csv ||
    fail "sweep.csv lacks the 32x32 conv row"
for c in configs layers; do
    for m in latency energy edp; do
        for f in png svg; do [ -s "sw/${c}_$m.$f" ] || fail "no sw/${c}_$m.$f"; done
    done
done

# With --profile --search none: the run's table gains the accelerator
# columns, with the same total cycles per layer as the model alone, and a
# summary line.  968 compute + 1949 stall: f32 elements are four 1-byte
# words, so the first tiles bring (33*33*3 + 16*27) * 4 = 14796 words and
# the last drains 16*16*16 * 4 = 16384, at 16 words a cycle.
expect_status 0 "$TEC" --profile --search none --accel "$cfg" "$srcdir/examples/conv.te"
grep -q 'acc cycles  *acc util%' out || { cat out; fail "no accelerator columns in the profile"; }
set -- $(awk '$1 == "conv" { print; exit }' out)
[ "$(eval echo \${$(($# - 5))})" = 2917 ] || { cat out; fail "profile: conv acc cycles differ from 2917"; }
grep -q '^accelerator edge_os_32x32 32x32 os: ' out || { cat out; fail "no accelerator summary"; }
grep -q '^accelerator: .* of the cycles stall; tiling untiled (--search none)$' out ||
    { cat out; fail "the summary does not say the tiling is untiled"; }
untiled_edp=$(sed -n 's/^accelerator edge.*EDP \([0-9.e+]*\) pJ\*us$/\1/p' out)
# Without --search the profile describes the accelerator at its best: the
# EDP-searched tiling, never worse than untiled, and says so.
expect_status 0 "$TEC" --profile --accel "$cfg" "$srcdir/examples/conv.te"
grep -q '^accelerator: .* of the cycles stall; tiling searched for the least EDP (--search edp)$' out ||
    { cat out; fail "the summary does not name the EDP search"; }
edp=$(sed -n 's/^accelerator edge.*EDP \([0-9.e+]*\) pJ\*us$/\1/p' out)
awk -v a="$edp" -v b="$untiled_edp" 'BEGIN { exit !(a + 0 <= b + 0 && a + 0 > 0) }' ||
    fail "searched EDP $edp exceeds untiled $untiled_edp"

# Errors.
expect_status 1 "$TEC" --accel no-such.cfg "$srcdir/examples/conv.te"
expect_err "no-such.cfg: error: cannot open: No such file or directory"
expect_status 2 "$TEC" --accel "$cfg" --accel-report=r.txt "$srcdir/examples/conv.te"
grep -q "accel-report needs a file name ending in .csv or .json, not 'r.txt'" err ||
    fail "no message for a bad report name"
expect_status 2 "$TEC" --accel "$cfg" --search fast "$srcdir/examples/conv.te"
grep -q "bad --search 'fast' (expected none, dram or edp)" err || fail "no message for --search"
expect_status 2 "$TEC" --sweep-arrays 8x8 "$srcdir/examples/conv.te"
grep -q "need --sweep" err || fail "no message for a sweep list without --sweep"
expect_status 2 "$TEC" --topology t.csv --accel "$cfg" "$srcdir/examples/conv.te"
grep -q "topology replaces the program" err || fail "no message for --topology with a program"
echo ok

# A misspelled key warns (it would silently fall back to USER bandwidth);
# --strict makes it an error.
sed 's/InterfaceBandwidth/InterfaceBandwith/' "$srcdir/testsuite/accel/scalesim/os_32x32.cfg" >typo.cfg
expect_status 0 "$TEC" --topology "$srcdir/testsuite/accel/small_gemm.csv" --accel typo.cfg
grep -q "^typo.cfg:18: warning: unknown key InterfaceBandwith in \[run_presets\] is ignored (did you mean InterfaceBandwidth?)$" err ||
    { cat err; fail "no warning for a misspelled key"; }
expect_status 1 "$TEC" --strict --topology "$srcdir/testsuite/accel/small_gemm.csv" --accel typo.cfg
expect_err "typo.cfg:18: error: unknown key InterfaceBandwith in [run_presets] is ignored (did you mean InterfaceBandwidth?)"

# A convolution whose output size differs between floor and ceil semantics
# (8x8 input, 3x3 filter, stride 2: 3x3 against SCALE-Sim's 4x4) gets a note.
printf '%s\n' "Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels, Num Filter, Strides," \
    "odd, 8, 8, 3, 3, 1, 4, 2," >odd.csv
expect_status 0 "$TEC" --topology odd.csv --accel "$cfg"
expect_err "odd.csv: note: layer odd: output 3x3 under floor((H - R) / S) + 1, 4x4 under SCALE-Sim's ceil((H - R + S) / S), which counts a partial last window; tec's model uses floor"
