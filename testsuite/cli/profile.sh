# tec --profile: the report's numbers against hand-computed ones, the report
# files (CSV, JSON, trace), repeats, padding, the interpreter path, run-time
# counters against the analysis, calibration, plots and usage errors.
. "$srcdir/testsuite/cli/lib.inc"
mm=$srcdir/examples/matmul.te
mlp=$srcdir/examples/mlp.te

# matmul.te: M = 128, K = 256, N = 64.  MACs = M*N*K = 2097152, FLOPs twice
# that; no parameters (A and B are inputs); the output C is 128*64 floats.
# -O1 runs the kernel as written (-O2 schedules it: see below).
expect_status 0 "$TEC" -O1 --profile "$mm" --report=mm.json --report=mm.csv --trace=mm-trace.json
grep -q '^C: f32\[128, 64\]' out || fail "no output summary"
grep -q '^layer ' out || fail "no report table"
"$PYTHON" - <<'PY' || fail "matmul JSON report"
import json
r = json.load(open("mm.json"))
t = r["totals"]
assert r["network"] == "matmul", r["network"]
assert t["macs"] == 128 * 64 * 256, t["macs"]
assert t["flops"] == 2 * 128 * 64 * 256, t["flops"]
assert t["params"] == 0 and t["param_bytes"] == 0, t
assert t["activation_bytes"] == 128 * 64 * 4, t["activation_bytes"]
assert t["time_us"] > 0, t["time_us"]
assert len(r["layers"]) == 1, r["layers"]
l = r["layers"][0]
for k in ["name", "op", "group", "input_shapes", "output_shape", "macs", "flops", "params",
          "param_bytes", "activation_bytes", "load_bytes", "store_bytes", "dram_read_bytes",
          "dram_write_bytes", "time_us", "gflops", "intensity", "bound"]:
    assert k in l, k
assert l["op"] == "matmul" and l["group"] is None, l
assert l["input_shapes"] == ["f32[128, 256]", "f32[256, 64]"], l["input_shapes"]
assert l["output_shape"] == "f32[128, 64]", l["output_shape"]
assert l["macs"] == t["macs"]
# loads: A, B and the accumulator once per MAC; stores: one per MAC + inits
assert l["load_bytes"] == 3 * 4 * 128 * 64 * 256, l["load_bytes"]
assert l["store_bytes"] == 4 * (128 * 64 * 256 + 128 * 64), l["store_bytes"]
# cold cache, everything fits: A and B read once, C written once
assert l["dram_read_bytes"] == 4 * (128 * 256 + 256 * 64), l["dram_read_bytes"]
assert l["dram_write_bytes"] == 4 * 128 * 64, l["dram_write_bytes"]
PY
# -O2's automatic schedule adds staging copies (packed panels, the
# accumulator tile), which the loads and stores count; the work is the same.
expect_status 0 "$TEC" -O2 --profile "$mm" --report=mm-o2.json
"$PYTHON" - <<'PY' || fail "matmul JSON report at -O2"
import json
l = json.load(open("mm-o2.json"))["layers"][0]
assert l["macs"] == 128 * 64 * 256 and l["flops"] == 2 * 128 * 64 * 256, l
assert l["load_bytes"] >= 3 * 4 * 128 * 64 * 256, l["load_bytes"]
assert l["dram_write_bytes"] == 4 * 128 * 64, l["dram_write_bytes"]
PY
head -1 mm.csv >header
printf '%s\n' "kind,name,op,group,input_shapes,output_shape,macs,flops,params,state,param_bytes,activation_bytes,load_bytes,store_bytes,dram_read_bytes,dram_write_bytes,time_us,gflops,intensity,attainable_gflops,bound,roof_pct,approx,activation_memory_bytes,activation_memory_unplanned_bytes" >want
diff -u want header || fail "CSV header"
grep -q '^layer,C,matmul,,' mm.csv || fail "no CSV row for layer C"
"$PYTHON" - <<'PY' || fail "trace"
import json
t = json.load(open("mm-trace.json"))
slices = [e for e in t["traceEvents"] if e["ph"] == "X"]
# --profile times the median of 5 runs by default: one slice per run
assert len(slices) == 5, slices
assert all(e["name"] == "C" and e["dur"] > 0 for e in slices), slices
assert sorted(e["args"]["run"] for e in slices) == [1, 2, 3, 4, 5], slices
PY

# mlp.te: two linear layers and a relu under block "net"; the relu fuses
# into the first linear layer's kernel, and --repeat 3 gives one trace slice
# per kernel (net.fc1+act, net.fc2) per measured run.  Parameters: 784*128 + 128 +
# 128*10 + 10 = 101770, as PyTorch counts them.
expect_status 0 "$TEC" -O2 --profile --repeat 3 "$mlp" --report=mlp.json --trace=mlp-trace.json
"$PYTHON" - <<'PY' || fail "mlp report"
import json
r = json.load(open("mlp.json"))
assert r["runs"] == 3, r["runs"]
assert r["totals"]["params"] == 101770, r["totals"]["params"]
assert r["totals"]["macs"] == 8 * 784 * 128 + 8 * 128 * 10, r["totals"]["macs"]
assert [l["name"] for l in r["layers"]] == ["net.fc1", "net.act", "net.fc2"], r["layers"]
assert [b["name"] for b in r["blocks"]] == ["net"], r["blocks"]
assert r["blocks"][0]["macs"] == r["totals"]["macs"]
t = json.load(open("mlp-trace.json"))
slices = [e for e in t["traceEvents"] if e["ph"] == "X"]
assert len(slices) == 6, len(slices)
assert sorted({s["name"] for s in slices}) == ["net.fc1+act", "net.fc2"], sorted({s["name"] for s in slices})
assert sorted({s["args"]["run"] for s in slices}) == [1, 2, 3]
PY

# The interpreter calls the same hooks: the same counts.
expect_status 0 "$TEC" --interp --profile "$mm" --report=interp.json
"$PYTHON" -c "
import json
a, b = json.load(open('mm.json')), json.load(open('interp.json'))
assert a['totals']['macs'] == b['totals']['macs'] and a['totals']['flops'] == b['totals']['flops']
assert b['totals']['time_us'] > 0
" || fail "interpreted profile"

# Counters inside the loop nests (instrument-dyn) must agree with the
# static analysis; tec checks every site and exits 1 on a disagreement.
expect_status 0 "$TEC" -O2 --profile --passes=simplify,flatten,instrument-dyn "$srcdir/examples/conv.te"
grep -q 'error' err && { cat err; fail "dynamic counts disagree"; }

# --pad-to 48: M 128 -> 144, N 64 -> 96, K 256 -> 288.
expect_status 0 "$TEC" -O2 --pad-to 48 "$mm" --report=pad.json
"$PYTHON" -c "
import json
t = json.load(open('pad.json'))['totals']
assert t['macs'] == 144 * 96 * 288, t['macs']
assert t['activation_bytes'] == 144 * 96 * 4, t['activation_bytes']
" || fail "padding"

# --repeat without --profile: a median time, no table.
expect_status 0 "$TEC" -O2 --repeat 3 "$mm"
grep -q '^time: median of 3 runs after a warm-up: ' out || fail "--repeat timing"
grep -q '^layer ' out && fail "--repeat alone printed a profile"

# Hardware counters: columns, or a note saying why not.
expect_status 0 "$TEC" -O2 --counters "$mm"
grep -q 'cycles' out || grep -q '^hardware counters unavailable: perf_event_open: ' out ||
    fail "--counters gave neither counters nor a reason"

# The roofline: calibrate once (cached), then every layer has a bound.
# Calibration keeps the best of repeated runs; when they disagree (a busy
# machine, as a shared test machine may be) it warns and stores nothing,
# and the test stores what it printed instead.
cal_json() {   # cal_json PEAKx BWx FILE: calibrate's printed numbers, scaled, as its cache file
    mkdir -p "$(dirname "$3")"
    "$PYTHON" - "$1" "$2" "$3" <<'PY'
import json, re, sys
t = open("calibrate.out").read()
cpu, threads, llc = re.search(r"^machine: (.*), (\d+) threads, last-level cache ([\d.]+) MiB", t, re.M).groups()
isa, p1, pa = re.search(r"^peak FP32 \((\w+) FMA\): ([\d.]+) GFLOP/s on 1 thread, ([\d.]+)", t, re.M).groups()
arr, b1, ba = re.search(r"^memory bandwidth \(triad, 3 x (\d+) MiB\): ([\d.]+) GB/s on 1 thread, ([\d.]+)", t, re.M).groups()
k, m = float(sys.argv[1]), float(sys.argv[2])
json.dump({"cpu": cpu, "isa": isa, "threads": int(threads), "peak_gflops_1": float(p1) * k,
           "peak_gflops_all": float(pa) * k, "bandwidth_gbs_1": float(b1) * m,
           "bandwidth_gbs_all": float(ba) * m, "llc_bytes": int(float(llc) * 2**20),
           "array_bytes": int(arr) * 2**20}, open(sys.argv[3], "w"))
PY
}
expect_status 0 "$TEC" --calibrate
cp out calibrate.out
grep -q '^peak FP32 ' out || fail "calibrate output"
cal=$XDG_CACHE_HOME/tec/calibration.json
if grep -q '^tec: warning: calibration not stored: .*run .tec --calibrate. again when it is idle$' err
then
    [ -f "$cal" ] && fail "a calibration whose runs disagree was stored"
    cal_json 1 1 "$cal" || fail "cannot write the calibration"
else
    grep -v "^tec: calibrate: " err && fail "calibrate: unexpected messages"
    [ -f "$cal" ] || fail "no cached calibration"
fi
expect_status 0 "$TEC" -O2 --profile "$mlp" --report=roof.json
"$PYTHON" -c "
import json
r = json.load(open('roof.json'))
assert r['machine']['calibrated'] and r['machine']['peak_gflops'] > 0
# the timed units: layers of their own and fused groups (net.fc1+act)
for l in [l for l in r['layers'] if not l['group']] + r['groups']:
    assert l['bound'] in ('memory', 'compute'), l
    assert l['intensity'] > 0 and l['gflops'] > 0, l
" || fail "roofline fields"
# The default table fits 120 columns; a layer above a (too low) roof is
# marked, with a note saying to calibrate again (a peak far below, a
# bandwidth far above this machine's: every layer compute-bound).
awk '/^layer /, /^mlp / { if (length($0) > 120) { print; bad = 1 } } END { exit bad }' out ||
    fail "the table is wider than 120"
# (which layer is slowest is a measurement: on a busy machine a waking
# thread can make the tiny fc2 slower than fc1, so only the line's form)
grep -Eq '^slowest layers: net\.(fc1\+act|fc2) [0-9.]+ us \([0-9.]+%\)$' out || { cat out; fail "no slowest layers"; }
# --columns= picks the table's columns, in its order; all is every one.
expect_status 0 "$TEC" -O2 --columns=flops,layer,time% "$mlp"
grep -q '^ *FLOPs  layer  *time%$' out || { cat out; fail "--columns=flops,layer,time%"; }
grep -q '^ *1.61M    net.fc1+act  *[0-9.]*$' out || { cat out; fail "--columns rows"; }
expect_status 0 "$TEC" -O2 --columns=all "$mlp"
grep -q '^layer  *op  *input  *output  *MACs  *FLOPs  *params  *param mem  *act mem  *loads  *stores  *DRAM rd  *DRAM wr  *time(us)  *time%  *GFLOP/s  *FLOP/B  *roof%  *bound  *cycles  *instrs  *LLC miss$' out ||
    { cat out; fail "--columns=all"; }
expect_status 2 "$TEC" --columns=layer,speed "$mlp"
grep -q "^tec: error: --columns: unknown column 'speed' (use all or a list of layer op input " err ||
    { cat err; fail "--columns=speed"; }
cal_json 0.0001 1000 low/tec/calibration.json || fail "cannot write the low calibration"
XDG_CACHE_HOME=$PWD/low expect_status 0 "$TEC" -O2 --profile "$mlp"
grep -Eq '^  net.fc1\+act .* [0-9]+!  +compute$' out || { cat out; fail "no ! above the roof"; }
grep -q '^! marks layers above their roof: .*calibration is lower than' out ||
    { cat out; fail "no note above the roof"; }

# Plots (when gnuplot is installed).
if command -v gnuplot >/dev/null 2>&1; then
    expect_status 0 "$TEC" -O2 --plot=plots "$mlp"
    for c in macs memory dram_reads dram_writes time roofline; do
        for e in png svg; do
            [ -s "plots/$c.$e" ] || fail "no plots/$c.$e"
        done
    done
    head -c 8 plots/macs.png | od -An -c | grep -q 'P   N   G' || fail "macs.png is not a PNG"
    grep -q '<svg' plots/roofline.svg || fail "roofline.svg is not SVG"
fi

# `param` weights are parameters, `state` weights are not (PyTorch's
# parameters() and buffers); param_bytes has both.
cat >bn.te <<'EOF'
def bn(x: f32[N, C]) -> y: f32[N, C] {
    param weight: f32[C]
    state running_var: f32[C] = uniform(0.5, 1.5)
    y[n, c] = x[n, c] * weight[c] / sqrt(running_var[c])
}
input x: f32[2, 3]
y = bn(x)
output y
EOF
expect_status 0 "$TEC" --profile bn.te --report=bn.json --report=bn.csv
[ "$("$PYTHON" -c "import json; t = json.load(open('bn.json'))['totals']; print(t['params'], t['state'], t['param_bytes'])")" = "3 3 24" ] ||
    fail "bn.json: params, state and param_bytes are not 3 3 24"
grep -q '^layer,y,bn,,"f32\[2, 3\]","f32\[2, 3\]",0,18,3,3,24,' bn.csv || { cat bn.csv; fail "bn.csv"; }

# --no-run: the same static counts as a run, no times, no kernel compiled.
expect_status 0 env CC=/nonexistent/cc "$TEC" -O1 --profile --no-run "$mm" --report=static.json
grep -q '^not run (--no-run): static counts, no times' out || { cat out; fail "no --no-run note"; }
"$PYTHON" - <<'PY' || fail "--no-run JSON differs from the run's"
import json
a, b = json.load(open("mm.json")), json.load(open("static.json"))
for k in ["macs", "flops", "params", "param_bytes", "activation_bytes", "load_bytes",
          "store_bytes", "dram_read_bytes", "dram_write_bytes"]:
    assert a["totals"][k] == b["totals"][k], k
assert b["totals"]["time_us"] is None and b["runs"] == 0, b["totals"]
PY
expect_status 2 "$TEC" --no-run "$mm"
expect_err "tec: error: --no-run needs --profile (or --report, --plot, --pad-to) or --sched
tec: try 'tec --help'"

# Usage errors.
expect_status 2 "$TEC" --report=out.txt "$mm"
expect_err "tec: error: --report=out.txt: the file name must end in .csv or .json
tec: try 'tec --help'"
expect_status 2 "$TEC" --repeat 0 "$mm"
expect_err "tec: error: --repeat expects a count from 1 to 1000000, got '0'
tec: try 'tec --help'"
expect_status 2 "$TEC" --pad-to x "$mm"
expect_err "tec: error: --pad-to expects a positive size, got 'x'
tec: try 'tec --help'"
expect_status 1 "$TEC" --trace=no/such/dir/t.json "$mm"
grep -q "^tec: error: cannot write no/such/dir/t.json: No such file or directory" err ||
    { cat err; fail "unwritable trace"; }

# Layers fused into one kernel (conv + batchnorm + relu at -O2) keep their
# own rows with the tensors the program declared for them — not the
# kernel's tiles, padded copies or tables made at load — and the same
# MACs, parameters and activation bytes as unfused at -O1.
cat >fused.te <<EOT
import "$srcdir/lib/nn.te"
input x: f32[1, 8, 6, 6]
c = conv2d(x, 64, 3, pad=1) as "conv"
b = batchnorm(c) as "bn"
y = relu(b) as "relu"
output y
EOT
expect_status 0 "$TEC" -O1 --profile --no-run fused.te --report=fused-o1.json
expect_status 0 "$TEC" -O2 --profile --no-run fused.te --report=fused-o2.json
"$PYTHON" - <<'PY' || fail "fused members' rows differ from the unfused layers'"
import json
o1 = {l["name"]: l for l in json.load(open("fused-o1.json"))["layers"]}
o2 = {l["name"]: l for l in json.load(open("fused-o2.json"))["layers"]}
assert set(o1) == {"conv", "bn", "relu"}, sorted(o1)
assert all(o2[n]["group"] == "conv+bn+relu" for n in o1), [(n, o2[n]["group"]) for n in o1]
for n in o1:
    for k in ["input_shapes", "output_shape", "macs", "params", "activation_bytes"]:
        assert o1[n][k] == o2[n][k], (n, k, o1[n][k], o2[n][k])
assert o2["bn"]["input_shapes"] == ["f32[1, 64, 6, 6]"], o2["bn"]
assert o2["bn"]["output_shape"] == "f32[1, 64, 6, 6]", o2["bn"]
PY
echo ok
