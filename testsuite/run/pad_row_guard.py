import sys, os
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import numpy as np
from tecref import save, outdir

indices = np.array([[0, 3, 1, 4], [2, 2, 0, 1]], dtype=np.int64)
padded = np.concatenate([indices, np.full((1, 4), 5, dtype=np.int64)])   # 'else 5' past row 2
y = np.full((3, 5), -1.0)
for i0 in range(3):
    for i1 in range(5):
        for k in range(4):
            if padded[i0, k] == i1:
                y[i0, i1] = max(y[i0, i1], k)
out = outdir()
save(out, "in", indices=indices)
save(out, "expected", y=y.astype(np.float32))
