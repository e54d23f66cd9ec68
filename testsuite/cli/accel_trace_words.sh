# The accelerator trace accounts for every DRAM word of the report: per
# operand, the folds' reads (ifmap, filter, the ofmap's partial sums read
# back) and the ofmap's writes, including the write-back of output tiles
# kept in SRAM (resident ofmap), untiled and with the EDP search, on the
# three dataflows.
. "$srcdir/testsuite/cli/lib.inc"
for cfg in edge_os_32x32 is_16x16 tpu_ws_128x128; do
    for search in none edp; do
        for prog in conv matmul; do
            expect_status 0 "$TEC" -O2 --accel "$srcdir/accel/configs/$cfg.cfg" --search $search \
                --accel-report=r.csv --accel-trace=t.json "$srcdir/examples/$prog.te"
            "$PYTHON" - "$cfg $search $prog" <<'X' || fail "$cfg --search $search $prog: the trace's words differ from the report's"
import csv, json, sys
rows = [r for r in csv.DictReader(open("r.csv")) if r["kind"] == "gemm"]
events = json.load(open("t.json"))["traceEvents"]
folds = [e["args"] for e in events if e["ph"] == "X" and e["tid"] == 2]
writes = [e["args"]["dram_words"] for e in events
          if e["ph"] == "X" and e.get("cat") == "dram write"]
for key, col in (("dram_ifmap", "dram_reads_ifmap"), ("dram_filter", "dram_reads_filter"),
                 ("dram_ofmap", "dram_reads_ofmap"), ("dram_write_ofmap", "dram_writes_ofmap")):
    got = sum(f[key] for f in folds)
    want = sum(int(r[col]) for r in rows)
    assert got == want, (sys.argv[1], key, got, want)
assert sum(writes) == sum(int(r["dram_writes_ofmap"]) for r in rows) > 0, sys.argv[1]
X
        done
    done
done
exit 0
