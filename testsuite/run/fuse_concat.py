import sys, os
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import numpy as np
from tecref import conv2d, default, param, save, outdir


def conv(x, name, f, k, pad=0, bias=False):
    w = param(name + ".weight", (f, x.shape[1], k, k)).astype(np.float64)
    y = conv2d(x, w, 1, pad)
    if bias:
        y = y + param(name + ".bias", (f,)).astype(np.float64)[None, :, None, None]
    return y


def maxpool3(x):
    p = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)), constant_values=-np.inf)
    h, w = x.shape[2], x.shape[3]
    return np.max([p[:, :, i:i + h, j:j + w] for i in range(3) for j in range(3)], axis=0)


relu = lambda v: np.maximum(v, 0.0)
cat = lambda *t: np.concatenate(t, axis=1)
x = default("x", (1, 4, 6, 7)).astype(np.float64)
s = relu(conv(x, "sq", 3, 1, bias=True))
a = relu(conv(s, "e1", 4, 1, bias=True))
b = relu(conv(s, "e3", 5, 3, pad=1, bias=True))
fire = cat(a, b)
b1 = conv(fire, "b1", 2, 1, bias=True)
t2 = conv(fire, "b2", 3, 1, bias=True)
b2 = cat(conv(t2, "b2a", 2, 3, pad=1), conv(t2, "b2b", 3, 1))
block = cat(b1, b2, maxpool3(fire), conv(fire, "b4", 1, 3, pad=1))
y = conv(block, "head", 3, 1)
side = conv(x, "side", 2, 1)
kept = cat(side, s)
twice = cat(side + side, side + side)
raw = cat(x, side)
q = conv(x, "q", 4, 1)
both = cat(relu(x), q)
pq = relu(x) + q
z = default("z", (2, 3, 4, 5)).astype(np.float64)
batch = cat(relu(z), conv(z, "zconv", 2, 1))
out = cat(conv(x, "o1", 3, 3, pad=1), relu(x))
save(outdir(), "expected", y=y.astype(np.float32), kept=kept.astype(np.float32),
     twice=twice.astype(np.float32), batch=batch.astype(np.float32), out=out.astype(np.float32),
     raw=raw.astype(np.float32), both=both.astype(np.float32), pq=pq.astype(np.float32))
