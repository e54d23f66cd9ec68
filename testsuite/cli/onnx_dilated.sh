# Dilated convolutions whose taps read only padding over part of the output
# (DeepLabV3's ASPP at rate 12 on a 14x14 map): the importer computes each
# class of taps only where it reads inside the input (the parts,
# "<layer>.partJ") and sums the parts in the Conv's layer, so the profile
# counts the multiply-adds that read data, not the padding's.  Six Convs:
# a 3x3 at dilation 5 with bias (9 parts, then a Relu), a grouped 3x2 of
# two dilations and asymmetric pads (6 parts), a 1-D one of stride 2 (3
# parts), a 3x3 at dilation 2 that reads padding in a few border
# positions only, which stays one conv2d, a 1-D one whose first two
# outputs read only padding (bias alone there) and whose first tap never
# reads x (2 parts: taps 1 and 2 alone), and an undilated 3x3 on a 2x2
# map, which stays one conv2d though it reads padding in 5/9 of its
# multiply-adds.  The results equal NumPy's (float64) at -O0, -O2 and in
# the interpreter.
. "$srcdir/testsuite/cli/lib.inc"
"$PYTHON" - "$srcdir/testsuite/onnx" <<'EOF2' || fail "cannot write the model"
import os
import sys
sys.path.insert(0, sys.argv[1])
from make_hostile import attr_ints, field, model, node, tensor, value_info
import numpy as np
rng = np.random.default_rng(5)


def init(name, a):
    a = np.asarray(a, np.float32)
    return tensor(name, list(a.shape), a.tobytes())


def attr_int(name, v):
    return [field(1, name), field(20, 2), field(3, v)]


def conv(x, w, b, dil, pads, strides, group):
    """The ONNX Conv in float64, tap by tap over the zero-padded input."""
    nsp = x.ndim - 2
    xp = np.pad(x.astype(np.float64), [(0, 0), (0, 0)] + [(pads[d], pads[nsp + d]) for d in range(nsp)])
    out = [(xp.shape[2 + d] - dil[d] * (w.shape[2 + d] - 1) - 1) // strides[d] + 1 for d in range(nsp)]
    F, Cg = w.shape[:2]
    y = np.zeros((x.shape[0], F) + tuple(out))
    for tap in np.ndindex(*w.shape[2:]):
        win = tuple(slice(tap[d] * dil[d], tap[d] * dil[d] + (out[d] - 1) * strides[d] + 1, strides[d])
                    for d in range(nsp))
        for f in range(F):
            c0 = f // (F // group) * Cg
            y[:, f] += np.tensordot(xp[(slice(None), slice(c0, c0 + Cg)) + win],
                                    w[(f, slice(None)) + tap].astype(np.float64), axes=([1], [0]))
    if b is not None:
        y += b.reshape((1, F) + (1,) * nsp)
    return y


specs = [  # name, x shape, W shape, bias, dilations, pads, strides, group
    ("a", [1, 6, 9, 9], [5, 6, 3, 3], True, [5, 5], [5, 5, 5, 5], [1, 1], 1),
    ("b", [1, 4, 7, 11], [4, 2, 3, 2], False, [4, 8], [4, 3, 2, 5], [1, 1], 2),
    ("c", [1, 3, 25], [2, 3, 3], True, [20], [20, 20], [2], 1),
    ("d", [1, 6, 9, 9], [4, 6, 3, 3], False, [2, 2], [2, 2, 2, 2], [1, 1], 1),
    ("e", [1, 2, 3], [3, 2, 3], True, [2], [6, 0], [1], 1),
    ("f", [1, 4, 2, 2], [3, 4, 3, 3], False, [1, 1], [1, 1, 1, 1], [1, 1], 1),
]
nodes, inputs, outputs, inits = [], [], [], []
os.mkdir("in")
os.mkdir("want")
for name, xs, ws, has_b, dil, pads, strides, group in specs:
    x = rng.uniform(-1, 1, xs).astype(np.float32)
    w = rng.uniform(-0.5, 0.5, ws).astype(np.float32)
    b = rng.uniform(-1, 1, ws[0]).astype(np.float32) if has_b else None
    y = conv(x, w, b, dil, pads, strides, group)
    ins = ["x" + name, "w" + name] + (["b" + name] if has_b else [])
    conv_out = "y" + name if name != "a" else "ta"
    nodes.append(node("Conv", ins, [conv_out], name="/%s/Conv" % name,
                      attrs=[attr_ints("dilations", dil), attr_ints("pads", pads),
                             attr_ints("strides", strides), attr_int("group", group)]))
    if name == "a":
        nodes.append(node("Relu", ["ta"], ["ya"], name="/a/Relu"))
        y = np.maximum(y, 0)
    inputs.append(value_info("x" + name, xs))
    outputs.append(value_info("y" + name, list(y.shape)))
    inits += [init("w" + name, w)] + ([init("b" + name, b)] if has_b else [])
    np.save("in/x%s.npy" % name, x)
    np.save("want/y%s.npy" % name, y.astype(np.float32))
with open("m.onnx", "wb") as f:
    f.write(model(nodes, inputs, outputs, inits))
EOF2
in=$(for v in a b c d e f; do printf -- "--input x%s=in/x%s.npy " $v $v; done)
expect_status 0 "$TEC" --emit=te m.onnx -o net.te
parts() { grep -c "as \"$1\.Conv\.part[0-9]*\"$" net.te; }
[ "$(parts a)" = 9 ] && [ "$(parts b)" = 6 ] && [ "$(parts c)" = 3 ] && [ "$(parts d)" = 0 ] &&
    [ "$(parts e)" = 2 ] && [ "$(parts f)" = 0 ] ||
    { cat net.te; fail "the parts are not 9, 6, 3, 0, 2 and 0"; }
grep -q '^ta = conv_sum_1(.*) as "a.Conv"$' net.te &&
    grep -q '^yd = conv2d(xd, 4, 3, pad=2, dilation=2) as "d.Conv"$' net.te &&
    grep -q '^yf = conv2d(xf, 3, 3, pad=1) as "f.Conv"$' net.te ||
    { cat net.te; fail "a's parts are not summed in its layer, or d is not one conv2d"; }
# a's part of taps (2, 2) (rows and columns 0..3 of the output) reads x
# from row and column 5 on, where the others start at 0
grep -q 'y\[n, f, o0, o1\] += x\[n, c, o0 + r0 + 5, o1 + r1 + 5\] else 0' net.te ||
    { cat net.te; fail "no part reads x at an offset"; }
# the multiply-adds that read x: a 6*5 * (4+9+4)^2 = 8670, b 2*4 * (1+5+3) * (8+6) = 1008,
# c 3*2 * (3+13+3) = 114, d 6*4*9 * 9*9 = 17496, e 2*3 * (1+3) = 24, f 4*3*9 * 2*2 = 432
expect_status 0 "$TEC" -O2 --profile m.onnx $in --report=r.json --save-outputs o2
"$PYTHON" - <<'PY' || fail "the profile's MACs are not those of the taps that read x"
import json
r = json.load(open("r.json"))
macs = {l["name"]: l["macs"] for l in r["layers"]}
parts = lambda c: sum(m for n, m in macs.items() if n.startswith(c + ".Conv.part"))
assert parts("a") == 8670 and parts("b") == 1008 and parts("c") == 114 and parts("e") == 24, macs
assert r["totals"]["macs"] == 8670 + 1008 + 114 + 17496 + 24 + 432, r["totals"]
PY
expect_status 0 "$TEC" -O0 m.onnx $in --save-outputs o0
expect_status 0 "$TEC" --interp m.onnx $in --save-outputs oi
for d in o0 o2 oi; do
    "$PYTHON" "$srcdir/testsuite/compare.py" want $d || fail "wrong result in $d"
done
echo ok
