import sys, os
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import numpy as np
from tecref import save, outdir

# Values from a small set (many ties), zeros of both signs, and NaNs at
# scattered places (never a whole window of them).
rng = np.random.default_rng(7)
x = rng.choice(np.array([-2.0, -1.0, -0.0, 0.0, 1.0, 3.0], dtype=np.float32), size=(1, 3, 13, 19))
x[rng.random(x.shape) < 0.08] = np.nan
# a plane of zeros only: every window's result is its first zero's sign
x[0, 2] = np.where(rng.random((13, 19)) < 0.5, np.float32(-0.0), np.float32(0.0))


def pool(x, k, stride, pad, larger, init):
    """The interpreter's rule: acc = tap when acc is NaN or tap is larger."""
    n, c, h, w = x.shape
    ph, pw = (h + 2 * pad - k) // stride + 1, (w + 2 * pad - k) // stride + 1
    y = np.empty((n, c, ph, pw), dtype=np.float32)
    for ci in range(c):
        for p in range(ph):
            for q in range(pw):
                acc = np.float32(init)
                for r in range(k):
                    for s in range(k):
                        i, j = p * stride + r - pad, q * stride + s - pad
                        tap = x[0, ci, i, j] if 0 <= i < h and 0 <= j < w else np.float32(init)
                        if acc != acc or larger(tap, acc):
                            acc = tap
                y[0, ci, p, q] = acc
    return y


def zero_sign(y):
    return np.where(y == 0, np.where(np.signbit(y), -1.0, 1.0), 0.0).astype(np.float32)


s1 = pool(x, 3, 1, 1, lambda t, a: t > a, -np.inf)
s2 = pool(x, 3, 2, 1, lambda t, a: t > a, -np.inf)
k5 = pool(x, 5, 1, 2, lambda t, a: t > a, -np.inf)
mn = pool(x, 3, 1, 1, lambda t, a: t < a, np.inf)
for y in (s1, s2, k5, mn):
    assert np.all(np.isfinite(y))
out = outdir()
save(out, "in", x=x)
save(out, "expected", s1=s1, s2=s2, k5=k5, mn=mn, s1z=zero_sign(s1), k5z=zero_sign(k5), mnz=zero_sign(mn))
