import sys, os
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import numpy as np
from tecref import save, outdir

bits = np.arange(65536, dtype=np.uint32).astype(np.uint16)
h = bits.view(np.float16)
h = h[np.isfinite(h)]                      # the 63488 finite values
x32 = h.astype(np.float32)
x64 = h.astype(np.float64)


def bf16_bits(x32):
    """f32 -> bf16 bit patterns, round to nearest even (no NaN here)."""
    b = x32.view(np.uint32).astype(np.uint64)
    return ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)


def bf16_bits_f64(x64):
    """f64 -> bf16 in one rounding: nearest even among bf16 values."""
    lo = bf16_bits(x64.astype(np.float32))   # candidate, then fix up below
    out = lo.copy()
    for k, x in enumerate(x64):
        c = int(lo[k])
        best = None
        for d in (-1, 0, 1):
            cand = (c + d) & 0xFFFF
            v = np.array([cand << 16], dtype=np.uint32).view(np.float32)[0].astype(np.float64)
            if not np.isfinite(v):
                continue
            err = abs(v - x)
            if best is None or err < best[0] or (err == best[0] and cand % 2 == 0):
                best = (err, cand)
        out[k] = best[1]
    return out


out = outdir()
save(out, "in", h=h,
     r32=(x32 * np.float32(0.75)).astype(np.float16),
     r64=(x64 * 0.1).astype(np.float16))
save(out, "expected", w=x32,
     b32=bf16_bits(x32 * np.float32(0.1)),
     b64=bf16_bits_f64(x64 * 0.1),
     m=np.maximum(h, np.float16(-1.5)),
     bad32=np.array(0, dtype=np.int32), bad64=np.array(0, dtype=np.int32))
