import sys, os
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import numpy as np
from tecref import default, save, outdir

ids = np.array([0, 7, 5, 8, -1, 100], dtype=np.int64)
table = default("table", (8,))
ok = (ids >= 0) & (ids < 8)
safe = np.where(ok, ids, 0)
out = outdir()
save(out, "in", ids=ids)
save(out, "expected",
     by_value=np.where(ok, table[safe], -1).astype(np.float32),
     by_position=np.where(np.arange(6) < 3, table[safe], 0).astype(np.float32),
     nested=np.where(ids < 0, -2, np.where(ids >= 8, -3, table[safe] * 2)).astype(np.float32),
     short_circuit=np.where(ok & (table[safe] > 0), 1, 0).astype(np.int64))
