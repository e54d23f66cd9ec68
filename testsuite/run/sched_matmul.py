import sys, os
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import numpy as np
from tecref import default, save, outdir

A = default("A", (37, 53)).astype(np.float64)
B = default("B", (53, 29)).astype(np.float64)
save(outdir(), "expected", C=(A @ B).astype(np.float32))
