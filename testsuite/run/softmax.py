import sys, os
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import numpy as np
from tecref import default, save, outdir

x = default("logits", (7, 33), -8, 8).astype(np.float64)
e = np.exp(x - x.max(axis=1, keepdims=True))
save(outdir(), "expected", probs=(e / e.sum(axis=1, keepdims=True)).astype(np.float32))
