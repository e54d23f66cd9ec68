import sys, os
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import numpy as np
from tecref import default, param, save, outdir


def f64(a):
    return a.astype(np.float64)


def linear(name, v, out):
    w = f64(param(name + ".weight", (out, v.shape[-1])))
    b = f64(param(name + ".bias", (out,)))
    return np.einsum("...i,oi->...o", v, w) + b


x = f64(default("x", (3, 10)))
seq = f64(default("seq", (2, 3, 6)))
A, B = f64(default("A", (5, 7))), f64(default("B", (7, 4)))
P, Q = f64(default("P", (2, 3, 6))), f64(default("Q", (2, 6, 5)))
bm = np.stack([P[i] @ Q[i] for i in range(2)])
expected = dict(fc=linear("fc", x, 4), proj=linear("proj", seq, 5), mm=A @ B, bm=bm)
save(outdir(), "expected", **{k: v.astype(np.float32) for k, v in expected.items()})
