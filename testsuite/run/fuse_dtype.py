import sys, os
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import numpy as np
from tecref import conv2d, save, outdir

rng = np.random.default_rng(11)
x = rng.standard_normal((1, 8, 12, 12)).astype(np.float32)
w = rng.standard_normal((16, 8, 3, 3)).astype(np.float32)
out = outdir()
save(out, "in", x=x, w=w)
y = conv2d(x, w).astype(np.float32)
q = np.clip(np.rint(y / np.float32(0.25)) + 126, 0, 255).astype(np.uint8)
save(out, "expected", q=q)
