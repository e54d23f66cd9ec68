import sys, os
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import numpy as np
from tecref import save, outdir

rng = np.random.default_rng(18)
C = 64


def conv3x3(x, w):
    """int8 x int8 -> int64 cross-correlation, padding 1, stride 1."""
    n, c, h, wd = x.shape
    xp = np.zeros((n, c, h + 2, wd + 2), np.int64)
    xp[:, :, 1:1 + h, 1:1 + wd] = x
    acc = np.zeros((n, w.shape[0], h, wd), np.int64)
    for r in range(3):
        for s in range(3):
            acc += np.einsum("nchw,fc->nfhw", xp[:, :, r:r + h, s:s + wd],
                             w[:, :, r, s].astype(np.int64))
    return acc


def requant(acc, bias, scale, lo):
    """round half to even of f64(acc + bias) * scale, clamped to [lo, 127]."""
    y = np.rint((acc + bias[None, :, None, None]).astype(np.float64) *
                scale.astype(np.float64)[None, :, None, None])
    return np.clip(y, lo, 127).astype(np.int8)


x = rng.integers(-128, 128, (1, C, 8, 8), dtype=np.int8)
w = {}
for name in ("conv1", "conv2"):
    w["layer1.0.%s.weight" % name] = rng.integers(-128, 128, (C, C, 3, 3), dtype=np.int8)
    w["layer1.0.%s.bias" % name] = rng.integers(-20000, 20000, C, dtype=np.int32)
    # a scale that spreads the int32 sums over the int8 range
    w["layer1.0.%s.scale" % name] = rng.uniform(1 / 3000, 1 / 1000, C).astype(np.float32)
p = lambda name, k: w["layer1.0.%s.%s" % (name, k)]
h = requant(conv3x3(x, p("conv1", "weight")), p("conv1", "bias"), p("conv1", "scale"), 0)
r = requant(conv3x3(h, p("conv2", "weight")), p("conv2", "bias"), p("conv2", "scale"), -128)
y = np.clip(r.astype(np.int32) + x.astype(np.int32), 0, 127).astype(np.int8)
# the block is not degenerate: relu clamps some, saturation others
assert (h == 0).any() and (h == 127).any() and (y == 0).any() and (y == 127).any()
assert 0.2 < (y > 0).mean() < 0.8
out = outdir()
save(out, "in", x=x)
save(out, "weights", **w)
save(out, "expected", y=y)
