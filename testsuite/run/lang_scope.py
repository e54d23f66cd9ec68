import sys, os
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import numpy as np
from tecref import conv2d, default, param, save, outdir


def f64(a):
    return a.astype(np.float64)


def maxpool(x, k, stride, pad):
    n, c, h, w = x.shape
    oh, ow = (h + 2 * pad - k) // stride + 1, (w + 2 * pad - k) // stride + 1
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)), constant_values=-np.inf)
    y = np.empty((n, c, oh, ow))
    for p in range(oh):
        for q in range(ow):
            y[:, :, p, q] = xp[:, :, p * stride:p * stride + k, q * stride:q * stride + k].max(axis=(2, 3))
    return y


# the program's lets
n, c, h, w, f, k, p, q, r, s, t, o = 2, 3, 7, 6, 4, 3, 1, 2, 1, 3, 5, 4
b = n * f
x = f64(default("x", (n, c, h, w)))
seq = f64(default("seq", (b, t)))
act = np.maximum(conv2d(x, f64(param("conv.weight", (f, c, k, k))), pad=p), 0)
aff = act * q + s
pool = maxpool(aff, 2, 2, r)
fc = seq @ f64(param("fc.weight", (o, t))).T + f64(param("fc.bias", (o,)))
e = np.exp(fc - fc.max(axis=1, keepdims=True))
prob = e / e.sum(axis=1, keepdims=True)
expected = dict(act=act, aff=aff, pool=pool, prob=prob)
assert pool.shape == (2, 4, 4, 4)
save(outdir(), "expected", **{k: v.astype(np.float32) for k, v in expected.items()})
