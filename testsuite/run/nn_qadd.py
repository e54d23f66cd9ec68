import sys, os
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import numpy as np
from tecref import save, outdir

rng = np.random.default_rng(26)
a = rng.integers(-128, 128, (1, 2, 3, 4), dtype=np.int8)
b = rng.integers(-128, 128, (1, 2, 3, 4), dtype=np.int8)
a[0, 0, 0, :] = [127, -128, 0, 50]
b[0, 0, 0, :] = [127, -128, 0, -60]


def qadd(a, b, relu=0, a_zero=0, b_zero=0, y_zero=0):
    y = a.astype(np.int64) - a_zero + (b.astype(np.int64) - b_zero) + y_zero
    return np.clip(y, y_zero if relu else -128, 127).astype(np.int8)


plain = qadd(a, b)
zeros = qadd(a, b, 0, -3, 10, 5)
zrelu = qadd(a, b, 1, 100, -128, -20)
# by hand: 127+127 saturates; -128-128 saturates; 50-60 = -10
assert list(plain[0, 0, 0]) == [127, -128, 0, -10]
# (127+3) + (127-10) + 5 = 252 -> 127; (-128+3) + (-128-10) + 5 = -258 -> -128;
# 3 - 10 + 5 = -2; 53 - 70 + 5 = -12
assert list(zeros[0, 0, 0]) == [127, -128, -2, -12]
# (127-100) + (127+128) - 20 = 262 -> 127; (-128-100) + 0 - 20 = -248 -> -20 (relu);
# -100 + 128 - 20 = 8; -50 + 68 - 20 = -2 (above -20)
assert list(zrelu[0, 0, 0]) == [127, -20, 8, -2]
out = outdir()
save(out, "in", a=a, b=b)
save(out, "expected", plain=plain, zeros=zeros, zrelu=zrelu)
