import sys, os
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from math import erf, pi, sqrt
import numpy as np
from tecref import default, save, outdir


def sigmoid(v):
    return 1 / (1 + np.exp(-v))


ACTS = {
    "r": lambda v: np.maximum(v, 0),
    "r6_": lambda v: np.clip(v, 0, 6),
    "sg": sigmoid,
    "si": lambda v: v * sigmoid(v),
    "ge": lambda v: 0.5 * v * (1 + np.vectorize(erf)(v / sqrt(2))),
    "gt": lambda v: 0.5 * v * (1 + np.tanh(sqrt(2 / pi) * (v + 0.044715 * v ** 3))),
}
expected = {}
for rank, shape in ((2, (3, 7)), (3, (2, 3, 5)), (4, (2, 3, 4, 5))):
    x = default("x%d" % rank, shape, -8, 8).astype(np.float64)
    for prefix, f in ACTS.items():
        expected[prefix + str(rank)] = f(x).astype(np.float32)
save(outdir(), "expected", **expected)
