import sys, os
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import numpy as np
from tecref import save, outdir

rng = np.random.default_rng(23)
x = rng.standard_normal((1, 3, 55, 55)).astype(np.float32)
x[0, 2, 54, :] = 50.0   # the last row of the last channel wins its windows
z = rng.standard_normal((1, 5, 35, 28)).astype(np.float32)
x71 = rng.standard_normal((1, 3, 71, 71)).astype(np.float32)
x71[0, 2, 70, :] = 50.0
x111 = rng.standard_normal((1, 2, 111, 111)).astype(np.float32)
x111[0, 1, 110, :] = 50.0
z8 = rng.standard_normal((1, 6, 8, 8)).astype(np.float32)


def maxpool(x, k, stride):
    n, c, h, w = x.shape
    ph, pw = (h - k) // stride + 1, (w - k) // stride + 1
    y = np.full((n, c, ph, pw), -np.inf, dtype=np.float32)
    for r in range(k):
        for s in range(k):
            y = np.maximum(y, x[:, :, r:r + stride * (ph - 1) + 1:stride, s:s + stride * (pw - 1) + 1:stride])
    return y


def avgpool3_padded(z):
    zp = np.pad(z.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
    h, w = z.shape[2], z.shape[3]
    acc = sum(zp[:, :, r:r + h, t:t + w] for r in range(3) for t in range(3))
    return (acc / 9).astype(np.float32)


out = outdir()
save(out, "in", x=x, z=z, x71=x71, x111=x111, z8=z8)
save(out, "expected", m27=maxpool(x, 3, 2), m13=maxpool(x, 5, 4), a35=avgpool3_padded(z),
     cm=z.astype(np.float64).mean(axis=1).astype(np.float32),
     m35=maxpool(x71, 3, 2), m55=maxpool(x111, 3, 2), a8=avgpool3_padded(z8))
