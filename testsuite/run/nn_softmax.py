import sys, os
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import numpy as np
from tecref import default, save, outdir


def softmax(v):
    e = np.exp(v - v.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


expected = {}
for rank, shape in ((2, (3, 7)), (3, (2, 3, 6)), (4, (2, 2, 3, 5))):
    expected["sm%d" % rank] = softmax(default("x%d" % rank, shape, -8, 8).astype(np.float64))

# Causal: scores with j > i are -inf before the softmax, so exactly 0 after.
att = default("att", (2, 3, 5, 5), -8, 8).astype(np.float64)
future = np.triu(np.ones((5, 5), bool), k=1)
expected["causal"] = softmax(np.where(future, -np.inf, att))
assert (expected["causal"][..., future] == 0).all()
save(outdir(), "expected", **{k: v.astype(np.float32) for k, v in expected.items()})
