#!/usr/bin/python3
"""bench/trace_spread.py — where a whole model's time goes beyond the sum of
its layers' minima, from traces of several runs.

    bench/trace_spread.py [--rows N] [--ort-last R] TRACE.json...

Each TRACE is tec's --trace=FILE.json (one event per layer run, args.run
numbering the runs) or ONNX Runtime's per-node profile (bench/ort_run.js
with a profile prefix): its model_run events are the runs, every one, or
with --ort-last R the last R (ort_run.js's timed runs follow its
warm-ups), and a run's layers the node events inside it.  Per file it
prints, in microseconds:

  wall    median and minimum of the runs' spans (first layer's start to
          the last layer's end; ORT: its model_run events)
  busy    median of the sum of the layer times per run
  gap     median of wall - busy per run: time between kernels (graph call
          overhead, thread wake-ups, copies outside the layers)
  layers  the sums over the layers of each layer's minimum, 25th
          percentile and median over the runs: the sum of the medians
          above the sum of the minima is the layers' spread (a noisy
          machine, cache state left by the previous layer)

then the N layers whose median exceeds their minimum the most.  A layer is
identified by its position in the run and its name, so a model that calls
one kernel several times counts each call."""
import collections
import json
import statistics
import sys


def pct(v, q):
    v = sorted(v)
    return v[int(q * (len(v) - 1))]


def tec_runs(ev):
    runs = collections.defaultdict(list)
    for e in ev:
        if e.get('ph') == 'X' and 'run' in e.get('args', {}):
            runs[e['args']['run']].append(e)
    out = []
    for _, es in sorted(runs.items()):
        es.sort(key=lambda e: e['ts'])
        wall = max(e['ts'] + e['dur'] for e in es) - es[0]['ts']
        out.append((wall, [(e['name'], e['dur']) for e in es]))
    return out


def ort_runs(ev, last):
    runs = sorted((e for e in ev if e.get('cat') == 'Session' and e.get('name') == 'model_run'),
                  key=lambda e: e['ts'])
    if last:
        runs = runs[-last:]
    nodes = sorted((e for e in ev if e.get('cat') == 'Node' and e['name'].endswith('_kernel_time')),
                   key=lambda e: e['ts'])
    out, k = [], 0
    for r in runs:
        layers = []
        while k < len(nodes) and nodes[k]['ts'] < r['ts']:
            k += 1
        while k < len(nodes) and nodes[k]['ts'] <= r['ts'] + r['dur']:
            layers.append((nodes[k]['name'], nodes[k]['dur']))
            k += 1
        out.append((r['dur'], layers))
    return out


def main(argv):
    rows, last, files = 10, 0, []
    i = 0
    while i < len(argv):
        if argv[i] == '--rows':
            rows = int(argv[i + 1])
            i += 2
        elif argv[i] == '--ort-last':
            last = int(argv[i + 1])
            i += 2
        else:
            files.append(argv[i])
            i += 1
    if not files:
        sys.exit(__doc__)
    for f in files:
        with open(f) as fh:
            data = json.load(fh)
        runs = tec_runs(data['traceEvents']) if isinstance(data, dict) else ort_runs(data, last)
        runs = [r for r in runs if r[1]]
        if not runs:
            print('%s: no runs' % f)
            continue
        per = collections.defaultdict(list)
        for _, layers in runs:
            for k, (name, dur) in enumerate(layers):
                per[(k, name)].append(dur)
        walls = [w for w, _ in runs]
        busy = [sum(d for _, d in layers) for _, layers in runs]
        print('%s: %d runs, %d layers per run' % (f, len(runs), len(runs[0][1])))
        print('  wall    median %9.0f  min %9.0f' % (statistics.median(walls), min(walls)))
        print('  busy    median %9.0f' % statistics.median(busy))
        print('  gap     median %9.0f' % statistics.median([w - b for w, b in zip(walls, busy)]))
        print('  layers  sum of min %9.0f  p25 %9.0f  median %9.0f' %
              (sum(min(v) for v in per.values()), sum(pct(v, 0.25) for v in per.values()),
               sum(statistics.median(v) for v in per.values())))
        spread = sorted(per.items(), key=lambda kv: min(kv[1]) - statistics.median(kv[1]))
        for (k, name), v in spread[:rows]:
            print('  %4d %-50s min %8.0f  median %8.0f  max %8.0f' %
                  (k, name[:50], min(v), statistics.median(v), max(v)))


if __name__ == '__main__':
    main(sys.argv[1:])
