#!/usr/bin/python3
"""bench/ort_export.py — one model as ONNX, with its input, PyTorch's output
and PyTorch's latency, for bench/ort.sh.

    /usr/bin/python3 bench/ort_export.py MODEL DIR [--tec ./tec]
        [--threads 1,2] [--repeat 20] [--cap 20] [--no-time]

MODEL is a model of bench/unseen_export.py (q_resnet18, lstm, unet ...:
its model and input), of this script's own (sr_net, detr_like, ops_mix,
below), or of tec's zoo (resnet18 resnet50 mobilenet_v2
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
seeded normal distribution).  An optical-flow model (raft_small,
raft_large; opset 16, GridSample) takes two 1x3x224x224 frames, image1
and image2, and is exported with the flow of its last refinement as its
output; a detector (ssdlite320_mobilenet_v3_large, fcos_resnet50_fpn ...)
takes one 1x3x224x224 image and is exported with the boxes of its first
result (how many depends on the data: tec refuses such a model, saying
which node).  Writes

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

Models of this script's own (custom_models), layers tec's other exports
leave out, each a few ms:

    sr_net     super-resolution: PixelUnshuffle (SpaceToDepth-like
               Reshape/Transpose), PixelShuffle (DepthToSpace), bicubic
               and fractional nearest Resize, grouped and dilated
               ConvTranspose2d, channel attention, Mish, Softplus
    detr_like  a DETR-like detector: conv stem, sine position encoding,
               a pre-norm nn.TransformerEncoderLayer, an
               nn.TransformerDecoderLayer whose learned queries attend to
               the encoder (cross-attention), an nn.MultiheadAttention
               with kdim/vdim (separate projections) and a bool mask,
               LogSoftmax and sigmoid heads
    ops_mix    pooling and odd elementwise forms: MaxPool ceil_mode and
               dilation, AvgPool count_include_pad=False, LPPool2d,
               AdaptiveMaxPool2d, torch.roll, F.unfold, flip, SELU, CELU,
               Hardtanh, Softsign, Tanhshrink, LogSigmoid, GLU, std,
               ConvTranspose1d, Conv3d, MaxPool3d, trilinear Upsample,
               F.normalize, LocalResponseNorm, a channel shuffle

A torchvision model's name takes bench/unseen_export.py's suffixes too
(convnext_tiny_op17: its LayerNormalization nodes; shufflenet_v2_x1_0_nofold:
the shape arithmetic in the graph; mnasnet0_5_dyn: a dynamic batch).

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
# custom_models' names (PyTorch is imported only to build them)
CUSTOM = ["sr_net", "detr_like", "ops_mix"]
# The opset of a model's export where 13 lacks one of its operators
# (torch.triu is ONNX Trilu from opset 14).
# RAFT's bilinear sampling of its correlation pyramid is ONNX GridSample,
# from opset 16.
OPSET = {"gpt2": 14, "raft_small": 16, "raft_large": 16}
# Models whose signal fades with PyTorch's default initialization:
# deeplabv3_mobilenet_v3_large's activations shrink ~10x per backbone stage,
# to 1e-9 at its head, so that its output is its last bias (the same at
# every pixel) and a comparison with it tests nothing.  Their batch norms
# take the statistics of a batch of random inputs (fit_batchnorm).
FIT_BN = {"deeplabv3_mobilenet_v3_large"}
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


def FinalFlow(inner):
    """inner (a RAFT), returning only its last flow estimate (it returns
    the list of all of them)."""
    import torch

    class Final(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = inner

        def forward(self, image1, image2):
            return self.inner(image1, image2)[-1]

    return Final()


def DetectionBoxes(inner):
    """inner (a torchvision detector, which takes a list of images and
    returns a list of dicts), taking a batch of one image and returning
    the boxes of its first dict."""
    import torch

    class Boxes(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = inner

        def forward(self, image):
            return self.inner([image[0]])[0]["boxes"]

    return Boxes()


def fit_batchnorm(model, shape):
    """Sets every batch norm's running mean and variance to those of its
    input for a batch of two random inputs of shape's size (two: a batch
    norm of a 1x1 map, as in an ASPP's pooling branch, needs more than one
    value per channel), so that each one's output has mean 0 and variance
    1 per channel; the rest of the model stays in eval mode (dropout off)."""
    import torch
    norms = [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    for m in norms:
        m.reset_running_stats()
        m.momentum = None   # a cumulative average: after one batch, its statistics
        m.train()
    with torch.no_grad():
        model(torch.randn(2, *shape[1:], generator=torch.Generator().manual_seed(5)))
    model.eval()


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
    g = torch.Generator().manual_seed(1)
    if not hasattr(tvm, name) and hasattr(tvm.optical_flow, name):
        # an optical-flow model (raft_small, raft_large): two frames in, the
        # flow of its last refinement (of 12) out, at the input's size
        return FinalFlow(getattr(tvm.optical_flow, name)(weights=None)).eval(), {
            "image1": torch.randn(*shape, generator=g),
            "image2": torch.randn(*shape, generator=torch.Generator().manual_seed(2))}
    if not hasattr(tvm, name) and hasattr(tvm.detection, name):
        # a detector (ssdlite320_mobilenet_v3_large, fcos_resnet50_fpn ...):
        # one image in, the boxes it keeps (after its score threshold and
        # non-maximum suppression: as many as the data leave) out
        model = getattr(tvm.detection, name)(weights=None, weights_backbone=None).eval()
        return DetectionBoxes(model).eval(), {"image": torch.randn(*shape, generator=g)}
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
    if name in FIT_BN:
        fit_batchnorm(model, shape)
    if name.startswith("vit_"):
        # ViT's head is initialized to zeros, which would make every
        # output 0: random weights, as a trained head has.
        torch.nn.init.normal_(model.heads.head.weight, std=0.02)
        torch.nn.init.normal_(model.heads.head.bias, std=0.02)
    return model, {"image": torch.randn(*shape, generator=g)}


def unseen_models():
    """The names of bench/unseen_export.py's models (quantized torchvision,
    LSTM, GRU, U-Net ...), which this script exports and times too."""
    import unseen_export
    return unseen_export.QUANTIZED + list(unseen_export.SMALL)


def custom_models():
    """This script's own small models (see the top): name -> (builder,
    input).  Layers the torchvision and bench/unseen_export.py models leave
    out."""
    import math
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class ChannelAttention(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.fc1, self.fc2 = nn.Conv2d(c, c // 4, 1), nn.Conv2d(c // 4, c, 1)

        def forward(self, x):
            return x * torch.sigmoid(self.fc2(F.relu(self.fc1(F.adaptive_avg_pool2d(x, 1)))))

    class SrNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.unshuffle = nn.PixelUnshuffle(2)
            self.head = nn.Conv2d(12, 32, 3, padding=1)
            self.body = nn.Sequential(nn.Conv2d(32, 32, 3, padding=1), nn.Mish(),
                                      nn.Conv2d(32, 32, 3, padding=2, dilation=2),
                                      ChannelAttention(32))
            self.up = nn.ConvTranspose2d(32, 32, 4, stride=2, padding=1, groups=4)
            self.updil = nn.ConvTranspose2d(32, 16, 3, stride=1, padding=2, dilation=2)
            self.tail = nn.Conv2d(16, 3 * 4, 3, padding=1)
            self.shuffle = nn.PixelShuffle(2)

        def forward(self, x):
            y = self.head(self.unshuffle(x))
            y = y + self.body(y)
            y = F.softplus(self.updil(self.up(y)))
            y = self.shuffle(self.tail(y))
            base = F.interpolate(x, scale_factor=2, mode="bicubic", align_corners=False)
            near = F.interpolate(x, size=(2 * x.shape[2], 2 * x.shape[3]), mode="nearest")
            odd = F.interpolate(x, scale_factor=1.5, mode="nearest")
            return torch.cat([y + base, near, F.pad(odd, (0, 32, 0, 32))[:, :, :128, :128]], 1)

    class SineEmbedding(nn.Module):
        def forward(self, h, w, d):
            ys = torch.arange(h).float()[:, None].expand(h, w)
            xs = torch.arange(w).float()[None, :].expand(h, w)
            freq = 10000 ** (torch.arange(d // 4).float() / (d // 4))
            parts = [ys[..., None] / freq, xs[..., None] / freq]
            return torch.cat([p.sin() for p in parts] + [p.cos() for p in parts], -1).flatten(0, 1)

    class DetrLike(nn.Module):
        def __init__(self, d=128, queries=20, classes=11):
            super().__init__()
            self.stem = nn.Sequential(nn.Conv2d(3, 32, 7, 4, 3), nn.BatchNorm2d(32), nn.ReLU(),
                                      nn.Conv2d(32, 64, 3, 2, 1), nn.BatchNorm2d(64), nn.ReLU(),
                                      nn.Conv2d(64, d, 3, 2, 1))
            self.pos = SineEmbedding()
            self.enc = nn.TransformerEncoderLayer(d, 4, 256, dropout=0.0, batch_first=True,
                                                  norm_first=True)
            self.dec = nn.TransformerDecoderLayer(d, 4, 256, dropout=0.0, batch_first=True,
                                                  activation="gelu")
            self.queries = nn.Parameter(torch.randn(queries, d))
            self.mem = nn.MultiheadAttention(d, 4, kdim=64, vdim=96, batch_first=True)
            self.kproj, self.vproj = nn.Linear(d, 64), nn.Linear(d, 96)
            self.cls, self.box = nn.Linear(d, classes), nn.Linear(d, 4)

        def forward(self, x):
            f = self.stem(x)
            b, d, h, w = f.shape
            src = f.flatten(2).transpose(1, 2) + self.pos(h, w, d)[None]
            mem = self.enc(src)
            q = self.queries[None].expand(b, -1, -1)
            t = self.dec(q, mem)
            # (a float mask exports as a Cast to double before the Softmax,
            # an export ONNX Runtime refuses too)
            mask = (torch.arange(h * w) % 7 == 3)[None, :].expand(t.shape[1], h * w)
            t2, _ = self.mem(t, self.kproj(mem), self.vproj(mem), attn_mask=mask)
            t = t + t2
            return torch.cat([self.cls(t).log_softmax(-1), self.box(t).sigmoid()], -1)

    class OpsMix(nn.Module):
        def __init__(self):
            super().__init__()
            self.c1 = nn.Conv2d(3, 16, 3, padding=1)
            self.lrn = nn.LocalResponseNorm(5)
            self.lp = nn.LPPool2d(2, 3, stride=2)
            self.c2 = nn.Conv2d(16, 32, 3, padding=1)
            self.t1 = nn.ConvTranspose1d(32, 8, 4, stride=3, padding=1, output_padding=2)
            self.c3 = nn.Conv3d(1, 4, 3, padding=(0, 1, 1))
            self.fc = nn.Linear(288, 24)

        def forward(self, x):
            y = self.c1(x)
            a = F.max_pool2d(y, 3, stride=2, ceil_mode=True)                        # 16x17x17
            b = F.avg_pool2d(y, 3, stride=2, padding=1, count_include_pad=False)    # 16x17x17
            c = F.max_pool2d(F.pad(y, (1, 1, 1, 1)), 3, 2, 1, 2)               # 16x17x17
            d = self.lp(F.pad(y, (1, 1, 1, 1)))                                     # 16x17x17
            y = F.selu(a) + F.celu(b, 0.5) + F.hardtanh(c, -0.5, 0.5) + F.softsign(d)
            y = self.lrn(y).view(1, 4, 4, 17, 17).transpose(1, 2).reshape(1, 16, 17, 17)
            y = torch.roll(y, shifts=(2, -3), dims=(2, 3)) + y.flip(3)
            y = F.tanhshrink(self.c2(y)) + F.logsigmoid(y.repeat(1, 2, 1, 1))
            y = F.glu(y, 1)                                                        # 16x17x17
            p = F.unfold(y, 2, stride=2)                                            # 64x64
            s = p.std(1, keepdim=True) + F.adaptive_max_pool2d(y, 1).mean()
            z = self.t1(F.normalize(p + s, dim=1)[:, :32])                          # 8x192
            v = self.c3(y[:, None, :3])                                             # 4x1x17x17
            v = F.max_pool3d(v, (1, 2, 2), ceil_mode=True)                          # 4x1x9x9
            v = F.interpolate(v, size=(2, 6, 6), mode="trilinear", align_corners=False)
            return torch.cat([self.fc(v.flatten(1)), z.amax(2).flatten(1)], 1)

    g = torch.Generator().manual_seed(3)
    return {
        "sr_net": (SrNet, torch.randn(1, 3, 64, 64, generator=g)),
        "detr_like": (DetrLike, torch.randn(1, 3, 256, 320, generator=g)),
        "ops_mix": (OpsMix, torch.randn(1, 3, 34, 34, generator=g)),
    }


def custom_model(name):
    """A model of custom_models and its input, parameters from
    torch.manual_seed(0) (batch norms given random statistics)."""
    import torch
    cls, x = custom_models()[name]
    torch.manual_seed(0)
    model = cls().eval()
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.running_mean.uniform_(-0.5, 0.5)
            m.running_var.uniform_(0.5, 2.0)
    return model, {"image": x}


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
    elif a.model in CUSTOM:
        model, args = custom_model(a.model)
    elif unseen_export.variant(a.model)[0] in unseen_models():
        base, options = unseen_export.variant(a.model)
        model, x = unseen_export.build(base)
        args = {"image": x}
    else:
        # a torchvision model, with bench/unseen_export.py's suffixes
        # (_opN, _nofold, _initin, _dyn) for the forms other exporters write
        base, options = unseen_export.variant(a.model)
        if base == a.model:
            options["opset"] = OPSET.get(base, options["opset"])
        model, args = torchvision_model(base)
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
