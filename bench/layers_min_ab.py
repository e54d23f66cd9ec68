#!/usr/bin/python3
"""bench/layers_min_ab.py — builds (or schedules) of tec compared layer by
layer by their MINIMA, in one run that takes turns (A B A B ...), so that
the load of a shared machine falls on every side alike and the fastest run
of each layer, the one least disturbed, is compared.

  bench/layers_min_ab.py [--rounds N] [--repeat R] [--top K] [--match TEXT] [--rt]
      [--threads T]
      TEC_A[::PROGRAM_A] TEC_B[::PROGRAM_B] PROGRAM [tec args...]

Each round runs `TEC -O2 --profile --trace=FILE --repeat R PROGRAM args` at
one thread (TEC_NUM_THREADS=1; T with --threads T) for each side; a side
given as TEC::PROGRAM runs its own program instead (two schedules of one
layer, say).  Per layer (the trace's slices, by name) it prints the
minimum over all runs of all rounds of each side and B/A; the K layers
whose minimum changed most first (only those whose name contains TEXT
with --match), then the sum of the layers' minima.  --rt runs each tec under `chrt -f 10` (real-time FIFO
scheduling: other processes do not preempt it; needs the privilege), as
on a machine so busy that every run of a long layer is preempted."""
import argparse
import json
import os
import subprocess
import sys
import tempfile


def minima(tec, program, args, repeat, trace, rt, threads):
    env = dict(os.environ, TEC_NUM_THREADS=str(threads))
    out = subprocess.run((['chrt', '-f', '10'] if rt else []) + [tec, '-O2', '--profile', '--trace=' + trace, '--repeat', str(repeat),
                          program] + args, env=env, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit('%s failed:\n%s' % (tec, out.stderr[-2000:]))
    with open(trace) as f:
        events = json.load(f)['traceEvents']
    best = {}
    for e in events:
        if e.get('ph') == 'X' and e.get('args', {}).get('run', 0) >= 1:
            n = e['name']
            best[n] = min(best.get(n, float('inf')), e['dur'])
    return best


def main():
    ap = argparse.ArgumentParser(usage=__doc__)
    ap.add_argument('--rounds', type=int, default=5)
    ap.add_argument('--repeat', type=int, default=20)
    ap.add_argument('--top', type=int, default=15)
    ap.add_argument('--match', default='')
    ap.add_argument('--rt', action='store_true')
    ap.add_argument('--threads', type=int, default=1)
    ap.add_argument('a')
    ap.add_argument('b')
    ap.add_argument('program')
    opts, args = ap.parse_known_args()
    rounds, repeat, top, match, rt = opts.rounds, opts.repeat, opts.top, opts.match, opts.rt
    sides = []
    for side in (opts.a, opts.b):
        tec, _, prog = side.partition('::')
        sides.append((tec, prog or opts.program))
    best = [{}, {}]
    with tempfile.TemporaryDirectory() as tmp:
        trace = os.path.join(tmp, 'trace.json')
        for _ in range(rounds):
            for i, (tec, prog) in enumerate(sides):
                for n, t in minima(tec, prog, args, repeat, trace, rt, opts.threads).items():
                    best[i][n] = min(best[i].get(n, float('inf')), t)
    names = [n for n in best[0] if n in best[1] and match in n]
    names.sort(key=lambda n: -abs(best[1][n] - best[0][n]))
    print('# minima over %d rounds x %d runs%s, %d thread(s), us; A = %s, B = %s' %
          (rounds, repeat, ' (chrt -f 10)' if rt else '', opts.threads, ' '.join(sides[0]),
           ' '.join(sides[1])))
    print('%10s %10s %6s  layer' % ('A', 'B', 'B/A'))
    for n in names[:top]:
        print('%10.1f %10.1f %6.3f  %s' % (best[0][n], best[1][n], best[1][n] / best[0][n], n))
    sa = sum(best[0][n] for n in names)
    sb = sum(best[1][n] for n in names)
    print('%10.1f %10.1f %6.3f  (sum of %d layers)' % (sa, sb, sb / sa if sa else 0, len(names)))
    # layers fused differently on the two sides have different names: the
    # sums over each side's own layers compare them too
    sa, sb = (sum(t for n, t in best[i].items() if match in n) for i in (0, 1))
    print('%10.1f %10.1f %6.3f  (sum of all layers: %d and %d)' %
          (sa, sb, sb / sa if sa else 0, len(best[0]), len(best[1])))


if __name__ == '__main__':
    main()
