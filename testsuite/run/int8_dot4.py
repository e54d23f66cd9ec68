import sys, os
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import numpy as np
from tecref import save, outdir

rng = np.random.default_rng(26)


def ints(shape, dtype):
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max + 1, shape, dtype=dtype)


def mm(a, b):
    return (a.astype(np.int64) @ b.astype(np.int64)).astype(np.int32)


def requant(acc, bias, scale, relu):
    shape = [1] * acc.ndim
    shape[1] = -1
    y = np.rint((acc + bias.reshape(shape)).astype(np.float64) *
                scale.astype(np.float64).reshape(shape))
    return np.clip(y, 0 if relu else -128, 127).astype(np.int8)


a, b = ints((9, 64), np.int8), ints((64, 40), np.int8)
ua, ub = ints((9, 64), np.uint8), ints((64, 40), np.uint8)
c, d = ints((9, 7), np.int8), ints((7, 40), np.int8)
x, v = ints((1, 8, 10, 9), np.int8), ints((5, 20), np.int8)
w = {
    "conv.weight": ints((48, 8, 3, 3), np.int8),
    "conv.bias": rng.integers(-1000, 1000, 48).astype(np.int32),
    "conv.scale": rng.uniform(0.0005, 0.002, 48).astype(np.float32),
    "fc.weight": ints((33, 20), np.int8),
    "fc.bias": rng.integers(-1000, 1000, 33).astype(np.int32),
    "fc.scale": rng.uniform(0.0005, 0.002, 33).astype(np.float32),
}
xp = np.zeros((1, 8, 12, 11), np.int64)
xp[:, :, 1:11, 1:10] = x
acc = np.zeros((1, 48, 10, 9), np.int64)
for r in range(3):
    for s in range(3):
        acc += np.einsum("nchw,fc->nfhw", xp[:, :, r:r + 10, s:s + 9],
                         w["conv.weight"][:, :, r, s].astype(np.int64))
conv = requant(acc, w["conv.bias"], w["conv.scale"], True)
fc = requant(v.astype(np.int64) @ w["fc.weight"].T.astype(np.int64), w["fc.bias"],
             w["fc.scale"], False)

out = outdir()
save(out, "in", a=a, b=b, ua=ua, ub=ub, c=c, d=d, x=x, v=v)
save(out, "weights", **w)
save(out, "expected", ss=mm(a, b), us=mm(ua, b), su=mm(a, ub), uu=mm(ua, ub), odd=mm(c, d),
     conv=conv, fc=fc)
