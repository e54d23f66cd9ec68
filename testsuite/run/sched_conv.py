import sys, os
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import numpy as np
from tecref import default, param, save, outdir, conv2d

x = default("x", (1, 5, 13, 11)).astype(np.float64)
w = param("conv.weight", (20, 5, 3, 3)).astype(np.float64)
b = param("conv.bias", (20,)).astype(np.float64)
y = conv2d(x, w, stride=2, pad=1) + b[None, :, None, None]
save(outdir(), "expected", y=y.astype(np.float32))
