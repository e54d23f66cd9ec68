#!/usr/bin/python3
"""bench/layers_ab.py — two builds of tec compared layer by layer on one model,
in one run that takes turns (A B A B ...), so that the load of a shared
machine falls on both alike.

  bench/layers_ab.py [--rounds N] [--repeat R] [--top K] OLD_TEC NEW_TEC MODEL [tec args...]

Each round runs `TEC -O2 --profile --repeat R MODEL args` at one thread
(TEC_NUM_THREADS=1) for each build; per layer (the rows of the profile that
have a time: kernels and fused groups) and for the whole run (the sum of the
layers) it prints the median over the rounds of each build, new/old, and the
spread (min..max) of the rounds.  Layers are matched by name; the K layers
whose time changed most come first, then the total."""
import os
import statistics
import subprocess
import sys


def profile(tec, model, args, repeat):
    env = dict(os.environ, TEC_NUM_THREADS='1')
    out = subprocess.run([tec, '-O2', '--profile', '--repeat', str(repeat), model] + args,
                         env=env, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit('%s failed:\n%s' % (tec, out.stderr[-2000:]))
    times = {}
    for line in (out.stdout + out.stderr).splitlines():
        f = line.split()
        # leaf rows: name, op, [output,] MACs, time, time%, GFLOP/s, roof%, bound
        if len(f) >= 7 and f[1] != '' and f[-5] not in ('-', 'time(us)'):
            try:
                t = float(f[-5])
            except ValueError:
                continue
            if len(f) < 8:
                continue
            times[f[0]] = t
    return times


def main():
    argv = sys.argv[1:]
    rounds, repeat, top = 5, 20, 15
    while argv and argv[0].startswith('--'):
        opt = argv.pop(0)
        if opt == '--rounds':
            rounds = int(argv.pop(0))
        elif opt == '--repeat':
            repeat = int(argv.pop(0))
        elif opt == '--top':
            top = int(argv.pop(0))
        else:
            sys.exit(__doc__)
    if len(argv) < 3:
        sys.exit(__doc__)
    old, new, model, args = argv[0], argv[1], argv[2], argv[3:]
    runs = {old: [], new: []}
    for _ in range(rounds):
        for tec in (old, new):
            runs[tec].append(profile(tec, model, args, repeat))
    names = set(runs[old][0]) & set(runs[new][0])
    med = lambda tec, n: statistics.median(r.get(n, 0.0) for r in runs[tec])
    rows = sorted(names, key=lambda n: -abs(med(new, n) - med(old, n)))
    print('%-56s %10s %10s %7s' % ('layer (median us of %d rounds)' % rounds, 'old', 'new', 'new/old'))
    for n in rows[:top]:
        o, w = med(old, n), med(new, n)
        print('%-56s %10.1f %10.1f %7.2f' % (n[:56], o, w, w / o if o else float('nan')))
    tot = {tec: [sum(r.get(n, 0.0) for n in names) for r in runs[tec]] for tec in (old, new)}
    o, w = statistics.median(tot[old]), statistics.median(tot[new])
    print('%-56s %10.1f %10.1f %7.2f' % ('total of the layers', o, w, w / o))
    print('rounds: old %s, new %s' % (' '.join('%.0f' % t for t in tot[old]),
                                      ' '.join('%.0f' % t for t in tot[new])))


if __name__ == '__main__':
    main()
