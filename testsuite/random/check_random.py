#!/usr/bin/python3
"""make check-random N=...: a differential tester of tec.

Writes N random valid .te programs (seeded: the same seed gives the same
programs) from a few kinds of kernel statements -- elementwise arithmetic
and math functions, reductions (+= max= min=), contractions, shifted reads
with an `else` default, data-dependent gathers -- over f32, i32 and i64
tensors, runs them with tec at -O0, -O1, -O2, -O3 and --interp, and
compares every output with the interpreter's (integers exactly, floats
within 1e-4 of the largest magnitude or of 1, whichever is larger: inputs
are of order 1, so a smaller output can be all rounding).  A run that
fails at one level but not at another is a mismatch too.

Programs are run BATCH at a time as one program (program k's tensors are
named pK_tI, so they do not collide): one C compiler call and one process
per level for the batch, which is what costs most.  When a batch
disagrees, the program the mismatch names (or else the half of the batch,
halved again, that still disagrees) is run alone; that is reduced
(statements and outputs dropped while the same kind of mismatch persists)
and saved as OUT/failing.te with the levels that disagree; the exit status
is then 1.  Every program is valid, so one the interpreter refuses is a
finding as well.

usage: check_random.py TEC N SEED OUT [BATCH [JOBS]]
  BATCH programs are run together (default 25: larger batches make one C
  function the compiler optimizes in more than linear time); JOBS levels
  run side by side (default 1).
"""
import os
import random
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import numpy as np

LEVELS = ["-O0", "-O1", "-O2", "-O3", "--interp"]
JOBS = 1   # levels run side by side


class Prog:
    """A program: declarations and statements, each a line; `outputs` names
    the tensors printed as outputs; every tensor has a dtype and shape."""

    def __init__(self):
        self.inputs = []      # lines
        self.stmts = []       # (line, defined name)
        self.shapes = {}      # name -> (dtype, dims)
        self.outputs = []

    def text(self, stmts=None, outputs=None):
        stmts = self.stmts if stmts is None else stmts
        outputs = self.outputs if outputs is None else outputs
        defined = {n for _, n in stmts} | {n for n in self.shapes if self.shapes[n][2]}
        lines = list(self.inputs)
        lines += [s for s, _ in stmts]
        lines += [f"output {o}" for o in outputs if o in defined]
        return "\n".join(lines) + "\n"


def gen(rng, prefix=""):
    """A random program whose tensors are named PREFIXt0, PREFIXt1, ..."""
    p = Prog()
    dims = {d: rng.randint(1, 6) for d in "MNK"}
    names = iter(f"{prefix}t{i}" for i in range(1000))

    def add_input(dtype, shape, init=None):
        n = next(names)
        decl = f"input {n}: {dtype}[{', '.join(str(dims[d]) for d in shape)}]"
        if init:
            decl += f" = uniform({init[0]}, {init[1]})"
        p.inputs.append(decl)
        p.shapes[n] = (dtype, shape, True)
        return n

    floats = [add_input("f32", s) for s in (("M", "N"), ("N", "K"), ("M", "N"), ("M",))]
    ints = [add_input(t, ("M", "N"), (-20, 20)) for t in ("i32", "i64")]
    index = add_input("i64", ("M",), (0, dims["N"]))

    def of_shape(dtype, shape):
        return [n for n, (t, s, _) in p.shapes.items() if t == dtype and s == shape]

    def expr(dtype, shape, depth=0):
        """An expression of dtype over index variables named by shape."""
        idx = ", ".join("ijk"[:len(shape)]) if shape else ""
        cands = of_shape(dtype, shape)
        if depth > 2 or (cands and rng.random() < 0.35):
            if cands:
                return f"{rng.choice(cands)}[{idx}]"
            return "1.5" if dtype == "f32" else "3"
        a, b = expr(dtype, shape, depth + 1), expr(dtype, shape, depth + 1)
        ops = ["+", "-", "*"]
        r = rng.random()
        if r < 0.5:
            return f"({a} {rng.choice(ops)} {b})"
        if r < 0.65:
            return f"{rng.choice(['max', 'min'])}({a}, {b})"
        if r < 0.75:
            return f"({a} > {b} ? {a} : {b})"
        if dtype == "f32":
            fn = rng.choice(["tanh", "abs", "sigmoid", "exp(-abs(%s))", "sqrt(abs(%s) + 1.0)"])
            return fn % a if "%s" in fn else f"{fn}({a})"
        return f"abs({a})"

    for _ in range(rng.randint(1, 5)):
        kind = rng.choice(["elementwise", "elementwise", "reduce", "contract", "shift", "gather",
                           "int"])
        n = next(names)
        if kind == "elementwise":
            line, ty = f"{n}[i, j] = {expr('f32', ('M', 'N'))}", ("f32", ("M", "N"))
        elif kind == "int":
            t = rng.choice(["i32", "i64"])
            line, ty = f"{n}[i, j] = {expr(t, ('M', 'N'))}", (t, ("M", "N"))
        elif kind == "reduce":
            op = rng.choice(["+=", "max=", "min="])
            line, ty = f"{n}[i] {op} {expr('f32', ('M', 'N'))}", ("f32", ("M",))
        elif kind == "contract":
            a = rng.choice(of_shape("f32", ("M", "N")))
            b = rng.choice(of_shape("f32", ("N", "K")))
            line, ty = f"{n}[i, k] += {a}[i, j] * {b}[j, k]", ("f32", ("M", "K"))
        elif kind == "shift":
            src = rng.choice(of_shape("f32", ("M", "N")))
            d = rng.randint(-2, 2)
            # j also appears whole, which gives it its range
            off = f"j + {d}" if d >= 0 else f"j - {-d}"
            line = f"{n}[i, j] = {src}[i, j] + {src}[i, {off}] else 0.0"
            ty = ("f32", ("M", "N"))
        else:
            src = rng.choice(of_shape("f32", ("M", "N")))
            line, ty = f"{n}[i, j] = {src}[i, {index}[i]] * {src}[i, j]", ("f32", ("M", "N"))
        p.stmts.append((line, n))
        p.shapes[n] = (ty[0], ty[1], False)
    p.outputs = [n for _, n in p.stmts]
    return p


def run(tec, prog_path, level, out):
    shutil.rmtree(out, ignore_errors=True)
    # (--no-cache: a private directory for each run's kernels, where the
    # cache would keep every one of N programs' kernels)
    r = subprocess.run([tec, "--no-cache", level, prog_path, "--save-outputs", out],
                       capture_output=True, text=True, timeout=600)
    return r.returncode, r.stderr


def compare(ref, got):
    """None if the outputs agree, else why not."""
    names = sorted(os.listdir(ref))
    if names != sorted(os.listdir(got)):
        return f"different outputs: {names} vs {sorted(os.listdir(got))}"
    for n in names:
        a, b = np.load(os.path.join(ref, n)), np.load(os.path.join(got, n))
        if a.shape != b.shape or a.dtype != b.dtype:
            return f"{n}: {a.dtype}{a.shape} vs {b.dtype}{b.shape}"
        if a.dtype.kind in "iub":
            if not np.array_equal(a, b):
                return f"{n}: integers differ"
        else:
            # Inputs are of order 1: an output below 1 may be a difference
            # of such numbers, all rounding ((x - (y + x)) + y), which the
            # order of operations decides; so the scale is at least 1.
            scale = max(float(np.max(np.abs(a))) if a.size else 0.0, 1.0)
            if not np.allclose(a, b, rtol=0, atol=1e-4 * scale, equal_nan=True):
                return f"{n}: max difference {float(np.max(np.abs(a - b)))} (scale {scale})"
    return None


def disagreement(tec, text, work):
    """The first pair of levels that disagree on the program, or None."""
    path = os.path.join(work, "prog.te")
    with open(path, "w") as f:
        f.write(text)
    outs = [os.path.join(work, "out" + lv) for lv in LEVELS]
    with ThreadPoolExecutor(JOBS) as pool:
        done = pool.map(lambda lv, out: run(tec, path, lv, out), LEVELS, outs)
    results = {}
    for lv, out, (rc, err) in zip(LEVELS, outs, done):
        if rc not in (0, 1):
            return f"{lv}: exit status {rc}: {err.strip()[:500]}"
        results[lv] = (rc, out, err)
    rc_ref, ref, err_ref = results["--interp"]
    if rc_ref != 0:
        return f"--interp refuses a valid program: {err_ref.strip()[:500]}"
    for lv in LEVELS[:-1]:
        rc, out, err = results[lv]
        if rc != rc_ref:
            return f"{lv} exits {rc}, --interp exits {rc_ref}: {(err or err_ref).strip()[:500]}"
        if rc == 0:
            why = compare(ref, out)
            if why:
                return f"{lv} vs --interp: {why}"
    return None


def kind(why):
    """What disagrees ("-O3 vs --interp", "--interp refuses ..."), without
    the details."""
    return why.split(":")[0] if why else None


def reduce(tec, prog, why, work):
    """Drops statements and outputs while the same kind of disagreement
    persists (dropping a statement others use makes a program every level
    refuses, which is not the same); returns the smallest text found."""
    stmts, outputs = list(prog.stmts), list(prog.outputs)

    def same(st, outs):
        return kind(disagreement(tec, prog.text(st, outs), work)) == kind(why)

    changed = True
    while changed:
        changed = False
        for i in range(len(stmts)):
            trial = stmts[:i] + stmts[i + 1:]
            if trial and same(trial, outputs):
                stmts, changed = trial, True
                break
        for o in list(outputs):
            trial = [x for x in outputs if x != o]
            if trial and same(stmts, trial):
                outputs, changed = trial, True
    return prog.text(stmts, outputs)


def merge(progs):
    """One program holding every statement of progs (whose names differ)."""
    m = Prog()
    for p in progs:
        m.inputs += p.inputs
        m.stmts += p.stmts
        m.shapes.update(p.shapes)
        m.outputs += p.outputs
    return m


def culprit(tec, progs, why, work):
    """The fewest of a batch's programs found to disagree the way the batch
    does: the program a tensor name in `why` belongs to if it does alone,
    else the half of the batch that does, halved while one half does."""
    def same(ps):
        return kind(disagreement(tec, merge(ps).text(), work)) == kind(why)

    named = re.search(r"\bp(\d+)_t\d+\b", why)
    if named:
        ps = [p for p in progs if p.number == int(named.group(1))]
        if ps and same(ps):
            return ps
    while len(progs) > 1:
        half = len(progs) // 2
        for part in (progs[:half], progs[half:]):
            if same(part):
                progs = part
                break
        else:
            break
    return progs


def main():
    global JOBS
    tec, n, seed, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    batch = int(sys.argv[5]) if len(sys.argv) > 5 else 25
    JOBS = int(sys.argv[6]) if len(sys.argv) > 6 else 1
    os.makedirs(out, exist_ok=True)
    work = os.path.join(out, "work")
    os.makedirs(work, exist_ok=True)
    rng = random.Random(seed)
    done = 0
    while done < n:
        progs = []
        for k in range(done, min(done + batch, n)):
            progs.append(gen(rng, f"p{k}_"))
            progs[-1].number = k
        why = disagreement(tec, merge(progs).text(), work)
        if why:
            bad = culprit(tec, progs, why, work)
            small = reduce(tec, merge(bad), why, work)
            why = disagreement(tec, small, work) or why
            which = " ".join(str(p.number) for p in bad)
            path = os.path.join(out, "failing.te")
            with open(path, "w") as f:
                f.write(f"# check-random seed {seed}, program {which}: {why}\n" + small)
            print(f"check-random: program {which} of seed {seed}: {why}\n  reduced: {path}")
            return 1
        done += len(progs)
        print(f"check-random: {done} of {n} programs agree at {' '.join(LEVELS)}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
