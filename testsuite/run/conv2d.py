import sys, os
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import numpy as np
from tecref import conv2d, save, outdir

rng = np.random.default_rng(7)
x = rng.standard_normal((2, 3, 11, 9)).astype(np.float32)
w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
out = outdir()
save(out, "in", x=x, w=w)
save(out, "expected", y=conv2d(x, w, stride=2, pad=1).astype(np.float32))
