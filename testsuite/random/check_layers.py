#!/usr/bin/python3
"""make check-random-layers: random networks of lib/nn.te layers at the
sizes real models have, compiled by the autoscheduler and run on several
threads, against the interpreter.

    check_layers.py TEC N SEED OUT [--levels=-O2,-O3] [--threads=2] [--batch=4]

make check-random draws tiny tensors (dimensions of 1-33), where the
autoscheduler's tiles, splits by the vector width and parallel loops
hardly show; a bug there shows on a model (RegNetX-1.6GF's grouped
convolutions of 24 channels a group, split by 16, lost 8 channels of the
next group to another thread).  This draws N chains of 1-5 layers over a
1 x C x H x W input (C up to 512, H up to 56): conv2d (grouped, depthwise
with a channel multiplier, strided, dilated, kh != kw, asymmetric pads,
with or without a bias), an activation (relu, relu6, silu, sigmoid,
gelu, gelu_tanh),
maxpool2d and avgpool2d (ceil, padding, count_include_pad), a residual
add, a channel concat with a convolution branch, and squeeze-and-
excitation (global_avgpool, linear, sigmoid, scale_channels), sometimes
ending in global_avgpool and linear.  A quarter of the chains are int8
(QChain): an i8 input (C up to 256, maps of 5-56, rows shorter than a
vector) through 1-5 of qconv2d (1x1 on small maps, 3x3 and 5x5, strided,
padded, with a fused ReLU and zero points), an int8 depthwise convolution
with its requantization (QDWCONV below: the form auto_window runs
channels-last) and qadd residuals; integers, so every level must equal the
interpreter exactly.  BATCH chains make one program (one
tec run a level).  Each level runs with TEC_NUM_THREADS=THREADS and is
compared with --interp: within 1e-4 of the largest magnitude of the
interpreter's output (or of 1).  A disagreeing batch's chains are run one
by one, and the first that disagrees is kept as OUT/failing-K.te; exit
status 1.  Each tester works in a new folder OUT/work-XXXX (its programs,
outputs and kernel cache): a tec that an earlier, stopped tester left
running (a killed Python does not end its child) must not write into
this one's files.
"""
import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile

import numpy as np

ACTS = ["relu", "relu6", "silu", "sigmoid", "gelu", "gelu_tanh"]


def divisors(n):
    return [d for d in range(1, n + 1) if n % d == 0]


def conv_out(h, k, s, pt, pb, d):
    return (h + pt + pb - d * (k - 1) - 1) // s + 1


class Chain:
    def __init__(self, rng, p):
        self.rng, self.p = rng, p
        self.lines, self.n = [], 0
        self.c = rng.choice([3, 8, 16, 24, 32, 40, 48, 64, 72, 96, 120, 144, 192, 256, 408])
        self.h = rng.choice([7, 13, 14, 17, 28, 31, 56]) if self.c <= 192 else rng.choice([7, 14, 17])
        self.w = self.h if rng.random() < 0.8 else rng.choice([7, 14, 19])
        self.x = f"{p}x"
        self.inputs = [f"input {self.x}: f32[1, {self.c}, {self.h}, {self.w}]"]
        self.cur, self.shapes = self.x, {self.x: (self.c, self.h, self.w)}

    def name(self):
        self.n += 1
        return f"{self.p}t{self.n}"

    def emit(self, expr, shape):
        t = self.name()
        self.lines.append(f"{t} = {expr}")
        self.shapes[t] = shape
        self.cur = t
        return t

    def conv(self, src):
        rng = self.rng
        c, h, w = self.shapes[src]
        r = rng.random()
        if r < 0.3:   # depthwise, sometimes with a channel multiplier
            groups, out = c, c * rng.choice([1, 1, 2])
        elif r < 0.55:   # grouped
            groups = rng.choice([g for g in divisors(c) if g > 1] or [1])
            out = groups * rng.choice([max(1, c // groups), 8, 16, 24])
        else:
            groups, out = 1, rng.choice([8, 16, 24, 32, 48, 64, 96, 128, 192])
        k = rng.choice([1, 1, 3, 3, 3, 5, 7])
        kh, kw = (k, k) if rng.random() < 0.85 else (rng.choice([1, 3]), rng.choice([1, 3, 5]))
        s = rng.choice([1, 1, 1, 2])
        d = rng.choice([1, 1, 1, 1, 2]) if max(kh, kw) > 1 else 1
        pads = [(d * (kh - 1)) // 2, (d * (kw - 1)) // 2]
        pads += pads
        if rng.random() < 0.15:
            pads = [rng.randint(0, kh - 1), rng.randint(0, kw - 1), rng.randint(0, kh - 1),
                    rng.randint(0, kw - 1)]
        oh, ow = conv_out(h, kh, s, pads[0], pads[2], d), conv_out(w, kw, s, pads[1], pads[3], d)
        macs = out * (c // groups) * kh * kw * oh * ow
        if oh < 1 or ow < 1 or macs > 60e6:
            return None
        args = [src, str(out), str(k)]
        if (kh, kw) != (k, k):
            args += [f"kh={kh}", f"kw={kw}"]
        if s != 1:
            args.append(f"stride={s}")
        if d != 1:
            args.append(f"dilation={d}")
        if groups != 1:
            args.append(f"groups={groups}")
        if pads[:2] == pads[2:] and pads[0] == pads[1]:
            if pads[0]:
                args.append(f"pad={pads[0]}")
        else:
            args += [f"pad_top={pads[0]}", f"pad_left={pads[1]}", f"pad_bottom={pads[2]}",
                     f"pad_right={pads[3]}"]
        if rng.random() < 0.4:
            args.append("has_bias=1")
        return self.emit(f"conv2d({', '.join(args)})", (out, oh, ow))

    def step(self):
        rng = self.rng
        src = self.cur
        c, h, w = self.shapes[src]
        r = rng.random()
        if r < 0.45:
            t = self.conv(src)
            if t and rng.random() < 0.7:
                self.emit(f"{rng.choice(ACTS)}({t})", self.shapes[t])
            return t is not None
        if r < 0.6:
            op = rng.choice(["maxpool2d", "avgpool2d"])
            k = rng.choice([2, 3, 3])
            s = rng.choice([1, 2, 2])
            pad = rng.randint(0, k // 2)
            ceil = rng.random() < 0.3
            oh = (h + 2 * pad - k + (s - 1 if ceil else 0)) // s + 1
            ow = (w + 2 * pad - k + (s - 1 if ceil else 0)) // s + 1
            if ceil:   # PyTorch's rule: a last window starting in the padding is dropped
                oh -= (oh - 1) * s >= h + pad
                ow -= (ow - 1) * s >= w + pad
            if oh < 1 or ow < 1:
                return False
            args = [src, str(k), str(s)] + ([f"pad={pad}"] if pad else []) + (["ceil=1"] if ceil else [])
            if op == "avgpool2d" and pad and rng.random() < 0.5:
                args.append("count_include_pad=0")
            self.emit(f"{op}({', '.join(args)})", (c, oh, ow))
            return True
        if r < 0.72:   # residual: a shape-keeping convolution added back
            save = self.cur
            t = self.conv(src)
            if t is None or self.shapes[t] != (c, h, w):
                if t is not None:
                    self.lines.pop()
                self.cur = save
                return False
            self.emit(f"add({src}, {t})", (c, h, w))
            return True
        if r < 0.82:   # channel concat of the chain and a convolution branch
            t = self.conv(src)
            if t is None or self.shapes[t][1:] != (h, w):
                if t is not None:
                    self.lines.pop()
                self.cur = src
                return False
            self.emit(f"concat({src}, {t})", (c + self.shapes[t][0], h, w))
            return True
        # squeeze-and-excitation
        g = self.emit(f"global_avgpool({src})", (c,))
        mid = max(1, c // rng.choice([4, 8, 16]))
        a = self.emit(f"relu({self.emit(f'linear({g}, {mid})', (mid,))})", (mid,))
        b = self.emit(f"sigmoid({self.emit(f'linear({a}, {c})', (c,))})", (c,))
        self.emit(f"scale_channels({src}, {b})", (c, h, w))
        return True

    def build(self):
        steps, tries = self.rng.randint(1, 5), 0
        while len(self.lines) < steps and tries < 30:
            tries += 1
            self.step()
        if not self.lines:
            self.emit(f"relu({self.x})", self.shapes[self.x])
        if self.rng.random() < 0.2 and len(self.shapes[self.cur]) == 3:
            g = self.emit(f"global_avgpool({self.cur})", (self.shapes[self.cur][0],))
            self.emit(f"linear({g}, {self.rng.choice([10, 100])})", (0,))
        self.outputs = [self.cur]
        return self


# An int8 depthwise convolution requantized per channel, as lib/nn.te's
# qconv2d is (the importer writes QDQ depthwise convolutions so too).
QDWCONV = """def qdwconv2d(x: i8[N, C, H, W], k: int, stride: int = 1, pad: int = 0, relu: int = 0,
              x_zero: int = 0, y_zero: int = 0)
    -> y: i8[N, C, (H + 2*pad - k) / stride + 1, (W + 2*pad - k) / stride + 1] {
    param weight: i8[C, k, k] = uniform(-128, 128)
    param bias: i32[C] = uniform(-1000, 1000)
    param scale: f32[C] = uniform(0.002, 0.01)
    let OH = (H + 2*pad - k) / stride + 1
    let OW = (W + 2*pad - k) / stride + 1
    acc[n, c, p, q] += (i32(x[n, c, p*stride + r - pad, q*stride + s - pad] else x_zero) - x_zero) * i32(weight[c, r, s])
                       where p in 0..OH, q in 0..OW
    y[n, c, p, q] = sat_i8(relu != 0 ? max(rint(f64(acc[n, c, p, q] + bias[c]) * f64(scale[c])) + y_zero, y_zero)
                           : rint(f64(acc[n, c, p, q] + bias[c]) * f64(scale[c])) + y_zero)
}
"""


class QChain(Chain):
    """An int8 chain: qconv2d, qdwconv2d and qadd of i8 tensors."""

    def __init__(self, rng, p):
        super().__init__(rng, p)
        self.c = rng.choice([3, 8, 16, 24, 32, 48, 64, 96, 144, 256])
        self.h = rng.choice([5, 7, 9, 13, 14, 17, 28]) if self.c <= 96 else rng.choice([5, 7, 14])
        self.w = self.h if rng.random() < 0.8 else rng.choice([7, 11, 14])
        self.inputs = [f"input {self.x}: i8[1, {self.c}, {self.h}, {self.w}]"]
        self.shapes = {self.x: (self.c, self.h, self.w)}
        self.zero = {self.x: rng.choice([0, 0, rng.randint(-20, 20)])}

    def qconv(self, src, depthwise):
        rng = self.rng
        c, h, w = self.shapes[src]
        k = rng.choice([3, 3, 5]) if depthwise else rng.choice([1, 1, 3])
        s = rng.choice([1, 1, 2])
        pad = rng.choice([k // 2, k // 2, 0])
        oh, ow = (h + 2 * pad - k) // s + 1, (w + 2 * pad - k) // s + 1
        out = c if depthwise else rng.choice([8, 16, 24, 32, 64, 96, 128])
        macs = out * (1 if depthwise else c) * k * k * oh * ow
        if oh < 1 or ow < 1 or macs > 60e6:
            return None
        args = [src] + ([] if depthwise else [str(out)]) + [str(k)]
        args += [f"stride={s}"] * (s != 1) + [f"pad={pad}"] * (pad != 0)
        if rng.random() < 0.4:
            args.append("relu=1")
        yz = rng.choice([0, 0, rng.randint(-20, 20)])
        if self.zero[src]:
            args.append(f"x_zero={self.zero[src]}")
        if yz:
            args.append(f"y_zero={yz}")
        t = self.emit(f"{'qdwconv2d' if depthwise else 'qconv2d'}({', '.join(args)})", (out, oh, ow))
        self.zero[t] = yz
        return t

    def step(self):
        rng = self.rng
        src = self.cur
        r = rng.random()
        if r < 0.8:
            return self.qconv(src, r < 0.4) is not None
        t = self.qconv(src, False)   # a residual: a shape-keeping convolution added back
        if t is None or self.shapes[t] != self.shapes[src]:
            if t is not None:
                self.lines.pop()
            self.cur = src
            return False
        args = [src, t] + ["relu=1"] * (rng.random() < 0.5)
        args += [f"a_zero={self.zero[src]}"] * (self.zero[src] != 0)
        args += [f"b_zero={self.zero[t]}"] * (self.zero[t] != 0)
        self.zero[self.emit(f"qadd({', '.join(args)})", self.shapes[src])] = 0
        return True

    def build(self):
        steps, tries = self.rng.randint(1, 5), 0
        while len(self.lines) < steps and tries < 30:
            tries += 1
            self.step()
        if not self.lines:
            self.qconv(self.x, False)
        self.outputs = [self.cur]
        return self


def program(chains):
    lines = ['import "nn.te"']
    if any(isinstance(ch, QChain) for ch in chains):
        lines.append(QDWCONV)
    for ch in chains:
        lines += ch.inputs
    for ch in chains:
        lines += ch.lines
    for ch in chains:
        lines += [f"output {o}" for o in ch.outputs]
    return "\n".join(lines) + "\n"


def run(tec, path, level, out, threads, cache):
    shutil.rmtree(out, ignore_errors=True)
    env = dict(os.environ, TEC_NUM_THREADS=str(threads), XDG_CACHE_HOME=cache)
    r = subprocess.run([tec, level, path, "--save-outputs", out], capture_output=True,
                       text=True, env=env, timeout=3600)
    return r.returncode, r.stderr


def disagreement(tec, text, work, levels, threads):
    path = os.path.join(work, "prog.te")
    with open(path, "w") as f:
        f.write(text)
    cache = os.path.join(work, "cache")
    rc, err = run(tec, path, "--interp", os.path.join(work, "ref"), threads, cache)
    if rc != 0:
        return f"--interp exits {rc}: {err.strip()[:400]}"
    for lv in levels:
        out = os.path.join(work, "out" + lv)
        rc, err = run(tec, path, lv, out, threads, cache)
        if rc != 0:
            return f"{lv} exits {rc}: {err.strip()[:400]}"
        names = sorted(os.listdir(os.path.join(work, "ref")))
        if names != sorted(os.listdir(out)):
            return (f"{lv} wrote outputs {sorted(os.listdir(out))}, --interp {names}: "
                    "not one program's (another process writing into the work folder?)")
        for n in names:
            a = np.load(os.path.join(work, "ref", n))
            b = np.load(os.path.join(out, n))
            if a.shape != b.shape or a.dtype != b.dtype:
                return (f"{lv} vs --interp: {n} is {b.dtype}{list(b.shape)} at {lv}, "
                        f"{a.dtype}{list(a.shape)} from --interp")
            scale = max(float(np.max(np.abs(a))) if a.size else 0.0, 1.0)
            if not np.allclose(a, b, rtol=0, atol=1e-4 * scale, equal_nan=True):
                diff = float(np.max(np.abs(a.astype(np.float64) - b.astype(np.float64))))
                return f"{lv} (TEC_NUM_THREADS={threads}) vs --interp: {n} differs by {diff:.3g} (scale {scale:.3g})"
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("tec")
    ap.add_argument("n", type=int)
    ap.add_argument("seed", type=int)
    ap.add_argument("out")
    ap.add_argument("--levels", default="-O2,-O3")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--batch", type=int, default=4)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    levels = a.levels.split(",")
    os.makedirs(a.out, exist_ok=True)
    work = tempfile.mkdtemp(prefix="work-", dir=a.out)
    done = 0
    while done < a.n:
        chains = [(QChain if rng.random() < 0.25 else Chain)(rng, f"n{k}_").build()
                  for k in range(done, min(done + a.batch, a.n))]
        why = disagreement(a.tec, program(chains), work, levels, a.threads)
        if why:
            for k, ch in enumerate(chains, done):
                alone = disagreement(a.tec, program([ch]), work, levels, a.threads)
                if alone:
                    path = os.path.join(a.out, f"failing-{k}.te")
                    with open(path, "w") as f:
                        f.write(f"# check-random-layers seed {a.seed}, chain {k}:\n"
                                + "".join(f"# {x}\n" for x in alone.splitlines())
                                + program([ch]))
                    print(f"check-random-layers: chain {k} of seed {a.seed}: {alone}\n"
                          f"  kept: {path}")
                    return 1
            path = os.path.join(a.out, f"failing-{done}-{done + len(chains) - 1}.te")
            with open(path, "w") as f:
                f.write(f"# check-random-layers seed {a.seed}, chains {done}..:\n"
                        + "".join(f"# {x}\n" for x in why.splitlines()) + program(chains))
            print(f"check-random-layers: chains {done}..{done + len(chains) - 1} of seed "
                  f"{a.seed} disagree together, not alone: {why}\n  kept: {path}")
            return 1
        done += len(chains)
        print(f"check-random-layers: {done} of {a.n} chains agree at {' '.join(levels)} "
              f"(TEC_NUM_THREADS={a.threads}) with --interp", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
