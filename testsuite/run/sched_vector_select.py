import sys, os
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import numpy as np
from tecref import default, save, outdir

x = default("x", (4, 5)).astype(np.float64)
shifted = np.zeros_like(x)
shifted[:, 2:] = np.abs(x[:, :-2]) - 0.5
save(outdir(), "expected", y=(x + shifted).astype(np.float32))
