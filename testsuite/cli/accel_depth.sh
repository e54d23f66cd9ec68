# A GEMM whose reduction length depends on the data
# (testsuite/accel/ragged_depth.tir: all 32 rows run, each over 16 of its
# 32 channels) is modeled with its rows and its reduction depth apart:
# M 32 (every row is written back) and K 16, as the dense 32 x 16 x 16
# GEMM, not as 16 rows of the full depth.
. "$srcdir/testsuite/cli/lib.inc"
cfg=$srcdir/accel/configs/edge_os_32x32.cfg
"$PYTHON" -c 'import numpy; numpy.save("lens.npy", numpy.array([16, 16, 16, 16], dtype="int64"))' ||
    fail "cannot write lens.npy"
expect_status 0 "$TEC" --profile --accel "$cfg" --search edp --input lens=lens.npy \
    --report=r.json --accel-report=live.json "$srcdir/testsuite/accel/ragged_depth.tir"
grep -qx "accelerator: layer proj modeled as the run did it (its MACs depend on the data): reduction depth K 16 of the declared 32, from the counters" out ||
    { cat out; fail "no note on the reduction depth from the counters"; }
cat >dense.tir <<'X'
module "dense"

func @proj(x: f32[32, 16], w: f32[16, 16], y: f32[32, 16]) attrs(layer = "proj", op = "linear") {
  for i in 0..32 {
    for o in 0..16 {
      for c in 0..16 {
        block mac(vi: spatial[32] = i, vo: spatial[16] = o, vc: reduce[16] = c) reads(y, x, w) writes(y) {
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
  input x: f32[32, 16] init(-1, 1)
  param w: f32[16, 16] init(-1, 1)
  output y: f32[32, 16]
  call @proj(x, w, y)
}
X
expect_status 0 "$TEC" --accel "$cfg" --search edp --accel-report=dense.json dense.tir
"$PYTHON" - <<'X' || fail "the rows and the depth are not modeled apart"
import json
wl = json.load(open("r.json"))["accel_workload"]
gemm = [l for l in wl["layers"] if l["kind"] == "gemm"]
assert [(g["M"], g["N"], g["K"], g["declared_M"], g["declared_K"]) for g in gemm] == \
    [(32, 16, 16, 0, 32)], gemm
live = {l["name"]: l for l in json.load(open("live.json"))["layers"]}["proj"]
dense = {l["name"]: l for l in json.load(open("dense.json"))["layers"]}["proj"]
assert live["declared_K"] == 32 and dense["declared_K"] is None
del live["declared_K"], dense["declared_K"]
assert live == dense, (live, dense)
# every output word goes back to DRAM: 32 x 16 f32 elements of 1-byte words
assert live["dram_writes_ofmap"] == 32 * 16 * 4, live["dram_writes_ofmap"]
X
# the saved report models to the same numbers
expect_status 0 "$TEC" --accel "$cfg" --search edp --from-report=r.json --accel-report=saved.json
cmp live.json saved.json || fail "--from-report differs from the live run"
exit 0
