import sys, os
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import numpy as np
from tecref import default, save, outdir

f64 = lambda v: v.astype(np.float64)


def softmax(v):
    e = np.exp(v - v.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def log_softmax(v):
    d = v - v.max(axis=-1, keepdims=True)
    return d - np.log(np.exp(d).sum(axis=-1, keepdims=True))


def layernorm(name, v, eps=1e-5):
    c = v.shape[-1]
    w = f64(default(name + ".weight", (c,), 0.5, 1.5))
    b = f64(default(name + ".bias", (c,)))
    mu = v.mean(axis=-1, keepdims=True)
    var = ((v - mu) ** 2).mean(axis=-1, keepdims=True)
    return (v - mu) / np.sqrt(var + eps) * w + b


a = f64(default("a", (2, 3, 197), -8, 8))
g = f64(default("g", (3, 197), -8, 8))
b = f64(default("b", (4, 33), -8, 8))
c = f64(default("c", (5, 7), -8, 8))
d = f64(default("d", (3, 1), -8, 8))
att = f64(default("att", (1, 2, 130, 130), -8, 8))
future = np.triu(np.ones((130, 130), bool), k=1)
out = dict(sm197=softmax(a), sm33=softmax(b), sm7=softmax(c), sm1=softmax(d),
           causal=softmax(np.where(future, -np.inf, att)),
           ln197=layernorm("ln197", f64(default("t", (1, 5, 197), -2, 3))),
           ln7=layernorm("ln7", f64(default("u", (2, 3, 7), -2, 3))),
           ln1=layernorm("ln1", f64(default("v", (3, 1), -2, 3))),
           lsm197=log_softmax(g), lsm7=log_softmax(c))
save(outdir(), "expected", **{k: v.astype(np.float32) for k, v in out.items()})
