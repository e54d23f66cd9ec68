# tools/tec-sweep: the CSV numbers against tec's own reports, hand-computed
# MACs, padding that only ever adds work, the cross product, the accelerator
# and --run columns, charts (when gnuplot exists) and the error cases.
. "$srcdir/testsuite/cli/lib.inc"
mm=$srcdir/examples/matmul.te
conv=$srcdir/examples/conv.te
cfg=$srcdir/accel/configs/edge_os_32x32.cfg
sweep() { "$PYTHON" "$srcdir/tools/tec-sweep" --tec "$TEC" "$@"; }

# compare_rows SWEEP_CSV 'COND' REPORT.json: the sweep.csv rows where COND
# holds (a Python expression over the row r) are, column for column, tec's
# layers and totals in REPORT.json.
compare_rows() {
    "$PYTHON" - "$@" <<'PY'
import csv, json, sys
path, cond, report = sys.argv[1:]
rows = [r for r in csv.DictReader(open(path)) if eval(cond)]
rep = json.load(open(report))
# the CSV lists a fused group's row before its members, as the table does
want, last = [], None
for l in rep["layers"]:
    g = [x for x in rep["groups"] if x["name"] == l["group"]] if l.get("group") else []
    if g and l["group"] != last:
        want.append(("group", g[0]))
    last = l.get("group")
    want.append(("layer", l))
want += [("total", rep["totals"])]
assert [(r["kind"], r["name"]) for r in rows] == [(k, w["name"]) for k, w in want], \
    ([(r["kind"], r["name"]) for r in rows], [(k, w["name"]) for k, w in want])
for r, (kind, w) in zip(rows, want):
    for key, v in w.items():
        if isinstance(v, bool) or v is None or isinstance(v, (list, str)):
            continue
        got = float(r[key])
        assert abs(got - v) <= 1e-6 * abs(v), (r["name"], key, got, v)
        if isinstance(v, int):
            assert r[key] == str(v), (r["name"], key, r[key], v)
PY
}

# --- a -D sweep: matmul.te at M = 32, 64, 256 (K = 256, N = 64) --------------
expect_status 0 sweep -D M=32,64,256 "$mm" --out mm --no-plot
grep -q '^3 points; wrote sweep.csv, totals.csv to mm$' out || { cat out; fail "summary line"; }
head -1 mm/sweep.csv | grep -q '^M,kind,name,op,group,input_shapes,output_shape,macs,flops,' ||
    fail "sweep.csv header: $(head -1 mm/sweep.csv)"
for M in 32 256; do
    expect_status 0 "$TEC" -O2 --profile --no-run -D M=$M "$mm" --report=mm$M.json
    compare_rows mm/sweep.csv "r['M'] == '$M'" mm$M.json || fail "sweep.csv at M=$M"
done
"$PYTHON" - <<'PY' || fail "matmul sweep numbers"
import csv
rows = list(csv.DictReader(open("mm/sweep.csv")))
assert [(r["M"], r["kind"]) for r in rows] == [
    ("32", "layer"), ("32", "total"), ("64", "layer"), ("64", "total"),
    ("256", "layer"), ("256", "total")], rows
for r in rows:
    M = int(r["M"])
    assert int(r["macs"]) == M * 256 * 64, r
    assert int(r["activation_bytes"]) == M * 64 * 4, r
totals = list(csv.DictReader(open("mm/totals.csv")))
assert totals == [r for r in rows if r["kind"] == "total"], totals
PY
[ ! -e mm/total_macs.png ] || fail "--no-plot drew charts"
[ -s mm/points/M-32.csv ] && [ -s mm/points/M-32.txt ] || fail "no kept point report"

# --- a --pad-to sweep: conv.te (M = 256, N = 16, K = 27) ---------------------
expect_status 0 sweep --pad-to 1,4,8,16,64 "$conv" --out pad --no-plot
expect_status 0 "$TEC" -O2 --profile --no-run --pad-to 16 "$conv" --report=pad16.json
compare_rows pad/sweep.csv "r['pad_to'] == '16'" pad16.json || fail "sweep.csv at pad_to=16"
"$PYTHON" - <<'PY' || fail "padding numbers"
import csv
rows = list(csv.DictReader(open("pad/sweep.csv")))
at = {}
for r in rows:
    at.setdefault(int(r["pad_to"]), {})[(r["kind"], r["name"])] = r
def up(x, n): return (x + n - 1) // n * n
for n, row in at.items():
    conv = row[("layer", "conv")]
    assert int(conv["macs"]) == up(256, n) * up(16, n) * up(27, n), (n, conv["macs"])
    assert int(conv["params"]) == up(16, n) * up(27, n), (n, conv["params"])
# Padding never removes work or memory: every row at every N against N = 1,
# and along 1 | 4 | 8 | 16 | 64 every step grows or stays.
order = [1, 4, 8, 16, 64]
for a, b in zip(order, order[1:]):
    for key in at[1]:
        for col in ("macs", "flops", "params", "activation_bytes"):
            assert int(at[b][key][col]) >= int(at[a][key][col]), (key, col, a, b)
            assert int(at[b][key][col]) >= int(at[1][key][col]), (key, col, b)
assert int(at[64][("total", "conv")]["macs"]) > int(at[1][("total", "conv")]["macs"])
PY

# --- the cross product, with the accelerator's columns ----------------------
expect_status 0 sweep -D H=16,32 --pad-to 1,16 "$conv" --accel "$cfg" --out both --no-plot
expect_status 0 "$TEC" -O2 --profile --no-run -D H=32 --pad-to 16 --accel "$cfg" "$conv" \
    --report=both.json --accel-report=both-accel.json
compare_rows both/sweep.csv "r['H'] == '32' and r['pad_to'] == '16'" both.json ||
    fail "sweep.csv at H=32 pad_to=16"
"$PYTHON" - <<'PY' || fail "cross product with --accel"
import csv, json
rows = list(csv.DictReader(open("both/totals.csv")))
assert [(r["H"], r["pad_to"]) for r in rows] == [("16", "1"), ("16", "16"), ("32", "1"),
                                                  ("32", "16")], rows
acc = json.load(open("both-accel.json"))
t = rows[3]
assert int(t["acc_cycles"]) == acc["total"]["total_cycles"], (t["acc_cycles"], acc["total"])
assert int(t["acc_dram_reads"]) == acc["total"]["dram_reads"]
assert abs(float(t["acc_energy_pj"]) - acc["total"]["energy_pj"]) <= 1e-6 * acc["total"]["energy_pj"]
# a fused group has the accelerator columns of its kernel; its members none
layers = [r for r in csv.DictReader(open("both/sweep.csv"))
          if r["H"] == "32" and r["pad_to"] == "16" and r["kind"] != "total" and r["acc_cycles"] != ""]
assert sum(int(r["acc_cycles"]) for r in layers) == acc["total"]["total_cycles"], layers
for r in rows:
    assert int(r["acc_cycles"]) > 0 and 0 < float(r["acc_utilization"]) <= 1, r
PY

# mlp.te: the model splits each kernel into a GEMM (net.fc2) and a vector
# part (net.fc2.vector); the row net.fc2 carries both.  net.act fuses into
# net.fc1's kernel: the group's row net.fc1+act carries its kernel's parts,
# its members' rows none.
expect_status 0 sweep --pad-to 1,8 "$srcdir/examples/mlp.te" --accel "$cfg" --out mlp --no-plot
expect_status 0 "$TEC" -O2 --profile --no-run --pad-to 8 --accel "$cfg" "$srcdir/examples/mlp.te" \
    --report=mlp.json --accel-report=mlp-accel.json
"$PYTHON" - <<'PY' || fail "accelerator layers of mlp"
import csv, json
acc = {l["name"]: l for l in json.load(open("mlp-accel.json"))["layers"]}
rows = {r["name"]: r for r in csv.DictReader(open("mlp/sweep.csv")) if r["pad_to"] == "8"}
assert sorted(rows) == ["mlp", "net.act", "net.fc1", "net.fc1+act", "net.fc2"], sorted(rows)
for name in ("net.fc1+act", "net.fc2"):
    parts = [acc[name], acc[name + ".vector"]]
    r = rows[name]
    assert int(r["acc_cycles"]) == sum(p["total_cycles"] for p in parts), (name, r["acc_cycles"])
    assert int(r["acc_dram_writes"]) == sum(p["dram_writes"] for p in parts), name
    util = sum(p["macs"] for p in parts) / (int(r["acc_cycles"]) * 32 * 32)
    assert abs(float(r["acc_utilization"]) - util) <= 1e-6, (name, r["acc_utilization"], util)
assert rows["net.fc1"]["acc_cycles"] == rows["net.act"]["acc_cycles"] == ""
PY

# --- --run: measured times --------------------------------------------------
expect_status 0 sweep -D M=16,32 --run --repeat 2 "$mm" --out run --no-plot
"$PYTHON" -c "
import csv
rows = list(csv.DictReader(open('run/sweep.csv')))
assert len(rows) == 4 and all(float(r['time_us']) > 0 for r in rows), rows
" || fail "--run times"

# --- charts -----------------------------------------------------------------
if command -v gnuplot >/dev/null 2>&1; then
    expect_status 0 sweep -D M=16,64,256 "$mm" --out mm
    for c in total_macs total_activation total_dram_reads total_dram_writes layers_macs \
             layers_activation; do
        for ext in png svg; do
            [ -s mm/$c.$ext ] || fail "no chart mm/$c.$ext"
        done
    done
    [ -s mm/sweep.gp ] && [ -s mm/totals.dat ] && [ -s mm/layers_macs.dat ] ||
        fail "chart data or script missing"
    [ ! -e mm/total_time.png ] || fail "a time chart without --run"
    grep -q 'set logscale x 2' mm/sweep.gp || fail "M = 16..256 spans a decade: log x"
    # matmul has no parameters: no parameter chart
    [ ! -e mm/total_params.png ] || fail "a chart of zeros"
    expect_status 0 sweep -D H=16,32 --pad-to 1,16 "$conv" --accel "$cfg" --out both
    for c in total_acc_cycles total_acc_energy layers_acc_cycles total_params; do
        [ -s both/$c.png ] && [ -s both/$c.svg ] || fail "no chart both/$c"
    done
    grep -q "title 'pad_to=16'" both/sweep.gp || fail "no line per pad_to"
fi
GNUPLOT=/nonexistent/gnuplot expect_status 1 sweep -D M=32 "$mm" --out nogp
grep -q '^tec-sweep: error: cannot run /nonexistent/gnuplot: .*--no-plot' err ||
    { cat err; fail "missing gnuplot"; }
[ -s nogp/sweep.csv ] || fail "no CSV without gnuplot"

# --- tec failures: the point, its command line and tec's message, status 1 ---
expect_status 1 sweep -D M=64,0,128 -j 1 "$mm" --out bad --no-plot
grep -q '^tec-sweep: error: point M=0: tec failed (exit status 1):$' err || { cat err; fail "failure line"; }
grep -q "^  command: .*tec -O2 --profile --no-run -D M=0 --report=bad/points/M-0.csv .*matmul.te\$" err ||
    { cat err; fail "failing command line"; }
grep -q "matmul.te:17:14: error: dimension 0 of input A is 0" err || { cat err; fail "tec's message"; }
grep -q 'M=64\|M=128' err && fail "a good point reported as failing"
[ ! -e bad/sweep.csv ] || fail "a CSV from a failed sweep"
expect_status 1 sweep -D Q=1 "$mm" --out bad --no-plot
grep -q "tec: error: -D Q=1: the program has no 'let Q'" err || { cat err; fail "unknown -D"; }
expect_status 1 sweep -D M=32 "$mm" --out bad --no-plot -- --bogus
grep -q "exit status 2" err && grep -q -- "--bogus" err || { cat err; fail "extra tec args"; }

# --- bad arguments: status 2 and the usage line ------------------------------
for args in "$mm" "-D M $mm" "-D M=1,,2 $mm" "-D M=x $mm" "-D M=1,1 $mm" "--pad-to 0 $mm" \
            "--pad-to 8.5 $mm" "-D M=1 -D M=2 $mm" "--repeat 3 -D M=1 $mm" "-D M=1 no-such.te" \
            "-D M=1 -O7 $mm" "-D M=1 --top 0 $mm" "-D M=1 --stack block $mm" "-D M=1"; do
    expect_status 2 sweep $args
    grep -q '^usage: tec-sweep' err && grep -q '^tec-sweep: error: ' err ||
        { cat err; fail "usage error for: $args"; }
done
expect_status 2 "$PYTHON" "$srcdir/tools/tec-sweep" --tec /nonexistent -D M=1 "$mm"
grep -q 'not an executable file' err || fail "--tec check"
exit 0
