import sys, os
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import numpy as np
from tecref import save, outdir

rng = np.random.default_rng(21)


def i8(shape):
    return rng.integers(-128, 128, shape, dtype=np.int8)


def requant(acc, bias, scale, relu, axis):
    """clamp(rint(f64(acc + bias) * scale), lo, 127): ties to even."""
    shape = [1] * acc.ndim
    shape[axis] = -1
    y = np.rint((acc + bias.reshape(shape)).astype(np.float64) *
                scale.astype(np.float64).reshape(shape))
    return np.clip(y, 0 if relu else -128, 127).astype(np.int8)


def qconv(x, w, b, s, stride, pad, relu):
    n, c, h, wd = x.shape
    f, _, k, _ = w.shape
    xp = np.zeros((n, c, h + 2 * pad, wd + 2 * pad), np.int64)
    xp[:, :, pad:pad + h, pad:pad + wd] = x
    oh, ow = (h + 2 * pad - k) // stride + 1, (wd + 2 * pad - k) // stride + 1
    acc = np.zeros((n, f, oh, ow), np.int64)
    for r in range(k):
        for q in range(k):
            patch = xp[:, :, r:r + stride * oh:stride, q:q + stride * ow:stride]
            acc += np.einsum("nchw,fc->nfhw", patch, w[:, :, r, q].astype(np.int64))
    assert np.abs(acc).max() < 2**31
    return requant(acc, b, s, relu, 1)


def params(name, shape):
    f = shape[0]
    return {name + ".weight": i8(shape),
            name + ".bias": rng.integers(-3000, 3000, f, dtype=np.int32),
            name + ".scale": rng.uniform(0.0005, 0.003, f).astype(np.float32)}


x, v = i8((2, 5, 9, 7)), i8((3, 40))
x[0, 0, 0, :] = -128
w = {}
w.update(params("conv", (6, 5, 3, 3)))
w.update(params("convr", (4, 5, 1, 1)))
w.update(params("fc", (7, 40)))
# a tie: acc + bias = 3 with scale 0.5 gives 1.5, which rounds to 2
w["fc.scale"][0] = 0.5
w["fc.bias"][0] = 3 - int(v[0].astype(np.int64) @ w["fc.weight"][0].astype(np.int64))
out = outdir()
save(out, "in", x=x, v=v)
save(out, "weights", **w)
conv = qconv(x, w["conv.weight"], w["conv.bias"], w["conv.scale"], 2, 1, False)
convr = qconv(x, w["convr.weight"], w["convr.bias"], w["convr.scale"], 1, 0, True)
acc = v.astype(np.int64) @ w["fc.weight"].astype(np.int64).T
fc = requant(acc, w["fc.bias"], w["fc.scale"], True, 1)
assert fc[0, 0] == 2
s = conv.astype(np.int32) * 2
save(out, "expected", conv=conv, convr=convr, fc=fc,
     sum=np.clip(s, -128, 127).astype(np.int8))
