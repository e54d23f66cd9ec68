#!/usr/bin/env python3
"""bench/ort_compare.py — where tec loses to ONNX Runtime, layer by layer.

    bench/ort_compare.py ORT_TRACE.json TEC_PROFILE.txt [DEPTH] [ROWS]

Reads ONNX Runtime's per-node trace (enableProfiling; bench/ort.sh --profile
writes it) and tec's --profile report of the same ONNX model, and prints,
per group of layers (the first DEPTH parts of the layer names, default 4:
`features.2.block.0`), tec's time, ONNX Runtime's and the difference, the
largest losses first (ROWS rows, default 25).  Both sides are medians per
node or layer, so the comparison holds on a busy machine, where whole-model
times mostly measure how often the process was preempted.

ONNX Runtime names a node by its output's path (`/features/features.2/
block/block.0/block.0.0/Conv_output_0`); the path's parts, each without
its parent's prefix, make tec's layer name (`features.2.block.0.0`).  A
fused node (a convolution with its activation) is named after its last
member, in the same group.  Nodes without a path (layout reorders) are
counted in the totals only."""
import collections
import json
import re
import statistics
import sys


def ort_key(name):
    comps = [c for c in name.split('/') if c][:-1]
    out, prev = [], ''
    for c in comps:
        out.append(c[len(prev) + 1:] if prev and c.startswith(prev + '.') else c)
        prev = c
    return '.'.join(out)


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__.split('\n\n')[1])
    depth = int(sys.argv[3]) if len(sys.argv) > 3 else 4
    nrows = int(sys.argv[4]) if len(sys.argv) > 4 else 25
    per = collections.defaultdict(list)
    for e in json.load(open(sys.argv[1])):
        if e.get('cat') == 'Node' and e['name'].endswith('_kernel_time'):
            per[e['name'][:-len('_kernel_time')]].append(e['dur'])
    ort = collections.Counter()
    for n, v in per.items():
        ort[ort_key(n)] += statistics.median(v)
    tec = collections.Counter()
    for line in open(sys.argv[2]):
        f = line.split()
        # leaf rows: name, op, [output,] MACs, time, time%, GFLOP/s, roof%, bound
        if len(f) >= 8 and re.match(r'^[0-9.]+$', f[-5]) and re.match(r'^[a-z]', f[1]):
            tec[f[0].rsplit('.', 1)[0]] += float(f[-5])
    grp = lambda k: '.'.join(k.split('.')[:depth])
    T, O = collections.Counter(), collections.Counter()
    for k, v in tec.items():
        T[grp(k)] += v
    for k, v in ort.items():
        O[grp(k)] += v
    print('tec layers %.0f us, ONNX Runtime nodes %.0f us (sums of medians)' %
          (sum(T.values()), sum(O.values())))
    print('%8s  %-40s %9s %9s' % ('tec-ORT', 'layers', 'tec us', 'ORT us'))
    for k in sorted(set(T) | set(O), key=lambda k: O[k] - T[k])[:nrows]:
        print('%8.0f  %-40s %9.0f %9.0f' % (T[k] - O[k], k or '(no path)', T[k], O[k]))


main()
