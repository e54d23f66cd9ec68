# With --profile --accel the accelerator model takes each layer's work from
# the run's counters.  testsuite/accel/ragged.tir runs lens[t] of the 8 rows
# of each of 4 sequences through a 32 -> 16 projection: the static analysis
# cannot say how many (it sees 32 rows), the counters can (15 with lens
# 5, 8, 0, 2), and the model then does what a dense GEMM of the 15 rows
# does; testsuite/accel/guarded.tir skips whole sequences behind a guard
# that loads memory.  tec --accel CFG --from-report models the saved profile report to
# the same numbers without the program; a bad report is a located error.
. "$srcdir/testsuite/cli/lib.inc"
cfg=$srcdir/accel/configs/edge_os_32x32.cfg
prog=$srcdir/testsuite/accel/ragged.tir
"$PYTHON" -c 'import numpy; numpy.save("lens.npy", numpy.array([5, 8, 0, 2], dtype="int64"))' ||
    fail "cannot write lens.npy"

# the static analysis alone cannot model it
expect_status 1 "$TEC" --accel "$cfg" "$prog"
expect_err "tec: error: layer proj: how often a statement runs depends on the data (a loop bound or condition loads memory); the accelerator model needs the counts of a run: profile it (--profile --accel)"

# the run's counters can: 15 x 16 x 32 MACs, where the declared extents say 32 x 16 x 32
expect_status 0 "$TEC" --profile --accel "$cfg" --search edp --input lens=lens.npy \
    --report=r.json --accel-report=live.json "$prog"
grep -qx "accelerator: layer proj modeled as the run did it (its MACs depend on the data): M 15 of the declared 32, from the counters" out ||
    { cat out; fail "no note on the layer modeled from the counters"; }

# a guard that loads memory: the sequences of lens 5 and 8 run, 16 rows
expect_status 0 "$TEC" --profile --accel "$cfg" --input lens=lens.npy \
    "$srcdir/testsuite/accel/guarded.tir"
grep -qx "accelerator: layer proj modeled as the run did it (its MACs depend on the data): M 16 of the declared 32, from the counters" out ||
    { cat out; fail "the guarded layer is not modeled from the counters"; }

# the same GEMM written densely, with only the 15 rows that ran
cat >dense.tir <<'X'
module "dense"

func @proj(x: f32[15, 32], w: f32[32, 16], y: f32[15, 16]) attrs(layer = "proj", op = "linear") {
  for i in 0..15 {
    for o in 0..16 {
      for c in 0..32 {
        block mac(vi: spatial[15] = i, vo: spatial[16] = o, vc: reduce[32] = c) reads(y, x, w) writes(y) {
          init {
            y[vi, vo] = 0.0f
          }
          y[vi, vo] = y[vi, vo] + x[vi, vc] * w[vc, vo]
        }
      }
    }
  }
}

graph {
  input x: f32[15, 32] init(-1, 1)
  param w: f32[32, 16] init(-1, 1)
  output y: f32[15, 16]
  call @proj(x, w, y)
}
X
expect_status 0 "$TEC" --accel "$cfg" --search edp --accel-report=dense.json dense.tir
"$PYTHON" - <<'X' || fail "the model does not follow the counters"
import json
prof = json.load(open("r.json"))
proj = [l for l in prof["layers"] if l["name"] == "proj"][0]
assert proj["macs"] == 15 * 16 * 32 != 32 * 16 * 32, proj["macs"]
wl = prof["accel_workload"]
assert wl["counts"] == "run", wl
gemm = [l for l in wl["layers"] if l["kind"] == "gemm"]
assert [(g["M"], g["N"], g["K"], g["batch"], g["declared_M"]) for g in gemm] == \
    [(15, 16, 32, 1, 32)], gemm
live = {l["name"]: l for l in json.load(open("live.json"))["layers"]}
dense = {l["name"]: l for l in json.load(open("dense.json"))["layers"]}
assert live["proj"]["macs"] == 15 * 16 * 32, live["proj"]
assert live["proj"] == dense["proj"], (live["proj"], dense["proj"])
X

# the saved report models to the same numbers as the live run, here and on
# a convolution (its geometry travels with the report)
expect_status 0 "$TEC" --accel "$cfg" --search edp --from-report=r.json --accel-report=saved.json
cmp live.json saved.json || fail "--from-report differs from the live run"
expect_status 0 "$TEC" -O1 --profile --accel "$cfg" --report=c.json --accel-report=clive.json \
    "$srcdir/examples/conv.te"
grep -q '"conv": {"ifmap_h"' c.json || fail "no convolution geometry in the report"
expect_status 0 "$TEC" --accel "$cfg" --search edp --from-report=c.json --accel-report=csaved.json
cmp clive.json csaved.json || fail "--from-report differs from the live run (conv)"

# usage errors
expect_status 2 "$TEC" --accel "$cfg" --from-report=r.json "$prog"
expect_err "tec: error: --from-report replaces the program: remove '$prog'
tec: try 'tec --help'"
expect_status 2 "$TEC" --accel "$cfg" --from-report=r.json --topology t.csv
expect_err "tec: error: --from-report and --topology both name the layers to model; give one"
expect_status 2 "$TEC" --accel "$cfg" --from-report=
expect_err "tec: error: --from-report needs a file name"

# bad reports: located errors, exit status 1
expect_status 1 "$TEC" --accel "$cfg" --from-report=missing.json
expect_err "missing.json: error: cannot read: No such file or directory"
printf '{"network": "x",\n "layers": [1,]}\n' >bad.json
expect_status 1 "$TEC" --accel "$cfg" --from-report=bad.json
expect_err "bad.json:2:15: error: expected a value, found ']'"
expect_status 1 "$TEC" --accel "$cfg" --from-report=clive.json
expect_err "clive.json:1:1: error: not a tec profile report (write one with tec --profile --report=FILE.json)"
"$PYTHON" - <<'X'
import json
r = json.load(open("r.json"))
del r["accel_workload"]
json.dump(r, open("old.json", "w"))
r = json.load(open("r.json"))
r["accel_workload"]["layers"][0]["M"] = -1
json.dump(r, open("neg.json", "w"), indent=1)
c = json.load(open("c.json"))
c["accel_workload"]["layers"][0]["conv"]["channels"] += 1
json.dump(c, open("geom.json", "w"), indent=1)
X
expect_status 1 "$TEC" --accel "$cfg" --from-report=old.json
expect_err "old.json:1:1: error: the profile report has no \"accel_workload\" (written by an older tec: profile the program again)"
expect_status 1 "$TEC" --accel "$cfg" --from-report=neg.json
grep -q '^neg.json:[0-9]*:[0-9]*: error: layer proj: "M" must be a positive integer$' err ||
    { cat err; fail "no located error for a negative M"; }
expect_status 1 "$TEC" --accel "$cfg" --from-report=geom.json
grep -q '^geom.json:[0-9]*:[0-9]*: error: layer conv: the convolution geometry does not give its GEMM ' err ||
    { cat err; fail "no located error for a convolution geometry that does not match"; }
# a profile without a run has no counts for the ragged layer: the report says why
expect_status 0 "$TEC" --profile --no-run --report=norun.json "$prog"
expect_status 1 "$TEC" --accel "$cfg" --from-report=norun.json
grep -q '^norun.json:[0-9]*:[0-9]*: error: the profile has no accelerator workload: layer proj: how often a statement runs depends on the data' err ||
    { cat err; fail "no reason for a report without a workload"; }
exit 0
