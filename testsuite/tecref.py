"""Independent references for tec's run tests (numpy only, no tec code).

default(name, shape, lo, hi) reproduces tec's documented default-data
formula (doc/data.md); the rest are plain numpy implementations of ops."""
import os
import sys

import numpy as np

GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def fnv1a64(name):
    h = 0xCBF29CE484222325
    for byte in name.encode():
        h ^= byte
        h = (h * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def splitmix64(z):
    z = z.copy()
    z ^= z >> np.uint64(30)
    z *= np.uint64(0xBF58476D1CE4E5B9)
    z ^= z >> np.uint64(27)
    z *= np.uint64(0x94D049BB133111EB)
    z ^= z >> np.uint64(31)
    return z


def uniform01(name, n):
    with np.errstate(over="ignore"):
        i = np.arange(1, n + 1, dtype=np.uint64)
        z = splitmix64(np.uint64(fnv1a64(name)) + i * GOLDEN)
    return (z >> np.uint64(11)).astype(np.float64) * 2.0 ** -53


def default(name, shape, lo=-1.0, hi=1.0, dtype=np.float32):
    n = int(np.prod(shape, dtype=np.int64)) if len(shape) else 1
    u = uniform01(name, n)
    if np.issubdtype(np.dtype(dtype), np.integer):
        v = lo + np.floor((hi - lo) * u)
    else:
        v = lo + (hi - lo) * u
    return v.astype(dtype).reshape(shape)


def param(name, shape, dtype=np.float32):
    """A `param` without an explicit init: uniform(-b, b), b = 1/sqrt(fan_in)."""
    fan_in = int(np.prod(shape[1:])) if len(shape) >= 2 else 1
    b = 1.0 / np.sqrt(fan_in) if len(shape) >= 2 else 1.0
    return default(name, shape, -b, b, dtype)


def conv2d(x, w, stride=1, pad=0):
    n, c, h, wd = x.shape
    f, _, r, s = w.shape
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh = (h + 2 * pad - r) // stride + 1
    ow = (wd + 2 * pad - s) // stride + 1
    y = np.zeros((n, f, oh, ow))
    for i in range(r):
        for j in range(s):
            patch = xp[:, :, i:i + stride * oh:stride, j:j + stride * ow:stride]
            y += np.einsum("nchw,fc->nfhw", patch, w[:, :, i, j].astype(np.float64))
    return y


def save(outdir, sub, **arrays):
    d = os.path.join(outdir, sub)
    os.makedirs(d, exist_ok=True)
    for k, v in arrays.items():
        np.save(os.path.join(d, k + ".npy"), v)


def outdir():
    if len(sys.argv) != 2:
        sys.exit("usage: %s OUTDIR" % sys.argv[0])
    return sys.argv[1]
