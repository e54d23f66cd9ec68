import sys, os
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import numpy as np
from tecref import default, save, outdir

x = default("x", (2, 3, 4, 5))
x1 = default("x1", (2, 1, 4, 5))
x2 = default("x2", (2, 2, 4, 5))
seq = default("seq", (2, 5, 12))
heads = seq.reshape(2, 5, 3, 4).transpose(0, 2, 1, 3)
save(outdir(), "expected", cat=np.concatenate([x, x2], axis=1),
     cat4=np.concatenate([x1, x, x2, x1], axis=1), flat=x.reshape(2, 60),
     heads=np.ascontiguousarray(heads), merged=seq,
     kt=np.ascontiguousarray(heads.transpose(0, 1, 3, 2)))
