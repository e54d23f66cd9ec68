#!/usr/bin/python3
"""bench/unseen_classes.py — tec against ONNX Runtime per class of layer
(1x1 conv, depthwise kxk by stride, grouped, dense kxk, gemm, pools,
elementwise), for a model exported by bench/ort_export.py.

    bench/unseen_classes.py ORT_TRACE.json TEC_TRACE.json [ROWS]

ORT_TRACE is ONNX Runtime's per-node trace (bench/ort_run.js with a profile
prefix), TEC_TRACE tec's --trace=FILE.json of the same model, both over
several runs: each side's minimum per node (ORT) or layer group (tec).  ORT's
nodes are paired with tec's groups by name (an ONNX node /a/a.1/b/Conv is
tec's member a.1.b.Conv: each part without its parent's prefix), so a
group's ORT time is that of the nodes it fused (a convolution and the
activation ORT runs apart); a group's class is that of its convolution or
matmul (from ORT's shapes), else its ops.  Prints the classes, largest loss
first, then the ROWS groups that lose most."""
import collections, json, re, sys


def tec_member(ort_name):
    n = re.sub(r'_kernel_time$', '', ort_name)
    n = re.sub(r'_output_\d+(_nchwc)?$', '', n)
    n = re.sub(r'/[A-Za-z]+Fusion/?$', '', n)
    parts = [p for p in n.split('/') if p]
    out, parent = [], ''
    for p in parts:
        q = p[len(parent) + 1:] if parent and p.startswith(parent + '.') else p
        out.append(q)
        parent = p
    return '.'.join(out)


def conv_class(args):
    shp = [list(x.values())[0] for x in args.get('input_type_shape', [])]
    outs = [list(x.values())[0] for x in args.get('output_type_shape', [])]
    if len(shp) < 2 or len(shp[0]) != 4 or len(shp[1]) != 4:
        return 'conv ?'
    x, w = shp[0], shp[1]
    groups = x[1] // w[1] if w[1] else 1
    stride = x[2] // outs[0][2] if outs and len(outs[0]) == 4 and outs[0][2] else 1
    k = '%dx%d' % (w[2], w[3])
    s = ' s%d' % stride if stride > 1 else ''
    if groups == x[1] and groups > 1:
        return 'depthwise %s%s' % (k, s)
    if groups > 1:
        return 'grouped %s%s (%d ch/group)' % (k, s, w[1])
    if k == '1x1':
        return '1x1 conv%s%s' % (s, ' on 1x1 (SE fc)' if x[2] == 1 else '')
    return 'dense %s%s' % (k, s)


def main():
    ort_min, ort_op, ort_args = {}, {}, {}
    for e in json.load(open(sys.argv[1])):
        if e.get('cat') == 'Node' and e['name'].endswith('_kernel_time'):
            n = e['name']
            ort_min[n] = min(ort_min.get(n, 1e18), e['dur'])
            ort_op[n], ort_args[n] = e['args']['op_name'], e['args']
    best, members = {}, {}
    for e in json.load(open(sys.argv[2]))['traceEvents']:
        if e.get('ph') == 'X' and e.get('args', {}).get('run', 0) >= 1:
            best[e['name']] = min(best.get(e['name'], 1e18), e['dur'])
            members[e['name']] = e['args'].get('members', e['args'].get('function', e['name'])).split(',')
    group_of = {}
    for g, ms in members.items():
        for m in ms:
            group_of[m] = g
    ort_of = collections.Counter()
    cls = {}
    unmatched = 0.0
    for n, t in ort_min.items():
        m = tec_member(n)
        g = group_of.get(m)
        if g is None:
            unmatched += t
            continue
        ort_of[g] += t
        if ort_op[n] in ('Conv', 'FusedConv'):
            cls[g] = conv_class(ort_args[n])
        elif ort_op[n] in ('MatMul', 'Gemm', 'FusedMatMul') and g not in cls:
            cls[g] = ort_op[n].lower()
    for g in best:
        if g not in cls:
            ops = sorted({re.sub(r'^.*\.', '', m) for m in members[g]})
            cls[g] = 'other ' + '+'.join(ops)[:40]
    by = collections.defaultdict(lambda: [0.0, 0.0, 0])
    for g, t in best.items():
        c = by[cls[g]]
        c[0] += t; c[1] += ort_of[g]; c[2] += 1
    tt, to = sum(best.values()), sum(ort_of.values()) + unmatched
    print('sums of minima: tec %.0f us, ORT %.0f us (%.0f us of ORT nodes unmatched: layout reorders)' % (tt, to, unmatched))
    print('%-44s %5s %10s %10s %8s %6s' % ('class', 'n', 'tec us', 'ORT us', 'tec-ORT', 'ratio'))
    for c, (a, b, n) in sorted(by.items(), key=lambda kv: -(kv[1][0] - kv[1][1])):
        print('%-44s %5d %10.0f %10.0f %8.0f %6s' % (c, n, a, b, a - b, '%.2f' % (a / b) if b else '-'))
    rows = int(sys.argv[3]) if len(sys.argv) > 3 else 12
    print('groups losing most:')
    for g in sorted(best, key=lambda g: -(best[g] - ort_of[g]))[:rows]:
        print('  %8.0f %8.0f  %-36s %s' % (best[g], ort_of[g], cls[g][:36], g[:70]))


main()
