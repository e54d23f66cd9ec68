#!/bin/bash
# Resize of an axis of scale 1 (its length unchanged) maps every position
# to itself in every mode, as ONNX Runtime computes it, whatever
# coordinate_transformation_mode says: tf_half_pixel_for_nn's (o + 1/2) / 1
# with round_prefer_ceil or ceil would read o + 1, and tf_crop_and_resize's
# roi would move the axis (nearest, linear and cubic alike); the resized
# axis next to it follows the formulas.  The expected outputs are ONNX
# Runtime 1.30's (check_onnx_random, seed 24: two models differed by this
# alone).
. "$srcdir/testsuite/cli/lib.inc"
"$PYTHON" - "$srcdir/testsuite/onnx" <<'EOF' || fail "cannot write the models"
import os, struct, sys
sys.path.insert(0, sys.argv[1])
from make_hostile import FLOAT, array_tensor, field, model, node, value_info, varint
import numpy as np
def sattr(name, s):
    return [field(1, name), field(4, s), field(20, 3)]
def fattr(name, v):   # a FLOAT attribute: f is field 2, a fixed32
    return [field(1, name), field(20, 1), varint(2 << 3 | 5) + struct.pack("<f", v)]
def write(path, shape, out_shape, roi, scales, attrs):
    inits = [array_tensor("roi", np.array(roi, np.float32), FLOAT),
             array_tensor("scales", np.array(scales, np.float32), FLOAT)]
    with open(path, "wb") as f:
        f.write(model([node("Resize", ["x", "roi", "scales"], ["y"], name="r", attrs=attrs)],
                      [value_info("x", shape)], [value_info("y", out_shape)], inits))
x = np.arange(60, dtype=np.float32).reshape(3, 4, 5) + 1
np.save("x.npy", x)
np.save("x2.npy", x[0])
np.save("x1.npy", x[0, 0])
def want(name, y):
    os.makedirs("want-" + name)
    np.save("want-%s/y.npy" % name, y)
# the last axis doubled: c = (o + 1/2) / 2, rounded half up
write("nn.onnx", [3, 4, 5], [3, 4, 10], [], [1, 1, 2],
      [sattr("mode", "nearest"), sattr("coordinate_transformation_mode", "tf_half_pixel_for_nn"),
       sattr("nearest_mode", "round_prefer_ceil")])
want("nn", x[:, :, np.clip(np.floor((np.arange(10) + 0.5) / 2 + 0.5), 0, 4).astype(int)])
write("nn1.onnx", [5], [5], [], [1],
      [sattr("mode", "nearest"), sattr("coordinate_transformation_mode", "tf_half_pixel_for_nn"),
       sattr("nearest_mode", "ceil")])
want("nn1", x[0, 0])
for mode in ("nearest", "linear", "cubic"):
    write("crop-%s.onnx" % mode, [4, 5], [4, 5], [0, 0.2, 1, 1.2], [1, 1],
          [sattr("mode", mode), sattr("coordinate_transformation_mode", "tf_crop_and_resize"),
           fattr("extrapolation_value", -7.0)])
want("crop", x[0])
EOF
run() {   # run MODEL INPUT WANT
    for o in O0 O2; do
        expect_status 0 "$TEC" -$o $1.onnx --input x=$2 --save-outputs $1-$o
        "$PYTHON" "$srcdir/testsuite/compare.py" want-$3 $1-$o || fail "$1 at -$o differs"
        cmp want-$3/y.npy $1-$o/y.npy >/dev/null ||
            fail "$1 at -$o: not the elements themselves"
    done
}
run nn x.npy nn
run nn1 x1.npy nn1
for mode in nearest linear cubic; do
    run crop-$mode x2.npy crop
done
echo ok
