import sys, os
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import numpy as np
from tecref import save, outdir

rng = np.random.default_rng(21)


def i8(shape):
    return rng.integers(-128, 128, shape, dtype=np.int8)


def requant(acc, bias, scale, relu, y_zero=0):
    """clamp(rint(f64(acc + bias) * scale) + y_zero, lo, 127) per channel
    (axis 1), ties to even; lo is y_zero with a fused relu, else -128."""
    shape = [1] * acc.ndim
    shape[1] = -1
    y = np.rint((acc + bias.reshape(shape)).astype(np.float64) *
                scale.astype(np.float64).reshape(shape)) + y_zero
    return np.clip(y, y_zero if relu else -128, 127).astype(np.int8)


def qconv(x, w, b, s, stride, pad, relu, x_zero=0, y_zero=0):
    n, c, h, wd = x.shape
    f, _, k, _ = w.shape
    # the padding holds the real 0, whose code is x_zero
    xp = np.full((n, c, h + 2 * pad, wd + 2 * pad), x_zero, np.int64)
    xp[:, :, pad:pad + h, pad:pad + wd] = x
    xp -= x_zero
    oh, ow = (h + 2 * pad - k) // stride + 1, (wd + 2 * pad - k) // stride + 1
    acc = np.zeros((n, f, oh, ow), np.int64)
    for r in range(k):
        for q in range(k):
            patch = xp[:, :, r:r + stride * oh:stride, q:q + stride * ow:stride]
            acc += np.einsum("nchw,fc->nfhw", patch, w[:, :, r, q].astype(np.int64))
    assert np.abs(acc).max() < 2**31
    return requant(acc, b, s, relu, y_zero)


def qlin(v, w, b, s, relu, x_zero=0, y_zero=0):
    acc = (v.astype(np.int64) - x_zero) @ w.astype(np.int64).T
    return requant(acc, b, s, relu, y_zero)


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
w.update(params("zconv", (6, 5, 3, 3)))
w.update(params("zconvr", (4, 5, 3, 3)))
w.update(params("zfc", (7, 40)))
w.update(params("zfcr", (5, 40)))
# a tie: acc + bias = 3 with scale 0.5 gives 1.5, which rounds to 2
w["fc.scale"][0] = 0.5
w["fc.bias"][0] = 3 - int(v[0].astype(np.int64) @ w["fc.weight"][0].astype(np.int64))
out = outdir()
save(out, "in", x=x, v=v)
save(out, "weights", **w)
conv = qconv(x, w["conv.weight"], w["conv.bias"], w["conv.scale"], 2, 1, False)
convr = qconv(x, w["convr.weight"], w["convr.bias"], w["convr.scale"], 1, 0, True)
fc = qlin(v, w["fc.weight"], w["fc.bias"], w["fc.scale"], True)
assert fc[0, 0] == 2
s = conv.astype(np.int32) * 2
# asymmetric: zero points of the input and the output
zconv = qconv(x, w["zconv.weight"], w["zconv.bias"], w["zconv.scale"], 2, 1, False, -7, 12)
zconvr = qconv(x, w["zconvr.weight"], w["zconvr.bias"], w["zconvr.scale"], 1, 2, True, 100, -20)
zfc = qlin(v, w["zfc.weight"], w["zfc.bias"], w["zfc.scale"], False, -128, -3)
zfcr = qlin(v, w["zfcr.weight"], w["zfcr.bias"], w["zfcr.scale"], True, 9, 50)
assert (zconv != qconv(x, w["zconv.weight"], w["zconv.bias"], w["zconv.scale"], 2, 1, False)).any()
assert (zfcr == 50).any() and zfcr.min() >= 50
save(out, "expected", conv=conv, convr=convr, fc=fc,
     sum=np.clip(s, -128, 127).astype(np.int8), zconv=zconv, zconvr=zconvr, zfc=zfc, zfcr=zfcr)
