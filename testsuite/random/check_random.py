#!/usr/bin/python3
"""make check-random N=...: a differential tester of tec.

Writes N random valid .te programs (seeded: the same seed gives the same
programs) from a few kinds of kernel statements -- elementwise arithmetic
and math functions, reductions (+= max= min=), contractions, shifted reads
with an `else` default, data-dependent gathers; padding-like copies of a
tensor whose last dimension is 1 or 2 at constant offsets that reach
outside it (`y[i, j] = x[i - 3, j] else 0.25 where i in 0..9`, or a
constant last index), guarded reductions (+= *= max= min=) over ranges
that start below zero, rank-0 (scalar) outputs, and f64 mixed with f32
through casts; grouped and depthwise 1-D convolutions (strided, padded,
their reads at f / Fg * Cg + c as lib/nn.te's conv2d has them), int8
contractions accumulated in i32 or i64 with a zero point, and elementwise
i8/u8/i16 code widened to i32 and saturated back; rows, columns and
rank-0 tensors broadcast against a matrix, backward and strided reads,
integer floor / and % with operands of either sign, float %, erf, log,
sin, cos, pow, rint and exp, and f32/f64 quantized to i8/u8 by a saturating
cast and back -- over f32, f64, i32, i64, i8, u8 and i16 tensors (some
dimensions an odd size past a vector's lanes), runs them with tec at
-O0, -O1, -O2, -O3 and --interp, and
compares every output with the interpreter's (integers exactly, floats
within 1e-4 of the largest magnitude or of 1, whichever is larger: inputs
are of order 1, so a smaller output can be all rounding).  A run that
fails at one level but not at another is a mismatch too.

Programs are run BATCH at a time as one program (program k's tensors are
named pK_tI, so they do not collide): one C compiler call and one process
per level for the batch, which is what costs most.  The levels of a batch
share a kernel cache (a kernel with the C and compiler command of an
earlier level is compiled once) in a memory-backed scratch folder.  When a batch
disagrees, the program the mismatch names (or else the half of the batch,
halved again, that still disagrees) is run alone; that is reduced
(statements and outputs dropped while the same kind of mismatch persists)
and saved as OUT/failing.te with the levels that disagree; the exit status
is then 1.  Every program is valid, so one the interpreter refuses is a
finding as well.

With schedules, every statement (of every kind above) is a def of its own
(`tK = pK_tK_f(...)`) with a random schedule from the primitives of
doc/schedule.md (splits, an inner part split again, reorders, fuse, rfactor, decompose_reduction,
cache_read, cache_write, pad, compute_inline, compute_at,
reverse_compute_at, vectorize, parallel, unroll, partition; for a grouped
convolution regroup(f, Fg), then pad(x) or the channels-last pad(x, 0)
or pad(x, 1)), made to be
legal, so that a refusal is a finding too; the reference is then the
interpreter on the program without schedules.

With a second C compiler (CC2, e.g. clang), the compiled levels run once
more with CC=CC2, each compared with the interpreter too: a miscompile by
either compiler shows as a mismatch of its levels (`-O2 CC=clang vs
--interp`).

usage: check_random.py TEC N SEED OUT [BATCH [JOBS [SCHEDULES [CC2 [FIRST]]]]]
  BATCH programs are run together (default 100: tec makes kernels of at
  most 64 statements, so a larger batch costs about as much a program,
  but a mismatch takes longer to trace to its program); JOBS levels
  run side by side (default 1); SCHEDULES 1 schedules the programs
  (default 0); CC2 a second C compiler for the compiled levels (default
  none); FIRST the first program run (default 0): programs 0..FIRST-1 of
  the seed are made (so that the later ones are those of a whole run)
  but not run, which resumes a seed's run where an earlier one stopped.
"""
import atexit
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

import numpy as np

LEVELS = ["-O0", "-O1", "-O2", "-O3", "--interp"]
COMPILED = ["-O0", "-O1", "-O2", "-O3"]
JOBS = 1   # levels run side by side
SCRATCH = None   # outputs, kernels and compiler files (scratch_folder)


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


def gen(rng, prefix="", schedules=False):
    """A random program whose tensors are named PREFIXt0, PREFIXt1, ...;
    with schedules, each statement is a def of its own with a random
    schedule (schedule_def)."""
    p = Prog()
    # (sometimes an odd size past a vector's lanes: vector bodies and tails)
    dims = {d: rng.choice([7, 15, 17, 31, 33]) if rng.random() < 0.2 else rng.randint(1, 6)
            for d in "MNK"}
    dims["W"] = rng.choice([1, 2])   # a narrow last dimension, as padding copies meet
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
    narrow = add_input("f32", ("M", "W"))
    wide = add_input("f64", ("M", "N"))
    nshape = [0]   # shapes of padded copies, each a dimension of its own

    def new_dim(size):
        nshape[0] += 1
        d = f"P{nshape[0]}"
        dims[d] = size
        return d

    def default():
        return rng.choice(["0.0", "0.25", "-1.5", "2.0"])

    narrow_inputs = {}   # (dtype, shape) -> the input of that type, made on first use
    ranges = {"i8": (-128, 128), "u8": (0, 256), "i16": (-300, 300)}

    def narrow_input(t, shape):
        if (t, shape) not in narrow_inputs:
            narrow_inputs[t, shape] = add_input(t, shape, ranges[t])
        return narrow_inputs[t, shape]

    lazy_inputs = {}   # (dtype, shape) -> an input made on first use

    def lazy_input(t, shape, init=None):
        if (t, shape) not in lazy_inputs:
            lazy_inputs[t, shape] = add_input(t, shape, init)
        return lazy_inputs[t, shape]

    def of_shape(dtype, shape):
        return [n for n, (t, s, _) in p.shapes.items() if t == dtype and s == shape]

    def expr(dtype, shape, depth=0):
        """An expression of dtype over index variables named by shape."""
        idx = ", ".join("ijk"[:len(shape)]) if shape else ""
        cands = of_shape(dtype, shape)
        if depth > 2 or (cands and rng.random() < 0.35):
            if cands:
                return f"{rng.choice(cands)}[{idx}]"
            return "1.5" if dtype in ("f32", "f64") else "3"
        a, b = expr(dtype, shape, depth + 1), expr(dtype, shape, depth + 1)
        ops = ["+", "-", "*"]
        r = rng.random()
        if r < 0.5:
            return f"({a} {rng.choice(ops)} {b})"
        if r < 0.65:
            return f"{rng.choice(['max', 'min'])}({a}, {b})"
        if r < 0.75:
            return f"({a} > {b} ? {a} : {b})"
        if dtype in ("f32", "f64"):
            fn = rng.choice(["tanh", "abs", "sigmoid", "exp(-abs(%s))", "sqrt(abs(%s) + 1.0)"])
            return fn % a if "%s" in fn else f"{fn}({a})"
        return f"abs({a})"

    for _ in range(rng.randint(1, 5)):
        kind = rng.choice(["elementwise", "elementwise", "reduce", "contract", "shift", "gather",
                           "int", "padcopy", "guarded", "scalar", "mixed", "gconv", "int8",
                           "narrow", "broadcast", "reverse", "intdiv", "fmod", "math",
                           "quant", "requant"])
        n = next(names)
        # what schedule_def needs to know of the kernel: its loop nest,
        # outermost first (name:dimension:spatial or reduce; random_schedule
        # leaves out the loops of one iteration, which the simplifier
        # removes) and, for a padded or guarded read, how many iterations
        # of its loop read inside the tensor
        axes = {"reduce": "i:M:s j:N:r", "contract": "i:M:s k:K:s j:N:r",
                "guarded": "i:M:s j:G:r", "scalar": "i:M:r j:N:r"}.get(kind, "i:M:s j:N:s")
        inside = None
        conv = None   # a grouped convolution's facts, for its schedule

        def overlap(lo, hi, size):
            """How many of the indices lo..hi (hi excluded) lie in 0..size."""
            return max(0, min(hi, size) - max(lo, 0))
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
        elif kind == "padcopy":
            # rows shifted by a constant, some outside: the else value
            c, rows = rng.randint(-4, 4), rng.randint(1, dims["M"] + 6)
            off = f"i + {c}" if c >= 0 else f"i - {-c}"
            inside = overlap(c, rows + c, dims["M"])
            if rng.random() < 0.5:
                line = f"{n}[i, j] = {narrow}[{off}, j] else {default()} where i in 0..{rows}"
                ty = ("f32", (new_dim(rows), "W"))
                axes = f"i:{ty[1][0]}:s j:W:s"
            else:   # a constant last index, which may lie outside too
                col = rng.randint(0, dims["W"])
                inside = inside if col < dims["W"] else 0
                line = f"{n}[i] = {narrow}[{off}, {col}] else {default()} where i in 0..{rows}"
                ty = ("f32", (new_dim(rows),))
                axes = f"i:{ty[1][0]}:s"
        elif kind == "guarded":
            # a reduction over a range that starts below zero, its reads
            # guarded by else (a neutral-ish value) or by a select
            op = rng.choice(["+=", "*=", "max=", "min="])
            src = rng.choice(of_shape("f32", ("M", "N")))
            d = rng.randint(1, 3)
            lo, hi = -rng.randint(1, 3), dims["N"] + rng.randint(-1, 2)
            if rng.random() < 0.5:
                read = f"({src}[i, j + {d}] else {default()})"
            else:
                read, d = f"({src}[i, j - {d}] else {default()})", -d
            inside = overlap(lo + d, max(hi, lo + 1) + d, dims["N"])
            val = f"{read} * 0.5 + 1.0" if op == "*=" else read
            if rng.random() < 0.3:
                val = f"({read} > 0.0 ? {val} : {default()})"
            line = f"{n}[i] {op} {val} where j in {lo}..{max(hi, lo + 1)}"
            ty = ("f32", ("M",))
            axes = axes.replace(":G:", f":{new_dim(max(hi, lo + 1) - lo)}:")
        elif kind == "scalar":
            op = rng.choice(["+=", "max=", "min="])
            t = rng.choice(["f32", "f64"])
            line, ty = f"{n}[] {op} {expr(t, ('M', 'N'))}", (t, ())
        elif kind == "mixed":
            # f64 and f32 in one statement, through casts both ways
            a = rng.choice(of_shape("f32", ("M", "N")))
            if rng.random() < 0.5:
                line = f"{n}[i, j] = f64({a}[i, j]) * {expr('f64', ('M', 'N'))} + f64({expr('f32', ('M', 'N'))})"
                ty = ("f64", ("M", "N"))
            else:
                line = f"{n}[i, j] = f32({wide}[i, j] - f64({a}[i, j])) * {expr('f32', ('M', 'N'))}"
                ty = ("f32", ("M", "N"))
        elif kind == "gconv":
            # a 1-D grouped convolution (depthwise when every group has one
            # input and one output channel), strided and padded, its reads
            # of x at f / Fg * Cg + c as lib/nn.te's conv2d has them
            g, cg, fg = rng.randint(1, 3), rng.randint(1, 2), rng.randint(1, 3)
            if rng.random() < 0.3:
                cg = fg = 1
            r, stride = rng.randint(1, 3), rng.randint(1, 2)
            pad = rng.randint(0, r - 1)
            h = max(rng.randint(1, 6), r - 2 * pad)
            oh = (h + 2 * pad - r) // stride + 1
            x = add_input("f32", (new_dim(g * cg), new_dim(h)))
            w = add_input("f32", (new_dim(g * fg), new_dim(cg), new_dim(r)))
            fd, ohd = new_dim(g * fg), new_dim(oh)
            line = (f"{n}[f, p] += ({x}[f / {fg} * {cg} + c, p * {stride} + r - {pad}] else 0.0)"
                    f" * {w}[f, c, r] where p in 0..{oh}")
            ty = ("f32", (fd, ohd))
            axes = f"f:{fd}:s p:{ohd}:s c:{p.shapes[w][1][1]}:r r:{p.shapes[w][1][2]}:r"
            # (pad needs a guarded read that the simplifier leaves one: some
            # index outside x, and two inside, else it becomes a constant)
            reads = {q * stride + t - pad for q in range(oh) for t in range(r)}
            conv = dict(fg=fg, x=x, w=w,
                        paddable=len(reads - set(range(h))) > 0 and len(reads & set(range(h))) > 1)
        elif kind == "int8":
            # an int8 contraction accumulated in i32 (or i64), with a zero
            # point on one side, as qlinear and qconv2d compute it
            a = narrow_input("i8", ("M", "N"))
            b = narrow_input(rng.choice(["i8", "u8"]), ("N", "K"))
            acc = rng.choice(["i32", "i32", "i64"])
            z = rng.randint(-3, 3)
            za = f"(i32({a}[i, j]) {'-' if z > 0 else '+'} {abs(z)})" if z else f"i32({a}[i, j])"
            if acc == "i64":
                za = f"i64({za})"
            line, ty = f"{n}[i, k] += {za} * {acc}({b}[j, k])", (acc, ("M", "K"))
            axes = "i:M:s k:K:s j:N:r"
        elif kind == "narrow":
            # elementwise integer code over i8, u8 and i16 tensors widened to
            # i32 (vectorized: the widening instructions), saturated back
            def wide_read():
                t = rng.choice(["i8", "u8", "i16"])
                return f"i32({narrow_input(t, ('M', 'N'))}[i, j])"
            e = wide_read()
            for _ in range(rng.randint(1, 3)):
                r = rng.random()
                if r < 0.6:
                    e = f"({e} {rng.choice(['+', '-', '*'])} {wide_read()})"
                elif r < 0.8:
                    e = f"{rng.choice(['max', 'min'])}({e}, {wide_read()})"
                else:
                    e = f"({e} {rng.choice(['+', '-', '*'])} {rng.randint(-5, 5)})"
            t = rng.choice(["i32", "i8", "u8", "i16"])
            line = f"{n}[i, j] = {e if t == 'i32' else f'sat_{t}({e})'}"
            ty = (t, ("M", "N"))
        elif kind == "broadcast":
            # a row, a column or a rank-0 tensor against an [M, N] one
            t = rng.choice(["f32", "f32", "f64"])
            parts = [f"{lazy_input(t, ('N',))}[j]", f"{lazy_input(t, ('M',))}[i]",
                     f"{lazy_input(t, ())}[]"]
            e = expr(t, ("M", "N"))
            for b in rng.sample(parts, rng.randint(1, 3)):
                e = f"({e} {rng.choice(['+', '-', '*'])} {b})" if rng.random() < 0.7 \
                    else f"{rng.choice(['max', 'min'])}({e}, {b})"
            line, ty = f"{n}[i, j] = {e}", (t, ("M", "N"))
        elif kind == "reverse":
            # reads backwards and with strides (negative steps), every
            # index in range: y[i, j] = x[M-1-i, o - s*j]
            src = rng.choice(of_shape("f32", ("M", "N")))
            st = rng.choice([-3, -2, -1, -1, 1, 2, 3])
            cnt = rng.randint(1, -(-dims["N"] // abs(st)))
            first = rng.randint((cnt - 1) * -st if st < 0 else 0,
                                dims["N"] - 1 - ((cnt - 1) * st if st > 0 else 0))
            col = f"{first} - {-st} * j" if st < 0 else f"{first} + {st} * j"
            row = f"{dims['M'] - 1} - i" if rng.random() < 0.5 else "i"
            jd = new_dim(cnt)
            line = (f"{n}[i, j] = {src}[{row}, {col}] * {rng.choice(['1.0', '-0.5', '2.0'])}"
                    f" where i in 0..{dims['M']}, j in 0..{cnt}")
            ty = ("f32", ("M", jd))
            axes = f"i:M:s j:{jd}:s"
        elif kind == "intdiv":
            # floor division and modulo with operands of either sign, by
            # constants and by tensors that are never zero
            t = rng.choice(["i32", "i64"])
            a = expr(t, ("M", "N"))
            b = rng.choice(of_shape(t, ("M", "N")))
            d = rng.choice([f"(abs({b}[i, j]) + 1)", f"(-1 - abs({b}[i, j]))",
                            "({})".format(rng.choice([-16, -7, -3, -2, -1, 1, 2, 3, 5, 8, 64]))])
            e = f"({a} {rng.choice(['/', '%'])} {d})"
            if rng.random() < 0.5:
                e = f"({e} {rng.choice(['+', '-'])} ({expr(t, ('M', 'N'))} {rng.choice(['/', '%'])} "\
                    f"({rng.choice([-5, -4, 3, 4, 7])})))"
            line, ty = f"{n}[i, j] = {e}", (t, ("M", "N"))
        elif kind == "fmod":
            # float %: a - b*floor(a/b), either sign
            t = rng.choice(["f32", "f64"])
            c = rng.choice(["0.75", "-0.75", "2.5", "-1.25", "0.1"])
            line, ty = f"{n}[i, j] = ({expr(t, ('M', 'N'))} % {c}) + {expr(t, ('M', 'N'))}", (t, ("M", "N"))
        elif kind == "math":
            # the other math functions, in their domains
            t = rng.choice(["f32", "f64"])
            e = expr(t, ("M", "N"))
            fn = rng.choice(["erf(%s)", "log(abs(%s) + 1.0)", "sin(%s)", "cos(%s)",
                             "pow(abs(%s) + 0.5, 1.5)", "rint(%s * 4.0)", "exp(min(%s, 4.0))"])
            line, ty = f"{n}[i, j] = {fn % e} * {expr(t, ('M', 'N'))}", (t, ("M", "N"))
        elif kind == "quant":
            # f32/f64 to i8/u8 by a saturating cast of a rounded scale, and
            # i8/u8 back to f64
            if rng.random() < 0.5:
                t = rng.choice(["i8", "u8"])
                src = rng.choice([rng.choice(of_shape("f32", ("M", "N"))), wide])
                sc = rng.choice(["30.0", "200.0", "-90.0"])
                z = rng.choice(["", " + 3.0", " - 100.0"])
                line = f"{n}[i, j] = sat_{t}(rint(f64({src}[i, j]) * {sc}{z}))"
                ty = (t, ("M", "N"))
            else:
                q = narrow_input(rng.choice(["i8", "u8"]), ("M", "N"))
                line = f"{n}[i, j] = (f64({q}[i, j]) - 3.0) * 0.0625 + {expr('f64', ('M', 'N'))}"
                ty = ("f64", ("M", "N"))
        elif kind == "requant":
            # an i32 sum requantized to i8/u8 per column, as a quantized
            # convolution's write-back is: rint of an f64 (or f32) product,
            # a zero point, sometimes a ReLU's clamp at it
            src = rng.choice(of_shape("i32", ("M", "N")))
            sc = lazy_input("f32", ("N",))
            t = rng.choice(["i8", "u8"])
            z = rng.randint(-10, 10) if t == "i8" else rng.randint(0, 130)
            if rng.random() < 0.5:
                v = f"(rint(f64({src}[i, j]) * f64({sc}[j]) * 7.0) + {z}.0)"
            else:
                v = f"(rint(f32({src}[i, j]) * {sc}[j] / 0.05) + {z}.0)"
            if rng.random() < 0.4:
                v = f"max({v}, {z}.0)"
            line, ty = f"{n}[i, j] = sat_{t}({v})", (t, ("M", "N"))
        else:
            src = rng.choice(of_shape("f32", ("M", "N")))
            line, ty = f"{n}[i, j] = {src}[i, {index}[i]] * {src}[i, j]", ("f32", ("M", "N"))
        p.shapes[n] = (ty[0], ty[1], False)
        if schedules:
            line = schedule_def(rng, p, n, line, dict(kind=kind, axes=axes, inside=inside,
                                                      conv=conv), dims, prefix)
        p.stmts.append((line, n))
    p.outputs = [n for _, n in p.stmts]
    return p


def schedule_def(rng, p, n, line, k, dims, prefix):
    """Statement `line` (defining n; k: its kind, axes and inside, from gen)
    as a def of its own, under a random schedule tec must accept, then its
    call.  Sometimes the def
    first computes an elementwise function of an f32 [M, N] tensor the
    statement reads, into a local tensor the statement reads instead, for
    compute_inline, compute_at and reverse_compute_at."""
    body = [line]
    local = None
    srcs = [u for u in re.findall(rf"\b{prefix}t\d+(?=\[i, )", line)
            if u != n and p.shapes[u][:2] == ("f32", ("M", "N"))]
    # (no local tensor the statement would never read: it has nothing to
    # inline nor to compute at)
    # (nor for a strided or backward read, whose box compute_at cannot
    # always give)
    if srcs and k["kind"] not in ("int", "reverse") and k["inside"] != 0 and rng.random() < 0.3:
        src, local = rng.choice(srcs), n + "_u"
        fn = rng.choice(["tanh(%s)", "%s * 2.0 + 1.0", "abs(%s) - 0.5", "max(%s, 0.0)"])
        body = [f"{local}[i, j] = {fn % f'{src}[i, j]'}",
                re.sub(rf"\b{src}\[", f"{local}[", line)]
    used = sorted(set(re.findall(rf"\b{prefix}t\d+\b", " ".join(body))) - {n},
                  key=lambda u: int(u.rsplit("t", 1)[1]))

    def decl(u):
        # (a padded copy's rows, PK, are a size no input gives: a number)
        t, shape, _ = p.shapes[u]
        return f"{u}: {t}[{', '.join(str(dims[d]) if d[0] == 'P' else d for d in shape)}]"

    f = n + "_f"
    steps = random_schedule(rng, k, dims, n, body[-1], used, p.shapes, local)
    text = f"def {f}({', '.join(decl(u) for u in used)}) -> {decl(n)} {{\n"
    text += "".join(f"    {x}\n" for x in body) + "}\n"
    if steps:
        text += f"schedule {f} {{\n" + "".join(f"    {x}\n" for x in steps) + "}\n"
    return text + f"{n} = {f}({', '.join(used)})"


def random_schedule(rng, k, dims, block, line, used, shapes, local):
    """A random list of schedule primitives for the kernel of schedule_def,
    each legal where it is applied (doc/schedule.md).  Loops are named as
    the simplified kernel has them: i, j (and k for a contraction, in the
    order i, k, j), but none of one iteration (the simplifier removes
    those); a statement after the local tensor's has i_1 and j_1."""
    kind, inside = k["kind"], k["inside"]
    # the nest, outermost first: [name, iterations, spatial or reduce, index]
    nest = [[a + ("_1" if local and a != "k" else ""), dims[d], r, a]
            for a, d, r in (x.split(":") for x in k["axes"].split()) if dims[d] > 1]
    steps = []
    split_loops = []
    inexact = set()   # the axes split by a factor that does not divide them
    stride = {}       # a loop's step in its axis (1 unless it is an outer part)

    def split(loop, nest):
        name, n, role, base = loop
        split_loops.append(name)
        fac = rng.randint(1, n + 1)
        if n % fac:
            inexact.add(base)
        steps.append(f"{name}o, {name}i = split({name}, {fac})")
        at = nest.index(loop)
        nest[at:at + 1] = [[name + "o", -(-n // fac), role, base], [name + "i", min(fac, n), role, base]]
        stride[name + "o"] = stride.get(name, 1) * min(fac, n)
        stride[name + "i"] = stride.get(name, 1)

    if local and kind in ("elementwise", "mixed") and rng.random() < 0.3:
        # the statement computed inside a loop of the local tensor's nest,
        # right after what one iteration of it stores
        producer = [[a, dims[d], "s", a] for a, d in (("i", "M"), ("j", "N")) if dims[d] > 1]
        if producer:
            for loop in list(producer):
                if rng.random() < 0.4:
                    split(loop, producer)
            # (the elements one iteration of the loop stores must be a box
            # whose every index uses at most one loop inside it)
            bases = [l[3] for l in producer]
            ok = [l for k, l in enumerate(producer) if all(
                bases.count(b) < 2 or bases.index(b) <= k for b in bases)]
            steps.append(f"reverse_compute_at({block}, {rng.choice(ok)[0]})")
            if rng.random() < 0.3:
                steps.append(f"parallel({producer[0][0]})")
            return steps
    shift = re.search(r"\[i, j ([+-]) (\d+)\]", line)
    src = re.search(r"\b(\w+)\[i, j [+-]", line)
    # (when one j alone reads in range, the simplifier makes that read's
    # index a constant, and pad finds no guarded read; nor does it when
    # every j of a guarded reduction reads in range)
    padded = None   # (then the statement reads the padded copy instead)
    if kind == "shift":
        can_pad = shift and 0 < int(shift.group(2)) < dims["N"] - 1
    else:
        can_pad = kind == "guarded" and 2 <= inside < dims[k["axes"].split()[-1].split(":")[1]]
    if can_pad and src.group(1) != local and rng.random() < 0.3:
        padded = src.group(1)
        steps.append(f"{padded}_pad = pad({padded})")
    conv = k.get("conv")
    at = next((x for x, l in enumerate(nest) if l[0] == "f"), None)
    if conv and at is not None and rng.random() < 0.6:
        # the output channels as groups and channels in a group: the read
        # of x becomes affine, so that pad can copy it (with a border, or
        # channels innermost: a depthwise convolution's layout)
        fg = conv["fg"]
        split_loops.append("f")
        steps.append(f"fo, fi = regroup(f, {fg})")
        # (a half of one iteration, "u", is neither vectorized nor run in
        # parallel: regroup simplifies its variable away, and those refuse
        # a loop whose every iteration stores the same elements)
        nest[at:at + 1] = [[name, size, "s" if size > 1 else "u", "f"]
                           for name, size in (("fo", nest[at][1] // fg), ("fi", fg))]
        stride["fo"] = fg
        if conv["paddable"] and rng.random() < 0.6:
            padded = conv["x"]
            steps.append(f"{padded}_pad = pad({padded}{rng.choice(['', ', 0', ', 1'])})")
    for loop in list(nest):
        if rng.random() < 0.4:
            split(loop, nest)
    # an inner part split again (a tile of a tile: its guard, inexact, is
    # tighter than the tensor's bound; cache_write copies back only what it
    # lets the statement compute)
    inner = [l for l in nest if l[0] in [a + "i" for a in split_loops] and l[1] > 2 and l[2] == "s"]
    if inner and rng.random() < 0.3:
        split(rng.choice(inner), nest)
    if len(nest) > 1 and rng.random() < 0.3:
        nest = rng.sample(nest, len(nest))
        steps.append(f"reorder({', '.join(l[0] for l in nest)})")
    # (a fused loop's indices, floordiv and floormod of it, are not affine:
    # cache_write, compute_at and the reductions' primitives refuse them)
    fused = len(nest) > 1 and rng.random() < 0.2
    if fused:
        x = rng.randrange(len(nest) - 1)
        (a, na, ra, ba), (b, nb, rb, bb) = nest[x], nest[x + 1]
        steps.append(f"{a}_{b} = fuse({a}, {b})")
        nest[x:x + 2] = [[f"{a}_{b}", na * nb, "r" if "r" in (ra, rb) else "s", ba + bb]]
    names = [l[0] for l in nest]
    reduce_loops = [l[0] for l in nest if l[2] == "r"]
    structural = []
    # (a guarded reduction that never reads in range may update by a
    # neutral constant, y = y * 1.0, which the simplifier drops: no update
    # is left for rfactor)
    if reduce_loops and (kind != "guarded" or inside):
        structural += ["rfactor", "decompose_reduction"]
    if nest:
        structural += ["cache_write", "cache_read"]
    what = rng.choice(structural) if structural and not fused and rng.random() < 0.4 else None
    cw_at = rng.choice(names) if names else None
    # (the guard of an inexact split of another reduce axis cannot be
    # proven to hold where the other reduce loops start: rfactor refuses)
    bases = {l[0]: l[3] for l in nest}
    rf = [r for r in reduce_loops
          if not any(bases[o] != bases[r] and bases[o] in inexact for o in reduce_loops)]
    if what == "rfactor" and rf:
        r = rng.choice(rf)
        steps.append(f"rfactor({block}, {r})")
        for l in nest:
            if l[0] == r:
                l[2] = "s"
    elif what == "decompose_reduction":
        steps.append(f"decompose_reduction({block}, {rng.choice(reduce_loops)})")
    elif what == "cache_write" and tile_ok(nest[names.index(cw_at):], stride):
        steps.append(f"{block}_w = cache_write({block}, {cw_at})")
    elif what == "cache_read":
        # a tensor read once, in a place the simplifier cannot drop (it
        # drops x - x and the like, and then the loop reads no x)
        srcs = {"contract": used, "int8": used, "gconv": [conv["w"]] if conv else [],
                "gather": [u for u in used if shapes[u][1] == ("M",)],
                "padcopy": used if inside else [], "guarded": used if inside else []}.get(kind, [])
        srcs = [u for u in srcs if re.search(rf"\b{u}\[", line) and u != padded]
        if srcs:
            src = rng.choice(srcs)
            steps.append(f"{src}_r = cache_read({src}, {rng.choice(names)})")
    at = None
    if local and rng.random() < 0.6:
        # (a gather's read of the local tensor has no affine box, nor has a
        # shifted read the simplifier made constant, as for pad above)
        if kind != "gather" and nest and not fused and rng.random() < 0.6 and (
                not shift or int(shift.group(2)) < dims["N"] - 1):
            at = rng.randrange(len(nest))
            steps.append(f"compute_at({local}, {nest[at][0]})")
        else:
            steps.append(f"compute_inline({local})")
    # (vectorized, a loop around compute_at's would store the same
    # elements of the local tensor in every lane)
    spatial = [i for i, l in enumerate(nest) if l[2] == "s"]
    vec = len(nest)
    inside = [i for i in spatial if at is None or i > at]
    if inside and rng.random() < 0.4:
        vec = rng.choice(inside)
        steps.append(f"vectorize({nest[vec][0]})")
    # (the iterations of a parallel loop around compute_at's loop must
    # compute disjoint parts of the local tensor: its rows)
    outer = [i for i in spatial if i < vec and (at is None or i > at or nest[i][3] == "i")]
    if outer and rng.random() < 0.3:
        steps.append(f"parallel({nest[rng.choice(outer)][0]})")
    if nest and rng.random() < 0.3:
        steps.append(f"unroll({rng.choice(names)})")
    if nest and rng.random() < 0.2:
        loop = rng.choice(nest)
        cut = f", {rng.randint(1, loop[1] - 1)}" if loop[1] > 1 and rng.random() < 0.5 else ""
        steps.append(f"partition({loop[0]}{cut})")
    return steps


def tile_ok(loops, stride):
    """Whether cache_write takes a tile over `loops` (the cached loop and
    those inside it, [name, iterations, role, axis]): the loops of one axis
    from the outermost in must step by less and less, else two of them
    overlap in the tensor (an inner part of a split outside its outer part
    makes the tile overlap itself), which cache_write refuses."""
    for x, a in enumerate(loops[1:], 1):
        for b in loops[x + 1:]:
            if a[3] == b[3] and stride.get(a[0], 1) <= stride.get(b[0], 1) * (b[1] - 1):
                return False
    return True


def scratch_folder():
    """A folder for the runs' outputs, kernels and the C compiler's files,
    in memory where the machine has a tmpfs: tec writes each output and
    kernel durably (fsync), which on a disk costs more time than the
    interpreter's whole run of a batch."""
    shm = "/dev/shm"
    where = shm if os.path.isdir(shm) and os.access(shm, os.W_OK) else None
    path = tempfile.mkdtemp(prefix="tec-check-random-", dir=where)
    atexit.register(shutil.rmtree, path, True)
    return path


def run(tec, prog_path, level, out, cache, tmp):
    """tec at a level: "-O2", or "-O2 CC=clang" (the C compiler), with the
    kernel cache in the folder `cache` and its temporary files in `tmp`."""
    shutil.rmtree(out, ignore_errors=True)
    flag, *cc = level.split()
    env = dict(os.environ, XDG_CACHE_HOME=cache, TMPDIR=tmp)
    if cc:
        env["CC"] = cc[0][3:]
    r = subprocess.run([tec, flag, prog_path, "--save-outputs", out],
                       capture_output=True, text=True, timeout=WALL_LIMIT, env=env,
                       preexec_fn=limit_cpu)
    return r.returncode, r.stderr


# A run that spins is stopped by its processor time (SIGXCPU: a mismatch
# of its level); the wall-clock limit only catches one that blocks, and is
# long (RANDOM_TIMEOUT seconds, default 600): at nice 19 on a crowded
# machine a batch's run can wait many minutes for a processor.
CPU_LIMIT = 600
WALL_LIMIT = float(os.environ.get("RANDOM_TIMEOUT", "600"))


def limit_cpu():
    import resource
    resource.setrlimit(resource.RLIMIT_CPU, (CPU_LIMIT, CPU_LIMIT + 10))


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
    """The first pair of levels that disagree on the program, or None.
    The reference is the interpreter on the program without its schedules
    (when it has any: the interpreter on the scheduled program is then one
    more level compared with it)."""
    runs = [(lv, text) for lv in LEVELS]   # (level, program text)
    plain = unscheduled(text)
    ref_level = "--interp"
    if plain != text:
        ref_level = "--interp without schedules"
        runs.append((ref_level, plain))

    # The levels of one program share a kernel cache, emptied first (it
    # would keep every one of N programs' kernels): a kernel whose C and
    # compiler command are those of a level before it (-O3's C is mostly
    # -O2's, and both build with cc -O3) is compiled once.  The cache's key
    # is the C text, the compiler's identity and its flags, so what runs
    # is the binary a compile of its own would give.
    global SCRATCH
    SCRATCH = SCRATCH or scratch_folder()
    cache, tmp = os.path.join(SCRATCH, "cache"), os.path.join(SCRATCH, "tmp")
    shutil.rmtree(cache, ignore_errors=True)
    os.makedirs(tmp, exist_ok=True)

    def one(k):
        lv, prog = runs[k]
        path = os.path.join(work, f"prog{k}.te")
        with open(path, "w") as f:
            f.write(prog)
        out = os.path.join(SCRATCH, f"out{k}")
        return run(tec, path, lv, out, cache, tmp) + (out,)

    with ThreadPoolExecutor(JOBS) as pool:
        done = list(pool.map(one, range(len(runs))))
    results = {}
    for (lv, _), (rc, err, out) in zip(runs, done):
        if rc not in (0, 1):
            return f"{lv}: exit status {rc}: {err.strip()[:500]}"
        results[lv] = (rc, out, err)
    rc_ref, ref, err_ref = results.pop(ref_level)
    if rc_ref != 0:
        return f"{ref_level} refuses a valid program: {err_ref.strip()[:500]}"
    for lv, (rc, out, err) in results.items():
        if rc != rc_ref:
            return f"{lv} exits {rc}, {ref_level} exits {rc_ref}: {(err or err_ref).strip()[:500]}"
        if rc == 0:
            why = compare(ref, out)
            if why:
                return f"{lv} vs {ref_level}: {why}"
    return None


def unscheduled(text):
    """The program without its schedule statements."""
    return re.sub(r"(?m)^schedule .*\{\n(.*\n)*?\}\n", "", text)


def kind(why):
    """What disagrees ("-O3 vs --interp", "--interp refuses ..."), without
    the details; for a refusal, with its message (without its place), so
    that reducing keeps the same refusal, not any other."""
    if not why:
        return None
    err = re.search(r"error: ([^\n]*)", why)
    return why.split(":")[0] + (": " + err.group(1) if " exits " in why and err else "")


def reduce(tec, prog, why, work):
    """Drops statements and outputs, then schedule steps, while the same
    kind of disagreement persists (dropping a statement others use makes a
    program every level refuses, which is not the same); returns the
    smallest text found."""
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
    # then the schedules' steps, one at a time (a step a later one needs
    # makes the schedule refused, which is not the same either)
    for i, (text, n) in enumerate(stmts):
        lines = text.split("\n")
        k = 0
        while k < len(lines):
            if lines[k].startswith("    "):
                trial = lines[:k] + lines[k + 1:]
                if "\n".join(trial).find("{\n}") >= 0:   # the last step: the whole schedule
                    trial = [x for x in trial if not x.startswith("schedule ") and x != "}"]
                st = stmts[:i] + [("\n".join(trial), n)] + stmts[i + 1:]
                if same(st, outputs):
                    lines, stmts = trial, st
                    continue
            k += 1
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
    batch = int(sys.argv[5]) if len(sys.argv) > 5 else 100
    JOBS = int(sys.argv[6]) if len(sys.argv) > 6 else 1
    schedules = len(sys.argv) > 7 and sys.argv[7] == "1"
    cc2 = sys.argv[8] if len(sys.argv) > 8 else ""
    first = int(sys.argv[9]) if len(sys.argv) > 9 else 0
    if cc2:
        if not shutil.which(cc2):
            print(f"check-random: no C compiler '{cc2}' (CC2)", file=sys.stderr)
            return 2
        LEVELS[-1:-1] = [f"{lv} CC={cc2}" for lv in COMPILED]
    levels = " ".join(LEVELS) + (", each with schedules, and --interp without" if schedules else "")
    os.makedirs(out, exist_ok=True)
    work = os.path.join(out, "work")
    os.makedirs(work, exist_ok=True)
    rng = random.Random(seed)
    for k in range(min(first, n)):
        gen(rng, f"p{k}_", schedules)
    done = min(first, n)
    while done < n:
        progs = []
        for k in range(done, min(done + batch, n)):
            progs.append(gen(rng, f"p{k}_", schedules))
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
        span = f" (programs {first}..{done - 1} of seed {seed})" if first else ""
        print(f"check-random: {done - first} of {n - first} programs agree{span} at {levels}",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
