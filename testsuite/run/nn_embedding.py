import sys, os
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import numpy as np
from tecref import default, param, save, outdir

ids = default("ids", (2, 5), 0, 9, np.int64)
table = param("wte.weight", (9, 6))
out = np.empty((2, 5, 6), np.float32)
for b in range(2):
    for t in range(5):
        out[b, t] = table[ids[b, t]]
save(outdir(), "expected", tok=out)
