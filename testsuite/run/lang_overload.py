import sys, os
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import numpy as np
from tecref import default, param, save, outdir

m = default("m", (4, 6)).astype(np.float64)
img = default("img", (2, 3, 4, 5))
seq = default("seq", (2, 3, 6)).astype(np.float64)
w2 = param("l2.weight", (5, 6)).astype(np.float64)
w3 = param("l3.weight", (5, 6)).astype(np.float64)
save(outdir(), "expected", rimg=np.maximum(img, 0), l2=(np.maximum(m, 0) @ w2.T).astype(np.float32),
     l3=(seq @ w3.T).astype(np.float32))
