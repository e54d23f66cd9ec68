# A constant Pad of the spatial dimensions whose output only a Conv or a
# pool reads, as its X, makes no layer: the reader pads its window instead
# (PyTorch exports avg_pool2d(padding=p) as a Pad of zeros and an
# AveragePool without pads: Inception-v3's ten; ONNX Runtime fuses them
# too).  Folded: zeros into an AveragePool (counting them, as
# count_include_pad does; with its own pads only when it counts those too),
# zeros into a Conv when the pads end up alike on every side (nn.te's
# conv2d), -inf into a MaxPool that nn.te's maxpool2d computes.  Kept as a
# Pad layer: an AveragePool whose own padding is not counted, uneven pads
# before a Conv, zeros before a MaxPool, another value, a pad of the
# channels, a Pad read twice, a MaxPool with Indices or ceil_mode, pads
# of 0.  Every output equals
# NumPy's (float64, within 1e-5) at -O0, -O2 and in the interpreter.
. "$srcdir/testsuite/cli/lib.inc"
"$PYTHON" - "$srcdir/testsuite/onnx" <<'EOF2' || fail "cannot write the model"
import os
import sys
sys.path.insert(0, sys.argv[1])
from make_hostile import INT64, array_tensor, attr_ints, field, model, node, value_info
import numpy as np
rng = np.random.default_rng(22)
FLOAT = 1


def attr_int(name, v):
    return [field(1, name), field(20, 2), field(3, v)]


def window(H, k, s, pb, pe, ceil):
    """ONNX's output extent and, per output, the window's first tap."""
    span = H + pb + pe - k
    out = (span + s - 1) // s + 1 if ceil else span // s + 1
    if ceil and (out - 1) * s >= H + pb:
        out -= 1
    return out, [o * s - pb for o in range(out)]


def pool(x, k, s, pads, ceil, count_pad, is_max):
    """AveragePool (count_include_pad: the window clipped to the padded x,
    else to x) or MaxPool of x (N, C, H, W)."""
    N, C, H, W = x.shape
    oh, hs = window(H, k[0], s[0], pads[0], pads[2], ceil)
    ow, ws = window(W, k[1], s[1], pads[1], pads[3], ceil)
    y = np.zeros((N, C, oh, ow))
    for i, a in enumerate(hs):
        for j, b in enumerate(ws):
            a0, a1, b0, b1 = max(a, 0), min(a + k[0], H), max(b, 0), min(b + k[1], W)
            win = x[:, :, a0:a1, b0:b1]
            if is_max:
                y[:, :, i, j] = win.max(axis=(2, 3))
                continue
            if count_pad:
                n = (min(a + k[0], H + pads[2]) - a) * (min(b + k[1], W + pads[3]) - b)
            else:
                n = (a1 - a0) * (b1 - b0)
            y[:, :, i, j] = win.sum(axis=(2, 3)) / n
    return y


def conv(x, w, pads, strides):
    xp = np.pad(x, ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
    F, C, R, S = w.shape
    H, W = xp.shape[2] - R + 1, xp.shape[3] - S + 1
    y = np.zeros((x.shape[0], F, H, W))
    for r in range(R):
        for s in range(S):
            y += np.einsum("fc,nchw->nfhw", w[:, :, r, s], xp[:, :, r:r + H, s:s + W])
    return y[:, :, ::strides[0], ::strides[1]]


# name, Pad's pads (N, C, H, W begins, then ends), its value (None: omitted),
# the reader and its attributes, whether the Pad folds
specs = [
    ("a", [0, 0, 1, 1, 0, 0, 1, 1], None, "AveragePool", dict(kernel_shape=[3, 3]), True),
    ("b", [0, 0, 0, 1, 0, 0, 1, 2], 0.0, "AveragePool",
     dict(kernel_shape=[3, 2], strides=[2, 2], pads=[1, 0, 0, 1], ceil_mode=1, count_include_pad=1), True),
    ("c", [0, 0, 1, 1, 0, 0, 1, 1], 0.0, "AveragePool",
     dict(kernel_shape=[3, 3], pads=[1, 1, 1, 1]), False),
    ("d", [0, 0, 1, 1, 0, 0, 1, 1], 0.0, "Conv", dict(), True),
    ("e", [0, 0, 1, 1, 0, 0, 1, 1], 0.0, "Conv", dict(pads=[1, 1, 1, 1]), True),
    ("f", [0, 0, 0, 0, 0, 0, 1, 1], 0.0, "Conv", dict(), False),
    ("g", [0, 0, 1, 1, 0, 0, 1, 1], -np.inf, "MaxPool", dict(kernel_shape=[3, 3], strides=[2, 2]), True),
    ("h", [0, 0, 1, 1, 0, 0, 1, 1], 0.0, "MaxPool", dict(kernel_shape=[3, 3], strides=[2, 2]), False),
    ("i", [0, 0, 1, 1, 0, 0, 1, 1], 0.5, "AveragePool", dict(kernel_shape=[3, 3]), False),
    ("j", [0, 1, 1, 1, 0, 0, 1, 1], 0.0, "Conv", dict(), False),
    ("k", [0, 0, 1, 1, 0, 0, 1, 1], 0.0, "AveragePool", dict(kernel_shape=[3, 3]), False),   # read twice
    ("l", [0, 0, 1, 1, 0, 0, 1, 1], -np.inf, "MaxPool", dict(kernel_shape=[3, 3], strides=[2, 2]), False),   # Indices
    # ceil_mode: the last column's window starts in the Pad's padding,
    # which maxpool2d's rule would drop as padding
    ("m", [0, 0, 1, 1, 0, 0, 1, 1], -np.inf, "MaxPool",
     dict(kernel_shape=[2, 2], strides=[3, 3], ceil_mode=1), False),
    # pads of 0 before a 1x1 window at stride 1: a copy or a view, not folded
    ("n", [0, 0, 0, 0, 0, 0, 0, 0], 0.0, "AveragePool", dict(kernel_shape=[1, 1]), False),
    # more padding than the window: outputs that read padding only
    ("o", [0, 0, 3, 3, 0, 0, 3, 3], 0.0, "Conv", dict(strides=[2, 2]), True),
    ("p", [0, 0, 2, 2, 0, 0, 2, 2], 0.0, "AveragePool", dict(kernel_shape=[2, 2], strides=[3, 3]), True),
]
nodes, inputs, outputs, inits = [], [], [], []
os.mkdir("in")
os.mkdir("want")
folds = []
for name, pads, value, op, attrs, fold in specs:
    x = rng.uniform(-1, 1, (1, 4, 9, 11)).astype(np.float32)
    np.save("in/x%s.npy" % name, x)
    inputs.append(value_info("x" + name, list(x.shape)))
    inits.append(array_tensor("p" + name, np.array(pads, np.int64), INT64))
    pin = ["x" + name, "p" + name]
    if value is not None:
        inits.append(array_tensor("v" + name, np.array(value, np.float32), FLOAT))
        pin.append("v" + name)
    nodes.append(node("Pad", pin, ["t" + name], name="/%s/Pad" % name))
    xp = np.pad(x.astype(np.float64), [(pads[d], pads[4 + d]) for d in range(4)],
                constant_values=0.0 if value is None else value)
    own = attrs.get("pads", [0, 0, 0, 0])
    al = [attr_ints(a, v) if isinstance(v, list) else attr_int(a, v) for a, v in attrs.items()]
    rin = ["t" + name]
    if op == "Conv":
        w = rng.uniform(-0.5, 0.5, (5, xp.shape[1], 3, 3)).astype(np.float32)
        inits.append(array_tensor("w" + name, w, FLOAT))
        rin.append("w" + name)
        y = conv(xp, w.astype(np.float64), own, attrs.get("strides", [1, 1]))
    else:
        y = pool(xp, attrs["kernel_shape"], attrs.get("strides", [1, 1]), own,
                 attrs.get("ceil_mode", 0), attrs.get("count_include_pad", 0), op == "MaxPool")
    rout = ["y" + name] + (["ix" + name] if name == "l" else [])
    nodes.append(node(op, rin, rout, name="/%s/%s" % (name, op), attrs=al))
    outputs.append(value_info("y" + name, list(y.shape)))
    if name == "l":
        outputs.append(value_info("ix" + name, list(y.shape), INT64))
    if name == "k":   # a second reader of the Pad's output
        nodes.append(node("Relu", ["t" + name], ["r" + name], name="/%s/Relu" % name))
        outputs.append(value_info("r" + name, list(xp.shape)))
        np.save("want/r%s.npy" % name, np.maximum(xp, 0))
    np.save("want/y%s.npy" % name, y)
    folds.append("%s %d" % (name, fold))
with open("m.onnx", "wb") as f:
    f.write(model(nodes, inputs, outputs, inits, opset=13))
with open("folds", "w") as f:
    f.write("\n".join(folds) + "\n")
EOF2
in=$(for v in a b c d e f g h i j k l m n o p; do printf -- "--input x%s=in/x%s.npy " $v $v; done)
expect_status 0 "$TEC" --emit=te m.onnx -o net.te
while read -r v fold; do
    if [ "$fold" = 1 ]; then
        ! grep -q "as \"$v.Pad\"" net.te || { cat net.te; fail "Pad $v is a layer: it should fold into its reader"; }
    else
        grep -q "as \"$v.Pad\"" net.te || { cat net.te; fail "Pad $v made no layer: it must not fold"; }
    fi
done <folds
grep -q '^yd = conv2d(xd, 5, 3, pad=1) as "d.Conv"$' net.te &&
    grep -q '^ye = conv2d(xe, 5, 3, pad=2) as "e.Conv"$' net.te ||
    { cat net.te; fail "a Pad folded into a Conv is not conv2d's pad"; }
grep -q '^yg = maxpool2d(xg, 3, 2, pad=1) as "g.MaxPool"$' net.te ||
    { cat net.te; fail "a Pad of -inf folded into a MaxPool is not maxpool2d's pad"; }
for mode in -O0 -O2 --interp; do
    expect_status 0 "$TEC" $mode m.onnx $in --save-outputs "o$mode"
    "$PYTHON" "$srcdir/testsuite/cli/onnx_want.py" "o$mode" 1e-5 ||
        fail "$mode: an output differs from NumPy's"
done
echo ok
