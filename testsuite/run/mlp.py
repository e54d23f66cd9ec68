import sys, os
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import numpy as np
from tecref import save, outdir

rng = np.random.default_rng(3)
x = rng.standard_normal((4, 10)).astype(np.float32)
w1 = rng.standard_normal((16, 10)).astype(np.float32)
b1 = rng.standard_normal(16).astype(np.float32)
w2 = rng.standard_normal((3, 16)).astype(np.float32)
b2 = rng.standard_normal(3).astype(np.float32)
out = outdir()
save(out, "in", x=x)
save(out, "weights", **{"net.fc1.weight": w1, "net.fc1.bias": b1,
                        "net.fc2.weight": w2, "net.fc2.bias": b2})
h = np.maximum(x.astype(np.float64) @ w1.T + b1, 0)
save(out, "expected", logits=(h @ w2.T + b2).astype(np.float32))
