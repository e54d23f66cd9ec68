#!/usr/bin/env python3
"""bench/par_layers.py — the layer groups whose loss to ONNX Runtime grows
from 1 thread to 2.

    bench/par_layers.py ORT1.json TEC1-trace.json ORT2.json TEC2-trace.json [DEPTH] [ROWS]

Each pair is ONNX Runtime's per-node trace and tec's --trace of the same
model at one thread count (bench/par_layers.sh writes them); the groups
(the first DEPTH name parts, default 4) are bench/ort_compare.py's, with
per-layer minima (--min).  Per group: tec and ORT at 1 and 2 threads (us),
the speedups tec1/tec2 and ort1/ort2, and "2T excess": tec's 2-thread loss
beyond its 1-thread one scaled by ORT's speedup,
(tec2 - ort2) - (tec1 - ort1) * ort2 / ort1 — what the second thread costs
tec that it does not cost ONNX Runtime.  Largest first, ROWS rows
(default 20)."""
import os
import subprocess
import sys


def groups(ort, tec, depth):
    """{group: (tec us, ORT us)} from bench/ort_compare.py --min."""
    cmp = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'ort_compare.py')
    text = subprocess.run([sys.executable, cmp, '--min', ort, tec, str(depth), '100000'],
                          check=True, capture_output=True, text=True).stdout
    out = {}
    for line in text.splitlines()[2:]:
        f = line.split()
        out[' '.join(f[1:-2])] = (float(f[-2]), float(f[-1]))
    return out


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__.split('\n\n')[1])
    depth = int(sys.argv[5]) if len(sys.argv) > 5 else 4
    nrows = int(sys.argv[6]) if len(sys.argv) > 6 else 20
    one = groups(sys.argv[1], sys.argv[2], depth)
    two = groups(sys.argv[3], sys.argv[4], depth)
    rows = []
    for k in set(one) | set(two):
        t1, o1 = one.get(k, (0.0, 0.0))
        t2, o2 = two.get(k, (0.0, 0.0))
        excess = (t2 - o2) - ((t1 - o1) * o2 / o1 if o1 else 0.0)
        rows.append((excess, k, t1, o1, t2, o2))
    tot = [sum(r[i] for r in rows) for i in range(2, 6)]
    print('totals (us): tec 1T %.0f  ORT 1T %.0f  tec 2T %.0f  ORT 2T %.0f   tec/ORT 1T %.2f 2T %.2f'
          % (*tot, tot[0] / tot[1] if tot[1] else 0, tot[2] / tot[3] if tot[3] else 0))
    print('%9s  %-36s %8s %8s %8s %8s %6s %6s' %
          ('2T excess', 'layers', 'tec1', 'ORT1', 'tec2', 'ORT2', 'tec x', 'ORT x'))
    sp = lambda a, b: '%6.2f' % (a / b) if b else '%6s' % '-'
    for e, k, t1, o1, t2, o2 in sorted(rows, reverse=True)[:nrows]:
        print('%9.0f  %-36s %8.0f %8.0f %8.0f %8.0f %s %s' % (e, k, t1, o1, t2, o2,
                                                            sp(t1, t2), sp(o1, o2)))


main()
