#!/usr/bin/python3
"""testsuite/cli/onnx_want.py GOT TOL — for the cli/onnx_* tests that
write their NumPy results to want/NAME.npy: each GOT/NAME.npy has the same
shape, the same infinities and NaNs, and differs from it elsewhere by at
most TOL * max(1, max |finite want|); exit 1 with the first that does not."""
import glob
import os
import sys
import numpy as np

got, tol = sys.argv[1], float(sys.argv[2])
for f in sorted(glob.glob("want/*.npy")):
    w, g = np.load(f), np.load(os.path.join(got, os.path.basename(f))).astype(np.float64)
    if w.shape != g.shape:
        sys.exit("%s: shape %s, want %s" % (f, g.shape, w.shape))
    same = (w == g) | (np.isnan(w) & np.isnan(g))   # infinities and NaNs where wanted
    with np.errstate(invalid="ignore"):   # (inf - inf where they are the same)
        err = np.max(np.abs(w - g)[~same], initial=0)
    if not err <= tol * max(1, np.max(np.abs(w[np.isfinite(w)]), initial=0)):
        sys.exit("%s: max |error| %g" % (f, err))
