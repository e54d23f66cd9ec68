#!/usr/bin/python3
"""bench/ort_export.py — one model as ONNX, with its input, PyTorch's output
and PyTorch's latency, for bench/ort.sh.

    /usr/bin/python3 bench/ort_export.py MODEL DIR [--tec ./tec]
        [--threads 1,2] [--repeat 20] [--cap 20] [--no-time]

MODEL is a model of bench/unseen_export.py (q_resnet18, lstm, unet ...:
its model and input), or of tec's zoo (resnet18 resnet50 mobilenet_v2
efficientnet_b0 googlenet gpt2: tools/torch_ref.py's builder, its parameters
and input filled with tec's default data, doc/data.md, so examples/MODEL.te
and the export compute on the same numbers) or any other torchvision
classifier, segmentation or video model name (resnet34, densenet121,
lraspp_mobilenet_v3_large, r3d_18, ...: random weights from
torch.manual_seed(0), PyTorch's default initialization for inception_v3
and a normal one for ViT's zero-initialized head; a 1x3x224x224 input,
299x299 for inception_v3, a 1x3x8x112x112 clip (channels, frames,
height, width) for the video models, 1x3x16x224x224 for mvit_v1_b and
mvit_v2_s, whose position embeddings fix their input's size, and for
s3d, whose last pool needs them; from a
seeded normal distribution).  Writes

    DIR/MODEL.onnx            torch.onnx.export, opset 13 (14 for gpt2,
                              whose causal mask is a Trilu), float32,
                              batch 1, one output
    DIR/MODEL.in/NAME.npy     the input (NAME: the .te program's input name
                              for the zoo, else "image")
    DIR/MODEL.ref.npy         PyTorch's output (float32)

A model with several outputs (gpt2: a dict of logits and hidden) is
exported, run and timed with its first one only (gpt2's logits), the
output bench/ort.sh compares.

and, unless --no-time, PyTorch's latency per thread count as
bench/models_torch.py measures it, one line each:

    torch-result MODEL threads=N median_ms=M runs=R

An existing DIR/MODEL.onnx is kept (delete it to export again); the timing
still runs.  Needs Debian's python3-torch and python3-torchvision.
"""
import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.dont_write_bytecode = True
TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(TOP, "tools"))
sys.path.insert(0, os.path.join(TOP, "bench"))

PROG = "ort_export.py"
ZOO = ["resnet18", "resnet50", "mobilenet_v2", "efficientnet_b0", "googlenet", "gpt2"]
# The opset of a model's export where 13 lacks one of its operators
# (torch.triu is ONNX Trilu from opset 14).
OPSET = {"gpt2": 14}
# Video models whose input size is fixed by their position embeddings
# (the others take any clip; bench/ort_export.py gives them 8 112x112 frames).
# s3d's last pool (2x7x7) needs 16 frames of 224x224.
VIDEO_INPUT = {"mvit_v1_b": (1, 3, 16, 224, 224), "mvit_v2_s": (1, 3, 16, 224, 224),
               "s3d": (1, 3, 16, 224, 224)}


def first_output(model, args):
    """The model, or for one that returns a dict or tuple of outputs, a
    module that returns the first of them (gpt2: logits).  A model that
    returns one tensor is not wrapped, so that the export's node names are
    the model's own (`/features/features.0/Conv`, not `/inner/features/...`)."""
    import torch
    with torch.no_grad():
        if isinstance(model(*args.values()), torch.Tensor):
            return model

    class First(torch.nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, *xs):
            out = self.inner(*xs)
            if isinstance(out, dict):
                return next(iter(out.values()))
            if isinstance(out, (tuple, list)):
                return out[0]
            return out

    return First(model).eval()


def zoo_model(name, tec):
    """The zoo model with tec's default data, and its inputs by name."""
    import torch
    import torch_ref as ref
    program = os.path.join(TOP, "examples", name + ".te")
    bufs = ref.tec_graph(tec, program, [])
    inputs = [b for b in bufs if b.role == "input"]
    params = [b for b in bufs if b.role == "param"]
    torch.manual_seed(0)
    model = ref.build_model(name, None, [])
    weights = ref.weight_tensors(model)
    ref.check_params(weights, params, ref.buffer_names(model))
    ref.fill_weights(weights, params, False)
    model = model.float().eval()
    args = {}
    for b in inputs:
        t = ref.torch_input(b, {})
        args[b.name] = t.float() if t.is_floating_point() else t
    return model, args


def torchvision_model(name):
    import torch
    import torchvision.models as tvm
    torch.manual_seed(0)
    kw = {}
    if name in ("inception_v3", "googlenet"):
        # Inception-v3's own initialization (truncated normal, std 0.1)
        # makes its logits grow to 1e12: PyTorch's default one instead.
        kw = {"aux_logits": False, "init_weights": name == "googlenet"}
    shape = (1, 3, 299, 299) if name == "inception_v3" else (1, 3, 224, 224)
    if not hasattr(tvm, name) and hasattr(tvm.video, name):
        # a video classifier (r3d_18, r2plus1d_18, mc3_18, s3d, mvit_*): 3-D
        # convolutions over a clip of frames
        model = getattr(tvm.video, name)(weights=None)
        shape = VIDEO_INPUT.get(name, (1, 3, 8, 112, 112))
    elif not hasattr(tvm, name) and hasattr(tvm.segmentation, name):
        # a segmentation model (lraspp_mobilenet_v3_large, deeplabv3_...,
        # fcn_...): its first output is the per-pixel logits, at the input's
        # size (a Resize); no backbone weights (those would be downloaded)
        model = getattr(tvm.segmentation, name)(weights=None, weights_backbone=None)
    else:
        model = getattr(tvm, name)(weights=None, **kw)
    model = model.float().eval()
    if name.startswith("vit_"):
        # ViT's head is initialized to zeros, which would make every
        # output 0: random weights, as a trained head has.
        torch.nn.init.normal_(model.heads.head.weight, std=0.02)
        torch.nn.init.normal_(model.heads.head.bias, std=0.02)
    g = torch.Generator().manual_seed(1)
    return model, {"image": torch.randn(*shape, generator=g)}


def unseen_models():
    """The names of bench/unseen_export.py's models (quantized torchvision,
    LSTM, GRU, U-Net ...), which this script exports and times too."""
    import unseen_export
    return unseen_export.QUANTIZED + list(unseen_export.SMALL)


def export(model, args, path, opset, **options):
    """torch.onnx.export of model(*args.values()) to path; options: more of
    its keyword arguments (dynamic_axes, do_constant_folding ...)."""
    import torch
    names = list(args)
    tmp = path + ".tmp"
    # With gradients enabled: under no_grad, torch's MultiheadAttention takes
    # its fused fast path (aten::_native_multi_head_attention), which has no
    # ONNX export (vit_b_16, any nn.TransformerEncoder).
    options = dict({"do_constant_folding": True}, **options)
    torch.onnx.export(model, tuple(args[n] for n in names), tmp, opset_version=opset,
                      input_names=names, output_names=["output"], **options)
    os.replace(tmp, path)


def timing(model, args, threads, repeat, cap, name):
    import torch
    xs = list(args.values())
    for n in threads:
        torch.set_num_threads(n)
        with torch.inference_mode():
            start = time.perf_counter()
            warm = 0
            while warm < 2 or (warm < 10 and time.perf_counter() - start < 1.0):
                t0 = time.perf_counter()
                model(*xs)
                last = time.perf_counter() - t0
                warm += 1
            runs = max(min(repeat, 3), min(repeat, int(cap / max(last, 1e-9))))
            times = []
            for _ in range(runs):
                t0 = time.perf_counter()
                model(*xs)
                times.append(time.perf_counter() - t0)
        print("torch-result %s threads=%d median_ms=%.3f runs=%d"
              % (name, n, 1e3 * statistics.median(times), runs), flush=True)


def main(argv):
    p = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n")[0])
    p.add_argument("model")
    p.add_argument("dir")
    p.add_argument("--tec", default=os.path.join(TOP, "tec"))
    p.add_argument("--threads", default="1,2")
    p.add_argument("--repeat", type=int, default=20)
    p.add_argument("--cap", type=float, default=20.0)
    p.add_argument("--no-time", action="store_true")
    a = p.parse_args(argv)
    try:
        import torch
    except ImportError:
        sys.stderr.write("%s: PyTorch is not installed for %s (apt-get install "
                         "python3-torch python3-torchvision)\n" % (PROG, sys.executable))
        return 3
    import unseen_export
    options = {"opset": OPSET.get(a.model, 13)}
    if a.model in ZOO:
        model, args = zoo_model(a.model, a.tec)
    elif unseen_export.variant(a.model)[0] in unseen_models():
        base, options = unseen_export.variant(a.model)
        model, x = unseen_export.build(base)
        args = {"image": x}
    else:
        model, args = torchvision_model(a.model)
    model = first_output(model, args)
    os.makedirs(a.dir, exist_ok=True)
    onnx_path = os.path.join(a.dir, a.model + ".onnx")
    indir = os.path.join(a.dir, a.model + ".in")
    if not os.path.exists(onnx_path):
        os.makedirs(indir, exist_ok=True)
        for n, t in args.items():
            np.save(os.path.join(indir, n + ".npy"), t.numpy())
        with torch.no_grad():
            out = model(*args.values())
        np.save(os.path.join(a.dir, a.model + ".ref.npy"), out.float().numpy())
        export(model, args, onnx_path, **options)
    print("torch-version %s" % torch.__version__, flush=True)
    if not a.no_time:
        timing(model, args, [int(t) for t in a.threads.split(",") if t], a.repeat,
               a.cap, a.model)
    return 0


def run(main_fn, prog):
    """main_fn(argv)'s exit status, or 1 with an error line naming prog."""
    try:
        return main_fn(sys.argv[1:])
    except Exception as e:
        sys.stderr.write("%s: error: %s: %s\n" % (prog, type(e).__name__, e))
        return 1


if __name__ == "__main__":
    sys.exit(run(main, PROG))
