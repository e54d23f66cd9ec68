import sys, os
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import numpy as np
from tecref import default, save, outdir

a = default("a", (8,)).astype(np.float64)
b = default("b", (4, 5)).astype(np.float64)


def table(shape, f):
    return np.array([[f(i, j) for j in range(shape[1])] for i in range(shape[0])], dtype=np.float32)


save(outdir(), "expected",
     shifted=table((4, 6), lambda i, j: a[i + j] if i + j < 8 else 0),
     negated=table((4, 6), lambda i, j: -1 if i + j >= 8 else a[i + j]),
     strided=table((4, 3), lambda i, j: a[2 * i + j] if 2 * i + j < 8 else -1),
     toeplitz=table((8, 8), lambda i, j: a[i - j] if i >= j else 0),
     triangle=table((6, 6), lambda i, j: b[i, j] if i + j < 4 else 0),
     both=table((10, 4), lambda i, j: a[i - j] + a[i + 2 * j - 2]
                if j < 3 and i - j >= 2 and i + 2 * j <= 7 else 5))
