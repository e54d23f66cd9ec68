import sys, os
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import numpy as np
from tecref import default, save, outdir

expected = {}
for rank, shape in ((2, (3, 7)), (3, (2, 3, 5)), (4, (2, 3, 4, 5))):
    a = default("a%d" % rank, shape).astype(np.float64)
    b = default("b%d" % rank, shape).astype(np.float64)
    expected["sum%d" % rank] = a + b
    expected["prod%d" % rank] = a * b
s = default("s", (2, 3)).astype(np.float64)
expected["scaled"] = default("a4", (2, 3, 4, 5)).astype(np.float64) * s[:, :, None, None]
save(outdir(), "expected", **{k: v.astype(np.float32) for k, v in expected.items()})
