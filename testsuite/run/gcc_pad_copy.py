import sys, os
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import numpy as np
from tecref import save, outdir

x = np.array([[-0.5, -0.6], [-0.7, -0.8]], dtype=np.float32)
y = np.full(10, 0.25, dtype=np.float32)
y[4:6] = x[:, 1]
z = np.full((14, 2), 0.25, dtype=np.float32)
z[4:6] = x
out = outdir()
save(out, "in", x=x)
save(out, "expected", y=y, z=z)
