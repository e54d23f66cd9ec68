import sys, os
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import numpy as np
from tecref import conv2d, default, param, save, outdir

f64 = lambda a: a.astype(np.float64)
relu = lambda v: np.maximum(v, 0.0)
cat = lambda *t: np.concatenate(t, axis=1)
c = (slice(None), None, None)


def conv(x, name, f, k, pad=0, bias=False):
    y = conv2d(x, f64(param(name + ".weight", (f, x.shape[1], k, k))), 1, pad)
    if bias:
        y = y + f64(param(name + ".bias", (f,)))[None, :, None, None]
    return y


def bn(x, name):
    n = x.shape[1]
    w = f64(default(name + ".weight", (n,), 0.5, 1.5))
    b = f64(default(name + ".bias", (n,)))
    mean = f64(default(name + ".running_mean", (n,)))
    var = f64(default(name + ".running_var", (n,), 0.5, 1.5))
    return (x - mean[c]) / np.sqrt(var[c] + 1e-5) * w[c] + b[c]


x = f64(default("x", (1, 3, 6, 7)))
x0 = relu(conv(x, "stem", 4, 1, bias=True))
f1 = conv(relu(bn(x0, "l1_bn")), "l1_conv", 2, 3, pad=1)
f2 = conv(relu(bn(cat(x0, f1), "l2_bn")), "l2_conv", 2, 3, pad=1)
f3 = conv(relu(bn(cat(x0, f1, f2), "l3_bn")), "l3_conv", 2, 3, pad=1)
t = relu(bn(cat(x0, f1, f2, f3), "t_bn"))
y = conv(t, "head", 3, 1)
save(outdir(), "expected", y=y.astype(np.float32))
