import sys, os
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import numpy as np
from tecref import default, save, outdir

a = default("a", (8,), -1, 2, np.int64)
b = default("b", (8,), -1, 2)
x = default("x", (8,))
fb = np.floor(b)
save(outdir(), "expected",
     both=np.where((a != 0) & (a.astype(np.float32) + b != 0), x, 0).astype(np.float32),
     either=np.where((a != 0) | (fb != 0), x, -x).astype(np.float32),
     neither=np.where((a == 0) & (fb == 0), 1, 2).astype(np.int64))
