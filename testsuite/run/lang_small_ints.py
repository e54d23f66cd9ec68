import sys, os
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import numpy as np
from tecref import save, outdir

rng = np.random.default_rng(13)
a = rng.integers(-128, 128, (5, 7), dtype=np.int8)
a[0, :] = -128                       # extremes: products of +-2^14
b = rng.integers(-128, 128, (7, 6), dtype=np.int8)
b[:, 0] = -128
f = rng.uniform(-3, 3, (5, 6)).astype(np.float32)
f[0, :4] = [0.25, 0.75, -0.25, -1.25]   # * 2: ties 0.5 1.5 -0.5 -2.5
f[1, 0] = np.nan
h = rng.integers(-32768, 32768, (5, 6), dtype=np.int16)
out = outdir()
save(out, "in", a=a, b=b, f=f, h=h)

c = a.astype(np.int32) @ b.astype(np.int32)
wrap = c.astype(np.int8)             # keeps the low 8 bits
sat = np.clip(c, -128, 127).astype(np.int8)
satu = np.clip(c, 0, 255).astype(np.uint8)
x = (f * np.float32(100)).astype(np.float64)
satf = np.trunc(np.clip(np.where(np.isnan(x), -np.inf, x), -128, 127)).astype(np.int8)
r = np.rint(f * np.float32(2)).astype(np.float64)
rnd = np.clip(np.where(np.isnan(r), -np.inf, r), -32768, 32767).astype(np.int16)
save(out, "expected", c=c, wrap=wrap, sat=sat, satu=satu, satf=satf, round=rnd,
     hmax=np.maximum(h, 0).astype(np.int16),
     back=wrap.astype(np.int32) + satu.astype(np.int32))
