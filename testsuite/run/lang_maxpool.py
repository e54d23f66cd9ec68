import sys, os
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import numpy as np
from tecref import default, save, outdir


def maxpool(x, k, stride, pad):
    n, c, h, w = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)), constant_values=-np.inf)
    oh = (h + 2 * pad - k) // stride + 1
    ow = (w + 2 * pad - k) // stride + 1
    y = np.full((n, c, oh, ow), -np.inf, dtype=x.dtype)
    for r in range(k):
        for s in range(k):
            y = np.maximum(y, xp[:, :, r:r + stride * oh:stride, s:s + stride * ow:stride])
    return y


x = default("x", (2, 3, 9, 10), -4, -1)
v = default("v", (3, 7)).astype(np.float64)
ahead = np.zeros_like(v)
for d in (1, 2):
    ahead[:, :-d] += v[:, d:]
save(outdir(), "expected", pooled=maxpool(x, 3, 2, 1), big=maxpool(x, 2, 2, 0),
     sums=ahead.astype(np.float32))
