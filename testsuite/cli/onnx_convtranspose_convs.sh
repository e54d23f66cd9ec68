# A ConvTranspose with a constant weight at dilation 1 is one ordinary
# convolution per phase of its output (the positions o = q * stride + p of
# one p, which the taps r = (p + pad) % stride + stride * j reach), its
# weight those taps reversed, cut at import time; a last kernel interleaves
# the phases and adds the bias, into y's blocks [N, F, Q0, s0, W] (the
# last axis whole, its phases selected on w % s1: vectorized as shuffles;
# then reshaped to y) when every output size is a multiple of its stride,
# else selecting on o % stride.  At stride 1 it is a convolution.  With
# fewer than 8 output channels and 32 or more columns (F * taps) it keeps
# the columns form (onnx_convtranspose_phases.sh).  Each case equals NumPy's
# ConvTranspose by its definition at -O0 and -O2 (max error 1e-5 of the
# largest value): U-Net's 2x2/2, 3x3/2 with pad 1 and output_padding 1,
# DCGAN's 4x4/2 pad 1 with groups, an odd output (3x3/2, no pad), a kernel
# smaller than its stride (phases no tap reaches: the bias alone), a
# negative leading pad (auto_pad SAME_UPPER with output_shape past the
# full output), 3x3/1, 1-D and 3-D.
. "$srcdir/testsuite/cli/lib.inc"
"$PYTHON" - "$srcdir/testsuite/onnx" <<'EOF2' || fail "cannot write the models"
import os, sys
sys.path.insert(0, sys.argv[1])
from make_hostile import FLOAT, array_tensor, attr_ints, field, model, node, value_info
import numpy as np
rng = np.random.default_rng(23)

def ref(x, w, b, s, pb, pe, op, g):
    """y[o] += x[h] * w[r] at o = h*s + r - pb; pads < 0 add zeros (ONNX's rule)."""
    n, c = x.shape[:2]
    nsp = x.ndim - 2
    fg = w.shape[1]
    k = w.shape[2:]
    full = [s[d] * (x.shape[2 + d] - 1) + op[d] + k[d] for d in range(nsp)]
    y = np.zeros((n, fg * g) + tuple(full), np.float64)
    cg = c // g
    for h in np.ndindex(*x.shape[2:]):
        for r in np.ndindex(*k):
            o = tuple(h[d] * s[d] + r[d] for d in range(nsp))
            for gi in range(g):
                xs = x[(slice(None), slice(gi * cg, gi * cg + cg)) + h]
                ws = w[(slice(gi * cg, gi * cg + cg), slice(None)) + r]
                y[(slice(None), slice(gi * fg, gi * fg + fg)) + o] += xs @ ws
    lo = [max(0, -pb[d]) for d in range(nsp)]
    hi = [max(0, -pe[d]) for d in range(nsp)]
    y = np.pad(y, [(0, 0), (0, 0)] + [(lo[d], hi[d]) for d in range(nsp)])
    cut = tuple(slice(pb[d] + lo[d], lo[d] + full[d] - pe[d]) for d in range(nsp))
    y = y[(slice(None), slice(None)) + cut]
    if b is not None:
        y = y + b.reshape((1, -1) + (1,) * nsp)
    return y.astype(np.float32)

# name: x shape, F per group, kernel, strides, pads (begin, end), output_padding, groups, bias,
# auto_pad and output_shape (then pads are ONNX's from them: pb, pe given here as they come out)
cases = {
    "unet": dict(x=(1, 6, 5, 4), f=8, k=(2, 2), s=[2, 2], pb=[0, 0], pe=[0, 0], op=[0, 0], g=1, b=True),
    "k3op": dict(x=(1, 5, 4, 6), f=8, k=(3, 3), s=[2, 2], pb=[1, 1], pe=[1, 1], op=[1, 1], g=1, b=True),
    "dcgan": dict(x=(2, 8, 3, 4), f=4, k=(4, 4), s=[2, 2], pb=[1, 1], pe=[1, 1], op=[0, 0], g=2, b=False),
    "odd": dict(x=(1, 4, 4, 3), f=9, k=(3, 3), s=[2, 2], pb=[0, 0], pe=[0, 0], op=[0, 0], g=1, b=True),
    "sparse": dict(x=(1, 3, 3, 4), f=8, k=(1, 2), s=[3, 2], pb=[0, 0], pe=[0, 0], op=[2, 0], g=1, b=True),
    "same": dict(x=(1, 4, 4, 4), f=8, k=(3, 3), s=[2, 2], pb=[-1, -1], pe=[0, 0], op=[0, 0], g=1,
                 b=True, auto_pad="SAME_UPPER", output_shape=[10, 10]),
    "s1": dict(x=(1, 5, 6, 6), f=8, k=(3, 3), s=[1, 1], pb=[1, 1], pe=[1, 1], op=[0, 0], g=1, b=True),
    "line": dict(x=(2, 3, 7), f=8, k=(4,), s=[2], pb=[1], pe=[1], op=[0], g=1, b=True),
    "cube": dict(x=(1, 3, 3, 2, 4), f=8, k=(2, 2, 2), s=[2, 2, 2], pb=[0, 0, 0], pe=[0, 0, 0],
                 op=[0, 0, 0], g=1, b=False),
}
for name, c in cases.items():
    nsp = len(c["k"])
    x = rng.uniform(-1, 1, c["x"]).astype(np.float32)
    w = rng.uniform(-1, 1, (c["x"][1], c["f"]) + c["k"]).astype(np.float32)
    b = rng.uniform(-1, 1, (c["f"] * c["g"],)).astype(np.float32) if c["b"] else None
    y = ref(x, w, b, c["s"], c["pb"], c["pe"], c["op"], c["g"])
    attrs = [attr_ints("strides", c["s"]), attr_ints("output_padding", c["op"]),
             [field(1, "group"), field(20, 2), field(3, c["g"])]]
    if "auto_pad" in c:
        attrs += [[field(1, "auto_pad"), field(20, 3), field(4, c["auto_pad"])],
                  attr_ints("output_shape", c["output_shape"])]
    else:
        attrs.append(attr_ints("pads", c["pb"] + c["pe"]))
    inits = [array_tensor("w", w, FLOAT)] + ([array_tensor("b", b, FLOAT)] if c["b"] else [])
    with open(name + ".onnx", "wb") as f:
        f.write(model([node("ConvTranspose", ["x", "w"] + (["b"] if c["b"] else []), ["y"],
                            name="up", attrs=attrs)],
                      [value_info("x", list(x.shape))], [value_info("y", list(y.shape))], inits))
    np.save(name + ".x.npy", x)
    np.save(name + ".y.npy", y)
EOF2
close() {   # close EXPECTED.npy GOT_DIR: shapes equal, max error <= 1e-5 of the largest value
    "$PYTHON" - "$1" "$2" <<'EOF2'
import sys, numpy as np
e, g = np.load(sys.argv[1]), np.load(sys.argv[2] + "/y.npy")
assert e.shape == g.shape, (e.shape, g.shape)
err = float(np.abs(e - g).max() / np.abs(e).max())
sys.exit(0 if err <= 1e-5 else "max error %g" % err)
EOF2
}
expect_status 0 "$TEC" --emit=te unet.onnx -o unet.te
grep -q '^y_phase3 = conv_[0-9]*(x) as "up.phase3"$' unet.te &&
    grep -q '^    y\[n, f, q0, a0, w\] = (a0 == 0 ? (w % 2 == 0 ? p0\[n, f, q0, w / 2\] : p1\[n, f, q0, w / 2\]) : (w % 2 == 0 ? p2\[n, f, q0, w / 2\] : p3\[n, f, q0, w / 2\])) + bias\[f\]$' unet.te &&
    grep -q '^y = reshape(y_blocked, 1, 8, 10, 8) as "up.blocks"$' unet.te ||
    { cat unet.te; fail "unet: no phase convolutions, or no blocked interleave"; }
expect_status 0 "$TEC" --emit=te k3op.onnx -o k3op.te
# phase (1, 1): taps 0 and 2 of each axis, reversed, from x at q and q + 1
grep -q '^    param weight: f32\[8, 5, 2, 2\]$' k3op.te && grep -c ' = conv_[0-9]*(x) as "up.phase' k3op.te | grep -qx 4 ||
    { cat k3op.te; fail "k3op: not four phase convolutions"; }
expect_status 0 "$TEC" --emit=te odd.onnx -o odd.te
grep -q 'o0 % 2 == 0 && o1 % 2 == 0 ? p0\[n, f, o0 / 2, o1 / 2\] else 0 :' odd.te ||
    { cat odd.te; fail "odd: no interleave by o % 2"; }
expect_status 0 "$TEC" --emit=te sparse.onnx -o sparse.te
grep -c ' = conv_[0-9]*(x) as "up.phase' sparse.te | grep -qx 2 ||
    { cat sparse.te; fail "sparse: not two phase convolutions (of six phases)"; }
expect_status 0 "$TEC" --emit=te s1.onnx -o s1.te
grep -q '= conv2d(x, 8, 3, pad=1) as "up"$' s1.te || { cat s1.te; fail "s1: not a conv2d"; }
for m in unet k3op dcgan odd sparse same s1 line cube; do
    for o in O0 O2; do
        expect_status 0 "$TEC" -$o $m.onnx --input x=$m.x.npy --save-outputs $m.$o
        close $m.y.npy $m.$o || fail "$m: wrong result at -$o"
    done
done
echo ok
