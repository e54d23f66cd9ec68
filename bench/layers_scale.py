#!/usr/bin/python3
"""bench/layers_scale.py — where a model's 2-thread run loses its 1-thread
time, layer by layer: per-layer minima on 1 and on 2 threads, in turns.

  bench/layers_scale.py [--rounds N] [--repeat R] [--top K] [--rt] [--threads T]
      TEC PROGRAM [tec args...]

Each round runs `TEC -O2 --profile --trace=FILE --repeat R PROGRAM args`
once with TEC_NUM_THREADS=1 and once with T threads (default 2), and keeps
each layer's minimum over all runs (bench/layers_min_ab.py's minima).  Per
layer it prints the 1-thread and T-thread minima, the speed-up (1T / TT)
and the loss: the T-thread time beyond a perfect split (TT - 1T / T), the
largest losses first (K rows), then the sums.  The loss is what the split
of a layer costs: fork and join, imbalance, data another processor wrote.
--rt runs each tec under `chrt -f 10`."""
import argparse
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from layers_min_ab import minima  # noqa: E402


def main():
    ap = argparse.ArgumentParser(usage=__doc__)
    ap.add_argument('--rounds', type=int, default=3)
    ap.add_argument('--repeat', type=int, default=10)
    ap.add_argument('--top', type=int, default=25)
    ap.add_argument('--rt', action='store_true')
    ap.add_argument('--threads', type=int, default=2)
    ap.add_argument('tec')
    ap.add_argument('program')
    opts, args = ap.parse_known_args()
    counts = (1, opts.threads)
    best = [{}, {}]
    with tempfile.TemporaryDirectory() as tmp:
        trace = os.path.join(tmp, 'trace.json')
        for _ in range(opts.rounds):
            for i, t in enumerate(counts):
                for n, ns in minima(opts.tec, opts.program, args, opts.repeat, trace, opts.rt,
                                    t).items():
                    best[i][n] = min(best[i].get(n, float('inf')), ns)
    names = [n for n in best[0] if n in best[1]]
    t = opts.threads
    loss = {n: best[1][n] - best[0][n] / t for n in names}
    names.sort(key=lambda n: -loss[n])
    print('# minima over %d rounds x %d runs%s, us; %s %s' %
          (opts.rounds, opts.repeat, ' (chrt -f 10)' if opts.rt else '', opts.tec,
           opts.program))
    print('%9s %9s %6s %8s  layer' % ('1T', '%dT' % t, 'speed', 'loss'))
    for n in names[:opts.top]:
        print('%9.1f %9.1f %6.2f %8.1f  %s' % (best[0][n], best[1][n], best[0][n] / best[1][n],
                                               loss[n], n))
    s1 = sum(best[0][n] for n in names)
    s2 = sum(best[1][n] for n in names)
    print('%9.1f %9.1f %6.2f %8.1f  (sum of %d layers)' % (s1, s2, s1 / s2 if s2 else 0,
                                                          s2 - s1 / t, len(names)))


if __name__ == '__main__':
    main()
