#!/usr/bin/python3
"""Seeds of the .npy harness (testsuite/fuzz.sh): small arrays of every
dtype tec reads, in format versions 1.0, 2.0 and 3.0, written into DIR."""
import io
import os
import sys

import numpy as np
from numpy.lib import format as F

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
arrays = {
    "f32": np.arange(6, dtype=np.float32).reshape(2, 3),
    "f64": np.linspace(-1, 1, 5),
    "f16": np.ones((2, 2), dtype=np.float16),
    "i32": np.array([[1, -2], [3, 4]], dtype=np.int32),
    "i64": np.arange(4, dtype=np.int64),
    "bool": np.array([True, False, True]),
    "scalar": np.array(3.5, dtype=np.float32),
    "empty": np.zeros((0, 3), dtype=np.float32),
}
for name, a in arrays.items():
    for version in ((1, 0), (2, 0), (3, 0)):
        b = io.BytesIO()
        F.write_array(b, a, version=version)
        with open(os.path.join(out, f"{name}-v{version[0]}.npy"), "wb") as f:
            f.write(b.getvalue())
