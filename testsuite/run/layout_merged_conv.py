import sys, os
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import numpy as np
from tecref import save, outdir

rng = np.random.default_rng(11)
x = rng.standard_normal((1, 8, 8, 8)).astype(np.float32)
w1 = rng.standard_normal((16, 8)).astype(np.float32)
b1 = rng.standard_normal(16).astype(np.float32)
w2 = rng.standard_normal((16, 5, 5)).astype(np.float32)
t = np.maximum(np.einsum("nchw,fc->nfhw", x.astype(np.float64), w1) + b1[None, :, None, None], 0)
tp = np.pad(t, ((0, 0), (0, 0), (2, 2), (2, 2)))
y = np.zeros_like(t)
for r in range(5):
    for s in range(5):
        y += tp[:, :, r:r + 8, s:s + 8] * w2[None, :, r, s, None, None]
out = outdir()
save(out, "in", x=x, w1=w1, b1=b1, w2=w2)
save(out, "expected", y=y.astype(np.float32))
