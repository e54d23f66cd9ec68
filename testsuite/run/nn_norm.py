import sys, os
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import numpy as np
from tecref import default, save, outdir

f64 = lambda a: a.astype(np.float64)
x = f64(default("x", (2, 3, 4, 5), -3, 5))
s = f64(default("s", (2, 4, 6), -2, 3))
v = f64(default("v", (3, 5), -4, 1))


def batchnorm(name, eps):
    w = f64(default(name + ".weight", (3,), 0.5, 1.5))
    b = f64(default(name + ".bias", (3,)))
    mean = f64(default(name + ".running_mean", (3,)))
    var = f64(default(name + ".running_var", (3,), 0.5, 1.5))
    c = (slice(None), None, None)
    return (x - mean[c]) / np.sqrt(var[c] + eps) * w[c] + b[c]


def layernorm(name, v, eps=1e-5):
    c = v.shape[-1]
    w = f64(default(name + ".weight", (c,), 0.5, 1.5))
    b = f64(default(name + ".bias", (c,)))
    mu = v.mean(axis=-1, keepdims=True)
    var = ((v - mu) ** 2).mean(axis=-1, keepdims=True)
    return (v - mu) / np.sqrt(var + eps) * w + b


save(outdir(), "expected", bn=batchnorm("bn", 1e-5).astype(np.float32),
     bn_eps=batchnorm("bn_eps", 0.25).astype(np.float32),
     ln=layernorm("ln", s).astype(np.float32),
     ln2=layernorm("ln2", v, eps=0.01).astype(np.float32))
