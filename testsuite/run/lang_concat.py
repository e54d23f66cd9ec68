import sys, os
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import numpy as np
from tecref import default, save, outdir

a = default("a", (2, 3, 4, 5))
b = default("b", (2, 2, 4, 5), 5, 6)
v = default("v", (3, 6))
save(outdir(), "expected", ab=np.concatenate([a, b], axis=1), ba=np.concatenate([b, a], axis=1),
     padded=np.pad(v, ((0, 0), (2, 2))))
