import sys, os
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import numpy as np
from tecref import default, save, outdir

x = default("x", (2, 3, 4))
a = default("a", (5, 3))
b = default("b", (5, 4))
img = default("img", (2, 3, 4, 4))
w = default("w", (6, 48))
seq = default("seq", (2, 5, 12))
pw = default("pj.weight", (3, 2))
f64 = np.float64
s3 = x[:, :, 1:4:2][:, -1:-4:-1, :].transpose(2, 1, 0)
lin = np.maximum(img.reshape(2, 48).astype(f64) @ w.T.astype(f64), 0)
heads = seq.reshape(2, 5, 3, 4).transpose(0, 2, 1, 3)
save(outdir(), "expected", rr=x.reshape(6, 4).reshape(4, 6) * 2,
     atb=(a.T.astype(f64) @ b.astype(f64)).astype(np.float32),
     sl=np.ascontiguousarray(s3 + 1), lin=lin.astype(np.float32),
     lt=(lin.T - 1).astype(np.float32), hd=np.ascontiguousarray(heads), mg=seq,
     rv=np.ascontiguousarray(x[:, :, ::-1]), pj=(a.astype(f64) @ pw.astype(f64)).astype(np.float32),
     hmr=heads.reshape(2, 3, 20) * 3, xt=np.ascontiguousarray(x.transpose(2, 0, 1)))
