import sys, os
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import numpy as np
from tecref import default, save, outdir

f64 = lambda v: v.astype(np.float64)

a = f64(default("a", (100000,), 0, 1))
b = f64(default("b", (2, 1000), -1, 3))
e = default("e", (5000,), -100000, 100000, np.int32).astype(np.int64)
c = f64(default("c", (1, 4096), -8, 8))
d = f64(default("d", (1, 768), -2, 3))
ex = np.exp(c - c.max(axis=-1, keepdims=True))
w = f64(default("ln.weight", (768,), 0.5, 1.5))
bias = f64(default("ln.bias", (768,)))
mu = d.mean(axis=-1, keepdims=True)
var = ((d - mu) ** 2).mean(axis=-1, keepdims=True)
out = dict(sum=np.array(a.sum()), max=np.array(a.max()), min=np.array(a.min()),
           mean=np.array(b.mean()), sm=ex / ex.sum(axis=-1, keepdims=True),
           ln=(d - mu) / np.sqrt(var + 1e-5) * w + bias)
out = {k: v.astype(np.float32) for k, v in out.items()}
out["isum"] = np.array(e.sum()).astype(np.int32)
save(outdir(), "expected", **out)
