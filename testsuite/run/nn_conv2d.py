import sys, os
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import numpy as np
from tecref import default, param, save, outdir


def conv(x, w, stride=1, pad=0, dilation=1, groups=1):
    """y[n, f, p, q] = sum over c, r, s of xpad[n, g*Cg + c, p*stride + r*dilation,
    q*stride + s*dilation] * w[f, c, r, s], where g = f // (F / groups)."""
    n, c, h, wd = x.shape
    f, cg, k, _ = w.shape
    fg = f // groups
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh = (h + 2 * pad - dilation * (k - 1) - 1) // stride + 1
    ow = (wd + 2 * pad - dilation * (k - 1) - 1) // stride + 1
    y = np.zeros((n, f, oh, ow))
    for o in range(f):
        g = o // fg
        for p in range(oh):
            for q in range(ow):
                rows = p * stride + dilation * np.arange(k)
                cols = q * stride + dilation * np.arange(k)
                patch = xp[:, g * cg:(g + 1) * cg][:, :, rows][:, :, :, cols]
                y[:, o, p, q] = np.einsum("ncrs,crs->n", patch, w[o])
    return y


x = default("x", (2, 4, 9, 7)).astype(np.float64)
cases = {
    "plain": (3, 3, {}),
    "strided": (5, 3, dict(stride=2, pad=1)),
    "dilated": (3, 3, dict(pad=2, dilation=2)),
    "grouped": (6, 3, dict(stride=2, pad=1, groups=2)),
    "depthwise": (4, 3, dict(stride=2, pad=1, groups=4)),
    "pointwise": (8, 1, {}),
    "wide": (2, 5, dict(stride=3, pad=3, dilation=2, groups=2)),
    "biased": (5, 3, dict(stride=2, pad=1)),
    "dw_biased": (4, 3, dict(pad=1, groups=4)),
}
expected = {}
for name, (out, k, kw) in cases.items():
    w = param(name + ".weight", (out, 4 // kw.get("groups", 1), k, k)).astype(np.float64)
    y = conv(x, w, **kw)
    if name.endswith("biased"):
        y += param(name + ".bias", (out,)).astype(np.float64)[None, :, None, None]
    expected[name] = y.astype(np.float32)
save(outdir(), "expected", **expected)
