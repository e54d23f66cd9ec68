# --accel-mode=scalesim reproduces SCALE-Sim v2's reports: on the GEMM
# and convolution topologies on three configs whose SCALE-Sim output is in
# testsuite/accel/scalesim/, every column of COMPUTE_REPORT.csv,
# BANDWIDTH_REPORT.csv and DETAILED_ACCESS_REPORT.csv is equal, byte for byte.
. "$srcdir/testsuite/cli/lib.inc"
ref=$srcdir/testsuite/accel/scalesim
# As SCALE-Sim (-p DIR), tec writes the reports into DIR/<run_name>/.
for run in os32:os_32x32:os_32x32_64KB ws128:ws_128x128:ws_128x128_1024KB is16:is_16x16:is_16x16_32KB; do
    name=${run%%:*} rest=${run#*:}
    cfg=${rest%%:*} run_name=${rest#*:}
    for topo in gemm:gemm_mnk conv:conv_small; do
        kind=${topo%%:*} csv=${topo#*:}
        expect_status 0 "$TEC" --topology "$ref/$csv.csv" --accel "$ref/$cfg.cfg" \
            --accel-mode=scalesim --accel-report="${name}_$kind"
        grep -qx "SCALE-Sim reports in ${name}_$kind/$run_name/ (COMPUTE_REPORT.csv, BANDWIDTH_REPORT.csv, DETAILED_ACCESS_REPORT.csv)" out ||
            { cat out; fail "no line saying where the reports are"; }
        for rep in COMPUTE_REPORT BANDWIDTH_REPORT DETAILED_ACCESS_REPORT; do
            cmp "$ref/${name}_$kind/$rep.csv" "${name}_$kind/$run_name/$rep.csv" || {
                diff "$ref/${name}_$kind/$rep.csv" "${name}_$kind/$run_name/$rep.csv"
                fail "${name}_$kind: $rep.csv differs"; }
        done
    done
done

# The table: layer rows with SCALE-Sim's cycles, and a total.
expect_status 0 "$TEC" --topology "$ref/gemm_mnk.csv" --accel "$ref/os_32x32.cfg" \
    --accel-mode=scalesim
set -- $(awk '$1 == "gemm_64x64x64"' out)
[ "$6 $7" = "503 50.89" ] || { cat out; fail "os32 gemm_64x64x64: cycles/util $6 $7, expected 503 50.89"; }

# Usage: scalesim mode needs a CALC config, and its report is a directory.
expect_status 1 "$TEC" --topology "$ref/gemm_mnk.csv" --accel "$srcdir/accel/configs/edge_os_32x32.cfg" \
    --accel-mode=scalesim
expect_err "tec: error: $srcdir/accel/configs/edge_os_32x32.cfg: --accel-mode=scalesim reproduces SCALE-Sim's CALC bandwidth mode; set InterfaceBandwidth: CALC in [run_presets]"
expect_status 2 "$TEC" --topology "$ref/gemm_mnk.csv" --accel "$ref/os_32x32.cfg" \
    --accel-mode=scalesim --accel-report=r.csv
grep -q "^tec: error: with --accel-mode=scalesim, --accel-report names the directory" err ||
    { cat err; fail "no usage error for a .csv report in scalesim mode"; }
expect_status 2 "$TEC" --topology "$ref/gemm_mnk.csv" --accel "$ref/os_32x32.cfg" --accel-mode=fast
grep -q "^tec: error: bad --accel-mode 'fast' (expected tec or scalesim)" err || { cat err; fail "bad mode"; }

# A compiled network: examples/conv.te's convolution is SCALE-Sim's
# 33x33x3 ifmap, 3x3 filter, stride 2, 16 filters: OS folds Sr = 256 pixels
# over 32 rows (8), Sc = 16 filters (1), T = 27; each fold 27 + 32 + 32 - 2
# = 89 lines, so 8 * 89 - 1 = 711 cycles.  The ReLU has no SCALE-Sim form.
expect_status 0 "$TEC" --accel "$ref/os_32x32.cfg" --accel-mode=scalesim "$srcdir/examples/conv.te"
set -- $(awk '$1 == "conv"' out)
[ "$2 $3 $4 $5 $6" = "256 16 27 1 711" ] || { cat out; fail "conv.te in scalesim mode: $*"; }
grep -q '^vector layers left out (SCALE-Sim has no form for them): 1$' out || { cat out; fail "vector note"; }
# The profile's accelerator columns are tec's model, never SCALE-Sim's.
expect_status 2 "$TEC" --profile --accel "$ref/os_32x32.cfg" --accel-mode=scalesim "$srcdir/examples/conv.te"
# A layer past SCALE-Sim's own int32 matrices is a clear error, not a crash.
printf '%s\n' "Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels, Num Filter, Strides," \
    "huge, 50000, 50000, 1, 1, 1, 1, 1," >huge.csv
expect_status 1 "$TEC" --topology huge.csv --accel "$ref/os_32x32.cfg" --accel-mode=scalesim
expect_err "tec: error: accelerator model (scalesim mode): layer huge: operand matrices past 2^31 entries (SCALE-Sim's own limit)"
# tec's WordBytes does not change SCALE-Sim's numbers: its word is a byte.
{ cat "$ref/os_32x32.cfg"; printf '[tec_architecture]\nWordBytes = 2\n'; } >wb2.cfg
expect_status 0 "$TEC" --topology "$ref/gemm_mnk.csv" --accel wb2.cfg --accel-mode=scalesim --accel-report=wb2
cmp "$ref/os32_gemm/DETAILED_ACCESS_REPORT.csv" wb2/os_32x32_64KB/DETAILED_ACCESS_REPORT.csv ||
    fail "WordBytes changed the reports"
# a run_name that cannot be a folder is an error, not a path outside DIR
sed 's|^run_name = .*|run_name = ../up|' "$ref/os_32x32.cfg" >up.cfg
expect_status 1 "$TEC" --topology "$ref/gemm_mnk.csv" --accel up.cfg --accel-mode=scalesim --accel-report=up
expect_err "tec: error: up.cfg: run_name '../up' cannot name the folder of the reports (SCALE-Sim writes them into DIR/<run_name>/)"
