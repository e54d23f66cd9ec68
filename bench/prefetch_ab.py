#!/usr/bin/python3
"""bench/prefetch_ab.py — does a software prefetch help one of tec's contraction kernels?
(bench/results/prefetch_s13.txt)

  bench/prefetch_ab.py [--rt] [--rounds R] [--weights W] [--outputs O] [--loop VAR] [--rotate NAME]
      TEC PROGRAM.te [LABEL='C statement' ...]

Emits the C of PROGRAM's first kernel (TEC -O2 --threads 1 --emit=c), makes one copy
of it per LABEL with the statement inserted at the top of the loop VAR (default c, the
reduction), plus the copy "none" as emitted, and compiles them with tec's flags.  A
driver calls each copy, in turns, over W distinct buffers of the parameter named
weightp (a prepacked weight: W of them exceed the caches; --rotate: the parameter NAME instead) and O distinct buffers of
each written parameter, R rounds, and prints each copy's minimum, 10th percentile and
median call time in microseconds.  The statements see the kernel's loop variables and
parameters, e.g.  next='__builtin_prefetch(&weightp[(f_o + 1) * 8192 + c * 32], 0, 3);'"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

CFLAGS = ['-O3', '-std=gnu11', '-ffp-contract=fast', '-fno-math-errno', '-fwrapv', '-fopenmp',
          '-march=native', '-fno-tree-loop-if-convert']


def first_kernel(c_text):
    """The text before the first kernel (helpers) and the first kernel's comment and body."""
    start = c_text.index('/* @')
    head = c_text[:start].replace('\nint tec_num_threads = 1;', '\nstatic int tec_num_threads = 1;')
    end = c_text.index('\n}\n', start) + 3
    return head, c_text[start:end]


def parameters(kernel):
    """(name, elements, written) of each pointer parameter, in the signature's order."""
    sizes = {m.group(1).replace('.', '_'): (int(m.group(2)), m.group(3) == 'written')   # C names: . -> _
             for m in re.finditer(r'([\w.]+) f32\[(\d+)\] \((read|written)\)', kernel)}
    signature = re.search(r'int32_t tec_\w+\(([^)]*)\)', kernel).group(1)
    names = [p.split('*restrict')[-1].strip() for p in signature.split(',')]
    return [(n,) + sizes[n] for n in names]


def driver(params, labels, weights, outputs, rounds, rotate):
    d = ['#include <stdio.h>', '#include <stdlib.h>', '#include <stdint.h>', '#include <time.h>']
    proto = ', '.join('float *' for _ in params)
    d += ['int32_t kern_%d(%s);' % (i, proto) for i in range(len(labels))]
    d += ['static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t);'
          ' return t.tv_sec * 1e6 + t.tv_nsec * 1e-3; }',
          'static int cmp(const void *a, const void *b) { double x = *(const double *)a,'
          ' y = *(const double *)b; return x < y ? -1 : x > y; }',
          'static float *buffer(long n, int k) { float *p = aligned_alloc(64, (n * 4 + (1 << 20) + 63) / 64 * 64);'
          ' for (long i = 0; i < n + (1 << 18); i++) p[i] = (float)((i + k) % 7) * 0.01f; return p; }',
          'int main(void) {',
          '  enum { W = %d, O = %d, R = %d, N = W > O ? W : O, K = %d };' % (weights, outputs, rounds, len(labels)),
          '  static double t[K][R * N];']
    for name, n, written in params:
        copies = 'W' if name == rotate else 'O' if written else '1'
        d.append('  float *%s[N]; for (int j = 0; j < N; j++) %s[j] = j < %s ? buffer(%d, j) : %s[j %% %s];'
                 % (name, name, copies, n, name, copies))
    args = ', '.join('%s[j]' % p[0] for p in params)
    d += ['  for (int r = 0; r < R; r++)',
          '    for (int k = 0; k < K; k++)',
          '      for (int j = 0; j < N; j++) {',
          '        double t0 = now();',
          '        switch (k) { %s }' % ' '.join('case %d: kern_%d(%s); break;' % (i, i, args)
                                                for i in range(len(labels))),
          '        t[k][r * N + j] = now() - t0;',
          '      }',
          '  static const char *label[K] = { %s };' % ', '.join('"%s"' % l for l in labels),
          '  for (int k = 0; k < K; k++) {',
          '    qsort(t[k], R * N, sizeof(double), cmp);',
          '    printf("%-8s min %7.1f  p10 %7.1f  median %7.1f us\\n", label[k], t[k][0],'
          ' t[k][R * N / 10], t[k][R * N / 2]);',
          '  }',
          '  return 0;', '}']
    return '\n'.join(d) + '\n'


def main():
    ap = argparse.ArgumentParser(usage=__doc__)
    ap.add_argument('--rt', action='store_true')
    ap.add_argument('--rounds', type=int, default=10)
    ap.add_argument('--weights', type=int, default=40)
    ap.add_argument('--outputs', type=int, default=1)
    ap.add_argument('--loop', default='c')
    ap.add_argument('--rotate', default='weightp')
    ap.add_argument('tec')
    ap.add_argument('program')
    ap.add_argument('variants', nargs='*')
    o = ap.parse_args()
    c_text = subprocess.run([o.tec, '-O2', '--threads', '1', '--emit=c', o.program], check=True,
                            capture_output=True, text=True).stdout
    head, kernel = first_kernel(c_text)
    params = parameters(kernel)
    if o.rotate not in [p[0] for p in params]:
        sys.exit('prefetch_ab: the first kernel has no parameter %s' % o.rotate)
    loop = re.compile(r'for \(int64_t %s = [^;]*;[^)]*\) \{\n' % re.escape(o.loop))
    if not loop.search(kernel):
        sys.exit('prefetch_ab: the first kernel has no loop %s' % o.loop)
    variants = [('none', '')] + [tuple(v.split('=', 1)) for v in o.variants]
    with tempfile.TemporaryDirectory() as tmp:
        objects = []
        for i, (_, statement) in enumerate(variants):
            body = re.sub(r'int32_t tec_\w+\(', 'int32_t kern_%d(' % i, kernel, count=1)
            body = loop.sub(lambda m: m.group(0) + statement + '\n', body, count=1)
            src, obj = os.path.join(tmp, 'k%d.c' % i), os.path.join(tmp, 'k%d.o' % i)
            with open(src, 'w') as f:
                f.write(head + body)
            subprocess.run(['cc'] + CFLAGS + ['-c', src, '-o', obj], check=True)
            objects.append(obj)
        src, exe = os.path.join(tmp, 'driver.c'), os.path.join(tmp, 'driver')
        with open(src, 'w') as f:
            f.write(driver(params, [v[0] for v in variants], o.weights, o.outputs, o.rounds, o.rotate))
        subprocess.run(['cc', '-O2', '-fopenmp', src] + objects + ['-o', exe], check=True)
        subprocess.run((['chrt', '-f', '10'] if o.rt else []) + [exe], check=True)


if __name__ == '__main__':
    main()
