import sys, os
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import numpy as np
from tecref import default, save, outdir

r = np.maximum(default("x", (4,)), 0)
save(outdir(), "expected", **{"x.out": r, "y": 2 * r})
