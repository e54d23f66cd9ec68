import sys, os
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import math
import numpy as np
from tecref import default, param, save, outdir


def out_size(n, k, stride, pad0, pad1, dilation=1, ceil=False):
    """PyTorch's rule: in ceil mode the size rounds up, but a last window
    that would start in the end padding is dropped."""
    span = n + pad0 + pad1 - dilation * (k - 1) - 1
    if not ceil:
        return span // stride + 1
    out = math.ceil(span / stride) + 1
    if (out - 1) * stride >= n + pad0:
        out -= 1
    return out


def conv(x, w, b, stride, pads, dilation):
    (sh, sw), (pt, pl, pb, pr), (dh, dw) = stride, pads, dilation
    n, c, h, wd = x.shape
    f, _, kh, kw = w.shape
    oh, ow = out_size(h, kh, sh, pt, pb, dh), out_size(wd, kw, sw, pl, pr, dw)
    xp = np.pad(x, ((0, 0), (0, 0), (pt, pb), (pl, pr)))
    y = np.zeros((n, f, oh, ow))
    for r in range(kh):
        for s in range(kw):
            patch = xp[:, :, r * dh:r * dh + sh * (oh - 1) + 1:sh, s * dw:s * dw + sw * (ow - 1) + 1:sw]
            y += np.einsum("nchw,fc->nfhw", patch, w[:, :, r, s].astype(np.float64))
    return y + (0 if b is None else b[None, :, None, None])


def pool(x, kind, k, stride, pads, dilation=(1, 1), ceil=False, count_include_pad=True):
    (kh, kw), (sh, sw), (pt, pl, pb, pr), (dh, dw) = k, stride, pads, dilation
    n, c, h, wd = x.shape
    oh = out_size(h, kh, sh, pt, pb, dh, ceil)
    ow = out_size(wd, kw, sw, pl, pr, dw, ceil)
    y = np.empty((n, c, oh, ow))
    for p in range(oh):
        for q in range(ow):
            rows = [p * sh - pt + r * dh for r in range(kh)]
            cols = [q * sw - pl + s * dw for s in range(kw)]
            rin = [r for r in rows if 0 <= r < h]
            cin = [s for s in cols if 0 <= s < wd]
            win = x[:, :, rin][:, :, :, cin]
            if kind == "max":
                y[:, :, p, q] = win.max(axis=(2, 3))
            else:
                if count_include_pad:   # the window clipped to the padded input
                    nr = min(p * sh - pt + kh, h + pb) - (p * sh - pt)
                    nc = min(q * sw - pl + kw, wd + pr) - (q * sw - pl)
                else:                   # the window clipped to the input
                    nr, nc = len(rin), len(cin)
                y[:, :, p, q] = win.sum(axis=(2, 3)) / (nr * nc)
    return y


x = default("x", (2, 3, 9, 7)).astype(np.float64)
w_rect = param("c_rect.weight", (4, 3, 3, 2)).astype(np.float64)
b_rect = param("c_rect.bias", (4,)).astype(np.float64)
w_dil = param("c_dil.weight", (4, 3, 3, 3)).astype(np.float64)
expected = dict(
    c_rect=conv(x, w_rect, b_rect, (2, 1), (1, 0, 2, 1), (1, 1)),
    c_dil=conv(x, w_dil, None, (1, 1), (2, 1, 2, 1), (2, 1)),
    mp_dil=pool(x, "max", (3, 3), (2, 2), (1, 1, 1, 1), dilation=(2, 2)),
    mp_rect=pool(x, "max", (2, 3), (1, 2), (1, 1, 1, 1), ceil=True),
    ap_ceil=pool(x, "avg", (2, 2), (2, 2), (0, 0, 0, 0), ceil=True),
    ap_nopad=pool(x, "avg", (3, 3), (2, 2), (1, 1, 1, 1), count_include_pad=False),
    ap_ceil_nopad=pool(x, "avg", (2, 2), (2, 2), (1, 1, 1, 1), ceil=True, count_include_pad=False),
    ap_asym=pool(x, "avg", (2, 2), (2, 2), (1, 0, 0, 1), count_include_pad=False),
)
# the shapes this test is about: ceil mode adds a last, partial window
assert expected["ap_ceil"].shape == (2, 3, 5, 4), expected["ap_ceil"].shape   # 4 x 3 in floor mode
save(outdir(), "expected", **{k: v.astype(np.float32) for k, v in expected.items()})
