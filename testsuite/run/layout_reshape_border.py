import sys, os
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import numpy as np
from tecref import default, param, save, outdir

f64 = lambda a: a.astype(np.float64)
x = f64(default("x", (2, 7, 8, 8)))
t2 = x @ f64(param("t2.B", (8,)))
t6 = t2.reshape(4, 1, 28) / 2
w = f64(param("t8.weight", (3, 1, 4)))
xp = np.concatenate([t6, np.zeros((4, 1, 2))], axis=2)   # 'else 0' past the end
y = np.zeros((4, 3, 27))
for o in range(27):
    y[:, :, o] = np.einsum('ncr,fcr->nf', xp[:, :, o:o + 4], w)
save(outdir(), "expected", t8=y.astype(np.float32))
