import sys, os
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import math
import numpy as np
from tecref import default, save, outdir


def out_size(n, k, stride, pad, ceil):
    """PyTorch's pooling output size: in ceil mode the size rounds up, but a
    last window that would start in the right padding is dropped."""
    if not ceil:
        return (n + 2 * pad - k) // stride + 1
    out = math.ceil((n + 2 * pad - k) / stride) + 1
    if (out - 1) * stride >= n + pad:
        out -= 1
    return out


def pool(x, k, stride, pad=0, ceil=False, kind="max"):
    n, c, h, w = x.shape
    oh, ow = out_size(h, k, stride, pad, ceil), out_size(w, k, stride, pad, ceil)
    y = np.empty((n, c, oh, ow))
    for p in range(oh):
        for q in range(ow):
            # the window in input coordinates, clipped to the input
            r0, s0 = p * stride - pad, q * stride - pad
            win = x[:, :, max(r0, 0):min(r0 + k, h), max(s0, 0):min(s0 + k, w)]
            if kind == "max":
                y[:, :, p, q] = win.max(axis=(2, 3))
            else:  # padding counts as zeros: divide by the whole window
                y[:, :, p, q] = win.sum(axis=(2, 3)) / (k * k)
    return y


x = default("x", (2, 3, 8, 6)).astype(np.float64)
x5 = default("x5", (1, 2, 5, 5)).astype(np.float64)
expected = dict(
    mp=pool(x, 3, 2),
    mp_pad=pool(x, 3, 2, pad=1),
    mp_ceil=pool(x, 3, 2, ceil=True),
    mp_ceil_pad=pool(x, 3, 3, pad=1, ceil=True),
    mp_drop=pool(x5, 2, 2, pad=1, ceil=True),
    ap=pool(x, 2, 2, kind="avg"),
    ap_pad=pool(x, 3, 2, pad=1, kind="avg"),
    gap=x.mean(axis=(2, 3)),
)
# the shapes this test is about
assert expected["mp_ceil"].shape == (2, 3, 4, 3)        # floor mode gives 3 x 2
assert expected["mp_ceil_pad"].shape == (2, 3, 3, 3)    # 4 x 3 without the drop rule
assert expected["mp_drop"].shape == (1, 2, 3, 3)        # 4 x 4 without the drop rule
save(outdir(), "expected", **{k: v.astype(np.float32) for k, v in expected.items()})
