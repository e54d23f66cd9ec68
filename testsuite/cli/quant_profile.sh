# tec --profile on an int8 network counts each tensor at its real element
# size: one byte an int8 weight and activation, four an int32 bias and an
# f32 scale.
. "$srcdir/testsuite/cli/lib.inc"
blk=$srcdir/testsuite/run/quant_resnet_block.te

expect_status 0 "$TEC" -O1 --profile "$blk" --report=q.json
"$PYTHON" - <<'PY' || fail "int8 block report"
import json
r = json.load(open("q.json"))
L = {l["name"]: l for l in r["layers"]}
C, HW = 64, 8 * 8
for name in ("layer1.0.conv1", "layer1.0.conv2"):
    l = L[name]
    assert l["input_shapes"] == ["i8[1, 64, 8, 8]"], l["input_shapes"]
    assert l["output_shape"] == "i8[1, 64, 8, 8]", l["output_shape"]
    assert l["macs"] == C * C * 9 * HW, l["macs"]
    assert l["params"] == C * C * 9 + 2 * C, l["params"]
    assert l["param_bytes"] == C * C * 9 * 1 + C * 4 + C * 4, l["param_bytes"]
    assert l["activation_bytes"] == C * HW * 1, l["activation_bytes"]
    assert l["dram_write_bytes"] == C * HW, l["dram_write_bytes"]
# conv1 reads its weights and the block's input from DRAM once
assert L["layer1.0.conv1"]["dram_read_bytes"] == C * C * 9 + 8 * C + C * HW
a = L["layer1.0.add"]
assert a["load_bytes"] == 2 * C * HW and a["store_bytes"] == C * HW, a
t = r["totals"]
assert t["param_bytes"] == 2 * (C * C * 9 + 8 * C), t["param_bytes"]
PY
exit 0
