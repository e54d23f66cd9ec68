# tools/quantize.py on a small f32 model (Conv -> Relu -> GlobalAveragePool
# -> Flatten -> Gemm, built here with testsuite/onnx/make_hostile.py's
# encoder): the QDQ model it writes imports as integer kernels with int8
# weights, computes close to the f32 model, and the tool reports top-1
# agreement and output error in its documented format.  Needs Debian's
# python3-onnx (bootstrap installs it).
. "$srcdir/testsuite/cli/lib.inc"

"$PYTHON" - "$srcdir/testsuite/onnx" <<'PY' || fail "cannot build the model"
import sys
import numpy as np
sys.path.insert(0, sys.argv[1])
from make_hostile import field, node, value_info, model, attr_ints

def init(name, a):
    a = np.asarray(a, np.float32)
    return [field(1, d) for d in a.shape] + [field(2, 1), field(8, name), field(9, a.tobytes())]

rng = np.random.default_rng(3)
open("small.onnx", "wb").write(model(
    [node("Conv", ["image", "w", "b"], ["c"], attrs=[attr_ints("pads", [1, 1, 1, 1])]),
     node("Relu", ["c"], ["r"]),
     node("GlobalAveragePool", ["r"], ["p"]),
     node("Flatten", ["p"], ["f"]),
     node("Gemm", ["f", "fw", "fb"], ["logits"], attrs=[[field(1, "transB"), field(20, 2), field(3, 1)]])],
    [value_info("image", [1, 3, 8, 8])], [value_info("logits", [1, 10])],
    [init("w", rng.standard_normal((16, 3, 3, 3)) * 0.3), init("b", rng.standard_normal(16) * 0.1),
     init("fw", rng.standard_normal((10, 16))), init("fb", rng.standard_normal(10) * 0.1)]))
PY

expect_status 0 "$PYTHON" "$srcdir/tools/quantize.py" small.onnx small_int8.onnx --tec "$TEC" \
    --calibrate 3 --evaluate 4 -O 0
cp out report
grep -q '^quantize: 2 activations calibrated on 3 inputs$' report || { cat report; fail "calibration"; }
grep -c '^quantize: input [0-3]: top-1 f32 [0-9]* int8 [0-9]* (\(agree\|differ\)), top-5 in common [0-5], output error [0-9.e+-]*$' report |
    grep -q '^4$' || { cat report; fail "the per-input lines"; }
line=$(grep '^quantize: top-1 agreement' report)
echo "$line" | grep -q '^quantize: top-1 agreement [0-4]/4 ([0-9.]*%), top-5 in common [0-5].[0-9][0-9] on average, output error median [0-9.e+-]* max \([0-9.e+-]*\)$' ||
    fail "the summary: $line"
max=$(echo "$line" | sed 's/.* max //')
awk -v m="$max" 'BEGIN { exit !(m < 0.1) }' || fail "the int8 model is far from the f32 one: $line"

expect_status 0 "$TEC" --emit=te small_int8.onnx
grep -q '^def qdq_conv_1(x: u8\[1, 3, 8, 8\]) -> y: f32\[1, 16, 8, 8\]' out || fail "no integer Conv"
grep -q 'param weight: i8\[16, 4, 3, 3\]' out || fail "the Conv's weights are not int8 (over 4 channels)"
grep -q '^def qdq_gemm_1(A: u8\[1, 16\])' out || fail "no integer Gemm"
grep -q 'param B: i8\[10, 16\]' out || fail "the Gemm's weights are not int8"

expect_status 1 "$PYTHON" "$srcdir/tools/quantize.py" small.onnx x.onnx --tec "$TEC" --calibrate 0
expect_err "quantize.py: error: --calibrate must be at least 1"
exit 0
