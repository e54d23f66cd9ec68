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
for name in ("zconv", "zfc"):
    for part in ("weight", "bias", "scale"):
        src = w[name[1:] + "." + part]
        w[name + "." + part] = (ints(src.shape, np.int8) if part == "weight" else
                                rng.integers(-1000, 1000, src.shape).astype(np.int32)
                                if part == "bias" else
                                rng.uniform(0.0005, 0.002, src.shape).astype(np.float32))


# 1x1 convolutions (qconv2d's product over the map, x + 128 in u8 and the
# weights' sums out of the bias), zero points, a map of 90 (no whole tile)
for name, f in (("pw", 40), ("pwr", 36)):
    w[name + ".weight"] = ints((f, 8, 1, 1), np.int8)
    w[name + ".bias"] = rng.integers(-1000, 1000, f).astype(np.int32)
    w[name + ".scale"] = rng.uniform(0.0005, 0.002, f).astype(np.float32)


def conv1x1(x, name, x_zero, y_zero, relu):
    acc = np.einsum("nchw,fc->nfhw", x.astype(np.int64) - x_zero,
                    w[name + ".weight"][:, :, 0, 0].astype(np.int64))
    y = np.rint((acc + w[name + ".bias"].reshape(1, -1, 1, 1)).astype(np.float64) *
                w[name + ".scale"].astype(np.float64).reshape(1, -1, 1, 1)) + y_zero
    return np.clip(y, y_zero if relu else -128, 127).astype(np.int8)


def conv3x3(x, weight, x_zero):
    # the padding holds the code of the real 0, x_zero
    xp = np.full((1, 8, 12, 11), x_zero, np.int64)
    xp[:, :, 1:11, 1:10] = x
    xp -= x_zero
    acc = np.zeros((1, 48, 10, 9), np.int64)
    for r in range(3):
        for s in range(3):
            acc += np.einsum("nchw,fc->nfhw", xp[:, :, r:r + 10, s:s + 9],
                             weight[:, :, r, s].astype(np.int64))
    return acc


conv = requant(conv3x3(x, w["conv.weight"], 0), w["conv.bias"], w["conv.scale"], True)
zconv = requant(conv3x3(x, w["zconv.weight"], -7), w["zconv.bias"], w["zconv.scale"], False)
fc = requant(v.astype(np.int64) @ w["fc.weight"].T.astype(np.int64), w["fc.bias"],
             w["fc.scale"], False)
zfc = requant((v.astype(np.int64) - 100) @ w["zfc.weight"].T.astype(np.int64), w["zfc.bias"],
              w["zfc.scale"], False)
uz = ((ua.astype(np.int64) - 200) @ b.astype(np.int64)).astype(np.int32)

out = outdir()
save(out, "in", a=a, b=b, ua=ua, ub=ub, c=c, d=d, x=x, v=v)
save(out, "weights", **w)
save(out, "expected", ss=mm(a, b), us=mm(ua, b), su=mm(a, ub), uu=mm(ua, ub), odd=mm(c, d),
     conv=conv, fc=fc, uz=uz, zconv=zconv, zfc=zfc, pw=conv1x1(x, "pw", -7, 3, False),
     pwr=conv1x1(x, "pwr", 0, -5, True))
