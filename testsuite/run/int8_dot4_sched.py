import sys, os
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import numpy as np
from tecref import save, outdir

rng = np.random.default_rng(4)
A = rng.integers(-128, 128, (10, 24), dtype=np.int8)
B = rng.integers(-128, 128, (24, 48), dtype=np.int8)
U = rng.integers(0, 256, (10, 24), dtype=np.uint8)
out = outdir()
save(out, "in", A=A, B=B, U=U)
save(out, "expected", C=(A.astype(np.int64) @ B).astype(np.int32),
     D=(U.astype(np.int64) @ B).astype(np.int32))
