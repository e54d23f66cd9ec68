#!/usr/bin/python3
"""testsuite/random/check_onnx_random.py — tec against ONNX Runtime on
random small ONNX models.

    check_onnx_random.py TEC N SEED OUT [--levels=-O2,--interp] [--batch=20]
                         [--keep] [--threads=T] [--ops=layernorm,attention,...]

Writes N random models (seeded: the same seed gives the same models), each
a chain of 2-8 operators over random shapes and attributes -- Conv (groups,
depthwise, strides, dilations, asymmetric pads, auto_pad, with or without a
bias), MaxPool and AveragePool (ceil_mode, count_include_pad, dilations,
pads), the global poolings, BatchNormalization, MatMul (broadcast batches,
1-D operands), Gemm (transA, transB, alpha, beta, C of every broadcast
shape), Flatten, Add/Sub/Mul/Div with a broadcast constant or an earlier
tensor of the chain, Relu and a few other unary ops, Concat (of the chain
with constants or earlier tensors, on any axis), Reshape (with 0 and -1),
Transpose, Softmax and LogSoftmax on any axis, ConvTranspose, the Reduce
ops, Slice (negative steps, starts and ends out of range), Pad, Squeeze,
Unsqueeze and Gather; HardSigmoid, HardSwish, Elu, Selu, Celu, Softplus,
Softsign, ThresholdedRelu, PRelu, Erf, Exp, Sin, Cos, Sqrt, Sign; Max, Min,
Sum and Mean of several operands; Where of a comparison; Resize (nearest
in each nearest_mode, linear; by scales or to sizes; each coordinate
transformation ORT takes); Split (the chain goes on with one part); Expand, Tile,
InstanceNormalization, DepthToSpace, SpaceToDepth, ArgMax and ArgMin (cast
back to float: a side branch, see below), TopK (largest or smallest, its
indices a side branch like ArgMax's), CumSum, and ReduceProd, ReduceSumSquare, ReduceLogSumExp,
ReduceL1, ReduceL2; LayerNormalization (opset 17) and the chain exporters
wrote before it (ReduceMean, Sub, Pow, ..., Div, scale, bias); self-attention
(Q/K/V MatMuls, heads split by Reshape/Transpose, a scaled Q @ K^T, an
additive mask, Softmax, @ V); Clip with one bound or none, Pow, Reciprocal,
Log, and Floor/Ceil/Round/Cast of the input; Conv and pools of 5-D
volumes; a fifth of the models with a symbolic batch dimension "N" -- at
opset 13, 11 (Softmax of the 2-D view, axes as attributes), 14 or 17, with
random float inputs in [-1, 1].  A quarter of the broadcast operands of
Add/Sub/Mul/Div and of the weights of MatMul and Gemm (and Gemm's C) are
graph inputs of their own (in/inK.npy) instead of constants.  It runs each
with ONNX Runtime (onnxruntime-node, graph optimizations off;
testsuite/random/ort_outputs.js, $ORT_NODE_DIR) and with
tec at each level, and compares every output (within 1e-4 of the largest
magnitude of ORT's output or of 1, whichever is larger).

ArgMax and ArgMin are not continuous: two values that are equal in exact
arithmetic (a width-1 axis resized linearly, then pooled) may be computed
by ORT as an exact tie and by tec a last bit apart, which is within the
tolerance but flips the index, and every op after it would differ.  So an
ArgMax's index is an output of its own (the chain goes on from its input,
which is an output too), and tec's index agrees when ORT's input holds at
that index a value within the tolerance of the maximum (minimum) along the
axis: where no other value comes that close, only ORT's index does; an
index out of range, or a value that is not an extreme, is a mismatch.  And
tec's index must be exactly the one tec's own output of the input gives
(its first or last extreme), which checks the tie rule.  TopK's indices
are checked the same way: k distinct indices whose values in ORT's input
are within the tolerance of ORT's k extremes, and exactly the stable order
of tec's own input (equal values in the order of their indices).

Each model gets one line when it is not a plain agreement:
  MISMATCH  an output differs from ORT's (a wrong result)
  CRASH     tec ended by a signal, or with exit status other than 0 and 1,
            or with status 1 without a located `error:` message
  REFUSED   tec refused it with a located error (a gap, not a wrong
            result: the message is printed); a refusal at a level where
            -O0 agrees with ORT is a CRASH line (an internal error)
  NOORT     ONNX Runtime refused the model (a generator bug; skipped)
and the last line counts them.  With --keep (or for any model that is not
an agreement) the model's folder OUT/mK/ stays (model.onnx, in/, ort/,
tec logs).  Exit status 1 if any model was MISMATCH or CRASH.
"""
import argparse
import os
import random
import re
import shutil
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

# 11: Softmax on the coerced 2-D view, axes (and Split's split) as
# attributes; 14: HardSwish
OPSETS = [13, 13, 11, 14, 17]
HERE = os.path.dirname(os.path.abspath(__file__))


class Model:
    def __init__(self, rng):
        self.rng = rng
        self.nodes, self.inits, self.inputs = [], [], []
        self.shape = {}          # tensor name -> shape (list)
        self.chain = []          # float tensors of the chain, in order
        self.n = 0
        self.ops = []            # op types, for the summary
        self.side = []           # outputs off the chain (ArgMax's)
        self.ties = {}           # ArgMax's output -> how it was taken (tie_ok)
        self.quant = {}          # dequantized tensor -> (its quantized tensor, scale,
                                 # zero point, scale's exponent, dtype)
        self.feeds = {}          # graph inputs other than x -> their data

    def fresh(self, prefix):
        self.n += 1
        return f"{prefix}{self.n}"

    def const(self, shape, lo=-1.0, hi=1.0):
        name = self.fresh("w")
        data = self.rng_np.uniform(lo, hi, size=shape).astype(np.float32)
        self.inits.append(numpy_helper.from_array(data, name))
        self.shape[name] = list(shape)
        return name

    def operand(self, shape, lo=-1.0, hi=1.0):
        """A constant, or (a quarter of the time, by rng_in, which the
        rest of the model does not draw from) a graph input of its own:
        the importer must not take a broadcast operand, a MatMul's or a
        Gemm's weight for a constant."""
        if self.rng_in.random() >= 0.25:
            return self.const(shape, lo, hi)
        self.n += 1
        name = f"in{self.n}"
        self.inputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, shape))
        self.feeds[name] = self.np_in.uniform(lo, hi, size=shape).astype(np.float32)
        self.shape[name] = list(shape)
        return name

    def ints(self, values):
        name = self.fresh("s")
        self.inits.append(numpy_helper.from_array(np.array(values, dtype=np.int64), name))
        self.shape[name] = [len(values)]
        return name

    def axes_node(self, op, x, axes, shape):
        """Squeeze or Unsqueeze: axes an input from opset 13, else an attribute."""
        if self.opset >= 13:
            return self.node(op, [x, self.ints(axes)], shape)
        return self.node(op, [x], shape, axes=axes)

    def node(self, op, ins, shape, **attrs):
        out = self.fresh("t")
        self.nodes.append(helper.make_node(op, ins, [out], name=f"{op}_{self.n}", **attrs))
        self.shape[out] = list(shape)
        self.ops.append(op)
        return out


def size(shape):
    return int(np.prod(shape)) if shape else 1


def divisors(n):
    return [d for d in range(1, n + 1) if n % d == 0]


def window(rng, spatial, kmax, for_pool, dilate=True, strides=(1, 1, 2, 3)):
    """Kernel, strides (from `strides`), dilations (if dilate) and pads (or
    auto_pad) of a window op on spatial sizes `spatial`, and its output's
    spatial sizes; None when none fits."""
    nd = len(spatial)
    k = [rng.randint(1, kmax) for _ in range(nd)]
    s = [rng.choice(strides) for _ in range(nd)]
    d = [rng.choice([1, 1, 1, 2]) if dilate else 1 for _ in range(nd)]
    attrs = {"kernel_shape": k}
    if any(v != 1 for v in s) or rng.random() < 0.3:
        attrs["strides"] = s
    if any(v != 1 for v in d):
        attrs["dilations"] = d
    ext = [(k[i] - 1) * d[i] + 1 for i in range(nd)]
    r = rng.random()
    out = []
    if r < 0.15:
        mode = rng.choice(["SAME_UPPER", "SAME_LOWER", "VALID"])
        if mode != "VALID" and "dilations" in attrs:
            return None   # ORT: no dilations with SAME_*
        attrs["auto_pad"] = mode
        for i in range(nd):
            if mode == "VALID":
                if spatial[i] < ext[i]:
                    return None
                out.append((spatial[i] - ext[i]) // s[i] + 1)
            else:
                out.append(-(-spatial[i] // s[i]))
                if (out[i] - 1) * s[i] + ext[i] < spatial[i]:
                    return None   # a negative pad, which ORT refuses
    else:
        # a pad smaller than the kernel's extent (ORT wants pads < kernel for pools)
        pads = [rng.randint(0, min(k[i] - 1, 2)) if rng.random() < 0.6 else 0 for i in range(nd)]
        pads += [rng.randint(0, min(k[i] - 1, 2)) if rng.random() < 0.6 else 0 for i in range(nd)]
        if any(pads) or rng.random() < 0.2:
            attrs["pads"] = pads
        ceil = for_pool and rng.random() < 0.3
        if ceil:
            attrs["ceil_mode"] = 1
        for i in range(nd):
            span = spatial[i] + pads[i] + pads[nd + i] - ext[i]
            if span < 0:
                return None
            o = (-(-span // s[i]) if ceil else span // s[i]) + 1
            if ceil and (o - 1) * s[i] >= spatial[i] + pads[i]:
                # a last window that would start past the input: ORT drops
                # it, ONNX's shape inference (which ORT runs on loading)
                # does not -- ambiguous, so not generated
                return None
            out.append(o)
    return attrs, out


def op_conv(rng, m, x):
    sh = m.shape[x]
    if len(sh) not in (3, 4, 5):
        return None
    c = sh[1]
    r = rng.random()
    if r < 0.25:
        g, mout = c, c * rng.choice([1, 1, 2])
    elif r < 0.4:
        g = rng.choice(divisors(c))
        mout = g * rng.randint(1, 3)
    else:
        g, mout = 1, rng.randint(1, 12)
    w = window(rng, sh[2:], 5, False)
    if w is None:
        return None
    attrs, out = w
    if g != 1:
        attrs["group"] = g
    weight = m.const([mout, c // g] + attrs["kernel_shape"], -0.5, 0.5)
    if rng.random() < 0.3:
        del attrs["kernel_shape"]   # inferred from the weight
    ins = [x, weight]
    if rng.random() < 0.6:
        ins.append(m.const([mout]))
    return m.node("Conv", ins, [sh[0], mout] + out, **attrs)


def op_pool(rng, m, x):
    sh = m.shape[x]
    if len(sh) not in (3, 4, 5):
        return None
    op = rng.choice(["MaxPool", "AveragePool"])
    # AveragePool has dilations from opset 19 only
    w = window(rng, sh[2:], 3, True, op == "MaxPool")
    if w is None:
        return None
    attrs, out = w
    if op == "AveragePool":
        if rng.random() < 0.4:
            attrs["count_include_pad"] = 1
    return m.node(op, [x], sh[:2] + out, **attrs)


def op_global_pool(rng, m, x):
    sh = m.shape[x]
    if len(sh) < 3:
        return None
    op = rng.choice(["GlobalAveragePool", "GlobalMaxPool"])
    return m.node(op, [x], sh[:2] + [1] * (len(sh) - 2))


def op_batchnorm(rng, m, x):
    sh = m.shape[x]
    if len(sh) < 2:
        return None
    c = sh[1]
    ins = [x, m.const([c], 0.5, 1.5), m.const([c]), m.const([c]), m.const([c], 0.2, 2.0)]
    attrs = {}
    if rng.random() < 0.5:
        attrs["epsilon"] = rng.choice([1e-5, 1e-3, 0.1])
    return m.node("BatchNormalization", ins, sh, **attrs)


def op_unary(rng, m, x):
    op = rng.choice(["Relu", "Relu", "Relu", "Sigmoid", "Tanh", "LeakyRelu", "Clip", "Abs", "Neg"])
    attrs, ins = {}, [x]
    if op == "LeakyRelu":
        attrs["alpha"] = rng.choice([0.01, 0.2, 1.5])
    if op == "Clip":
        lo = rng.uniform(-1, 0)
        ins += [m.const([], lo, lo), m.const([], lo + 0.5, lo + 1.0)]
    return m.node(op, ins, m.shape[x], **attrs)


def broadcast_shape(rng, sh):
    """A shape that broadcasts against sh without changing it."""
    r = rng.randint(0, len(sh))
    tail = sh[len(sh) - r:] if r else []
    return [d if rng.random() < 0.5 else 1 for d in tail]


def op_binary_const(rng, m, x):
    sh = m.shape[x]
    op = rng.choice(["Add", "Add", "Mul", "Mul", "Sub", "Div"])
    cs = broadcast_shape(rng, sh)
    out = list(sh)
    # sometimes the constant widens a dimension of size 1
    ones = [i for i, d in enumerate(sh) if d == 1]
    if ones and rng.random() < 0.3 and size(sh) < 2000:
        i = rng.choice(ones)
        cs = [1] * (len(sh) - len(cs)) + cs
        cs[i] = rng.randint(2, 4)
        out[i] = cs[i]
    if op == "Div":
        c = m.operand(cs, 0.5, 2.0)
    else:
        c = m.operand(cs)
    ins = [x, c] if rng.random() < 0.7 else [c, x]
    return m.node(op, ins, out)


def op_binary_chain(rng, m, x):
    sh = m.shape[x]
    earlier = [t for t in m.chain[:-1] if m.shape[t] == sh
               or (len(m.shape[t]) <= len(sh) and all(
                   a in (1, b) for a, b in zip(m.shape[t][::-1], sh[::-1])))]
    if not earlier:
        return None
    y = rng.choice(earlier)
    op = rng.choice(["Add", "Mul", "Sub"])
    ins = [x, y] if rng.random() < 0.5 else [y, x]
    return m.node(op, ins, sh)


def op_concat(rng, m, x):
    sh = m.shape[x]
    if not sh or size(sh) > 6000:
        return None
    axis = rng.randrange(len(sh))
    ins, total = [x], sh[axis]
    for _ in range(rng.randint(1, 2)):
        same = [t for t in m.chain[:-1]
                if len(m.shape[t]) == len(sh)
                and all(a == b for i, (a, b) in enumerate(zip(m.shape[t], sh)) if i != axis)]
        if same and rng.random() < 0.5:
            t = rng.choice(same)
        elif rng.random() < 0.3:
            t = x
        else:
            cs = list(sh)
            cs[axis] = rng.randint(1, 4)
            t = m.const(cs)
        ins.append(t)
        total += m.shape[t][axis]
    rng.shuffle(ins)
    out = list(sh)
    out[axis] = total
    a = axis - len(sh) if rng.random() < 0.3 else axis
    return m.node("Concat", ins, out, axis=a)


def op_reshape(rng, m, x):
    sh = m.shape[x]
    n = size(sh)
    rank = rng.randint(1, 5)
    dims, left = [], n
    for _ in range(rank - 1):
        d = rng.choice(divisors(left))
        dims.append(d)
        left //= d
    dims.append(left)
    rng.shuffle(dims)
    spec = list(dims)
    # 0 copies the input's dimension at that index (when it matches)
    for i in range(len(spec)):
        if i < len(sh) and sh[i] == spec[i] and rng.random() < 0.3:
            spec[i] = 0
    cand = [i for i in range(len(spec)) if spec[i] != 0]
    if cand and rng.random() < 0.5:
        spec[rng.choice(cand)] = -1
    return m.node("Reshape", [x, m.ints(spec)], dims)


def op_transpose(rng, m, x):
    sh = m.shape[x]
    if len(sh) < 2:
        return None
    if rng.random() < 0.15:
        perm = list(range(len(sh)))[::-1]
        return m.node("Transpose", [x], [sh[p] for p in perm])
    perm = list(range(len(sh)))
    rng.shuffle(perm)
    return m.node("Transpose", [x], [sh[p] for p in perm], perm=perm)


def op_softmax(rng, m, x):
    sh = m.shape[x]
    if not sh:
        return None
    axis = rng.randint(-len(sh), len(sh) - 1)
    default = -1 if m.opset >= 13 else 1
    attrs = {} if axis == default and rng.random() < 0.5 else {"axis": axis}
    return m.node(rng.choice(["Softmax", "Softmax", "LogSoftmax"]), [x], sh, **attrs)


def op_matmul(rng, m, x):
    sh = m.shape[x]
    if not sh or sh[-1] > 256:
        return None
    k = sh[-1]
    n = rng.randint(1, 16)
    r = rng.random()
    if len(sh) == 1 or r < 0.5:
        w = m.operand([k, n], -0.5, 0.5)
        out = sh[:-1] + [n]
    elif r < 0.7 and len(sh) >= 2:
        # a batched weight broadcast against the input's batch dims
        b = [d if rng.random() < 0.5 else 1 for d in sh[:-2]]
        w = m.operand(b + [k, n], -0.5, 0.5)
        out = sh[:-1] + [n]
    elif r < 0.8:
        w = m.operand([k], -0.5, 0.5)   # a 1-D right operand: the last dim goes
        out = sh[:-1]
    else:
        # the chain as the right operand: const [M, sh[-2]] @ x
        if len(sh) < 2:
            return None
        mm = rng.randint(1, 8)
        w = m.operand([mm, sh[-2]], -0.5, 0.5)
        return m.node("MatMul", [w, x], sh[:-2] + [mm, k])
    return m.node("MatMul", [x, w], out)


def op_flatten(rng, m, x):
    sh = m.shape[x]
    axis = rng.randint(0, len(sh))
    out = [size(sh[:axis]), size(sh[axis:])]
    a = axis - len(sh) if 0 < axis < len(sh) and rng.random() < 0.3 else axis
    attrs = {} if a == 1 and rng.random() < 0.5 else {"axis": a}
    return m.node("Flatten", [x], out, **attrs)


def op_gemm(rng, m, x):
    sh = m.shape[x]
    if len(sh) != 2 or sh[1] > 512 or sh[0] > 512:
        return None
    ta = rng.random() < 0.3
    tb = rng.random() < 0.5
    mm, k = (sh[1], sh[0]) if ta else (sh[0], sh[1])
    n = rng.randint(1, 16)
    b = m.operand([n, k] if tb else [k, n], -0.5, 0.5)
    ins = [x, b]
    attrs = {}
    if ta:
        attrs["transA"] = 1
    if tb:
        attrs["transB"] = 1
    if rng.random() < 0.3:
        attrs["alpha"] = rng.choice([0.5, 2.0, -1.0])
    if rng.random() < 0.7:
        ins.append(m.operand(rng.choice([[n], [1, n], [mm, 1], [mm, n], [], [1]])))
        if rng.random() < 0.3:
            attrs["beta"] = rng.choice([0.0, 0.5, 3.0])
    return m.node("Gemm", ins, [mm, n], **attrs)


def op_reduce(rng, m, x):
    sh = m.shape[x]
    if not sh:
        return None
    op = rng.choice(["ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd",
                     "ReduceSumSquare", "ReduceLogSumExp", "ReduceL1", "ReduceL2"])
    axes = sorted(rng.sample(range(len(sh)), rng.randint(1, len(sh))))
    keep = rng.random() < 0.5
    out = [1 if i in axes else d for i, d in enumerate(sh)] if keep else \
        [d for i, d in enumerate(sh) if i not in axes]
    spec = [a - len(sh) if rng.random() < 0.3 else a for a in axes]
    attrs = {} if keep and rng.random() < 0.5 else {"keepdims": int(keep)}
    if op == "ReduceSum" and m.opset >= 13:   # axes is an input from opset 13
        return m.node(op, [x, m.ints(spec)], out, **attrs)
    return m.node(op, [x], out, axes=spec, **attrs)


def slice_len(n, start, end, step):
    """The length of ONNX's Slice of an axis of n elements."""
    start = start + n if start < 0 else start
    end = end + n if end < 0 else end
    if step > 0:
        start, end = min(max(start, 0), n), min(max(end, 0), n)
    else:
        start, end = min(max(start, 0), n - 1), min(max(end, -1), n - 1)
    return max(0, -(-(end - start) // step))


def op_slice(rng, m, x):
    sh = m.shape[x]
    if not sh:
        return None
    axes = rng.sample(range(len(sh)), rng.randint(1, len(sh)))
    starts, ends, steps, out = [], [], [], list(sh)
    for a in axes:
        n = sh[a]
        step = rng.choice([1, 1, 1, 2, 3, -1, -2])
        st = rng.randint(-n - 2, n + 2)
        en = rng.choice([rng.randint(-n - 2, n + 2), 2**63 - 1, -2**63])
        out[a] = slice_len(n, st, en, step)
        starts.append(st)
        ends.append(en)
        steps.append(step)
    if 0 in out:
        return None
    ins = [x, m.ints(starts), m.ints(ends)]
    if rng.random() < 0.8 or any(s != 1 for s in steps):
        ins.append(m.ints([a - len(sh) if rng.random() < 0.3 else a for a in axes]))
        ins.append(m.ints(steps))
    elif sorted(axes) != axes or axes != list(range(len(axes))):
        return None
    return m.node("Slice", ins, out)


def op_pad(rng, m, x):
    sh = m.shape[x]
    if not sh or size(sh) > 5000:
        return None
    mode = rng.choice(["constant", "constant", "reflect", "edge"])
    pads = []
    for _ in range(2):
        for d in sh:
            hi = d - 1 if mode == "reflect" else 3
            pads.append(rng.randint(0, max(0, min(hi, 3))) if rng.random() < 0.5 else 0)
    out = [d + pads[i] + pads[len(sh) + i] for i, d in enumerate(sh)]
    ins = [x, m.ints(pads)]
    if mode == "constant" and rng.random() < 0.5:
        ins.append(m.const([], 0.5, 0.5))
    return m.node("Pad", ins, out, mode=mode)


def op_unsqueeze(rng, m, x):
    sh = m.shape[x]
    if len(sh) >= 5:
        ones = [i for i, d in enumerate(sh) if d == 1]
        if not ones:
            return None
        a = rng.choice(ones)
        return m.axes_node("Squeeze", x, [a], sh[:a] + sh[a + 1:])
    ones = [i for i, d in enumerate(sh) if d == 1]
    if ones and rng.random() < 0.5:
        axes = sorted(rng.sample(ones, rng.randint(1, len(ones))))
        out = [d for i, d in enumerate(sh) if i not in axes]
        if rng.random() < 0.3:
            return m.node("Squeeze", [x], [d for d in sh if d != 1])
        return m.axes_node("Squeeze", x, [a - len(sh) if rng.random() < 0.3 else a
                                          for a in axes], out)
    a = rng.randint(0, len(sh))
    out = sh[:a] + [1] + sh[a:]
    return m.axes_node("Unsqueeze", x, [a - len(out) if rng.random() < 0.3 else a], out)


def op_convtranspose(rng, m, x):
    sh = m.shape[x]
    if len(sh) not in (3, 4) or size(sh) > 4000:
        return None
    nd = len(sh) - 2
    c = sh[1]
    g = rng.choice(divisors(c)) if rng.random() < 0.3 else 1
    mout = g * rng.randint(1, 3)
    k = [rng.randint(1, 4) for _ in range(nd)]
    s = [rng.choice([1, 2, 3]) for _ in range(nd)]
    d = [rng.choice([1, 1, 2]) for _ in range(nd)]
    pads = [rng.randint(0, k[i] - 1) for i in range(nd)] + [rng.randint(0, k[i] - 1) for i in range(nd)]
    # output_padding below the stride: ORT refuses one below only the
    # dilation (PyTorch's bound; seed 1905 m97, stride 1, dilation 2)
    op = [rng.randint(0, s[i] - 1) if rng.random() < 0.3 else 0 for i in range(nd)]
    out = [s[i] * (sh[2 + i] - 1) + op[i] + ((k[i] - 1) * d[i] + 1) - pads[i] - pads[nd + i]
           for i in range(nd)]
    if min(out) < 1:
        return None
    attrs = {"strides": s, "pads": pads}
    if any(v != 1 for v in d):
        attrs["dilations"] = d
    if any(op):
        attrs["output_padding"] = op
    if g != 1:
        attrs["group"] = g
    ins = [x, m.const([c, mout // g] + k, -0.5, 0.5)]
    if rng.random() < 0.5:
        ins.append(m.const([mout]))
    return m.node("ConvTranspose", ins, [sh[0], mout] + out, **attrs)


def op_gather(rng, m, x):
    sh = m.shape[x]
    if not sh:
        return None
    axis = rng.randrange(len(sh))
    n = sh[axis]
    ishape = rng.choice([[], [rng.randint(1, 4)], [2, rng.randint(1, 3)]])
    idx = np.array([rng.randint(-n, n - 1) for _ in range(size(ishape))], np.int64).reshape(ishape)
    name = m.fresh("s")
    m.inits.append(numpy_helper.from_array(idx, name))
    out = sh[:axis] + ishape + sh[axis + 1:]
    return m.node("Gather", [x, name], out, axis=axis - len(sh) if rng.random() < 0.3 else axis)


def op_unary_more(rng, m, x):
    """The activations and math functions of MobileNetV3, EfficientNet,
    GELU's erf and friends, with their attributes."""
    op = rng.choice(["HardSigmoid", "HardSigmoid", "Elu", "Selu", "Softplus", "Softsign",
                     "Celu", "ThresholdedRelu", "Erf", "Exp", "Sin", "Cos", "Sqrt", "Sign",
                     "PRelu", "HardSwish"])
    attrs, ins = {}, [x]
    if op == "Sqrt":
        # in its domain: a NaN meets Min and Max later, which ORT propagates
        # and tec (as C's fmin and fmax, doc/language.md) does not
        ins = [m.node("Abs", [x], m.shape[x])]
        m.ops.pop()
    if op == "HardSwish" and m.opset < 14:
        op = "HardSigmoid"
    if op == "Celu" and m.opset < 12:
        op = "Elu"
    if op == "HardSigmoid" and rng.random() < 0.5:
        attrs.update(alpha=rng.choice([0.2, 1 / 6, 0.5]), beta=rng.choice([0.5, 0.3]))
    if op in ("Elu", "Celu", "ThresholdedRelu") and rng.random() < 0.5:
        attrs["alpha"] = rng.choice([0.5, 1.0, 2.0]) if op != "ThresholdedRelu" else \
            rng.choice([0.0, 0.3, -0.2])
    if op == "Selu" and rng.random() < 0.5:
        attrs.update(alpha=1.5, gamma=0.8)
    if op == "PRelu":
        # a slope per channel (broadcast from the right) or one for all
        sh = m.shape[x]
        ss = [sh[1]] + [1] * (len(sh) - 2) if len(sh) >= 2 and rng.random() < 0.6 else [1]
        ins.append(m.const(ss, -0.5, 0.5))
    return m.node(op, ins, m.shape[x], **attrs)


def op_variadic(rng, m, x):
    """Max, Min, Sum or Mean of the chain with 1-2 broadcast constants or
    earlier tensors of its shape."""
    sh = m.shape[x]
    op = rng.choice(["Max", "Min", "Sum", "Mean"])
    ins = [x]
    for _ in range(rng.randint(1, 2)):
        same = [t for t in m.chain[:-1] if m.shape[t] == sh]
        ins.append(rng.choice(same) if same and rng.random() < 0.4
                   else m.const(broadcast_shape(rng, sh)))
    rng.shuffle(ins)
    return m.node(op, ins, sh)


def op_where(rng, m, x):
    """Where(x > c, x, d): a comparison's boolean tensor selecting."""
    sh = m.shape[x]
    c = m.const(broadcast_shape(rng, sh), -0.5, 0.5)
    cond = m.node(rng.choice(["Greater", "Less"] + (["GreaterOrEqual"] if m.opset >= 12 else [])),
                  [x, c], sh)
    m.ops.pop()
    other = m.const(broadcast_shape(rng, sh))
    ins = [cond, x, other] if rng.random() < 0.5 else [cond, other, x]
    return m.node("Where", ins, sh)


def op_resize(rng, m, x):
    """Resize of a 3-D or 4-D tensor's spatial dimensions by scales or to
    sizes, nearest (each nearest_mode) or linear, every coordinate
    transformation where ORT and ONNX agree."""
    sh = m.shape[x]
    if len(sh) not in (3, 4) or size(sh) > 3000:
        return None
    mode = rng.choice(["nearest", "linear"])
    ctm = rng.choice(["asymmetric", "half_pixel", "align_corners", "pytorch_half_pixel"]
                     # (Resize-11's name, dropped at opset 13; "tf_half_pixel_for_nearest"
                     # was never ONNX's: ORT and tec refused it, seed 1902 m13 m290)
                     + (["tf_half_pixel_for_nn"] if mode == "nearest" and m.opset < 13
                        else []))
    attrs = {"mode": mode, "coordinate_transformation_mode": ctm}
    if mode == "nearest":
        attrs["nearest_mode"] = rng.choice(["round_prefer_floor", "round_prefer_ceil", "floor",
                                            "ceil"])
    roi = m.fresh("s")
    m.inits.append(numpy_helper.from_array(np.array([], np.float32), roi))
    if rng.random() < 0.5:
        sc = [1.0, 1.0] + [rng.choice([0.5, 1.0, 2.0, 3.0, 1.5]) for _ in sh[2:]]
        out = [int(np.floor(d * f)) for d, f in zip(sh, sc)]
        if min(out) < 1:
            return None
        if ctm in ("align_corners", "pytorch_half_pixel") and out != [d * f for d, f in
                                                                       zip(sh, sc)]:
            # their formulas divide by the resized length: ONNX's reference
            # (and its backend tests, and tec) take in * scale unrounded,
            # ORT the output's (rounded) length
            return None
        scales = m.fresh("s")
        m.inits.append(numpy_helper.from_array(np.array(sc, np.float32), scales))
        return m.node("Resize", [x, roi, scales], out, **attrs)
    out = sh[:2] + [rng.randint(1, 2 * d + 2) for d in sh[2:]]
    empty = m.fresh("s")
    m.inits.append(numpy_helper.from_array(np.array([], np.float32), empty))
    return m.node("Resize", [x, roi, empty, m.ints(out)], out, **attrs)


def op_split(rng, m, x):
    """Split on an axis into 2-3 parts (equal, or given); the chain goes on
    with one of them."""
    sh = m.shape[x]
    cand = [a for a, d in enumerate(sh) if d >= 2]
    if not cand:
        return None
    axis = rng.choice(cand)
    n = sh[axis]
    if rng.random() < 0.5 and n % 2 == 0:
        parts = [n // 2, n // 2]
        given = False
    else:
        cut = sorted(rng.sample(range(1, n), min(rng.randint(1, 2), n - 1)))
        parts = [b - a for a, b in zip([0] + cut, cut + [n])]
        given = True
    outs = [m.fresh("t") for _ in parts]
    ins = [x]
    attrs = {"axis": axis - len(sh) if rng.random() < 0.3 else axis}
    if given:
        if m.opset >= 13:
            ins.append(m.ints(parts))
        else:
            attrs["split"] = parts
    m.nodes.append(helper.make_node("Split", ins, outs, name=f"Split_{m.n}", **attrs))
    m.ops.append("Split")
    for o, p in zip(outs, parts):
        m.shape[o] = sh[:axis] + [p] + sh[axis + 1:]
    return rng.choice(outs)


def op_expand_tile(rng, m, x):
    sh = m.shape[x]
    if not sh or size(sh) > 2000:
        return None
    if rng.random() < 0.5:
        reps = [rng.choice([1, 1, 2, 3]) for _ in sh]
        return m.node("Tile", [x, m.ints(reps)], [d * r for d, r in zip(sh, reps)])
    # Expand: dimensions of 1 widened, sometimes a new leading one
    to = [rng.randint(2, 3) if d == 1 and rng.random() < 0.6 else d for d in sh]
    if rng.random() < 0.3:
        to = [rng.randint(1, 2)] + to
    spec = [1 if i >= len(to) - len(sh) and sh[i - (len(to) - len(sh))] == t and rng.random() < 0.3
            else t for i, t in enumerate(to)]
    return m.node("Expand", [x, m.ints(spec)], to)


def op_norm(rng, m, x):
    """InstanceNormalization, or DepthToSpace / SpaceToDepth (4-D)."""
    sh = m.shape[x]
    if len(sh) < 3:
        return None
    r = rng.random()
    if r < 0.5:
        c = sh[1]
        # a channel constant over its spatial positions (an Expand's, a
        # global pool's broadcast) has a variance of 0 in exact arithmetic,
        # and the last bits of its mean, divided by sqrt(epsilon), decide
        # the result (ORT and tec differed by 0.02: seed 1902 m55); a
        # random addend of every position keeps the variance away from 0
        x = m.node("Add", [x, m.const([1] + sh[1:])], sh)
        return m.node("InstanceNormalization", [x, m.const([c], 0.5, 1.5), m.const([c])], sh,
                      epsilon=rng.choice([1e-5, 1e-3]))
    if len(sh) != 4:
        return None
    b = rng.choice([2, 2, 3])
    if r < 0.75:
        if sh[1] % (b * b):
            return None
        attrs = {"blocksize": b}
        if rng.random() < 0.5:
            attrs["mode"] = rng.choice(["DCR", "CRD"])
        return m.node("DepthToSpace", [x], [sh[0], sh[1] // (b * b), sh[2] * b, sh[3] * b],
                      **attrs)
    if sh[2] % b or sh[3] % b:
        return None
    return m.node("SpaceToDepth", [x], [sh[0], sh[1] * b * b, sh[2] // b, sh[3] // b],
                  blocksize=b)


def op_argmax(rng, m, x):
    """ArgMax / ArgMin (ties: the first index, or the last), back to float
    by a Cast: an output of its own (its input too), the chain goes on
    from its input (the module's docstring says why)."""
    sh = m.shape[x]
    if not sh:
        return None
    axis = rng.randrange(len(sh))
    keep = rng.random() < 0.5
    out = [1 if i == axis else d for i, d in enumerate(sh)] if keep else \
        [d for i, d in enumerate(sh) if i != axis]
    attrs = {"axis": axis - len(sh) if rng.random() < 0.3 else axis, "keepdims": int(keep)}
    if m.opset >= 12 and rng.random() < 0.3:
        attrs["select_last_index"] = 1
    op = rng.choice(["ArgMax", "ArgMin"])
    i = m.node(op, [x], out, **attrs)
    m.ops.pop()
    y = m.node("Cast", [i], out, to=TensorProto.FLOAT)
    m.ops[-1] = op
    m.side += [y] + ([x] if x != "x" and x not in m.side else [])
    m.ties[y] = {"x": x, "axis": axis, "keepdims": keep, "max": op == "ArgMax",
                 "last": "select_last_index" in attrs}
    return x


def tie_rule(x, axis, is_max, last):
    """The index ArgMax (ArgMin) takes along axis of x: of the first
    extreme, or of the last."""
    if not is_max:
        x = -x
    if last:
        return x.shape[axis] - 1 - np.argmax(np.flip(x, axis), axis)
    return np.argmax(x, axis)


def tie_ok(ref_x, got, axis, keepdims, is_max, tol):
    """Whether every index in `got` (tec's ArgMax/ArgMin output, as float)
    picks in ORT's input `ref_x` a value within tol of the extreme along
    axis."""
    n = ref_x.shape[axis]
    g = got if keepdims else np.expand_dims(got, axis)
    if not np.all((g == np.floor(g)) & (g >= 0) & (g < n)):
        return False
    ext = (np.max if is_max else np.min)(ref_x, axis=axis, keepdims=True)
    near = np.abs(ref_x - ext) <= tol
    return bool(np.all(np.take_along_axis(near, g.astype(np.int64), axis)))


def op_topk(rng, m, x):
    """TopK (largest or smallest, sorted; k of 1, a few, or the whole
    axis): the chain goes on from its values; its indices, back to float
    by a Cast, are an output of their own (its input too) and are checked
    like ArgMax's (run_tec): exactly the stable order of tec's own input,
    and within the tolerance of ORT's values where they differ from ORT's."""
    sh = m.shape[x]
    if not sh:
        return None
    axis = rng.randrange(len(sh))
    n = sh[axis]
    k = rng.choice([1, min(n, rng.randint(1, 4)), rng.randint(1, n), n])
    largest = rng.random() < 0.6
    out = [k if i == axis else d for i, d in enumerate(sh)]
    v, i = m.fresh("t"), m.fresh("t")
    m.nodes.append(helper.make_node(
        "TopK", [x, m.ints([k])], [v, i], name=f"TopK_{m.n}",
        axis=axis - len(sh) if rng.random() < 0.3 else axis, largest=int(largest), sorted=1))
    m.shape[v] = m.shape[i] = out
    y = m.node("Cast", [i], out, to=TensorProto.FLOAT)
    m.ops[-1] = "TopK"
    m.side += [y] + ([x] if x != "x" and x not in m.side else [])
    m.ties[y] = {"x": x, "axis": axis, "topk": k, "largest": largest}
    return v


def topk_rule(x, axis, largest, k):
    """The indices TopK takes along axis of x: the k extremes in order,
    equal values in the order of their indices (ONNX's rule)."""
    order = np.argsort(-x if largest else x, axis=axis, kind="stable")
    return np.take(order, np.arange(k), axis=axis)


def topk_ok(ref_x, got, axis, largest, k, tol):
    """Whether tec's TopK indices `got` (as float) are k distinct indices
    along axis whose values in ORT's input `ref_x` are within tol of ORT's
    k extremes, in order."""
    n = ref_x.shape[axis]
    if not np.all((got == np.floor(got)) & (got >= 0) & (got < n)):
        return False
    g = got.astype(np.int64)
    s = np.sort(g, axis=axis)
    if np.any(np.diff(s, axis=axis) == 0):
        return False
    ext = np.take(np.sort(ref_x, axis=axis), np.arange(k) if not largest
                  else np.arange(n - 1, n - 1 - k, -1), axis=axis)
    return bool(np.all(np.abs(np.take_along_axis(ref_x, g, axis) - ext) <= tol))


def op_cumsum(rng, m, x):
    sh = m.shape[x]
    if not sh:
        return None
    axis = rng.randrange(len(sh))
    ax = m.fresh("s")
    m.inits.append(numpy_helper.from_array(
        np.array(axis - len(sh) if rng.random() < 0.3 else axis, np.int64), ax))
    attrs = {k: 1 for k in ("exclusive", "reverse") if rng.random() < 0.3}
    return m.node("CumSum", [x, ax], sh, **attrs)


def op_gelu(rng, m, x):
    """GELU as exporters write it, x * 0.5 * (1 + Erf(x / sqrt(2))) (or
    the tanh form), sometimes of x scaled up first so that erf's tails and
    the rational function's whole range are reached."""
    sh = m.shape[x]
    if rng.random() < 0.4:
        x = m.node("Mul", [x, m.const([], 4.0, 4.0)], sh)
    if rng.random() < 0.75:
        d = m.node("Div", [x, m.const([], 1.4142135, 1.4142135)], sh)
        t = m.node("Erf", [d], sh)
    else:
        cube = m.node("Mul", [m.node("Mul", [x, x], sh), x], sh)
        inner = m.node("Add", [x, m.node("Mul", [cube, m.const([], 0.044715, 0.044715)], sh)], sh)
        t = m.node("Tanh", [m.node("Mul", [inner, m.const([], 0.7978846, 0.7978846)], sh)], sh)
    a = m.node("Add", [t, m.const([], 1.0, 1.0)], sh)
    return m.node("Mul", [m.node("Mul", [x, a], sh), m.const([], 0.5, 0.5)], sh)


def op_layernorm(rng, m, x):
    """Layer normalization over the last 1-2 axes: the LayerNormalization
    operator (opset 17), or the chain exporters wrote before it (ReduceMean,
    Sub, Pow or Mul, ReduceMean, Add eps, Sqrt, Div, then a scale and a
    bias), which tec's importer fuses into one."""
    sh = m.shape[x]
    if not sh:
        return None
    na = 2 if len(sh) >= 2 and rng.random() < 0.3 else 1
    axes = list(range(len(sh) - na, len(sh)))
    tail = sh[len(sh) - na:]
    eps = rng.choice([1e-5, 1e-6, 1e-3])
    affine = rng.random() < 0.8
    if m.opset >= 17 and rng.random() < 0.6:
        attrs = {"epsilon": eps}
        if axes[0] != len(sh) - 1 or rng.random() < 0.5:
            attrs["axis"] = axes[0] - len(sh) if rng.random() < 0.5 else axes[0]
        ins = [x, m.const(tail, 0.5, 1.5)]
        if affine:
            ins.append(m.const(tail))
        return m.node("LayerNormalization", ins, sh, **attrs)
    if m.opset >= 18:
        return None   # ReduceMean's axes an input: not generated
    spec = [a - len(sh) for a in axes] if rng.random() < 0.7 else axes
    kshape = [1 if i in axes else d for i, d in enumerate(sh)]
    mean = m.node("ReduceMean", [x], kshape, axes=spec)
    d = m.node("Sub", [x, mean], sh)
    if rng.random() < 0.7:
        p = m.node("Pow", [d, m.const([], 2.0, 2.0)], sh)
    else:
        p = m.node("Mul", [d, d], sh)
    v = m.node("ReduceMean", [p], kshape, axes=spec)
    ve = m.node("Add", [v, m.const([], eps, eps)], kshape)
    s = m.node("Sqrt", [ve], kshape)
    y = m.node("Div", [d, s], sh)
    if affine:
        y = m.node("Mul", [y, m.const(tail, 0.5, 1.5)], sh)
        y = m.node("Add", [y, m.const(tail)], sh)
    return y


def op_attention(rng, m, x):
    """Self-attention of a [.., T, D] tensor as transformer exports write
    it: Q, K, V by MatMul, Q @ K^T (a Transpose, or K transposed by its
    weight), scaled, Softmax on the last axis, @ V; sometimes heads split by
    Reshape and Transpose."""
    sh = m.shape[x]
    if len(sh) not in (2, 3) or sh[-1] > 64 or sh[-2] > 64:
        return None
    t, dm = sh[-2], sh[-1]
    heads = rng.choice([h for h in (1, 2, 4) if dm % h == 0 or h == 1])
    e = rng.choice([4, 8]) * heads
    q = m.node("MatMul", [x, m.const([dm, e], -0.5, 0.5)], sh[:-1] + [e])
    k = m.node("MatMul", [x, m.const([dm, e], -0.5, 0.5)], sh[:-1] + [e])
    v = m.node("MatMul", [x, m.const([dm, e], -0.5, 0.5)], sh[:-1] + [e])
    lead = sh[:-2]
    if heads > 1 and len(sh) == 3:
        hd = e // heads

        def split(y, perm):
            r = m.node("Reshape", [y, m.ints(lead + [t, heads, hd])], lead + [t, heads, hd])
            s4 = lead + [t, heads, hd]
            return m.node("Transpose", [r], [s4[p] for p in perm], perm=perm)
        q, v = split(q, [0, 2, 1, 3]), split(v, [0, 2, 1, 3])
        kt = split(k, [0, 2, 3, 1])
        b = lead + [heads]
    else:
        hd = e
        perm = list(range(len(sh) - 2)) + [len(sh) - 1, len(sh) - 2]
        kt = m.node("Transpose", [k], [m.shape[k][p] for p in perm], perm=perm)
        b = lead
    sc = m.node("MatMul", [q, kt], b + [t, t])
    sc = m.node(rng.choice(["Mul", "Div"]), [sc, m.const([], 0.5, 0.5)], b + [t, t])
    if rng.random() < 0.3:   # an additive mask, broadcast over batch and heads
        sc = m.node("Add", [sc, m.const([t, t], -2.0, 0.0)], b + [t, t])
    p = m.node("Softmax", [sc], b + [t, t], axis=-1)
    o = m.node("MatMul", [p, v], b + [t, hd])
    if heads > 1 and len(sh) == 3:
        o = m.node("Transpose", [o], lead + [t, heads, hd], perm=[0, 2, 1, 3])
        o = m.node("Reshape", [o, m.ints(lead + [t, e])], lead + [t, e])
    return o


def op_math_more(rng, m, x):
    """Clip with one bound or none (an empty input name), Pow by a
    constant, Reciprocal and Log of a positive tensor, Floor, Ceil, Round,
    a Cast through int32 and back, Max/Min of two."""
    sh = m.shape[x]
    # the steps (Floor, Ceil, Round, Cast) only of the graph's input: of a
    # computed value a last-bit difference may cross a step
    op = rng.choice(["Clip", "Clip", "Pow", "Reciprocal", "Log"]
                    + (["Floor", "Ceil", "Round", "Cast"] if x == "x" else []))
    if op == "Clip":
        r = rng.random()
        if r < 0.35:
            ins = [x, m.const([], -0.3, 0.0)]
        elif r < 0.7:
            ins = [x, "", m.const([], 0.0, 0.3)]
        else:
            ins = [x]
        return m.node("Clip", ins, sh)
    if op == "Pow":
        e = rng.choice([2.0, 3.0, 0.5, -1.0, 1.0])
        base = x
        if e in (0.5, -1.0):
            base = m.node("Add", [m.node("Abs", [x], sh), m.const([], 0.5, 0.5)], sh)
            m.ops.pop()
        return m.node("Pow", [base, m.const([], e, e)], sh)
    if op in ("Reciprocal", "Log"):
        pos = m.node("Add", [m.node("Abs", [x], sh), m.const([], 0.25, 0.25)], sh)
        m.ops.pop()
        return m.node(op, [pos], sh)
    if op == "Cast":
        big = m.node("Mul", [x, m.const([], 10.0, 10.0)], sh)
        m.ops.pop()
        i = m.node("Cast", [big], sh, to=TensorProto.INT32)
        m.ops.pop()
        return m.node("Cast", [i], sh, to=TensorProto.FLOAT)
    if op == "Round":
        # away from ties: ORT rounds half to even, like ONNX
        x = m.node("Mul", [x, m.const([], 7.3, 7.3)], sh)
        m.ops.pop()
    return m.node(op, [x], sh)


# ---------------------------------------------------------------- quantized sections
#
# A quarter of the models begin with a quantized section, as the QDQ
# models of ONNX Runtime's quantizer and the operator form are: the input
# quantized (QuantizeLinear, int8 or uint8 with a zero point) and
# dequantized, then 1-5 quantized layers -- Conv (plain, grouped, depthwise
# with a channel multiplier, 1x1 on a small map of many channels, strided,
# dilated, padded) of dequantized int8 weights (per output channel or per
# tensor) and a float or dequantized int32 bias, sometimes a Relu, then
# QuantizeLinear and DequantizeLinear again (a requantize chain); or a
# QLinearConv; or the Add of two dequantized activations (a residual);
# or a MaxPool of a dequantized activation -- and then the float ops of
# the rest of the generator.  Its input shape is [1, C, H, W] with C up
# to 256 and H, W of 3-20 (rows shorter than a vector, odd sizes).
#
# Every scale is a power of two and a contraction sums at most
# QDQ_MAX_TERMS products, so each value ORT computes in float -- the
# dequantized operands, their products, every partial sum in any order,
# the bias added, the division by the output scale -- is exact, and so is
# tec's integer accumulation and requantization: the two agree bit for
# bit, ties (rint's halves, to even) included, and a quantized step off
# anywhere is a wrong result, not rounding.  (With other scales a value a
# last bit apart near a half would round to different steps, and a
# step flipped early would spread through the layers after it.)

QDQ_MAX_TERMS = 500   # products per output: |sum| < 500 * 255 * 128 < 2^24 units


def pow2(e):
    return np.float32(2.0 ** e)


def qdq_scalar(m, value, dtype):
    name = m.fresh("q")
    m.inits.append(numpy_helper.from_array(np.array(value, dtype=dtype), name))
    m.shape[name] = []
    return name


def qdq_zero(rng, m, dtype):
    """A zero point: of an int8 tensor near 0, of a uint8 one near 128 or 0
    (a Relu's output)."""
    if dtype == np.int8:
        return qdq_scalar(m, rng.choice([0, 0, rng.randint(-20, 20)]), np.int8)
    return qdq_scalar(m, rng.choice([128, 128, 0, rng.randint(100, 150)]), np.uint8)


def qdq_requant(rng, m, y, dtype, e):
    """QuantizeLinear then DequantizeLinear of the float y at scale 2^e:
    the dequantized name; its quantization in m.quant."""
    s, z = qdq_scalar(m, pow2(e), np.float32), qdq_zero(rng, m, dtype)
    q = m.node("QuantizeLinear", [y, s, z], m.shape[y])
    d = m.node("DequantizeLinear", [q, s, z], m.shape[y])
    m.quant[d] = (q, s, z, e, dtype)
    return d


def qconv_window(rng, m, c, h, w):
    """A convolution's shape on [1, c, h, w]: (groups, out channels,
    window attributes, output spatial sizes), the sum's terms below
    QDQ_MAX_TERMS; None if none fits."""
    r = rng.random()
    if r < 0.3:
        g, mout, kmax = c, c * rng.choice([1, 1, 2]), 5
    elif r < 0.45:
        g = rng.choice(divisors(c))
        mout, kmax = g * rng.randint(1, 3), 3
    elif r < 0.7:   # 1x1 on a small map with many channels
        g, mout, kmax = 1, rng.choice([8, 16, 24, 32, 64, 96, 128, 160]), 1
    else:
        g, mout, kmax = 1, rng.choice([1, 3, 8, 16, 24, 32, 48]), 3
    win = window(rng, [h, w], kmax, False, strides=(1, 1, 1, 1, 2))
    if win is None:
        return None
    attrs, out = win
    k = attrs["kernel_shape"]
    if c // g * k[0] * k[1] > QDQ_MAX_TERMS or mout * out[0] * out[1] > 30000:
        return None
    if g != 1:
        attrs["group"] = g
    return g, mout, attrs, out


def qconv_weights(rng, m, mout, cg, k, dtype=np.int8):
    """int8 weights [mout, cg, kh, kw] and their exponents: one per output
    channel, or one for all."""
    wq = m.rng_np.integers(-127, 128, size=[mout, cg] + k).astype(dtype)
    name = m.fresh("w")
    m.inits.append(numpy_helper.from_array(wq, name))
    m.shape[name] = list(wq.shape)
    per_channel = rng.random() < 0.7
    ew = [rng.randint(-9, -6) for _ in range(mout)] if per_channel else [rng.randint(-9, -6)] * mout
    return name, ew, per_channel


def op_qconv(rng, m, x):
    """A quantized convolution of the dequantized activation x: QDQ
    (Conv of DequantizeLinear outputs, QuantizeLinear after it) or a
    QLinearConv between DequantizeLinear and QuantizeLinear."""
    xq, xs, xz, ex, xdtype = m.quant[x]
    _, c, h, w = m.shape[x]
    fit = qconv_window(rng, m, c, h, w)
    if fit is None:
        return None
    g, mout, attrs, out = fit
    wname, ew, per_channel = qconv_weights(rng, m, mout, c // g, attrs["kernel_shape"])
    terms = c // g * attrs["kernel_shape"][0] * attrs["kernel_shape"][1]
    # the output's scale: about 1/40 of the sum's spread (some saturate)
    ey = ex + max(ew) + int(np.round(np.log2(73 * np.sqrt(terms))))
    ydtype = np.int8 if rng.random() < 0.5 else np.uint8
    bias = m.rng_np.integers(-2000, 2000, size=[mout])
    wsv = np.array([pow2(e) for e in ew] if per_channel else pow2(ew[0]), np.float32)
    ws, wz = m.fresh("q"), m.fresh("q")
    m.inits.append(numpy_helper.from_array(wsv, ws))
    m.inits.append(numpy_helper.from_array(np.zeros(wsv.shape, np.int8), wz))
    if rng.random() < 0.25:   # the operator form (ORT's: y of x's type)
        ys, yz = qdq_scalar(m, pow2(ey), np.float32), qdq_zero(rng, m, xdtype)
        ins = [xq, xs, xz, wname, ws, wz, ys, yz]
        if rng.random() < 0.6:
            b = m.fresh("q")
            m.inits.append(numpy_helper.from_array(bias.astype(np.int32), b))
            ins.append(b)
        q = m.node("QLinearConv", ins, [1, mout] + out, **attrs)
        d = m.node("DequantizeLinear", [q, ys, yz], [1, mout] + out)
        m.quant[d] = (q, ys, yz, ey, xdtype)
        return d
    dq = {"axis": 0} if per_channel else {}
    wd = m.node("DequantizeLinear", [wname, ws, wz], m.shape[wname], **dq)
    m.ops.pop()
    ins = [x, wd]
    r = rng.random()
    if r < 0.4:   # an int32 bias at the products' scale, dequantized
        bq, bs = m.fresh("q"), m.fresh("q")
        m.inits.append(numpy_helper.from_array(bias.astype(np.int32), bq))
        m.inits.append(numpy_helper.from_array(
            np.array([pow2(ex + e) for e in ew], np.float32), bs))
        bz = m.fresh("q")
        m.inits.append(numpy_helper.from_array(np.zeros(mout, np.int32), bz))
        ins.append(m.node("DequantizeLinear", [bq, bs, bz], [mout], axis=0))
        m.ops.pop()
    elif r < 0.7:   # a float bias on the same grid
        b = m.fresh("w")
        m.inits.append(numpy_helper.from_array(
            np.array([bias[f] * pow2(ex + ew[f]) for f in range(mout)], np.float32), b))
        ins.append(b)
    y = m.node("Conv", ins, [1, mout] + out, **attrs)
    if rng.random() < 0.4:
        y = m.node("Relu", [y], m.shape[y])
    return qdq_requant(rng, m, y, ydtype, ey)


def op_qadd(rng, m, x):
    """The Add of two dequantized activations of one shape (a residual),
    requantized."""
    same = [t for t in m.quant if t != x and m.shape[t] == m.shape[x]]
    if not same:
        return None
    y = rng.choice(same)
    e = max(m.quant[x][3], m.quant[y][3]) + rng.choice([0, 1])
    s = m.node("Add", [x, y] if rng.random() < 0.5 else [y, x], m.shape[x])
    if rng.random() < 0.3:
        s = m.node("Relu", [s], m.shape[s])
    return qdq_requant(rng, m, s, rng.choice([np.int8, np.uint8]), e)


def op_qpool(rng, m, x):
    """A MaxPool of a dequantized activation (exact), requantized at its
    own scale, as a quantizer leaves it."""
    w = window(rng, m.shape[x][2:], 3, True)
    if w is None:
        return None
    attrs, out = w
    y = m.node("MaxPool", [x], m.shape[x][:2] + out, **attrs)
    return qdq_requant(rng, m, y, m.quant[x][4], m.quant[x][3])


QOPS = [(op_qconv, 6), (op_qadd, 2), (op_qpool, 1)]


def quantized_section(rng, m):
    """The input quantized, then 1-5 quantized layers; the chain's end."""
    e = rng.randint(-7, -5)
    x = qdq_requant(rng, m, "x", rng.choice([np.int8, np.uint8]), e)
    m.chain.append(x)
    steps, tries = rng.randint(1, 5), 0
    while steps and tries < 40:
        tries += 1
        f = rng.choices([o for o, _ in QOPS], weights=[w for _, w in QOPS])[0]
        mark = (len(m.nodes), len(m.ops))
        y = f(rng, m, m.chain[-1])
        if y is None:
            del m.nodes[mark[0]:], m.ops[mark[1]:]
            continue
        m.chain.append(y)
        steps -= 1
    return m.chain[-1]


OPS = [(op_conv, 4), (op_pool, 3), (op_global_pool, 1), (op_batchnorm, 2), (op_unary, 3),
       (op_binary_const, 3), (op_binary_chain, 2), (op_concat, 2), (op_reshape, 2),
       (op_transpose, 2), (op_softmax, 2), (op_matmul, 2), (op_flatten, 1), (op_gemm, 2),
       (op_reduce, 1), (op_slice, 1), (op_pad, 1), (op_unsqueeze, 1), (op_convtranspose, 1),
       (op_gather, 1), (op_unary_more, 2), (op_variadic, 1), (op_where, 1), (op_resize, 1),
       (op_split, 1), (op_expand_tile, 1), (op_norm, 1), (op_argmax, 1), (op_cumsum, 1),
       (op_topk, 1),
       (op_gelu, 1), (op_layernorm, 2), (op_attention, 1), (op_math_more, 1)]


def gen(rng, number, seed=0):
    m = Model(rng)
    m.rng_np = np.random.default_rng(rng.randrange(1 << 30))
    # graph inputs besides x come from generators of their own, so that a
    # seed's other models stay those of earlier versions of this script
    m.rng_in = random.Random(seed * 100003 + number)
    m.np_in = np.random.default_rng(seed * 100003 + number)
    m.opset = rng.choice(OPSETS)
    r = rng.random()
    quantized = r < 0.25
    if quantized:
        m.opset = max(m.opset, 13)   # per-channel DequantizeLinear (axis)
        c = rng.choice([1, 3, 4, 8, 16, 24, 32, 48, 64, 96, 128, 256])
        sh = [1, c] + [rng.randint(3, min(20, max(3, int(np.sqrt(30000 / c)))))
                       for _ in range(2)]
    elif r < 0.6:
        sh = [rng.randint(1, 2), rng.randint(1, 8), rng.randint(1, 12), rng.randint(1, 12)]
    elif r < 0.7:
        sh = [rng.randint(1, 2), rng.randint(1, 8), rng.randint(1, 16)]
    elif r < 0.75:   # volumes: Conv3d, 3-D pools
        sh = [1, rng.randint(1, 4)] + [rng.randint(1, 8) for _ in range(3)]
    else:
        sh = [rng.randint(1, 6) for _ in range(rng.randint(1, 3))]
    # sometimes a symbolic batch dimension, as exporters write it (the
    # outputs' shapes then undeclared): tec binds it from the input given
    sym = rng.random() < 0.2 and len(sh) >= 2
    m.inputs.append(helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                  ["N"] + sh[1:] if sym else sh))
    m.shape["x"] = sh
    m.chain.append("x")
    outputs = []
    steps = rng.randint(2, 8)
    tries = 0
    if quantized:
        quantized_section(rng, m)
        steps = len(m.ops) + rng.randint(0, 3)
    while len(m.ops) < steps and tries < 100:
        tries += 1
        f = rng.choices([o for o, _ in OPS], weights=[w for _, w in OPS])[0]
        x = m.chain[-1]
        y = f(rng, m, x)
        if y is None:
            continue
        if size(m.shape[y]) > 30000 or 0 in m.shape[y]:
            # too big (or empty): drop the node and its constants
            m.nodes.pop()
            m.ops.pop()
            continue
        m.chain.append(y)
        # (an ArgMax gives back its input, which may be the graph's own:
        # an output that is an input is saved under another name)
        if rng.random() < 0.15 and y not in outputs and y != "x":
            outputs.append(y)
    last = m.chain[-1]
    if last == "x":
        last = m.node("Relu", ["x"], sh)
    if last not in outputs:
        outputs.append(last)
    outputs += [o for o in m.side if o not in outputs]
    used = {i for n in m.nodes for i in n.input}
    inits = [t for t in m.inits if t.name in used]
    # (an input whose node was dropped as too big goes too)
    m.inputs = [i for i in m.inputs if i.name == "x" or i.name in used]
    feeds = {k: v for k, v in m.feeds.items() if k in used}
    outs = [helper.make_tensor_value_info(o, TensorProto.FLOAT, None if sym else m.shape[o])
            for o in outputs]
    graph = helper.make_graph(m.nodes, f"random{number}", m.inputs, outs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", m.opset)],
                              producer_name="check_onnx_random")
    model.ir_version = 7
    x = m.rng_np.uniform(-1, 1, size=sh).astype(np.float32)
    return model, {"x": x, **feeds}, outputs, m.ops, m.ties


def run_tec(tec, d, level, outputs, ties, threads):
    """(status, message): 'ok', 'mismatch', 'crash' or 'refused'."""
    out = os.path.join(d, "tec" + level.replace("-", "_"))
    os.makedirs(out, exist_ok=True)
    cmd = [tec, level, os.path.join(d, "model.onnx"), "--save-outputs", out]
    for f in sorted(os.listdir(os.path.join(d, "in"))):
        cmd += ["--input", f[:-len(".npy")] + "=" + os.path.join(d, "in", f)]
    if level == "--interp":
        cmd = [tec, "--interp"] + cmd[2:]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=300,
                           env=dict(os.environ, TEC_NUM_THREADS=str(threads)))
    except subprocess.TimeoutExpired:
        return "crash", f"{level}: timed out after 300 s"
    with open(out + ".log", "w") as f:
        f.write(" ".join(cmd) + "\n" + p.stdout[-4000:] + p.stderr)
    if p.returncode == 1 and re.search(r":\d+:\d+: error: |^tec: error: |: error: ", p.stderr):
        msg = p.stderr.strip().splitlines()[0]
        return "refused", f"{level}: {msg}"
    if p.returncode != 0:
        return "crash", f"{level}: exit status {p.returncode}: {p.stderr.strip()[-300:]}"
    for o in outputs:
        ref = np.load(os.path.join(d, "ort", o + ".npy"))
        try:
            got = np.load(os.path.join(out, o + ".npy"))
        except OSError:
            return "crash", f"{level}: no output {o}.npy"
        if got.shape != ref.shape:
            return "mismatch", f"{level}: {o} shape {list(got.shape)}, ORT {list(ref.shape)}"
        g, r = got.reshape(-1).astype(np.float64), ref.reshape(-1).astype(np.float64)
        finite = np.abs(r[np.isfinite(r)])
        tol = 1e-4 * max(1.0, float(np.max(finite)) if finite.size else 1.0)
        with np.errstate(invalid="ignore"):
            diff = np.abs(g - r)
        diff[np.isnan(diff)] = np.inf
        diff[(g == r) | (np.isnan(g) & np.isnan(r))] = 0   # infinities, NaNs alike
        if o in ties:
            # tec's index is the one its own input gives (its output too),
            # exactly, tie rule included
            t = ties[o]
            src = os.path.join(d, "in", "x.npy") if t["x"] == "x" else \
                os.path.join(out, t["x"] + ".npy")
            if not os.path.exists(src):
                return "crash", f"{level}: no output {t['x']}.npy"
            x = np.load(src)
            if "topk" in t:
                own = topk_rule(x, t["axis"], t["largest"], t["topk"])
                idx = got
            else:
                own = tie_rule(x, t["axis"], t["max"], t["last"])
                idx = np.squeeze(got, t["axis"]) if t["keepdims"] else got
            if not np.isnan(x).any() and not np.array_equal(own, idx):
                k = tuple(np.argwhere(own != idx)[0])
                return "mismatch", (f"{level}: {o} is not the index of tec's own {t['x']} at "
                                    f"{list(k)}: {idx[k]}, {t['x']} gives {own[k]}")
        if r.size and not np.all(diff <= tol) and o in ties:
            src = os.path.join(d, "in", "x.npy") if t["x"] == "x" else \
                os.path.join(d, "ort", t["x"] + ".npy")
            ref_x = np.load(src).astype(np.float64)
            finite = np.abs(ref_x[np.isfinite(ref_x)])
            xtol = 1e-4 * max(1.0, float(np.max(finite)) if finite.size else 1.0)
            if "topk" in t:
                if topk_ok(ref_x, got.astype(np.float64), t["axis"], t["largest"], t["topk"],
                           xtol):
                    continue
            elif tie_ok(ref_x, got.astype(np.float64), t["axis"], t["keepdims"], t["max"], xtol):
                continue
        if r.size and not np.all(diff <= tol):
            k = int(np.argmax(diff))
            i = np.unravel_index(k, ref.shape)
            return "mismatch", (f"{level}: {o} differs by {float(diff[k]):.3g} (tolerance "
                                f"{tol:.3g}) at {list(i)}: tec {g[k]}, ORT {r[k]}")
    return "ok", ""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("tec")
    ap.add_argument("n", type=int)
    ap.add_argument("seed", type=int)
    ap.add_argument("out")
    ap.add_argument("--levels", default="-O2")
    ap.add_argument("--batch", type=int, default=20)
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--ops", default="",
                    help="only these generators (comma-separated, op_ dropped: "
                    "layernorm,attention,conv ...)")
    a = ap.parse_args()
    if a.ops:
        global OPS
        want = a.ops.split(",")
        known = {f.__name__[3:] for f, _ in OPS}
        if not set(want) <= known:
            ap.error(f"--ops: unknown {sorted(set(want) - known)}; known: {sorted(known)}")
        OPS = [(f, w) for f, w in OPS if f.__name__[3:] in want]
    rng = random.Random(a.seed)
    levels = a.levels.split(",")
    os.makedirs(a.out, exist_ok=True)
    counts = {"ok": 0, "mismatch": 0, "crash": 0, "refused": 0, "noort": 0}
    done = 0
    while done < a.n:
        batch = []
        for k in range(done, min(done + a.batch, a.n)):
            model, inputs, outputs, ops, ties = gen(rng, k, a.seed)
            d = os.path.join(a.out, f"m{k}")
            shutil.rmtree(d, ignore_errors=True)
            os.makedirs(os.path.join(d, "in"))
            onnx.save(model, os.path.join(d, "model.onnx"))
            for name, v in inputs.items():
                np.save(os.path.join(d, "in", name + ".npy"), v)
            batch.append((k, d, outputs, ops, ties))
        with open(os.path.join(a.out, "ort.log"), "a") as log:
            subprocess.run(["node", os.path.join(HERE, "ort_outputs.js")] +
                           [d for _, d, _, _, _ in batch], check=True, stderr=log)
        for k, d, outputs, ops, ties in batch:
            chain = " ".join(ops)
            if os.path.exists(os.path.join(d, "ort.err")):
                counts["noort"] += 1
                with open(os.path.join(d, "ort.err")) as f:
                    print(f"NOORT m{k} [{chain}]: {f.read().strip()[:300]}", flush=True)
                continue
            status, why = "ok", ""
            for level in levels:
                status, why = run_tec(a.tec, d, level, outputs, ties, a.threads)
                if status != "ok":
                    break
            if status == "refused" and level != "-O0" and \
                    run_tec(a.tec, d, "-O0", outputs, ties, a.threads)[0] == "ok":
                # what -O0 computes right, a higher level must not refuse:
                # an internal error (a pass's out-of-range store) reads as a
                # located one
                status, why = "crash", why + " (-O0 agrees with ORT)"
            counts[status] += 1
            if status != "ok":
                print(f"{status.upper()} m{k} [{chain}]: {why}", flush=True)
            elif not a.keep:
                shutil.rmtree(d, ignore_errors=True)
        done += len(batch)
    print(f"check-onnx-random: {done} models of seed {a.seed} at {' '.join(levels)}: "
          f"{counts['ok']} agree with ONNX Runtime, {counts['mismatch']} differ, "
          f"{counts['crash']} crash, {counts['refused']} refused, {counts['noort']} refused by ORT",
          flush=True)
    return 1 if counts["mismatch"] or counts["crash"] else 0


if __name__ == "__main__":
    sys.exit(main())
