#!/usr/bin/python3
"""Runs one program many times at a compiled level on several threads,
each run a new tec process, against one --interp reference: a hunt for
results that differ only sometimes (a race between a kernel's threads,
the runtime's ways of waiting under load).

    bench/race_stress.py TEC PROG [--runs=300] [--threads=2] [--level=-O2]
                         [--load=K] [--cache=DIR]

--load=K runs K busy loops at nice 19 beside the runs (the load under
which a thread is preempted mid-kernel and the runtime's threads sleep
at once: runtime/threads.c), ended when the runs are.  A run that
disagrees (within 1e-4 of the reference's largest magnitude, or 1, as
testsuite/random/check_layers.py compares) keeps its outputs in
CACHE/bad-RUN; exit status 1.  A benchmark, not a test: it asserts
nothing in make check (bench/results/race_s13.txt has a record).
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np


def run(tec, args, env):
    r = subprocess.run([tec] + args, env=env, capture_output=True, text=True)
    return r.returncode, r.stderr


def disagreement(ref, out):
    names = sorted(os.listdir(ref))
    if names != sorted(os.listdir(out)):
        return f"outputs {sorted(os.listdir(out))}, reference {names}"
    for n in names:
        a, b = np.load(os.path.join(ref, n)), np.load(os.path.join(out, n))
        if a.shape != b.shape or a.dtype != b.dtype:
            return f"{n} is {b.dtype}{list(b.shape)}, the reference {a.dtype}{list(a.shape)}"
        scale = max(float(np.max(np.abs(a.astype(np.float64)))) if a.size else 0.0, 1.0)
        if not np.allclose(a, b, rtol=0, atol=1e-4 * scale, equal_nan=True):
            d = np.abs(a.astype(np.float64) - b.astype(np.float64))
            return (f"{n} differs at {int(np.sum(~(d <= 1e-4 * scale)))} places by up to "
                    f"{float(np.nanmax(d)):.3g} (nan {int(np.isnan(b).sum())}, inf {int(np.isinf(b).sum())})")
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("tec")
    ap.add_argument("prog")
    ap.add_argument("--runs", type=int, default=300)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--level", default="-O2")
    ap.add_argument("--load", type=int, default=0)
    ap.add_argument("--cache")
    a = ap.parse_args()
    cache = a.cache or tempfile.mkdtemp(prefix="race-stress-")
    env = dict(os.environ, TEC_NUM_THREADS=str(a.threads), XDG_CACHE_HOME=cache)
    ref, out = os.path.join(cache, "ref"), os.path.join(cache, "out")
    rc, err = run(a.tec, ["--interp", a.prog, "--save-outputs", ref], env)
    if rc:
        sys.exit(f"race_stress: --interp exits {rc}: {err.strip()[:400]}")
    hogs = [subprocess.Popen(["nice", "-n", "19", "sh", "-c", "while :; do :; done"])
            for _ in range(a.load)]
    bad = 0
    try:
        for i in range(a.runs):
            subprocess.run(["rm", "-rf", out])
            rc, err = run(a.tec, [a.level, a.prog, "--save-outputs", out], env)
            why = f"exit {rc}: {err.strip()[:300]}" if rc else disagreement(ref, out)
            if why:
                bad += 1
                print(f"race_stress: run {i}: {why}", flush=True)
                if not rc:
                    os.rename(out, os.path.join(cache, f"bad-{i}"))
    finally:
        for h in hogs:
            h.kill()
            h.wait()
    print(f"race_stress: {a.runs} runs of {a.prog} at {a.level} on {a.threads} threads "
          f"(load {a.load}): {bad} disagree with --interp", flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
