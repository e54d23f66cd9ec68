# Operator scheduling (--sched, --devices, doc/scheduling.md): usage and
# config errors; GoogLeNet's DAG (every Inception block forks into four
# paths that join at its concat); every strategy's timeline is a valid
# schedule (each call after its predecessors and its transfers, one call at
# a time per device) on CPU workers, measured, and with an accelerator,
# simulated; the simulated CPU + accelerator makespan of a hand-checkable
# graph; a failing call stops the run.
. "$srcdir/testsuite/cli/lib.inc"
g=$srcdir/examples/googlenet.te
cfg=$srcdir/accel/configs/edge_os_32x32.cfg

expect_status 2 "$TEC" --sched=fast "$g"
expect_err "tec: error: unknown --sched=fast (use serial, op, path, dynamic or dynamic-cp)
tec: try 'tec --help'"
expect_status 2 "$TEC" --devices=gpu:1 "$g"
expect_err "tec: error: --devices: unknown device 'gpu:1' (use cpu:N for N cores or acc:FILE.cfg for a modeled accelerator)
tec: try 'tec --help'"
expect_status 2 "$TEC" --devices=cpu:2,cpu:1 "$g"
expect_err "tec: error: --devices: 'cpu:1': every cpu device must have the same number of cores (the kernels' parallel loops share one thread count)
tec: try 'tec --help'"
expect_status 2 "$TEC" --sched=op --profile "$g"
expect_status 2 "$TEC" --dump-graph=g.png "$g"
expect_err "tec: error: --dump-graph=g.png: the file must end in .dot or .svg
tec: try 'tec --help'"
printf '[general]\nrun_name = broken\n' >broken.cfg
expect_status 1 "$TEC" --sched=op --devices=cpu:1,acc:broken.cfg --no-run "$g"
grep -q '^tec: error: --devices: broken.cfg: error: ' err || { cat err; fail "no config error"; }

# GoogLeNet's structure, from the static costs.
expect_status 0 "$TEC" -O2 --sched=op --devices=cpu:1,cpu:1 --no-run --dump-graph=g.dot "$g"
grep -q '^graph: 72 calls, .* fork-join paths' out || { cat out; fail "no graph line"; }
# FILE.svg through Graphviz's dot (./bootstrap installs it), or a clear error.
if command -v dot >/dev/null 2>&1; then
    expect_status 0 "$TEC" -O2 --sched=op --devices=cpu:1,cpu:1 --no-run --dump-graph=g.svg "$g"
    grep -q '<svg' g.svg || fail "--dump-graph=g.svg wrote no SVG"
else
    expect_status 1 "$TEC" -O2 --sched=op --devices=cpu:1,cpu:1 --no-run --dump-graph=g.svg "$g"
    grep -q 'install Graphviz, or write FILE.dot' err || { cat err; fail "no hint to install dot"; }
fi
"$PYTHON" - <<'PY' || fail "googlenet DAG"
import re
names, preds = {}, {}
for line in open("g.dot"):
    m = re.match(r'\s*c(\d+) \[label="([^\\]+)\\n', line)
    if m:
        names[int(m.group(1))] = m.group(2)
    m = re.match(r'\s*c(\d+) -> c(\d+)', line)
    if m:
        preds.setdefault(int(m.group(2)), []).append(int(m.group(1)))
by = {v: k for k, v in names.items()}
blocks = ["3a", "3b", "4a", "4b", "4c", "4d", "4e", "5a", "5b"]
for b in blocks:
    # The four branches write their parts of the block's output in place
    # (no concat call: passes/fuse.c), and each starts from the block's
    # input alone: one call (a pool) or the previous block's four branches.
    assert "inception%s.cat" % b not in by, b
    firsts = [[c for c, n in names.items() if n.startswith("inception%s.%s" % (b, br))][0]
              for br in ("branch1", "branch2.0", "branch3.0", "branch4.0")]
    src = sorted(preds[firsts[0]])
    assert all(sorted(preds[f]) == src for f in firsts), (b, [preds[f] for f in firsts])
    ends = sorted(names[p].split(".")[1] for p in src) if len(src) > 1 else []
    assert len(src) == 1 or ends == ["branch1", "branch2", "branch3", "branch4"], (b, ends)
PY

# check_timeline TRACE: the trace's timeline is a schedule.
check_timeline() {
    "$PYTHON" - "$1" <<'PY' || fail "$1: not a valid schedule"
import json, sys
t = json.load(open(sys.argv[1]))
calls = {e["args"]["call"]: e for e in t["traceEvents"] if e.get("cat") not in (None, "transfer") and e["ph"] == "X"}
eps = 0.01   # the trace prints microseconds with 3 decimals
for c, e in calls.items():
    for p in e["args"]["preds"]:
        pe = calls[p]
        assert e["ts"] + eps >= pe["ts"] + pe["dur"], (c, p)
    for o, f in calls.items():
        if o < c and f["tid"] == e["tid"]:
            assert e["ts"] + eps >= f["ts"] + f["dur"] or f["ts"] + eps >= e["ts"] + e["dur"], (c, o)
s = t["schedule"]
end = max(e["ts"] + e["dur"] for e in calls.values())
assert s["makespan_us"] + eps >= end, (s["makespan_us"], end)
if s["timeline"] == "simulated":
    # (a measured run's calls may run faster than their measured costs)
    assert abs(s["makespan_us"] - end) < eps
    assert s["makespan_us"] + eps >= max(s["critical_path_us"], s["work_per_device_us"])
assert sum(d["calls"] for d in s["devices"]) == len(calls)
PY
}
for s in serial op path dynamic dynamic-cp; do
    expect_status 0 "$TEC" -O2 --sched=$s --devices=cpu:1,cpu:1 --repeat 1 --sched-trace=$s.json "$g"
    grep -q "^schedule $s on 2 devices: measured" out || { cat out; fail "$s: no table"; }
    check_timeline $s.json
    expect_status 0 "$TEC" -O2 --sched=$s --devices=cpu:1,acc:$cfg --no-run --sched-trace=acc-$s.json "$g"
    check_timeline acc-$s.json
done

# A hand check: two equal independent matmuls joined by an add, on one CPU
# and one accelerator.  The accelerator takes a matmul in the model's time;
# the CPU's estimates come from the roof; the add waits for the transfer
# of the accelerator's result (64x256 f32 = 65536 bytes) over its bandwidth.
cat >two.te <<'TE'
import "nn.te"
input x: f32[64, 256]
a = linear(x, 256) as "left"
b = linear(x, 256) as "right"
y = add(a, b) as "join"
output y
TE
# (-O2's passes but fuse, which would compute the add in right's kernel)
o2_nofuse=simplify,schedule,autoschedule,layout,simplify,hoist,dce,prepack,flatten,simplify,memplan
expect_status 0 "$TEC" --passes=$o2_nofuse --sched=op --devices=cpu:1,acc:$cfg --no-run --sched-trace=two.json two.te
"$PYTHON" - "$cfg" <<'PY' || fail "two matmuls on cpu + accelerator"
import configparser, json, sys
t = json.load(open("two.json"))
ev = {e["name"]: e for e in t["traceEvents"] if e["ph"] == "X" and e.get("cat") != "transfer"}
cfg = configparser.ConfigParser()
cfg.read(sys.argv[1])
# words per cycle x bytes per word x MHz = bytes per microsecond
bw = float(cfg["architecture_presets"]["Bandwidth"])
words = int(cfg.get("tec_architecture", "WordBytes", fallback="1"))
mhz = float(cfg.get("tec_architecture", "ClockMHz", fallback="1000"))
acc = [e for e in ev.values() if e["args"]["device"].startswith("acc")]
cpu = [e for e in ev.values() if e["args"]["device"].startswith("cpu")]
assert {e["name"] for e in acc} | {e["name"] for e in cpu} == {"left", "right", "join"}
join = ev["join"]
for e in (ev["left"], ev["right"]):
    arrive = e["ts"] + e["dur"]
    if e["args"]["device"] != join["args"]["device"]:
        arrive += 64 * 256 * 4 / (bw * words * mhz)
    assert join["ts"] >= arrive - 1e-3, (e, join)
# (the trace prints each number to 3 decimals: three roundings of up to 0.0005)
assert abs(t["schedule"]["makespan_us"] - (join["ts"] + join["dur"])) < 2e-3
PY

# A call that fails stops the run with its error (exit 1), whatever the strategy.
"$PYTHON" -c 'import numpy as np; np.save("ids.npy", np.array([[1, 2, 3, 42]], dtype=np.int64))'
cat >bad.te <<'TE'
import "nn.te"
input x: f32[64, 256]
input ids: i64[1, 4]
a = linear(x, 256) as "left"
e = embedding(ids, 10, 256) as "lookup"
output a
output e
TE
for s in op dynamic; do
    expect_status 1 timeout 60 "$TEC" -O2 --sched=$s --devices=cpu:1,cpu:1 --input ids=ids.npy bad.te
    grep -q "^tec: error: in layer lookup: .* out of range \[0, 10) (on cpu[01])$" err || { cat err; fail "$s: no error"; }
done
exit 0
