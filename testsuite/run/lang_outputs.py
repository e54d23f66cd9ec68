import sys, os
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import numpy as np
from tecref import default, save, outdir

x = default("x", (4, 6))
a = default("a", (5,))
b = default("b", (5,))
r = np.maximum(x, 0)
save(outdir(), "expected",
     m=x.max(axis=1), idx=x.argmax(axis=1).astype(np.int64),
     s=a + b, p=a * b,
     top=r.max(axis=1), pos=r.argmax(axis=1).astype(np.int64))
