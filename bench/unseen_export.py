#!/usr/bin/python3
"""bench/unseen_export.py — models outside torchvision's float classifiers
as ONNX, with their input and PyTorch's output, in bench/ort_export.py's
layout (DIR/MODEL.onnx, DIR/MODEL.in/image.npy, DIR/MODEL.ref.npy), so that
bench/ort.sh and testsuite/models/check-torch.sh run them like the others.

    /usr/bin/python3 bench/unseen_export.py MODEL DIR

MODEL is one of

    q_resnet18 q_mobilenet_v2 q_mobilenet_v3_large q_googlenet
    q_shufflenet_v2_x1_0   torchvision.models.quantization's models with
                           quantize=True (random weights, fbgemm, calibrated
                           on the seeded input): QuantizeLinear /
                           DequantizeLinear graphs around float ops.  Their
                           .ref.npy is the quantized PyTorch model's output,
                           which ONNX Runtime's need not match exactly
                           (rounding of requantization): compare int8
                           models to ONNX Runtime's output.
    lstm                   a 2-layer LSTM over 16 steps and a Linear head
    gru                    a bidirectional GRU and a Linear head
    unet                   a small U-Net: Conv/BN/ReLU, MaxPool,
                           ConvTranspose, bilinear and nearest Upsample
                           (Resize), Concat
    norms                  InstanceNorm2d, GroupNorm, LayerNorm over
                           channels-last, with PReLU and ELU
    misc                   Einsum, GatherElements (torch.gather), Where,
                           masked_fill, CumSum, ArgMax, TopK and shapes read
                           from the input (Shape / Gather / Concat / Reshape)

An existing DIR/MODEL.onnx is kept (delete it to export again).  Needs
Debian's python3-torch and python3-torchvision (torch 1.13, opset 13).
"""
import os
import sys

import numpy as np

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ort_export  # noqa: E402

PROG = "unseen_export.py"
# (small_models' names; PyTorch is imported only to build them)
SMALL = ["lstm", "gru", "unet", "norms", "misc"]
QUANTIZED = ["q_resnet18", "q_mobilenet_v2", "q_mobilenet_v3_large", "q_googlenet",
             "q_shufflenet_v2_x1_0"]


def quantized(name, x):
    import torch
    import torchvision.models.quantization as q
    torch.manual_seed(0)
    kw = {"aux_logits": False, "init_weights": True} if name == "q_googlenet" else {}
    # quantize=True: torchvision prepares the float model, calibrates its
    # observers on one random batch and converts it; calibrate on x instead
    # so that the scales fit the input the test runs.
    model = getattr(q, name[2:])(weights=None, quantize=False, **kw)
    # Random weights make MobileNet's activations vanish (1e-9 at the
    # logits, all codes 0 once quantized): batch norms that normalize
    # what they see on x (their statistics taken from one training-mode
    # pass) keep every layer's values near unit size.
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.momentum = 1.0
    with torch.no_grad():
        model.train()(x)
    model.eval()
    model.fuse_model()
    model.qconfig = torch.ao.quantization.get_default_qconfig("fbgemm")
    torch.ao.quantization.prepare(model, inplace=True)
    with torch.no_grad():
        model(x)
    torch.ao.quantization.convert(model, inplace=True)
    return model


def small_models():
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class Lstm(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = nn.LSTM(32, 64, num_layers=2, batch_first=True)
            self.head = nn.Linear(64, 10)

        def forward(self, x):
            y, _ = self.rnn(x)
            return self.head(y[:, -1])

    class Gru(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = nn.GRU(24, 48, bidirectional=True)
            self.head = nn.Linear(96, 5)

        def forward(self, x):
            y, h = self.rnn(x)
            return self.head(y) + self.head(h.transpose(0, 1).reshape(1, -1))

    def block(i, o):
        return nn.Sequential(nn.Conv2d(i, o, 3, padding=1), nn.BatchNorm2d(o), nn.ReLU(),
                             nn.Conv2d(o, o, 3, padding=1), nn.BatchNorm2d(o), nn.ReLU())

    class UNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.e1, self.e2, self.e3 = block(3, 16), block(16, 32), block(32, 64)
            self.up2 = nn.ConvTranspose2d(64, 32, 2, stride=2)
            self.d2 = block(64, 32)
            self.up1 = nn.ConvTranspose2d(32, 16, 3, stride=2, padding=1, output_padding=1)
            self.d1 = block(48, 16)
            self.out = nn.Conv2d(16, 4, 1)

        def forward(self, x):
            a = self.e1(x)
            b = self.e2(F.max_pool2d(a, 2))
            c = self.e3(F.max_pool2d(b, 2))
            d = self.d2(torch.cat([self.up2(c), b], 1))
            u = F.interpolate(d, scale_factor=2, mode="bilinear", align_corners=False)
            e = self.d1(torch.cat([self.up1(d), u[:, :16] +
                                   F.interpolate(b, scale_factor=2, mode="nearest")[:, :16],
                                   F.interpolate(d, size=a.shape[2:], mode="bilinear",
                                                 align_corners=True)[:, :16]], 1))
            return self.out(e)

    class Norms(nn.Module):
        def __init__(self):
            super().__init__()
            self.c1 = nn.Conv2d(3, 32, 3, stride=2, padding=1)
            self.inorm = nn.InstanceNorm2d(32, affine=True)
            self.c2 = nn.Conv2d(32, 48, 3, padding=1)
            self.gnorm = nn.GroupNorm(6, 48)
            self.prelu = nn.PReLU(48)
            self.lnorm = nn.LayerNorm(48)
            self.c3 = nn.Conv2d(48, 8, 1)
            self.inorm2 = nn.InstanceNorm2d(8)

        def forward(self, x):
            y = F.elu(self.inorm(self.c1(x)))
            y = self.prelu(self.gnorm(self.c2(y)))
            y = self.lnorm(y.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)
            return self.inorm2(self.c3(y))

    class Misc(nn.Module):
        def __init__(self):
            super().__init__()
            self.q = nn.Linear(32, 32)
            self.k = nn.Linear(32, 32)
            self.v = nn.Linear(32, 32)

        def forward(self, x):
            b, t, c = x.shape
            q = self.q(x).view(b, t, 4, c // 4).transpose(1, 2)
            k = self.k(x).view(b, t, 4, c // 4).transpose(1, 2)
            v = self.v(x).view(x.size(0), x.size(1), 4, -1).transpose(1, 2)
            s = torch.einsum("bhqd,bhkd->bhqk", q, k) / (c // 4) ** 0.5
            pos = torch.arange(t)
            mask = pos[:, None] >= pos[None, :]
            s = s.masked_fill(~mask, float("-inf")).softmax(-1)
            y = torch.einsum("bhqk,bhkd->bhqd", s, v).transpose(1, 2).reshape(b, t, c)
            idx = y.argmax(-1, keepdim=True).expand(b, t, 4)
            g = torch.gather(y, 2, idx)
            w = torch.where(g > 0, g, 0.1 * g).cumsum(1)
            top, at = y.flatten(1).topk(8)
            return torch.cat([y.flatten(1), w.reshape(b, -1), top * at.float()], 1)

    g = torch.Generator().manual_seed(1)
    return {
        "lstm": (Lstm, torch.randn(1, 16, 32, generator=g)),
        "gru": (Gru, torch.randn(12, 1, 24, generator=g)),
        "unet": (UNet, torch.randn(1, 3, 64, 64, generator=g)),
        "norms": (Norms, torch.randn(1, 3, 64, 64, generator=g)),
        "misc": (Misc, torch.randn(1, 16, 32, generator=g)),
    }


def build(name):
    import torch
    if name in QUANTIZED:
        g = torch.Generator().manual_seed(1)
        x = torch.randn(1, 3, 224, 224, generator=g)
        return quantized(name, x), x
    models = small_models()
    if name not in models:
        raise ValueError("unknown model %s (one of %s)"
                         % (name, " ".join(QUANTIZED + list(models))))
    cls, x = models[name]
    torch.manual_seed(0)
    model = cls().eval()
    for m in model.modules():
        # random statistics, so that the normalizations compute something
        if isinstance(m, torch.nn.BatchNorm2d):
            m.running_mean.uniform_(-0.5, 0.5)
            m.running_var.uniform_(0.5, 2.0)
    return model, x


def main(argv):
    if len(argv) != 2:
        sys.stderr.write("usage: %s MODEL DIR\n" % PROG)
        return 2
    import torch
    name, out = argv
    model, x = build(name)
    os.makedirs(out, exist_ok=True)
    onnx_path = os.path.join(out, name + ".onnx")
    if os.path.exists(onnx_path):
        return 0
    indir = os.path.join(out, name + ".in")
    os.makedirs(indir, exist_ok=True)
    np.save(os.path.join(indir, "image.npy"), x.numpy())
    with torch.no_grad():
        ref = model(x)
    np.save(os.path.join(out, name + ".ref.npy"), ref.float().numpy())
    ort_export.export(model, {"image": x}, onnx_path, 13)
    return 0


if __name__ == "__main__":
    sys.exit(ort_export.run(main, PROG))
