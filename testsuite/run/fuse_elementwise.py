import sys, os
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import numpy as np
from tecref import conv2d, default, param, save, outdir

f64 = lambda a: a.astype(np.float64)
x = f64(default("x", (1, 8, 6, 10)))
z = f64(default("z", (1, 5, 6, 10)))
a = conv2d(x, f64(param("c1.weight", (6, 8, 3, 3))), 1, 1)
p = np.concatenate([a, z], axis=1)
c = (slice(None), None, None)
w = f64(default("bn.weight", (11,), 0.5, 1.5))
b = f64(default("bn.bias", (11,)))
mean = f64(default("bn.running_mean", (11,)))
var = f64(default("bn.running_var", (11,), 0.5, 1.5))
r = np.maximum((p - mean[c]) / np.sqrt(var[c] + 1e-5) * w[c] + b[c], 0.0)
s = conv2d(r, f64(param("c2.weight", (8, 11, 1, 1))), 1, 0)
m = s.reshape(1, 8, 3, 2, 5, 2).max(axis=(3, 5))
v = np.clip(m, 0.0, 6.0)
y = 1.0 / (1.0 + np.exp(-v)) + m
save(outdir(), "expected", y=y.astype(np.float32))
