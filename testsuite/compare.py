"""compare.py EXPECTED_DIR GOT_DIR: every NAME.npy in EXPECTED_DIR must be in
GOT_DIR with the same dtype and shape, and values within a relative error of
1e-4 of the expected tensor's largest magnitude (exact for integers)."""
import os
import sys

import numpy as np

exp_dir, got_dir = sys.argv[1], sys.argv[2]
ok = True
names = sorted(f for f in os.listdir(exp_dir) if f.endswith(".npy"))
if not names:
    sys.exit("no expected outputs in " + exp_dir)
for f in names:
    e = np.load(os.path.join(exp_dir, f))
    path = os.path.join(got_dir, f)
    if not os.path.exists(path):
        print("%s: missing" % f)
        ok = False
        continue
    g = np.load(path)
    if g.dtype != e.dtype or g.shape != e.shape:
        print("%s: got %s%s, expected %s%s" % (f, g.dtype, g.shape, e.dtype, e.shape))
        ok = False
        continue
    if np.issubdtype(e.dtype, np.integer) or e.dtype == np.bool_:
        bad = int(np.sum(g != e))
        if bad:
            print("%s: %d elements differ" % (f, bad))
            ok = False
        continue
    scale = max(float(np.max(np.abs(e))), 1e-30)
    err = float(np.max(np.abs(g.astype(np.float64) - e.astype(np.float64)))) / scale
    if not np.isfinite(err) or err > 1e-4:
        print("%s: max relative error %.3g (limit 1e-4)" % (f, err))
        ok = False
    else:
        print("%s: max relative error %.3g" % (f, err))
sys.exit(0 if ok else 1)
