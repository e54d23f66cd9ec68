#!/usr/bin/env python3
"""bench/ort_compare.py — where tec loses to ONNX Runtime, layer by layer.

    bench/ort_compare.py [--min] ORT_TRACE.json TEC_PROFILE.txt|TEC_REPORT.json|TEC_TRACE.json
        [DEPTH] [ROWS]

Reads ONNX Runtime's per-node trace (enableProfiling; bench/ort.sh --profile
writes it) and tec's --profile report of the same ONNX model (the table,
whose long names are cut short, or better the --report=FILE.json, which
bench/ort.sh --profile writes beside it), and prints,
per group of layers (the first DEPTH parts of the layer names, default 4:
`features.2.block.0`), tec's time, ONNX Runtime's and the difference, the
largest losses first (ROWS rows, default 25).  Both sides are medians per
node or layer, so the comparison holds on a busy machine, where whole-model
times mostly measure how often the process was preempted; with --min and
tec's --trace=FILE.json (every run's time of every layer), the minima, which
hold better on a machine so busy that most runs are preempted.

ONNX Runtime names a node by its output's path (`/features/features.2/
block/block.0/block.0.0/Conv_output_0`); the path's parts, each without
its parent's prefix, make tec's layer name (`features.2.block.0.0`).  A
fused node (a convolution with its activation) is named after its last
member, and so is tec's fused group (`features.0.0.Conv+Conv.bias+2.Clip`,
whose last member is `features.0.2.Clip`, counts as `features.0.2`).  A first
part that every name on both sides shares (`inner`, when the exporter
wrapped the model in a module) is dropped.  Nodes without a path (layout
reorders) are counted in the totals only."""
import collections
import json
import re
import statistics
import sys


def ort_key(name):
    comps = [c for c in name.split('/') if c][:-1]
    out, prev = [], ''
    for c in comps:
        if re.fullmatch(r'[A-Z][A-Za-z]*', c):
            break   # an op's name (Conv, Mul/QuickGeluFusion): the layer ends before it
                    # (a module's may be capitalized too: Inception's Mixed_5b, Conv2d_1a_3x3)
        out.append(c[len(prev) + 1:] if prev and c.startswith(prev + '.') else c)
        prev = c
    return '.'.join(out)


def main():
    args = [a for a in sys.argv[1:] if not a.startswith('--')]
    stat = min if '--min' in sys.argv else statistics.median
    if len(args) < 2:
        sys.exit(__doc__.split('\n\n')[1])
    depth = int(args[2]) if len(args) > 2 else 4
    nrows = int(args[3]) if len(args) > 3 else 25
    per = collections.defaultdict(list)
    for e in json.load(open(args[0])):
        if e.get('cat') == 'Node' and e['name'].endswith('_kernel_time'):
            per[e['name'][:-len('_kernel_time')]].append(e['dur'])
    ort = collections.Counter()
    for n, v in per.items():
        ort[ort_key(n)] += stat(v)
    tec = collections.Counter()
    rep = json.load(open(args[1])) if args[1].endswith('.json') else None
    if rep and 'traceEvents' in rep:   # --trace=FILE.json: every run's time
        runs = collections.defaultdict(list)
        for e in rep['traceEvents']:
            if e.get('ph') == 'X':
                last = e['args'].get('members', e['name']).split(',')[-1]
                runs[last.rsplit('.', 1)[0], e['name']].append(e['dur'])
        for (k, _), v in runs.items():
            tec[k] += stat(v)
    elif rep:   # --report=FILE.json: whole names
        for l in rep['layers'] + rep['groups']:
            if l.get('time_us') is not None and not l.get('group'):
                tec[l.get('members', [l['name']])[-1].rsplit('.', 1)[0]] += l['time_us']
    fused = None   # [time, key of its last member so far, indentation]
    for line in [] if rep else open(args[1]):
        f = line.split()
        indent = len(line) - len(line.lstrip())
        # a fused group's members follow it, indented, without times
        if fused and len(f) >= 3 and indent > fused[2] and f[-5] == '-':
            fused[1] = f[0].rsplit('.', 1)[0]
            continue
        if fused:
            tec[fused[1]] += fused[0]
            fused = None
        # leaf rows: name, op, [output,] MACs, time, time%, GFLOP/s, roof%, bound
        if (len(f) >= 8 and re.match(r'^[0-9.]+$', f[-5]) and re.match(r'^[a-z]', f[1]) and
                not f[0].endswith(':')):
            if f[1] == 'fused':
                fused = [float(f[-5]), f[0].split('+')[0].rsplit('.', 1)[0], indent]
            else:
                tec[f[0].rsplit('.', 1)[0]] += float(f[-5])
    if fused:
        tec[fused[1]] += fused[0]
    firsts = {k.split('.')[0] for k in list(tec) + list(ort) if '.' in k}
    if len(firsts) == 1:
        def cut(c):
            out = collections.Counter()
            for k, v in c.items():
                out[k.split('.', 1)[1] if '.' in k else k] += v
            return out
        tec, ort = cut(tec), cut(ort)
    grp = lambda k: '.'.join(k.split('.')[:depth])
    T, O = collections.Counter(), collections.Counter()
    for k, v in tec.items():
        T[grp(k)] += v
    for k, v in ort.items():
        O[grp(k)] += v
    print('tec layers %.0f us, ONNX Runtime nodes %.0f us (sums of %s)' %
          (sum(T.values()), sum(O.values()), 'minima' if stat is min else 'medians'))
    print('%8s  %-40s %9s %9s' % ('tec-ORT', 'layers', 'tec us', 'ORT us'))
    for k in sorted(set(T) | set(O), key=lambda k: O[k] - T[k])[:nrows]:
        print('%8.0f  %-40s %9.0f %9.0f' % (T[k] - O[k], k or '(no path)', T[k], O[k]))


main()
