#!/usr/bin/python3
"""bench/perproc.py — how the speed of each layer varies between PROCESSES
(some layers run at one of two speeds fixed per process: alias_s14.txt).

  bench/perproc.py [--procs N] [--repeat R] [--rt] [--threads T] [--match TEXT]
      [--top K] [--windows W] TEC[,TEC2...] PROGRAM [tec args...]

Runs N processes of each TEC (in turns: A B A B ...), each
`TEC -O2 --profile --trace=FILE --repeat R PROGRAM args`; per process it takes
each layer's minimum over its runs and the sum of those minima (the
process's model time).  Prints per TEC the min/median/max of the processes'
sums, and the K layers whose per-process minima spread most (max/min over
processes), with the per-process values.  With two TECs it also prints how
the model times of the A and B processes started one after the other
correlate: near 1 when the speed is a state of the machine at that moment
rather than of the process (bench/results/pages_s16.txt).  With --windows W
it prints, for each process, the minimum of each W runs in a row of every
layer whose name contains TEXT (give a large R): whether one process's speed
changes while it runs."""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile


def one_process(tec, program, args, repeat, rt, threads, trace, window=0, match=''):
    env = dict(os.environ, TEC_NUM_THREADS=str(threads))
    cmd = (['chrt', '-f', '10'] if rt else []) + [tec, '-O2', '--profile', '--trace=' + trace,
                                                  '--repeat', str(repeat), program] + args
    out = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit('%s failed:\n%s' % (tec, out.stderr[-2000:]))
    with open(trace) as f:
        events = json.load(f)['traceEvents']
    best, runs = {}, {}
    for e in events:
        if e.get('ph') == 'X' and e.get('args', {}).get('run', 0) >= 1:
            n = e['name']
            best[n] = min(best.get(n, float('inf')), e['dur'])
            if window and match in n:
                runs.setdefault(n, []).append(e['dur'])
    for n, durs in sorted(runs.items()):
        print('  %-10s %-40s %s' % (os.path.basename(tec)[:10], n[:40],
                                 ' '.join('%.0f' % min(durs[i:i + window])
                                          for i in range(0, len(durs), window))))
    return best


def correlation(xs, ys):
    mx, my = statistics.mean(xs), statistics.mean(ys)
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys))
    sxx = sum((x - mx) ** 2 for x in xs)
    syy = sum((y - my) ** 2 for y in ys)
    return sxy / (sxx * syy) ** 0.5 if sxx and syy else float('nan')


def main():
    ap = argparse.ArgumentParser(usage=__doc__)
    ap.add_argument('--procs', type=int, default=16)
    ap.add_argument('--repeat', type=int, default=5)
    ap.add_argument('--rt', action='store_true')
    ap.add_argument('--threads', type=int, default=1)
    ap.add_argument('--match', default='')
    ap.add_argument('--top', type=int, default=6)
    ap.add_argument('--windows', type=int, default=0)
    ap.add_argument('tecs')
    ap.add_argument('program')
    opts, args = ap.parse_known_args()
    tecs = opts.tecs.split(',')
    runs = {t: [] for t in tecs}
    with tempfile.TemporaryDirectory() as d:
        trace = os.path.join(d, 'trace.json')
        for _ in range(opts.procs):
            for t in tecs:
                runs[t].append(one_process(t, opts.program, args, opts.repeat, opts.rt,
                                           opts.threads, trace, opts.windows, opts.match))
    for t in tecs:
        procs = runs[t]
        sums = sorted(sum(p.values()) for p in procs)
        print('%s: %d processes, model time (sum of layer minima, us) min %.0f median %.0f max %.0f'
              % (t, len(procs), sums[0], statistics.median(sums), sums[-1]))
        names = [n for n in procs[0] if opts.match in n and all(n in p for p in procs)]
        spread = sorted(names, key=lambda n: -max(p[n] for p in procs) / max(1e-9, min(p[n] for p in procs)))
        for n in spread[:opts.top]:
            vals = [p[n] for p in procs]
            print('  %-40s max/min %.2f  %s' % (n[:40], max(vals) / max(1e-9, min(vals)),
                                               ' '.join('%.0f' % v for v in vals)))
        print('  per process: %s' % ' '.join('%.0f' % sum(p.values()) for p in procs))
    if len(tecs) == 2 and opts.procs > 2:
        a, b = ([sum(p.values()) for p in runs[t]] for t in tecs)
        print('correlation of the model times of the A and B processes run one after the other: %.2f'
              % correlation(a, b))


if __name__ == '__main__':
    main()
