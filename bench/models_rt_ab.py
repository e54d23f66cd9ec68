#!/usr/bin/python3
"""bench/models_rt_ab.py — two builds of tec on whole ONNX models, in
turns, under `chrt -f 10`, each run waiting until no other real-time
process runs (bench/te_onnx_layers.py): on a machine shared with other
benchmarks, the steady state the tec/ORT tables of bench/ort.sh cannot
show.

  bench/models_rt_ab.py [--rounds N] [--repeat R] [--threads "1 2"]
      TEC_A TEC_B MODEL.onnx...

For each thread count and model, N rounds take turns between A and B
(`TEC -O2 MODEL.onnx --input ... --repeat R`, its inputs from MODEL.in/);
a row gives the median over the rounds of each side's median of R runs,
the minimum over the rounds, and B/A of both, and the vCPUs' round trip
(bench/vcpu_rtt.c, built into a temporary folder) before the model; with
--ort, ONNX Runtime's median of R runs in each round too (bench/ort_run.js,
ORT_NODE_DIR), and A/ORT, B/ORT of the medians over the rounds."""
import argparse
import glob
import os
import re
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from te_onnx_layers import wait_for_no_rt  # noqa: E402


def median_us(tec, onnx, repeat, threads):
    inputs = []
    for f in sorted(glob.glob(os.path.join(onnx[:-len('.onnx')] + '.in', '*.npy'))):
        inputs += ['--input', '%s=%s' % (os.path.basename(f)[:-4], f)]
    wait_for_no_rt()
    out = subprocess.run(['chrt', '-f', '10', tec, '-O2', onnx] + inputs + ['--repeat', str(repeat)],
                         env=dict(os.environ, TEC_NUM_THREADS=str(threads)), capture_output=True, text=True)
    m = re.search(r'^time: median of \d+ runs after a warm-up: ([0-9.]+) us$', out.stdout + out.stderr, re.M)
    if out.returncode != 0 or not m:
        sys.exit('%s %s failed:\n%s' % (tec, onnx, out.stderr[-2000:]))
    return float(m.group(1))


def ort_median_us(onnx, repeat, threads):
    base = onnx[:-len('.onnx')]
    wait_for_no_rt()
    out = subprocess.run(['chrt', '-f', '10', 'node', os.path.join(os.path.dirname(os.path.abspath(__file__)), 'ort_run.js'),
                          onnx, base + '.in', base + '.ref.npy', str(threads), str(repeat), '60'],
                         capture_output=True, text=True)
    m = re.search(r'median_ms=([0-9.]+)', out.stdout)
    if out.returncode != 0 or not m:
        sys.exit('ONNX Runtime on %s failed:\n%s' % (onnx, out.stderr[-2000:]))
    return 1000 * float(m.group(1))


def main():
    ap = argparse.ArgumentParser(usage=__doc__)
    ap.add_argument('--rounds', type=int, default=3)
    ap.add_argument('--repeat', type=int, default=100)
    ap.add_argument('--threads', default='2')
    ap.add_argument('--ort', action='store_true')
    ap.add_argument('a')
    ap.add_argument('b')
    ap.add_argument('models', nargs='+')
    o = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        rtt = os.path.join(tmp, 'vcpu_rtt')
        subprocess.run(['cc', '-O2', '-fopenmp', '-o', rtt,
                        os.path.join(os.path.dirname(os.path.abspath(__file__)), 'vcpu_rtt.c')], check=True)
        print('# bench/models_rt_ab.py: %d rounds x %d runs, chrt -f 10; A = %s, B = %s' %
              (o.rounds, o.repeat, o.a, o.b))
        print('%-28s %2s %6s %10s %10s %6s %10s %10s %6s%s' %
              ('model', 'T', 'rtt', 'A med', 'B med', 'B/A', 'A min', 'B min', 'B/A',
               '   ORT med    A/ORT  B/ORT' if o.ort else ''))
        ratios = {}
        for threads in o.threads.split():
            for onnx in o.models:
                for side in (o.a, o.b):   # compile both before timing
                    median_us(side, onnx, 1, threads)
                ns = subprocess.run([rtt], capture_output=True, text=True).stdout.split()
                a, b, r = [], [], []
                for _ in range(o.rounds):
                    a.append(median_us(o.a, onnx, o.repeat, threads))
                    b.append(median_us(o.b, onnx, o.repeat, threads))
                    if o.ort:
                        r.append(ort_median_us(onnx, o.repeat, threads))
                am, bm = statistics.median(a), statistics.median(b)
                ratios.setdefault(threads, []).append(bm / am)
                ort = ''
                if r:
                    rm = statistics.median(r)
                    ort = ' %10.1f %6.3f %6.3f' % (rm, am / rm, bm / rm)
                print('%-28s %2s %6s %10.1f %10.1f %6.3f %10.1f %10.1f %6.3f%s' %
                      (os.path.basename(onnx)[:-5], threads, ns[2] if len(ns) > 2 else '-', am, bm, bm / am,
                       min(a), min(b), min(b) / min(a), ort), flush=True)
        for threads, r in ratios.items():
            print('# %sT: geometric mean of B/A (medians) over %d models: %.3f' %
                  (threads, len(r), statistics.geometric_mean(r)))


if __name__ == '__main__':
    main()
