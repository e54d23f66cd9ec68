import sys, os
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import numpy as np
from tecref import default, save, outdir

rng = np.random.default_rng(7)
w = {"bn1.weight": rng.uniform(0.5, 2, 3), "bn1.bias": rng.uniform(-1, 1, 3),
     "bn1.running_mean": rng.uniform(-1, 1, 3), "bn1.running_var": rng.uniform(0.2, 3, 3)}
w = {k: v.astype(np.float32) for k, v in w.items()}
save(outdir(), "weights", **w)
x = default("x", (2, 3, 4, 5)).astype(np.float64)
c = lambda k: w[k].astype(np.float64)[None, :, None, None]
y = (x - c("bn1.running_mean")) / np.sqrt(c("bn1.running_var") + 1e-5) * c("bn1.weight") + c("bn1.bias")
save(outdir(), "expected", y=y.astype(np.float32))
