import sys, os
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import numpy as np
from tecref import default, save, outdir

i = np.arange(6)
n = default("n", (6,), -9, 9, np.int64)
in_let = 7 // 2 + 10 * (-7 // 2) + 100 * (7 // 2)
save(outdir(), "expected",
     casts=(in_let + 1000 * (i // 2) + in_let).astype(np.float32),
     context=(i // 4 + (i - 5) % 3 + 0.5 * (7 // 2)).astype(np.float32),
     runtime=((n // 4) + 10 * (n % 4)).astype(np.float64))
