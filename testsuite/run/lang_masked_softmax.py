import sys, os
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import numpy as np
from tecref import default, save, outdir

x = default("scores", (2, 6, 6), -5, 5).astype(np.float64)
t = x.shape[-1]
mask = np.tril(np.ones((t, t), dtype=bool))
y = np.zeros_like(x)
for i in range(t):
    row = x[:, i, :i + 1]
    e = np.exp(row - row.max(axis=-1, keepdims=True))
    y[:, i, :i + 1] = e / e.sum(axis=-1, keepdims=True)
assert (y[:, ~mask] == 0).all()
save(outdir(), "expected", probs=y.astype(np.float32))
