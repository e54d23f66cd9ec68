#!/usr/bin/python3
"""testsuite/models/onnx_torch.py — models exported from PyTorch to ONNX and
run by tec (make check-torch, doc/onnx.md).

    onnx_torch.py --tec ./tec --out DIR [resnet18 mobilenet_v2 gpt2]

For each model: builds it with tools/torch_ref.py (torchvision's ResNet-18
and MobileNetV2, GPT-2 small at T = 16 tokens) with PyTorch's initialization,
exports it with torch.onnx.export (opset 14, BatchNorm kept), runs
`tec -O2 MODEL.onnx --profile` on a random input, and checks, one PASS/FAIL
line each:

- every output is within 1e-4 of PyTorch's, relative to its largest magnitude;
- the profile's MAC and parameter totals equal those of the .te zoo program
  (examples/MODEL.te) at the same sizes.

Exit status 1 if any check fails."""
import argparse
import json
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(SRC, "tools"))
import torch_ref  # noqa: E402

T = 16            # GPT-2's sequence length here


def check(ok, what):
    print("%s: %s" % ("PASS" if ok else "FAIL", what))
    return ok


def run_tec(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        print("    $ " + " ".join(cmd) + "\n" + p.stderr.rstrip())
    return p.returncode == 0


def one(name, a):
    import torch
    torch.manual_seed(0)
    defines = [("T", str(T))] if name == "gpt2" else []
    model = torch_ref.build_model(name, None, defines).float()
    if name == "gpt2":
        x = torch.randint(0, 50257, (1, T))
        iname = "ids"
    else:
        x = torch.rand(1, 3, 224, 224) * 2 - 1
        iname = "image"
    with torch.no_grad():
        ref = model(x)
    if not isinstance(ref, dict):
        ref = {"logits": ref}
    d = os.path.join(a.out, name)
    os.makedirs(d, exist_ok=True)
    onnx = os.path.join(d, name + ".onnx")
    torch.onnx.export(model, (x,), onnx, opset_version=14, input_names=[iname],
                      output_names=list(ref), do_constant_folding=False,
                      training=torch.onnx.TrainingMode.PRESERVE)
    np.save(os.path.join(d, "x.npy"), x.numpy())
    ok = run_tec([a.tec, "-O2", onnx, "--input", "%s=%s/x.npy" % (iname, d), "--profile",
                  "--report=%s/onnx.json" % d, "--save-outputs", d + "/out"])
    if not check(ok, "%s: tec -O2 %s.onnx runs" % (name, name)):
        return False
    for oname, want in ref.items():
        want = want.numpy()
        got = np.load(os.path.join(d, "out", oname + ".npy"))
        err = float(np.abs(got - want).max() / max(np.abs(want).max(), 1e-30)) \
            if got.shape == want.shape else float("inf")
        ok &= check(err <= 1e-4, "%s: output %s %s within 1e-4 of PyTorch's (relative error %.2g)"
                    % (name, oname, list(got.shape), err))
    zoo = [a.tec, "-O2", "--profile", "--no-run", "--report=%s/zoo.json" % d,
           os.path.join(SRC, "examples", name + ".te")]
    if name == "gpt2":
        zoo[1:1] = ["-D", "T=%d" % T]
    if not check(run_tec(zoo), "%s: the zoo program's profile" % name):
        return False
    got = json.load(open(os.path.join(d, "onnx.json")))["totals"]
    want = json.load(open(os.path.join(d, "zoo.json")))["totals"]
    for what in ("macs", "params"):
        ok &= check(got[what] == want[what], "%s: %s: ONNX %s, examples/%s.te %s"
                    % (name, what, got[what], name, want[what]))
    return ok


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--tec", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("models", nargs="*", default=["resnet18", "mobilenet_v2", "gpt2"])
    a = p.parse_args()
    ok = True
    for name in a.models:
        ok &= one(name, a)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
