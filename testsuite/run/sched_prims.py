import sys, os
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import numpy as np
from tecref import default, save, outdir

x = default("x", (7, 45)).astype(np.float64)
v = default("v", (45,)).astype(np.float64)
t = np.exp(x)
save(outdir(), "expected",
     a=x.sum(axis=1).astype(np.float32),
     b=x.max(axis=1).astype(np.float32),
     c=(x @ v).astype(np.float32),
     d=(t * 3.0 + t * x + 1.0).astype(np.float32),
     e=(x * x - 0.5 * x * x).astype(np.float32),
     f=(x * x).sum(axis=1).astype(np.float32))
