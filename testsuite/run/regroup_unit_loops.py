import sys, os
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import numpy as np
from tecref import save, outdir


def conv1d(x, w, groups, stride, pad, oh):
    """y[f, p] = sum over c, r of x[g*Cg + c, p*stride + r - pad] (0 outside) * w[f, c, r]."""
    F, Cg, R = w.shape
    Fg = F // groups
    xp = np.zeros((x.shape[0], x.shape[1] + 2 * pad + R), np.float64)
    xp[:, pad:pad + x.shape[1]] = x
    y = np.zeros((F, oh), np.float64)
    for f in range(F):
        for p in range(oh):
            for c in range(Cg):
                for r in range(R):
                    y[f, p] += xp[f // Fg * Cg + c, p * stride + r] * w[f, c, r]
    return y.astype(np.float32)


rng = np.random.default_rng(27)
x = rng.standard_normal((2, 5)).astype(np.float32)
w = rng.standard_normal((3, 2, 2)).astype(np.float32)
xd = rng.standard_normal((4, 5)).astype(np.float32)
wd = rng.standard_normal((4, 1, 3)).astype(np.float32)
out = outdir()
save(out, "in", x=x, w=w, xd=xd, wd=wd)
save(out, "expected", y=conv1d(x, w, 1, 2, 1, 3), yd=conv1d(xd, wd, 4, 1, 1, 5))
