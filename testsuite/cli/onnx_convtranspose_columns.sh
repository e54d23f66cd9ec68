# ConvTranspose in the columns form (few output channels, or a dilated
# one: see onnx_convtranspose_convs.sh for the others) computes every
# input position times every tap into a temporary z (N * F * taps * input
# positions) and then sums the taps that land on each output (col2im).  A
# 3-D up-convolution of 64 channels on 64^3 with 3^3 taps would need 1.8
# GiB of z: dilated, above 1 GiB, the node gathers each output's taps
# itself, with no temporary; at dilation 1 it is eight phase convolutions
# (no z either).
. "$srcdir/testsuite/cli/lib.inc"
"$PYTHON" - "$srcdir/testsuite/onnx" <<'PY' || fail "cannot write the models"
import sys
sys.path.insert(0, sys.argv[1])
from make_hostile import field, model, node, value_info, tensor, attr_ints
import numpy as np

def convt(c, f, size, dil=1):
    w = np.random.default_rng(0).standard_normal((c, f, 3, 3, 3)).astype(np.float32)
    out = 2 * size - 1 + 2 * (dil - 1)
    return model([node("ConvTranspose", ["x", "w"], ["y"], name="up",
                       attrs=[attr_ints("strides", [2, 2, 2]),
                              attr_ints("dilations", [dil, dil, dil])])],
                 [value_info("x", [1, c, size, size, size])],
                 [value_info("y", [1, f, out, out, out])],
                 [tensor("w", list(w.shape), w.tobytes())])

open("big.onnx", "wb").write(convt(64, 64, 64))
open("bigdil.onnx", "wb").write(convt(64, 64, 64, 2))
open("small.onnx", "wb").write(convt(4, 3, 5))
PY
expect_status 0 "$TEC" --emit=te small.onnx
grep -q '^    z\[n, f, r0, r1, r2, i0, i1, i2\] += ' out || { cat out; fail "small: no columns"; }
expect_status 0 timeout 120 "$TEC" --emit=te bigdil.onnx
grep -q 'z\[' out && { cat out; fail "bigdil: a column temporary of 1.8 GiB"; }
grep -q '^    y\[n, f, o0, o1, o2\] += ' out || { cat out; fail "bigdil: no gather"; }
expect_status 0 timeout 120 "$TEC" --emit=te big.onnx
grep -q 'z\[' out && { cat out; fail "big: a column temporary of 1.8 GiB"; }
grep -c '^y_phase[0-7] = conv_[0-9]*(x) as "up.phase[0-7]"$' out | grep -qx 8 ||
    { cat out; fail "big: not eight phase convolutions"; }
echo ok
