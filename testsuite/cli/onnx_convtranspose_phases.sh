# A strided ConvTranspose at dilation 1 with few output channels (F < 8,
# F * taps >= 32: onnx_convtranspose_convs.sh lowers the others to one
# convolution per phase) computes the columns z first and sums each phase
# of its output (the positions o = q * stride + p of one p) over the taps
# that land there, every stride-th from (p + pad) % stride, instead of
# testing every tap at every position (10x faster at stride 2); with
# groups each output channel's columns come from its group's input
# channels (a super-resolution net's grouped 4x4/2 up-convolution: 14.6
# ms as a gather of every output position's taps, then 0.6).  Few-channel
# 2-D (k 4, stride 2, pad 1), grouped 2-D (k 4, stride 2, pad 1, 4 groups
# of 2 output channels: 8 in all, so four grouped phase convolutions), 1-D
# (k 3, stride 2, pad 1, output_padding 1: the last tap of odd phases lies
# past the kernel), 2-D with strides (2, 3) and uneven pads, and a dilated
# strided one (which keeps the test per position) equal NumPy's at -O0
# and -O2.
. "$srcdir/testsuite/cli/lib.inc"
"$PYTHON" - "$srcdir/testsuite/onnx" <<'EOF2' || fail "cannot write the models"
import os, sys
sys.path.insert(0, sys.argv[1])
from make_hostile import FLOAT, array_tensor, attr_ints, field, model, node, value_info
import numpy as np
rng = np.random.default_rng(11)

def ref(x, w, b, s, pads, dil, op, g):
    """ConvTranspose by its definition: y[o] += x[h] * w[r] at o = h*s + r*dil - pad."""
    n, c = x.shape[:2]
    nsp = x.ndim - 2
    fg = w.shape[1]
    k = w.shape[2:]
    full = [s[d] * (x.shape[2 + d] - 1) + op[d] + (k[d] - 1) * dil[d] + 1 for d in range(nsp)]
    y = np.zeros((n, fg * g) + tuple(full), np.float64)
    cg = c // g
    for h in np.ndindex(*x.shape[2:]):
        for r in np.ndindex(*k):
            o = tuple(h[d] * s[d] + r[d] * dil[d] for d in range(nsp))
            for gi in range(g):
                xs = x[(slice(None), slice(gi * cg, gi * cg + cg)) + h]        # n, cg
                ws = w[(slice(gi * cg, gi * cg + cg), slice(None)) + r]        # cg, fg
                y[(slice(None), slice(gi * fg, gi * fg + fg)) + o] += xs @ ws
    cut = tuple(slice(pads[d], full[d] - pads[nsp + d]) for d in range(nsp))
    y = y[(slice(None), slice(None)) + cut]
    return (y + b.reshape((1, -1) + (1,) * nsp)).astype(np.float32)

cases = {
    "few": dict(x=(1, 4, 5, 6), f=3, k=(4, 4), s=[2, 2], pads=[1, 1, 1, 1], dil=[1, 1],
                op=[0, 0], g=1),
    "grouped": dict(x=(1, 8, 5, 6), f=2, k=(4, 4), s=[2, 2], pads=[1, 1, 1, 1], dil=[1, 1],
                    op=[0, 0], g=4),
    "line": dict(x=(2, 3, 7), f=5, k=(3,), s=[2], pads=[1, 1], dil=[1], op=[1], g=1),
    "uneven": dict(x=(1, 4, 4, 5), f=3, k=(3, 2), s=[2, 3], pads=[0, 1, 2, 0], dil=[1, 1],
                   op=[1, 2], g=1),
    "dilated": dict(x=(1, 4, 4, 4), f=4, k=(3, 3), s=[2, 2], pads=[1, 1, 1, 1], dil=[2, 2],
                    op=[0, 0], g=2),
}
for name, c in cases.items():
    x = rng.uniform(-1, 1, c["x"]).astype(np.float32)
    w = rng.uniform(-1, 1, (c["x"][1], c["f"]) + c["k"]).astype(np.float32)
    b = rng.uniform(-1, 1, (c["f"] * c["g"],)).astype(np.float32)
    y = ref(x, w, b, c["s"], c["pads"], c["dil"], c["op"], c["g"])
    attrs = [attr_ints("strides", c["s"]), attr_ints("pads", c["pads"]),
             attr_ints("dilations", c["dil"]), attr_ints("output_padding", c["op"]),
             [field(1, "group"), field(20, 2), field(3, c["g"])]]
    with open(name + ".onnx", "wb") as f:
        f.write(model([node("ConvTranspose", ["x", "w", "b"], ["y"], name="up", attrs=attrs)],
                      [value_info("x", list(x.shape))], [value_info("y", list(y.shape))],
                      [array_tensor("w", w, FLOAT), array_tensor("b", b, FLOAT)]))
    os.makedirs(name + ".ref")
    np.save(name + ".x.npy", x)
    np.save(name + ".ref/y.npy", y)
EOF2
expect_status 0 "$TEC" --emit=te few.onnx -o few.te
grep -q '^    z\[n, f, r0, r1, i0, i1\] += x\[n, c, i0, i1\] \* weight\[c, f, r0, r1\]$' few.te &&
    grep -q '^    tp\[n, f, p0, p1, q0, q1\] += z\[n, f, (p0 + 1) % 2 + 2 \* j0, (p1 + 1) % 2 + 2 \* j1, q0 + (p0 + 1) / 2 - j0, q1 + (p1 + 1) / 2 - j1\] else 0 where ' few.te ||
    { cat few.te; fail "few: no columns, or no phases"; }
expect_status 0 "$TEC" --emit=te grouped.onnx -o grouped.te
grep -q '^    y\[n, f, o0, o1\] += x\[n, f / 2 \* 2 + c, o0 + r0 - 1, o1 + r1 - 1\] else 0 \* weight\[f, c, r0, r1\] where o0 in 0..5, o1 in 0..6$' grouped.te &&
    grep -q '^y_phase0 = conv_[0-9]*(x) as "up.phase0"$' grouped.te ||
    { cat grouped.te; fail "grouped: no grouped phase convolutions"; }
expect_status 0 "$TEC" --emit=te dilated.onnx -o dilated.te
grep -q 'tp\[' dilated.te && { cat dilated.te; fail "dilated: phases at dilation 2"; }
for m in few grouped line uneven dilated; do
    for o in O0 O2; do
        expect_status 0 "$TEC" -$o $m.onnx --input x=$m.x.npy --save-outputs $m.$o
        "$PYTHON" "$srcdir/testsuite/compare.py" $m.ref $m.$o || fail "$m: wrong result at -$o"
    done
done
echo ok
