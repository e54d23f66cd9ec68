import sys, os
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import numpy as np
from tecref import conv2d, default, param, save, outdir

x = default("x", (1, 16, 28, 28)).astype(np.float64)
w = param("conv.weight", (40, 16, 1, 1)).astype(np.float64)
b = param("conv.bias", (40,)).astype(np.float64)
y = conv2d(x, w, 1, 0) + b[None, :, None, None]
save(outdir(), "expected", y=y.astype(np.float32))
