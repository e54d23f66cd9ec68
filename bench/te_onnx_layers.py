#!/usr/bin/python3
"""bench/te_onnx_layers.py — one network as examples/MODEL.te and as its
ONNX export, layer by layer, at 1 and 2 threads: where the export loses
what the .te keeps.

  bench/te_onnx_layers.py [--rounds N] [--repeat R] [--rt] [--tec TEC]
      [--top K] MODEL.te MODEL.onnx [onnx args...]

Each round runs `TEC -O2 --profile --trace=FILE --repeat R` on the .te and
on the .onnx (its args, e.g. --input NAME=FILE.npy, follow it) at one and
at two threads (TEC_NUM_THREADS), taking turns, under `chrt -f 10` with
--rt.  The two programs' kernels are paired by their position in a run
(the importer names layers after the export's nodes, so names differ; a
different kernel count prints each side's slowest kernels and the sums
unpaired).  Per pair it prints the minimum over
all runs of all rounds of each of the four (with --rt, each run
waits, up to a minute, until no other real-time process runs), 2T/1T of each side and
onnx/te at 2T; the K pairs whose 2T difference is largest first, then the
sums, and the median span of a run (first kernel's start to the last one's
end: the kernels' medians plus what runs between them)."""
import argparse
import json
import statistics
import os
import subprocess
import sys
import tempfile
import time


def other_rt_running():
    """Is a real-time process of user space (another benchmark under chrt)
    running now?  Its thread would hold one of the two processors against
    our second thread for as long as it runs."""
    for pid in os.listdir('/proc'):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            tasks = os.listdir('/proc/%s/task' % pid)
        except OSError:
            continue
        for tid in tasks:
            if running_rt_task('/proc/%s/task/%s/stat' % (pid, tid)):
                return True
    return False


def running_rt_task(path):
    try:
        with open(path) as f:
            stat = f.read()
    except OSError:
        return False
    fields = stat[stat.rfind(')') + 2:].split()
    # fields[0] is the state (field 3), fields[38] the policy (field 41),
    # fields[6] the flags: PF_KTHREAD (0x200000) marks a kernel thread
    return fields[0] == 'R' and fields[38] in ('1', '2') and not int(fields[6]) & 0x200000


def wait_for_no_rt(limit=60.0):
    end = time.time() + limit
    while other_rt_running() and time.time() < end:
        time.sleep(0.05)


def layer_minima(tec, program, args, repeat, trace, rt, threads):
    """Per position in a run: (name, minimum duration in us over the runs);
    and the spans of the runs (first kernel's start to last one's end)."""
    env = dict(os.environ, TEC_NUM_THREADS=str(threads))
    if rt:
        wait_for_no_rt()
    out = subprocess.run((['chrt', '-f', '10'] if rt else []) +
                         [tec, '-O2', '--profile', '--trace=' + trace, '--repeat', str(repeat), program] + args,
                         env=env, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit('%s %s failed:\n%s' % (tec, program, out.stderr[-2000:]))
    with open(trace) as f:
        events = json.load(f)['traceEvents']
    runs = {}
    for e in events:
        if e.get('ph') == 'X' and e.get('args', {}).get('run', 0) >= 1:
            runs.setdefault(e['args']['run'], []).append((e['ts'], e['name'], e['dur']))
    best = None
    spans = []
    for layers in runs.values():
        layers.sort()
        spans.append(max(t + d for t, _, d in layers) - layers[0][0])
        if best is None:
            best = [[n, d] for _, n, d in layers]
        elif len(layers) == len(best):
            for b, (_, n, d) in zip(best, layers):
                b[1] = min(b[1], d)
    return best, spans


def merge(acc, new):
    if acc is None:
        return new
    for a, n in zip(acc, new):
        a[1] = min(a[1], n[1])
    return acc


def unpaired(opts, best, spans):
    """The two programs run different kernels (an op the importer writes
    as several kernels, or one the .te splits): each side's K slowest at
    2T, then the sums and spans as for pairs."""
    print('# minima over %d rounds x %d runs%s, us; te = %s, onnx = %s' %
          (opts.rounds, opts.repeat, ' (chrt -f 10)' if opts.rt else '', opts.te, opts.onnx))
    print('# the .te runs %d kernels, the .onnx %d: not paired' % (len(best[0]), len(best[1])))
    for side, one, two in (('te', 0, 2), ('onnx', 1, 3)):
        if len(best[one]) != len(best[two]):
            sys.exit('te_onnx_layers.py: the %s runs %d kernels at 1T, %d at 2T' %
                     (side, len(best[one]), len(best[two])))
        print('%4s %9s %9s %6s  %s' % ('#', side + ' 1T', side + ' 2T', '2T x', 'layer'))
        rows = sorted(range(len(best[one])), key=lambda k: -best[two][k][1])[:opts.top]
        for k in rows:
            t1, t2 = best[one][k][1], best[two][k][1]
            print('%4d %9.1f %9.1f %6.2f  %s' % (k, t1, t2, t1 / t2, best[one][k][0]))
    s = [sum(d for _, d in best[i]) for i in range(4)]
    print('%9s %9s %9s %9s %6s %6s' % ('te 1T', 'onnx 1T', 'te 2T', 'onnx 2T', 'o/t 1T', 'o/t 2T'))
    print('%9.1f %9.1f %9.1f %9.1f %6.3f %6.3f  (sums of the kernels)' %
          (s[0], s[1], s[2], s[3], s[1] / s[0], s[3] / s[2]))
    m = [statistics.median(spans[i]) for i in range(4)]
    print('%9.1f %9.1f %9.1f %9.1f %6.3f %6.3f  (median span of a run, %d runs each)' %
          (m[0], m[1], m[2], m[3], m[1] / m[0], m[3] / m[2], len(spans[0])))


def main():
    ap = argparse.ArgumentParser(usage=__doc__)
    ap.add_argument('--rounds', type=int, default=3)
    ap.add_argument('--repeat', type=int, default=20)
    ap.add_argument('--top', type=int, default=20)
    ap.add_argument('--rt', action='store_true')
    ap.add_argument('--tec', default=os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tec'))
    ap.add_argument('te')
    ap.add_argument('onnx')
    opts, args = ap.parse_known_args()
    sides = [('te', opts.te, [], 1), ('onnx', opts.onnx, args, 1), ('te', opts.te, [], 2), ('onnx', opts.onnx, args, 2)]
    best = [None] * 4
    spans = [[] for _ in range(4)]
    with tempfile.TemporaryDirectory() as tmp:
        trace = os.path.join(tmp, 'trace.json')
        for _ in range(opts.rounds):
            for i, (_, prog, a, threads) in enumerate(sides):
                layers, run_spans = layer_minima(opts.tec, prog, a, opts.repeat, trace, opts.rt, threads)
                best[i] = merge(best[i], layers)
                spans[i] += run_spans
    if len(best[0]) != len(best[1]):
        unpaired(opts, best, spans)
        return
    rows = []
    for k in range(len(best[0])):
        t1, o1, t2, o2 = (best[i][k][1] for i in range(4))
        rows.append((o2 - t2, k, best[0][k][0], t1, o1, t2, o2))
    print('# minima over %d rounds x %d runs%s, us; te = %s, onnx = %s' %
          (opts.rounds, opts.repeat, ' (chrt -f 10)' if opts.rt else '', opts.te, opts.onnx))
    print('%4s %9s %9s %9s %9s %6s %6s %6s  %s' %
          ('#', 'te 1T', 'onnx 1T', 'te 2T', 'onnx 2T', 'te x', 'onnx x', 'o/t 2T', 'layer (.te)'))
    for _, k, name, t1, o1, t2, o2 in sorted(rows, key=lambda r: -abs(r[0]))[:opts.top]:
        print('%4d %9.1f %9.1f %9.1f %9.1f %6.2f %6.2f %6.3f  %s' %
              (k, t1, o1, t2, o2, t1 / t2, o1 / o2, o2 / t2, name))
    s = [sum(r[i] for r in rows) for i in (3, 4, 5, 6)]
    print('%4s %9.1f %9.1f %9.1f %9.1f %6.2f %6.2f %6.3f  (sum of %d kernels)' %
          ('', s[0], s[1], s[2], s[3], s[0] / s[2], s[1] / s[3], s[3] / s[2], len(rows)))
    m = [statistics.median(spans[i]) for i in range(4)]
    print('%4s %9.1f %9.1f %9.1f %9.1f %6.2f %6.2f %6.3f  (median span of a run, %d runs each)' %
          ('', m[0], m[1], m[2], m[3], m[0] / m[2], m[1] / m[3], m[3] / m[2], len(spans[0])))


if __name__ == '__main__':
    main()
