import sys, os
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import numpy as np
from tecref import default, save, outdir

bins = default("bins", (40,), 0, 7, np.int64)
v = default("v", (5, 4))
perm = np.array([6, 0, 3, 7, 1], dtype=np.int64)
x = default("x", (6,))
w = default("w", (30,)).astype(np.float64)
row = default("row", (30,), 0, 9, np.int64)
col = default("col", (30,), 0, 8, np.int64)
s = np.zeros((8, 4), np.float32)
s[perm] = v
y = np.full(4, -np.inf, np.float32)
np.maximum.at(y, np.arange(6) % 4, x + x[::-1])
g = np.zeros((3, 4))
np.add.at(g, (row % 3, col // 2), w)
out = outdir()
save(out, "in", perm=perm)
save(out, "expected", h=np.bincount(bins, minlength=7).astype(np.int64), s=s, y=y,
     g=g.astype(np.float32))
