import sys, os
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import math
import numpy as np
from tecref import conv2d, default, param, save, outdir


def conv(x, name, f, k, stride=1, pad=0, groups=1):
    c = x.shape[1]
    w = param(name + ".weight", (f, c // groups, k, k)).astype(np.float64)
    b = param(name + ".bias", (f,)).astype(np.float64)
    if groups == 1:
        y = conv2d(x, w, stride, pad)
    else:   # depthwise: each channel with its own filter
        y = np.concatenate([conv2d(x[:, i:i + 1], w[i:i + 1], stride, pad) for i in range(f)], axis=1)
    return y + b[None, :, None, None]


sig = lambda v: 1.0 / (1.0 + np.exp(-v))
x = default("x", (1, 8, 7, 9)).astype(np.float64)
a = np.clip(conv(x, "c1", 16, 3, pad=1), 0.0, 6.0)
b = conv(a, "c2", 16, 1)
b = b * sig(b)
c = np.maximum(conv(b, "c3", 16, 3, pad=1) + a, 0.0)
d = conv(c, "dw", 16, 3, stride=2, pad=1, groups=16)
h = d * np.clip(d + 3.0, 0.0, 6.0) / 6.0
s = sig(conv(h, "c4", 12, 1))
g = conv(s, "c5", 12, 1)
g = 0.5 * g * (1.0 + np.vectorize(math.erf)(g / math.sqrt(2.0)))
save(outdir(), "expected", g=g.astype(np.float32))
