#!/usr/bin/env python3
# tools/fit_erf.py — the coefficients of the f32 vector erf of generated code
# (codegen/emit_vmath.c): erf(x) ~ x P(x^2) / Q(x^2) on [0, CLAMP] with
# Q(0) = 1, fitted for the least maximum absolute error by Loeb's
# linearization (x P - erf(x) Q, weighted by 1 / Q of the last round) and
# Lawson's reweighting toward the equioscillating error.  Prints P's and Q's
# coefficients, highest power of x^2 first (Horner's order), and the
# maximum error in exact arithmetic on stderr; the f32 error of the emitted
# code adds its rounding (bench/results/norm_s12.txt).
#
#   /usr/bin/python3 tools/fit_erf.py [CLAMP [DEGREE_P [DEGREE_Q]]]   (3.92 5 5)
import math
import sys

import numpy as np
from numpy.polynomial import polynomial as poly

clamp = float(sys.argv[1]) if len(sys.argv) > 1 else 3.92
dp = int(sys.argv[2]) if len(sys.argv) > 2 else 5
dq = int(sys.argv[3]) if len(sys.argv) > 3 else 5
# a uniform grid, denser toward the clamp where erf flattens
x = np.unique(np.concatenate([np.linspace(0, clamp, 20000)[1:],
                              clamp * (1 - np.cos(np.linspace(0, np.pi / 2, 5000)))[1:]]))
f = np.vectorize(math.erf)(x)
scale = 16.0                  # fit in u = x^2 / 16 (better conditioned), then rescale
u = x * x / scale
weight = np.ones_like(x)
q_last = np.ones_like(x)
for _ in range(60):
    # unknowns: p0..p_dp, q1..q_dq;  x P(u) - f Q(u) = 0 with q0 = 1
    a = np.hstack([x[:, None] * u[:, None] ** np.arange(dp + 1),
                   -f[:, None] * u[:, None] ** np.arange(1, dq + 1)])
    w = (weight / q_last)[:, None]
    sol = np.linalg.lstsq(a * w, f * w[:, 0], rcond=None)[0]
    p, q = sol[:dp + 1], np.concatenate([[1.0], sol[dp + 1:]])
    q_last = poly.polyval(u, q)
    err = x * poly.polyval(u, p) / q_last - f
    weight = weight * np.abs(err) / np.mean(np.abs(err)) + 1e-300
    weight /= weight.max()
print("max abs error in exact arithmetic %.3g on [0, %g]" % (np.abs(err).max(), clamp), file=sys.stderr)
pz = p / scale ** np.arange(dp + 1)
qz = q / scale ** np.arange(dq + 1)
print("P", " ".join("%.9e" % v for v in pz[::-1]))
print("Q", " ".join("%.9e" % v for v in qz[::-1]))
