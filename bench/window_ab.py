#!/usr/bin/python3
"""bench/window_ab.py — two builds of tec on one model, layer by layer, by
per-layer minima: the measure that holds on a machine so busy that most
runs are preempted (bench/layers_ab.py gives medians of rounds instead).

  bench/window_ab.py [--rounds N] [--repeat R] [--threads T] [--top K] [--match RE]
      OLD_TEC NEW_TEC MODEL [tec args...]

Each of N rounds (default 4) runs `TEC -O2 --profile --repeat R
--trace=FILE MODEL args` with TEC_NUM_THREADS=T (default 1) for the old
build and then the new one, so both meet the same load.  The trace holds
every run's time of every kernel; per kernel (a layer, or a fused group
named by its members) and build, the minimum over all rounds and runs.
Prints the K kernels (default 20) whose minimum changed most, those whose
name matches RE (a regular expression, optional) and the sums of the
minima over all kernels.  Kernels are matched by name; a kernel whose
fusion differs between the builds appears on one side only."""
import collections
import json
import os
import re
import subprocess
import sys
import tempfile


def minima(tec, model, args, repeat, threads, trace):
    env = dict(os.environ, TEC_NUM_THREADS=str(threads))
    out = subprocess.run([tec, '-O2', '--profile', '--repeat', str(repeat),
                          '--trace=' + trace, model] + args,
                         env=env, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit('%s failed:\n%s' % (tec, out.stderr[-2000:]))
    best = {}
    for e in json.load(open(trace))['traceEvents']:
        if e.get('ph') == 'X':
            name = e['args'].get('members', e['name'])
            best[name] = min(best.get(name, float('inf')), e['dur'])
    return best


def main():
    opts = {'--rounds': 4, '--repeat': 20, '--threads': 1, '--top': 20, '--match': None}
    argv = sys.argv[1:]
    while argv and argv[0] in opts:
        opts[argv[0]] = argv[1] if argv[0] == '--match' else int(argv[1])
        argv = argv[2:]
    if len(argv) < 3:
        sys.exit(__doc__.split('\n\n')[1])
    old, new, model, args = argv[0], argv[1], argv[2], argv[3:]
    best = [collections.defaultdict(lambda: float('inf')) for _ in range(2)]
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(opts['--rounds']):
            for b, tec in enumerate((old, new)):
                for k, v in minima(tec, model, args, opts['--repeat'], opts['--threads'],
                                   os.path.join(tmp, 'trace.json')).items():
                    best[b][k] = min(best[b][k], v)
    both = set(best[0]) & set(best[1])
    print('%s, %d thread(s), per-kernel minima of %d rounds x %d runs; load %s' %
          (os.path.basename(model), opts['--threads'], opts['--rounds'], opts['--repeat'],
           open('/proc/loadavg').read().split()[0]))
    print('%10s %10s %8s  %s' % ('old us', 'new us', 'new/old', 'kernel'))
    rows = sorted(both, key=lambda k: abs(best[1][k] - best[0][k]), reverse=True)[:opts['--top']]
    if opts['--match']:
        rows += [k for k in sorted(both) if re.search(opts['--match'], k) and k not in rows]
    for k in rows:
        print('%10.1f %10.1f %8.2f  %s' % (best[0][k], best[1][k], best[1][k] / best[0][k], k[:90]))
    for b, side in enumerate(('old', 'new')):
        for k in sorted(set(best[b]) - both):
            print('%10s %10s %8s  %s only: %s %.1f' % ('', '', '', side, k[:70], best[b][k]))
    s = [sum(best[b].values()) for b in range(2)]
    print('%10.1f %10.1f %8.2f  (sum of the minima of all kernels)' % (s[0], s[1], s[1] / s[0]))


main()
