#!/usr/bin/python3
"""testsuite/onnx/check-onnx.py — runs tec on the ONNX backend test suite.

Each test is a folder with model.onnx and test_data_set_N/{input,output}_K.pb.
tec imports the model (`tec --emit=te`): if it refuses with a clear error
(exit 1: an op, dtype or attribute it does not support) the test is SKIPPED
with that reason; any other failure to import (a crash, an internal error, a
timeout) FAILS.  An imported model is run on every data set and must match
the expected outputs at the suite's tolerance (rtol 1e-3, atol 1e-7).

    check-onnx.py --tec ./tec --data /usr/share/libonnx-testdata/data --out DIR
                  [--jobs 2] [--timeout 60] [--only LIST] [TEST-REGEX]

--only LIST runs just the tests named in LIST (one "suite/name" a line),
each of which must pass (make check's supported subset): a skipped one fails,
and only the lines of tests that did not pass are printed.  Prints one line
per test, then again those of the node tests of the ops doc/onnx.md lists
that do not pass, their pass count and the overall pass count.  Exit status 1 when any test failed.
"""
import argparse
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import onnxpb  # noqa: E402

SUITES = ["node", "pytorch-converted", "pytorch-operator", "simple"]
# the ops the importer must support (doc/onnx.md)
LISTED = set("""Conv ConvTranspose Gemm MatMul Add Sub Mul Div Pow Sqrt Exp Log Neg Abs
Reciprocal Floor Ceil Erf Tanh Sigmoid Relu LeakyRelu Elu Selu Softplus Softsign HardSigmoid
HardSwish PRelu Clip Min Max Mean Sum Where Equal Less Greater Not And Or BatchNormalization
LayerNormalization InstanceNormalization Softmax LogSoftmax MaxPool AveragePool
GlobalAveragePool GlobalMaxPool ReduceMean ReduceSum ReduceMax ReduceMin ReduceProd ArgMax
ArgMin Flatten Reshape Transpose Concat Split Slice Gather Squeeze Unsqueeze Expand Tile Pad
Identity Dropout Cast Constant Shape Range CumSum Einsum DepthToSpace SpaceToDepth
QuantizeLinear DequantizeLinear DynamicQuantizeLinear QLinearConv QLinearMatMul ConvInteger
MatMulInteger Resize Upsample""".split())


def bf16_rne(x):
    """float32 x rounded to bfloat16, to nearest even, as bit patterns."""
    u = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    return np.where(np.isnan(x), np.uint16(0x7FC0), r)


# Tests whose expected outputs disagree with ONNX's Cast as tec implements
# it: each is checked against the outputs that function of its inputs
# gives, and reported as skipped with the reason (not counted as passed).
CORRECTED = {
    "node/test_cast_FLOAT_to_BFLOAT16": (
        "the expected output (ONNX 1.12's) truncates float to bfloat16; tec rounds to nearest "
        "even, as onnxruntime and later ONNX releases do", lambda ins: [bf16_rne(ins[0])]),
}


def run(cmd, timeout, env):
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        return None, "", "timed out after %ds" % timeout


def first_error(stderr):
    for line in stderr.splitlines():
        m = re.search(r"error: (.*)", line)
        if m:
            return m.group(1)
    return stderr.strip().splitlines()[0] if stderr.strip() else "no message"


def empty(pb):
    """Whether the TensorProto file pb holds a tensor without elements."""
    try:
        return 0 in onnxpb.tensor(open(pb, "rb").read()).shape
    except ValueError:   # not a tensor tec reads: the run says so
        return False


def check(test, a, env):
    """(status, detail): status PASS, FAIL or SKIP."""
    suite, name = test
    folder = os.path.join(a.data, suite, name)
    model = os.path.join(folder, "model.onnx")
    # the inputs of the first data set, by their ONNX names (the .te names
    # of inputs named like identifiers): small ones may be shapes or axes
    # the import needs to know
    sets = sorted(d for d in os.listdir(folder) if d.startswith("test_data_set_"))
    first = []
    if sets:
        names = onnxpb.input_names(open(model, "rb").read())
        files = sorted(f for f in os.listdir(os.path.join(folder, sets[0]))
                       if f.startswith("input_"))
        others = onnxpb.non_tensor_inputs(open(model, "rb").read())
        if len(names) == len(files):   # (a sequence's file is no tensor: the import says so)
            for k, nm in enumerate(names):
                if nm not in others:
                    first += ["--input", "%s=%s/%s/input_%d.pb" % (nm, folder, sets[0], k)]
    rc, te, err = run([a.tec, "--emit=te", model] + first, a.timeout, env)
    if rc is None:
        return "FAIL", "import " + err
    if rc == 1:
        return "SKIP", first_error(err)
    if rc != 0:
        return "FAIL", "import exited %s: %s" % (rc, first_error(err))
    inputs = re.findall(r"^input (\w+): \w+\[([^\]]*)\]", te, re.M)
    outputs = re.findall(r'^output \w+ as "([^"]+)"', te, re.M)
    if not sets:
        return "SKIP", "no data sets"
    out = os.path.join(a.out, suite + "-" + name)
    for ds in sets:
        dsdir = os.path.join(folder, ds)
        # an input without elements is known from its shape: the importer
        # does not make it an input of the program (doc/onnx.md)
        given = [f for f in sorted(os.listdir(dsdir), key=lambda f: int(re.sub(r"\D", "", f) or 0))
                 if f.startswith("input_") and not empty(os.path.join(dsdir, f))]
        if len(given) != len(inputs):
            return "FAIL", "%s: %d input files for %d inputs" % (ds, len(given), len(inputs))
        cmd = [a.tec, model, "--save-outputs", out]
        ins = []
        for (nm, dims), f in zip(inputs, given):
            ins.append(onnxpb.tensor(open(os.path.join(dsdir, f), "rb").read()))
            shape = tuple(int(d) for d in dims.split(",") if d.strip())
            if re.fullmatch(r"[\d, ]*", dims) and ins[-1].shape != shape:
                return "SKIP", "%s: %s has shape %s but the model declares [%s]" % (
                    ds, f, ins[-1].shape, dims)
            cmd += ["--input", "%s=%s/%s" % (nm, dsdir, f)]
        shutil.rmtree(out, ignore_errors=True)
        rc, _, err = run(cmd, a.timeout, env)
        if rc != 0:
            return "FAIL", "%s: run %s: %s" % (ds, "timed out" if rc is None else
                                               "exited %d" % rc, first_error(err))
        corrected = CORRECTED.get("/".join(test))
        for k, nm in enumerate(outputs):
            want = onnxpb.tensor(open(os.path.join(dsdir, "output_%d.pb" % k), "rb").read())
            if corrected:
                want = corrected[1](ins)[k]
            got = np.load(os.path.join(out, nm + ".npy"))
            if got.dtype == np.uint16:   # tec's bf16 (the suite's too: uint16 bits)
                got, want = onnxpb.bf16_values(got), onnxpb.bf16_values(want)
            if got.shape != want.shape:
                return "FAIL", "%s: output %s has shape %s, expected %s" % (
                    ds, nm, got.shape, want.shape)
            try:
                np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64),
                                           rtol=1e-3, atol=1e-7)
            except AssertionError as e:
                lines = [ln for ln in str(e).splitlines() if "Max" in ln]
                return "FAIL", "%s: output %s differs: %s" % (ds, nm, "; ".join(lines))
    shutil.rmtree(out, ignore_errors=True)
    if corrected:
        return "SKIP", corrected[0] + " (tec's output is the rounded one)"
    return "PASS", ""


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--tec", required=True)
    p.add_argument("--data", default="/usr/share/libonnx-testdata/data")
    p.add_argument("--out", required=True)
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--timeout", type=int, default=60)
    p.add_argument("--only")
    p.add_argument("regex", nargs="?")
    a = p.parse_args()
    if not os.path.isdir(os.path.join(a.data, "node")):
        print("SKIP: the ONNX backend test suite is not installed (%s; Debian: libonnx-testdata)"
              % a.data)
        return 0
    os.makedirs(a.out, exist_ok=True)
    env = dict(os.environ, XDG_CACHE_HOME=os.path.join(a.out, "cache"))
    tests = [(s, n) for s in SUITES if os.path.isdir(os.path.join(a.data, s))
             for n in sorted(os.listdir(os.path.join(a.data, s)))]
    if a.only:
        wanted = set(ln.strip() for ln in open(a.only) if ln.strip() and ln[0] != "#")
        missing = wanted - set("/".join(t) for t in tests)
        for m in sorted(missing):
            print("FAIL: %s: listed as supported but not in %s" % (m, a.data))
        if missing:
            return 1
        tests = [t for t in tests if "/".join(t) in wanted]
    if a.regex:
        tests = [t for t in tests if re.search(a.regex, "/".join(t))]
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as pool:
        results = list(pool.map(lambda t: check(t, a, env), tests))
    counts = {"PASS": 0, "FAIL": 0, "SKIP": 0}
    listed_total = listed_pass = 0
    listed_not = []   # the lines of the listed ops' node tests that do not pass
    for t, (st, why) in zip(tests, results):
        if a.only and st == "SKIP":
            st, why = "FAIL", "listed as supported but skipped: " + why
        counts[st] += 1
        if a.only and st == "PASS":
            continue
        line = "%s: %s%s" % (st, "/".join(t), ": " + why if why else "")
        print(line)
        if t[0] == "node" and not t[1].endswith("_expanded"):
            ops = set(onnxpb.op_types(open(os.path.join(a.data, t[0], t[1], "model.onnx"),
                                           "rb").read()))
            if ops and ops <= LISTED:
                listed_total += 1
                listed_pass += st == "PASS"
                if st != "PASS":
                    listed_not.append(line)
    if listed_not:
        print("node tests of the listed ops that do not pass:")
        for line in listed_not:
            print("  " + line)
    if listed_total:
        print("node tests of the listed ops: %d of %d pass (%.1f%%)" % (
            listed_pass, listed_total, 100.0 * listed_pass / listed_total))
    print("onnx backend tests: %d passed, %d failed, %d skipped, of %d" % (
        counts["PASS"], counts["FAIL"], counts["SKIP"], len(tests)))
    return 1 if counts["FAIL"] else 0


if __name__ == "__main__":
    sys.exit(main())
