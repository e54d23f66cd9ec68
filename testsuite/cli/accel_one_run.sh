# One command, one modeled run: with --profile --accel (which searches the
# tiling for the least EDP unless --search says otherwise), the printed
# summary, the --accel-report JSON and CSV, the --accel-trace and the
# sweep's row for the config's own shape all give the same cycles and
# energy, and each says which tiling it describes.  examples/matmul.te is a
# case where the EDP search finds a better tiling than the untiled default.
. "$srcdir/testsuite/cli/lib.inc"
cfg=$srcdir/accel/configs/edge_os_32x32.cfg
mm=$srcdir/examples/matmul.te
for report in r.json r.csv; do
    expect_status 0 "$TEC" -O2 --profile --accel "$cfg" --accel-report=$report \
        --accel-trace=t.json --sweep --sweep-out sw --sweep-arrays 32x32 --sweep-dataflows os \
        --sweep-sram 64 "$mm"
    cp out out.$report
done
grep -q '^accelerator: .*; tiling searched for the least EDP (--search edp)$' out ||
    { cat out; fail "the summary does not say which tiling"; }
"$PYTHON" - <<'X' || fail "the outputs of one command disagree"
import csv, json, re
out = open("out.r.json").read()
m = re.search(r"^accelerator \S+ 32x32 os: (\d+) cycles .*?, ([0-9.]+) uJ, ([0-9.]+) us", out, re.M)
assert m, out
cycles, uj = int(m.group(1)), float(m.group(2))
r = json.load(open("r.json"))
assert r["search"] == "edp", r["search"]
assert r["total"]["total_cycles"] == cycles, (r["total"]["total_cycles"], cycles)
assert abs(r["total"]["energy_pj"] / 1e6 - uj) < 5e-4, (r["total"]["energy_pj"], uj)
assert r["total"]["tiling"] == "edp search"
assert all(l["tiling"] == "edp search" for l in r["layers"] if l["kind"] == "gemm"), r["layers"]
rows = {row["name"]: row for row in csv.DictReader(open("r.csv"))}
assert int(rows["total"]["total_cycles"]) == cycles
assert rows["total"]["tiling"] == "edp search"
# the untiled default would differ: the search changed something
gemm = [l for l in r["layers"] if l["kind"] == "gemm"]
assert any((l["tile_m"], l["tile_n"], l["tile_k"]) != (l["M"], l["N"], l["K"]) for l in gemm), gemm
events = json.load(open("t.json"))["traceEvents"]
layers = [e for e in events if e["ph"] == "X" and e["tid"] == 1]
assert sum(e["args"]["cycles"] for e in layers) == cycles
sweep = [row for row in csv.DictReader(open("sw/sweep.csv")) if row["kind"] == "total"]
assert len(sweep) == 1, sweep
assert int(sweep[0]["total_cycles"]) == cycles, (sweep[0]["total_cycles"], cycles)
assert abs(float(sweep[0]["energy_pj"]) - r["total"]["energy_pj"]) < 1e-3 * r["total"]["energy_pj"]
assert sweep[0]["tiling"] == "edp search"
X
# --search none: every output is the untiled model, and says so
expect_status 0 "$TEC" -O2 --profile --accel "$cfg" --search none --accel-report=n.json "$mm"
grep -q '; tiling untiled (--search none)$' out || { cat out; fail "no untiled summary"; }
"$PYTHON" - <<'X' || fail "the untiled outputs disagree"
import json, re
m = re.search(r"^accelerator \S+ 32x32 os: (\d+) cycles", open("out").read(), re.M)
r = json.load(open("n.json"))
assert r["search"] == "none" and r["total"]["tiling"] == "untiled", r["total"]
assert r["total"]["total_cycles"] == int(m.group(1))
X
exit 0
