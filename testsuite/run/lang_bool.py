import sys, os
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import numpy as np
from tecref import save, outdir

x = np.random.default_rng(5).uniform(-1, 1, 40).astype(np.float32)
m = (x > 0) & (x < 0.5)
out = outdir()
save(out, "in", x=x)
save(out, "expected", m=m, y=np.where(m, x, np.float32(-1)),
     n=np.array(m.sum(), dtype=np.int32))
