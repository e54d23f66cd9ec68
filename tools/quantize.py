#!/usr/bin/python3
"""tools/quantize.py — static int8 quantization of an f32 ONNX model to the
QDQ form, calibrated with tec, and the quantized model's fidelity.

    /usr/bin/python3 tools/quantize.py MODEL.onnx OUT.onnx [--tec ./tec]
        [--calibrate N] [--evaluate N] [--inputs DIR] [--seed S] [-O LEVEL]

The float activations that Conv, Gemm, MatMul and Add read get a
QuantizeLinear -> DequantizeLinear pair (one per tensor, shared by its
readers): uint8, asymmetric, scale = (max - min) / 255 over the range the
tensor takes on N calibration inputs (--calibrate, default 8) and 0, zero
point round(-min / scale).  The weights of Conv, Gemm and MatMul become
int8 initializers, symmetric, one scale per output channel (max |w| / 127),
each read through a DequantizeLinear; their biases int32 with scale
x_scale * w_scale[f].  The model is otherwise unchanged (ONNX Runtime's
QDQ format with its default types: QUInt8 activations, QInt8 per-channel
weights).

Calibration runs tec on a copy of the model whose calibrated tensors are
outputs (`tec MODEL --save-outputs`), so any model tec imports can be
quantized.  The calibration inputs are drawn from a standard normal
distribution (seeded), or read from --inputs DIR (NAME.npy files, or
subfolders of them, one per input set).

With --evaluate N (default 16) the tool then runs the f32 and the int8
model on N other inputs and prints, per input and in total, whether their
top-1 classes agree, how many of their top-5 classes they share, and
max |int8 - f32| / max |f32| of the (first) output:

    quantize: top-1 agreement A/N (P%), top-5 in common C on average, output error median E max M

Needs Debian's python3-onnx and python3-numpy.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

sys.dont_write_bytecode = True
PROG = "quantize.py"
TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# ops whose float inputs are quantized, and which of their inputs are weights
QUANTIZED = {"Conv", "Gemm", "MatMul", "Add"}
WEIGHTED = {"Conv", "Gemm", "MatMul"}


def fail(msg):
    sys.stderr.write("%s: error: %s\n" % (PROG, msg))
    sys.exit(1)


OPT = "-O2"


def run_tec(tec, model, inputs, outdir):
    """Runs tec on model with inputs {name: file}; the outputs as arrays."""
    shutil.rmtree(outdir, ignore_errors=True)
    cmd = [tec, OPT, model, "--save-outputs", outdir]
    for name, f in inputs.items():
        cmd += ["--input", "%s=%s" % (name, f)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        fail("tec failed on %s:\n%s" % (model, p.stderr.strip()))
    return {f[:-4]: np.load(os.path.join(outdir, f)) for f in os.listdir(outdir)
            if f.endswith(".npy")}


def graph_inputs(model):
    inits = {t.name for t in model.graph.initializer}
    return [i for i in model.graph.input if i.name not in inits]


def input_sets(model, n, seed, folder, work, tag, skip=0):
    """n sets of input files {name: path}: from folder (its subfolders
    after the first skip), else seeded normal values of the inputs' shapes
    (dynamic dimensions: 1)."""
    from onnx import mapping
    ins = graph_inputs(model)
    sets = []
    if folder:
        subs = sorted(d for d in os.listdir(folder) if os.path.isdir(os.path.join(folder, d)))
        dirs = [os.path.join(folder, d) for d in subs] or [folder]
        for d in dirs[skip:skip + n] if subs else dirs:
            sets.append({i.name: os.path.join(d, i.name + ".npy") for i in ins})
        return sets
    rng = np.random.default_rng(seed)
    for s in range(n):
        files = {}
        for i in ins:
            t = i.type.tensor_type
            shape = [d.dim_value if d.dim_value > 0 else 1 for d in t.shape.dim]
            dtype = mapping.TENSOR_TYPE_TO_NP_TYPE[t.elem_type]
            if not np.issubdtype(dtype, np.floating):
                fail("input '%s' is %s: give the inputs with --inputs" % (i.name, dtype))
            f = os.path.join(work, "%s%d.%s.npy" % (tag, s, i.name.replace("/", "_")))
            np.save(f, rng.standard_normal(shape).astype(dtype))
            files[i.name] = f
        sets.append(files)
    return sets


def consumers(model):
    use = {}
    for n in model.graph.node:
        for k, name in enumerate(n.input):
            use.setdefault(name, []).append((n, k))
    return use


def to_calibrate(model):
    """The float activations that quantized ops read (not weights)."""
    inits = {t.name for t in model.graph.initializer}
    names = []
    for n in model.graph.node:
        if n.op_type not in QUANTIZED:
            continue
        for k, name in enumerate(n.input):
            if not name or name in inits or name in names:
                continue
            if n.op_type in WEIGHTED and k > 0:
                continue       # a computed weight or bias stays float
            names.append(name)
    return names


def calibrate(model, tec, sets, work):
    """{tensor: (min, max)} over the calibration sets."""
    import onnx
    from onnx import helper
    names = to_calibrate(model)
    m = onnx.ModelProto()
    m.CopyFrom(model)
    for k, name in enumerate(names):
        out = "calib_%d" % k
        m.graph.node.append(helper.make_node("Identity", [name], [out], name=out))
        m.graph.output.append(helper.make_tensor_value_info(out, onnx.TensorProto.FLOAT, None))
    path = os.path.join(work, "calibrate.onnx")
    onnx.save(m, path)
    lo = {n: 0.0 for n in names}
    hi = {n: 0.0 for n in names}
    for s in sets:
        outs = run_tec(tec, path, s, os.path.join(work, "calib.out"))
        for k, name in enumerate(names):
            v = outs["calib_%d" % k]
            lo[name] = min(lo[name], float(v.min()))
            hi[name] = max(hi[name], float(v.max()))
    return {n: (lo[n], hi[n]) for n in names}


def activation_params(lo, hi):
    """uint8 scale and zero point of the range [lo, hi] (which holds 0)."""
    scale = (hi - lo) / 255.0
    if scale <= 0:
        scale = 1.0
    scale = np.float32(scale)
    zero = int(np.clip(np.rint(-lo / scale), 0, 255))
    return scale, np.uint8(zero)


def quantize_weight(w, axis):
    """int8 symmetric per-channel codes and scales of float weights w."""
    red = tuple(d for d in range(w.ndim) if d != axis)
    amax = np.abs(w).max(axis=red) if w.ndim > 1 else np.abs(w)
    scale = (amax / 127.0).astype(np.float32)
    scale[scale == 0] = 1.0
    shape = [1] * w.ndim
    shape[axis] = -1
    q = np.clip(np.rint(w / scale.reshape(shape)), -127, 127).astype(np.int8)
    return q, scale


def quantize(model, ranges):
    """The QDQ model."""
    import onnx
    from onnx import helper, numpy_helper
    g = model.graph
    inits = {t.name: t for t in g.initializer}
    use = consumers(model)
    new_inits, nodes = [], []
    dq_of = {}     # activation -> its dequantized name

    def const(name, arr):
        new_inits.append(numpy_helper.from_array(np.asarray(arr), name))
        return name

    # QuantizeLinear -> DequantizeLinear after each calibrated activation,
    # placed right after the node that computes it (or first, for inputs)
    qdq_after = {}
    for name, (lo, hi) in ranges.items():
        s, z = activation_params(lo, hi)
        base = name.strip("/").replace("/", "_") or "t"
        sc = const(base + "_scale", s)
        zp = const(base + "_zero_point", z)
        q = helper.make_node("QuantizeLinear", [name, sc, zp], [base + "_quantized"],
                             name=base + "_QuantizeLinear")
        dq = helper.make_node("DequantizeLinear", [base + "_quantized", sc, zp],
                              [base + "_dequantized"], name=base + "_DequantizeLinear")
        qdq_after[name] = [q, dq]
        dq_of[name] = (base + "_dequantized", s)

    used_weights = set()
    for name in [i.name for i in g.input]:
        nodes += qdq_after.get(name, [])
    for n in g.node:
        inputs = list(n.input)
        if n.op_type in QUANTIZED:
            for k, name in enumerate(inputs):
                if name in dq_of and not (n.op_type in WEIGHTED and k > 0):
                    inputs[k] = dq_of[name][0]
        if n.op_type in WEIGHTED and len(inputs) > 1 and n.input[1] in inits and \
                n.input[0] in dq_of:
            w = numpy_helper.to_array(inits[n.input[1]]).astype(np.float32)
            if n.op_type == "Conv":
                axis = 0
            elif n.op_type == "Gemm":
                axis = 0 if any(a.name == "transB" and a.i for a in n.attribute) else 1
            else:
                axis = w.ndim - 1
            if w.ndim >= 2:
                q, s = quantize_weight(w, axis)
                base = n.input[1].strip("/").replace("/", "_")
                qn = const(base + "_quantized", q)
                sn = const(base + "_scale", s)
                zn = const(base + "_zero_point", np.zeros_like(s, dtype=np.int8))
                nodes.append(helper.make_node("DequantizeLinear", [qn, sn, zn],
                                              [base + "_dequantized"], axis=axis,
                                              name=base + "_DequantizeLinear"))
                inputs[1] = base + "_dequantized"
                used_weights.add(n.input[1])
                if len(inputs) > 2 and n.input[2] in inits:
                    b = numpy_helper.to_array(inits[n.input[2]]).astype(np.float64)
                    bs = (np.float64(dq_of[n.input[0]][1]) * s.astype(np.float64))
                    if b.shape == bs.shape:
                        bq = np.clip(np.rint(b / bs), -2**31, 2**31 - 1).astype(np.int32)
                        bbase = n.input[2].strip("/").replace("/", "_")
                        bqn = const(bbase + "_quantized", bq)
                        bsn = const(bbase + "_scale", bs.astype(np.float32))
                        bzn = const(bbase + "_zero_point", np.zeros(bs.shape, np.int32))
                        nodes.append(helper.make_node(
                            "DequantizeLinear", [bqn, bsn, bzn], [bbase + "_dequantized"],
                            axis=0, name=bbase + "_DequantizeLinear"))
                        inputs[2] = bbase + "_dequantized"
                        used_weights.add(n.input[2])
        m = helper.make_node(n.op_type, inputs, list(n.output), name=n.name, domain=n.domain)
        m.attribute.extend(n.attribute)
        nodes.append(m)
        for out in n.output:
            nodes += qdq_after.get(out, [])
    keep = [t for t in g.initializer if t.name not in used_weights or
            any(c[0].op_type not in WEIGHTED for c in use.get(t.name, []))]
    del g.node[:]
    g.node.extend(nodes)
    del g.initializer[:]
    g.initializer.extend(keep + new_inits)
    # DequantizeLinear with axis needs opset 13
    for o in model.opset_import:
        if o.domain in ("", "ai.onnx") and o.version < 13:
            o.version = 13
    onnx.checker.check_model(model)
    return model


def evaluate(f32, int8, tec, sets, work):
    agree, errs, five = 0, [], []
    for k, s in enumerate(sets):
        a = list(run_tec(tec, f32, s, os.path.join(work, "f32.out")).values())[0]
        b = list(run_tec(tec, int8, s, os.path.join(work, "int8.out")).values())[0]
        a, b = a.astype(np.float64).reshape(-1), b.astype(np.float64).reshape(-1)
        same = int(np.argmax(a) == np.argmax(b))
        err = np.abs(a - b).max() / max(np.abs(a).max(), 1e-30)
        top = min(5, a.size)
        common = len(set(np.argsort(-a)[:top]) & set(np.argsort(-b)[:top]))
        agree += same
        errs.append(err)
        five.append(common)
        print("quantize: input %d: top-1 f32 %d int8 %d (%s), top-%d in common %d, output error "
              "%.1e" % (k, np.argmax(a), np.argmax(b), "agree" if same else "differ", top,
                        common, err), flush=True)
    print("quantize: top-1 agreement %d/%d (%.1f%%), top-%d in common %.2f on average, output "
          "error median %.1e max %.1e" % (agree, len(sets), 100.0 * agree / len(sets), top,
                                          float(np.mean(five)), float(np.median(errs)), max(errs)))


def main(argv):
    p = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n")[0])
    p.add_argument("model")
    p.add_argument("out")
    p.add_argument("--tec", default=os.path.join(TOP, "tec"))
    p.add_argument("--calibrate", type=int, default=8, metavar="N")
    p.add_argument("--evaluate", type=int, default=16, metavar="N")
    p.add_argument("--inputs", metavar="DIR")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("-O", dest="opt", default="2", choices="0123",
                   help="tec's optimization level for its runs (default 2; the results are "
                   "the same at every level)")
    a = p.parse_args(argv)
    global OPT
    OPT = "-O" + a.opt
    try:
        import onnx
    except ImportError:
        fail("the onnx package is not installed for %s (apt-get install python3-onnx)"
             % sys.executable)
    if a.calibrate < 1:
        fail("--calibrate must be at least 1")
    model = onnx.load(a.model)
    work = tempfile.mkdtemp(prefix="quantize.")
    try:
        sets = input_sets(model, a.calibrate, a.seed, a.inputs, work, "calib")
        ranges = calibrate(model, a.tec, sets, work)
        print("quantize: %d activations calibrated on %d inputs" % (len(ranges), len(sets)),
              flush=True)
        q = quantize(model, ranges)
        onnx.save(q, a.out)
        print("quantize: wrote %s" % a.out, flush=True)
        if a.evaluate > 0:
            ev = input_sets(model, a.evaluate, a.seed + 1000, a.inputs, work, "eval",
                            skip=a.calibrate)
            if not ev:
                fail("no input sets left in %s to evaluate on" % a.inputs)
            evaluate(a.model, a.out, a.tec, ev, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
