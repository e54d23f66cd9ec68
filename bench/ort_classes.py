#!/usr/bin/python3
"""bench/ort_classes.py — where the time goes by kind of node, tec against
ONNX Runtime, for models whose layer names do not match across the two
(bench/ort_compare.py pairs names; Swin's and GPT-2's do not pair).

    bench/ort_classes.py ORT_TRACE.json TEC_REPORT.json TEC_TRACE.json

The files are bench/ort.sh --profile's (ONNX Runtime's per-node trace, and
tec's --report and --trace of the same model).  Each side's per-node (ORT)
or per-layer-group (tec) minima over the runs are summed by class: gemm/conv
(with +gelu when a fused group computes erf or tanh), gelu, softmax,
layernorm (ReduceMean, Sub, Pow, Sqrt), data movement, and the rest
(elementwise, named by its ops).  ORT's fused nodes (LayerNormalization,
Gelu, FusedMatMul) fall in their class; its own Add, Mul and Div are
elementwise.  Minima hold better than medians on a loaded machine."""
import collections, json, re, sys

def tec_class(ops):
    ops = {re.sub(r'_\d+$', '', o) for o in ops}
    if ops & {'matmul', 'conv2d', 'linear'}:
        return 'gemm/conv' + ('+gelu' if ops & {'erf', 'tanh'} else '')
    if ops & {'erf', 'tanh'}:
        return 'gelu'
    if 'softmax' in ops:
        return 'softmax'
    if ops & {'reduce_mean', 'pow', 'sqrt'} or ops == {'sub'}:
        return 'layernorm'
    if ops & {'reshape', 'concat', 'slice', 'gather', 'transpose'}:
        return 'data movement'
    return 'elementwise ' + '/'.join(sorted(ops))[:40]

ORT = {'Conv': 'gemm/conv', 'Gemm': 'gemm/conv', 'MatMul': 'gemm/conv', 'FusedMatMul': 'gemm/conv',
       'LayerNormalization': 'layernorm', 'SimplifiedLayerNormalization': 'layernorm',
       'SkipLayerNormalization': 'layernorm', 'ReduceMean': 'layernorm', 'Pow': 'layernorm',
       'Sqrt': 'layernorm', 'Sub': 'layernorm', 'Gelu': 'gelu', 'Tanh': 'gelu', 'Softmax': 'softmax',
       'Where': 'softmax'}
per = collections.defaultdict(list); opn = {}
for e in json.load(open(sys.argv[1])):
    if e.get('cat') == 'Node' and e['name'].endswith('_kernel_time'):
        per[e['name']].append(e['dur']); opn[e['name']] = e['args']['op_name']
ort = collections.Counter()
for n, v in per.items():
    ort[ORT.get(opn[n], 'data movement' if opn[n] not in ('Add', 'Mul', 'Div') else 'elementwise')] += min(v)
rep = json.load(open(sys.argv[2]))
op_of = {l['name']: l['op'] for l in rep['layers']}
best = {}; members = {}
for e in json.load(open(sys.argv[3]))['traceEvents']:
    if e.get('ph') == 'X' and e.get('args', {}).get('run', 0) >= 1:
        best[e['name']] = min(best.get(e['name'], 1e18), e['dur'])
        members[e['name']] = e['args'].get('members', e['args'].get('function', e['name'])).split(',')
tec = collections.Counter(); cnt = collections.Counter()
for n, t in best.items():
    c = tec_class([op_of.get(x, 'other') for x in members[n]]); tec[c] += t; cnt[c] += 1
print('%-44s %9s %5s | %-14s %9s' % ('tec class', 'tec us', 'n', 'ORT class', 'ORT us'))
for c, t in tec.most_common():
    print('%-44s %9.0f %5d' % (c, t, cnt[c]))
print('total tec %.0f' % sum(tec.values()))
for c, t in ort.most_common():
    print('%51s | %-14s %9.0f' % ('', c, t))
print('total ORT %.0f' % sum(ort.values()))
