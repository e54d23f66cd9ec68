# tec --profile and --accel on an int8 network count each tensor at its
# real element size: one byte an int8 weight and activation, four an int32
# accumulator or bias and an f32 scale.  (qconv2d is a def of stages, its
# layer NAME.y; a 1x1 one NAME.xu and NAME.ym, lib/nn.te.)
. "$srcdir/testsuite/cli/lib.inc"
blk=$srcdir/testsuite/run/quant_resnet_block.te

expect_status 0 "$TEC" -O1 --profile "$blk" --report=q.json
"$PYTHON" - <<'PY' || fail "int8 block report"
import json
r = json.load(open("q.json"))
L = {l["name"]: l for l in r["layers"]}
C, HW = 64, 8 * 8
for name in ("layer1.0.conv1.y", "layer1.0.conv2.y"):
    l = L[name]
    assert l["input_shapes"] == ["i8[1, 64, 8, 8]"], l["input_shapes"]
    assert l["output_shape"] == "i8[1, 64, 8, 8]", l["output_shape"]
    assert l["macs"] == C * C * 9 * HW, l["macs"]
    assert l["params"] == C * C * 9 + 2 * C, l["params"]
    assert l["param_bytes"] == C * C * 9 * 1 + C * 4 + C * 4, l["param_bytes"]
    assert l["activation_bytes"] == C * HW * 1, l["activation_bytes"]
    assert l["dram_write_bytes"] == C * HW, l["dram_write_bytes"]
# conv1 reads its weights and the block's input from DRAM once
assert L["layer1.0.conv1.y"]["dram_read_bytes"] == C * C * 9 + 8 * C + C * HW
a = L["layer1.0.add"]
assert a["load_bytes"] == 2 * C * HW and a["store_bytes"] == C * HW, a
t = r["totals"]
assert t["param_bytes"] == 2 * (C * C * 9 + 8 * C), t["param_bytes"]
PY

# The accelerator model: n elements of b bytes are ceil(n*b / WordBytes)
# words.  conv1's GEMM reads the 8*8*64 input (10*10*64 with its padding)
# and 64*64*9 weights, one byte each, and writes 64*64 int32 sums; its
# vector part (requantization) reads the sums, bias and scale and writes
# 64*64 int8 outputs.
for cfg in edge_os_32x32:1 tpu_ws_128x128:2; do
    name=${cfg%:*} word=${cfg#*:}
    expect_status 0 "$TEC" -O1 --accel "$srcdir/accel/configs/$name.cfg" --accel-report=a.json "$blk"
    WORD=$word "$PYTHON" - <<'PY' || fail "int8 block on $name"
import json, os
w = int(os.environ["WORD"])
L = {l["name"]: l for l in json.load(open("a.json"))["layers"]}
g = L["layer1.0.conv1.y"]
assert g["dram_reads_ifmap"] == 10 * 10 * 64 // w, g["dram_reads_ifmap"]
assert g["dram_reads_filter"] == 64 * 64 * 9 // w, g["dram_reads_filter"]
assert g["dram_writes_ofmap"] == 64 * 64 * 4 // w, g["dram_writes_ofmap"]
v = L["layer1.0.conv1.y.vector"]
assert v["dram_reads"] == (64 * 64 * 4 + 64 * 4 + 64 * 4) // w, v["dram_reads"]
assert v["dram_writes"] == 64 * 64 // w, v["dram_writes"]
a = L["layer1.0.add"]
assert a["dram_reads"] == 2 * 64 * 64 // w and a["dram_writes"] == 64 * 64 // w, a
PY
done
exit 0
