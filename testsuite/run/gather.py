import sys, os
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import numpy as np
from tecref import default, save, outdir

ids = default("ids", (3, 5), 0, 11, np.int64)
table = default("table", (11, 6))
save(outdir(), "expected", emb=table[ids])
