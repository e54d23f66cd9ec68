# tec --accel-trace writes the accelerator's timeline as a Chrome/Perfetto
# trace: it parses as JSON, every event has the trace-event fields, the
# folds of every GEMM layer are there with their SRAM and DRAM words, the
# layers follow one another and end at the report's total cycles, and the
# DRAM words of the folds add up to the report's.
. "$srcdir/testsuite/cli/lib.inc"
cfg=$srcdir/accel/configs/edge_os_32x32.cfg
expect_status 0 "$TEC" -O1 --accel "$cfg" --accel-report=r.csv --accel-trace=t.json \
    "$srcdir/examples/conv.te"
"$PYTHON" - <<'X' || fail "trace does not check"
import csv, json
events = json.load(open("t.json"))["traceEvents"]
meta = [e for e in events if e["ph"] == "M"]
spans = [e for e in events if e["ph"] == "X"]
assert {m["args"]["name"] for m in meta if m["name"] == "thread_name"} == \
    {"layers", "array", "DRAM ifmap", "DRAM filter", "DRAM ofmap"}, meta
for e in spans:
    assert {"name", "cat", "ph", "ts", "dur", "pid", "tid", "args"} <= set(e), e
    assert e["dur"] >= 0 and e["ts"] >= 0, e
rows = {r["name"]: r for r in csv.DictReader(open("r.csv"))}
layers = [e for e in spans if e["tid"] == 1]
assert [e["name"] for e in layers] == [n for n in rows if n != "total"], layers
cycle = 0
for e in layers:
    assert e["args"]["cycle"] == cycle, (e, cycle)
    cycle += e["args"]["cycles"]
    assert e["args"]["cycles"] == int(rows[e["name"]]["total_cycles"]), e
assert cycle == int(rows["total"]["total_cycles"])
folds = [e for e in spans if e["tid"] == 2]
gemm = rows["conv"]
assert len(folds) == int(gemm["folds"]) == 8, len(folds)
assert [f["args"]["fold"] for f in folds] == list(range(8))
for op in ("ifmap", "filter"):
    assert sum(f["args"]["sram_" + op] for f in folds) == int(gemm["sram_reads_" + op]), op
    assert sum(f["args"]["dram_" + op] for f in folds) == int(gemm["dram_reads_" + op]), op
# a fold computes 2R + C + T - 2 = 64 + 32 + 27 - 2 = 121 cycles (OS, K = 27)
assert all(f["args"]["cycles"] == 121 for f in folds)
assert all(b["args"]["cycle"] >= a["args"]["cycle"] + 121 for a, b in zip(folds, folds[1:]))
X
# usage errors
expect_status 2 "$TEC" --accel "$cfg" --accel-trace= "$srcdir/examples/conv.te"
expect_err "tec: error: --accel-trace needs a file name"
expect_status 1 "$TEC" --accel "$cfg" --accel-trace=no-such-dir/t.json "$srcdir/examples/conv.te"
grep -q "cannot write no-such-dir/t.json" err || fail "no error for an unwritable trace"
