import sys, os
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import numpy as np
from tecref import default, save, outdir

row = default("row", (1, 6)).astype(np.float64)
column = default("column", (5, 1)).astype(np.float64)
save(outdir(), "expected",
     s=(2.0 * np.tanh(row)).sum(axis=1).astype(np.float32),
     r=(2.0 * np.tanh(column)).astype(np.float32),
     c=(2.0 * np.tanh(row) + row).astype(np.float32))
