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
    bert                   a BERT-like encoder: token ids (int64, 0 pads the
                           end) -> word + position embeddings, LayerNorm,
                           2 nn.TransformerEncoder layers (GELU) with the
                           padding as key mask, masked mean pooling
    bert768                the same at BERT-base's width: 4 layers of 768
                           (12 heads, 3072 wide MLP), 128 tokens
    gpt                    a GPT-style decoder: embeddings, 2 pre-norm blocks
                           of causal self-attention (a constant mask) and a
                           tanh-GELU MLP, logits through the tied embedding
    audio                  a 1-D conv audio net on 1x1x16000 samples: strided
                           Conv1d, GroupNorm, GELU, dilated, grouped and
                           depthwise Conv1d, adaptive pooling, Linear
    yolo                   a YOLO-like detector: Conv/BN/SiLU, C2f blocks
                           (Split, Concat), SPPF (MaxPool 5x5 three times),
                           nearest and bilinear upsampling, a 3-scale head
    mixer                  MLP-Mixer: patch Conv 16x16/16, token and channel
                           MLPs (LayerNorm, GELU, transposes)
    acts                   PReLU, LeakyReLU, Hardswish, Hardsigmoid, ReLU6 /
                           clamp (Clip), reflect and replicate Pad,
                           InstanceNorm, bilinear align_corners Upsample,
                           expand / repeat (Expand, Tile), mean and L2 norm
                           (ReduceMean, ReduceL2), dilated and grouped Conv1d
    llama                  a LLaMA-style decoder block pair: RMSNorm (Pow,
                           ReduceMean, Sqrt), rotary embeddings computed at
                           run time (Sin, Cos, Slice, Neg, Concat), causal
                           attention, SwiGLU MLP
    pointnet               PointNet: 1x1 Conv1d on 1x3x1024 points, a
                           learned 3x3 transform (batched MatMul), max over
                           points (ReduceMax), BatchNorm1d
    tcn                    a WaveNet-like stack: causal dilated Conv1d (left
                           Pad), gated tanh * sigmoid, residual and skip sums
    dlrm                   a DLRM-like recommender: dense MLP, 4 Embedding
                           lookups, pairwise dot products (batched MatMul,
                           Gather of the upper triangle), top MLP, sigmoid

Any of them with suffixes, in this order: MODEL_opN exports at opset N
(e.g. 17: ONNX's LayerNormalization; 11 and 9: the older forms of Resize,
Upsample, Slice, Split ...), MODEL_nofold without torch's constant folding
(the shape arithmetic stays in the graph), MODEL_initin with the
initializers listed as graph inputs too (keep_initializers_as_inputs, as
older exporters wrote them), MODEL_dyn with a dynamic batch dimension
("batch").  llama needs an opset >= 14 (Trilu): llama_op17.

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
SMALL = ["lstm", "gru", "unet", "norms", "misc", "bert", "bert768", "gpt", "audio", "yolo", "mixer",
         "acts", "llama", "pointnet", "tcn", "dlrm"]
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

    class Bert(nn.Module):
        def __init__(self, vocab=1000, d=128, T=64, heads=4, layers=2):
            super().__init__()
            self.word = nn.Embedding(vocab, d, padding_idx=0)
            self.pos = nn.Embedding(T, d)
            self.norm = nn.LayerNorm(d)
            layer = nn.TransformerEncoderLayer(d, heads, 4 * d, dropout=0.0, activation="gelu",
                                               batch_first=True)
            self.enc = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
            self.head = nn.Linear(d, 2)

        def forward(self, ids):
            pad = ids == 0
            pos = torch.arange(ids.shape[1]).unsqueeze(0)
            h = self.norm(self.word(ids) + self.pos(pos))
            h = self.enc(h, src_key_padding_mask=pad)
            keep = (~pad).unsqueeze(-1).float()
            return self.head((h * keep).sum(1) / keep.sum(1))

    class GptBlock(nn.Module):
        def __init__(self, d, heads, T):
            super().__init__()
            self.heads = heads
            self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
            self.fc, self.out = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
            self.register_buffer("causal", torch.tril(torch.ones(T, T, dtype=torch.bool)))

        def forward(self, x):
            b, t, c = x.shape
            q, k, v = self.qkv(self.ln1(x)).split(c, dim=2)
            q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2)
                       for z in (q, k, v))
            a = (q @ k.transpose(-2, -1)) * (1.0 / (c // self.heads) ** 0.5)
            a = a.masked_fill(~self.causal[:t, :t], float("-inf")).softmax(-1)
            x = x + self.proj((a @ v).transpose(1, 2).reshape(b, t, c))
            return x + self.out(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))

    class Gpt(nn.Module):
        def __init__(self, vocab=512, d=128, T=64):
            super().__init__()
            self.word, self.pos = nn.Embedding(vocab, d), nn.Embedding(T, d)
            self.blocks = nn.Sequential(GptBlock(d, 4, T), GptBlock(d, 4, T))
            self.ln = nn.LayerNorm(d)

        def forward(self, ids):
            pos = torch.arange(ids.shape[1]).unsqueeze(0)
            h = self.ln(self.blocks(self.word(ids) + self.pos(pos)))
            return h @ self.word.weight.t()

    class Audio(nn.Module):
        def __init__(self):
            super().__init__()
            self.c1 = nn.Conv1d(1, 32, 80, stride=16, padding=32)
            self.gn = nn.GroupNorm(8, 32)
            self.c2 = nn.Conv1d(32, 64, 3, padding=2, dilation=2)
            self.c3 = nn.Conv1d(64, 64, 5, stride=2, padding=2, groups=4)
            self.dw = nn.Conv1d(64, 64, 9, padding=8, dilation=2, groups=64)
            self.bn = nn.BatchNorm1d(64)
            self.pw = nn.Conv1d(64, 128, 1)
            self.head = nn.Linear(128, 12)

        def forward(self, x):
            y = F.gelu(self.gn(self.c1(x)))
            y = F.gelu(self.c2(y))
            y = F.relu(self.c3(y))
            y = y + F.gelu(self.bn(self.dw(y)))
            y = F.adaptive_avg_pool1d(self.pw(y), 1).flatten(1)
            return self.head(y)

    def cbs(i, o, k=1, s=1):
        return nn.Sequential(nn.Conv2d(i, o, k, s, k // 2, bias=False), nn.BatchNorm2d(o),
                             nn.SiLU())

    class C2f(nn.Module):
        def __init__(self, i, o, n=1):
            super().__init__()
            self.h = o // 2
            self.cv1 = cbs(i, o)
            self.m = nn.ModuleList(nn.Sequential(cbs(self.h, self.h, 3), cbs(self.h, self.h, 3))
                                   for _ in range(n))
            self.cv2 = cbs((2 + n) * self.h, o)

        def forward(self, x):
            ys = list(self.cv1(x).split((self.h, self.h), 1))
            for m in self.m:
                ys.append(ys[-1] + m(ys[-1]))
            return self.cv2(torch.cat(ys, 1))

    class Sppf(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.cv1, self.cv2 = cbs(c, c // 2), cbs(2 * c, c)
            self.pool = nn.MaxPool2d(5, 1, 2)

        def forward(self, x):
            a = self.cv1(x)
            b = self.pool(a)
            c = self.pool(b)
            return self.cv2(torch.cat([a, b, c, self.pool(c)], 1))

    class Yolo(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Sequential(cbs(3, 16, 3, 2), cbs(16, 32, 3, 2), C2f(32, 32))
            self.p3 = nn.Sequential(cbs(32, 64, 3, 2), C2f(64, 64, 2))
            self.p4 = nn.Sequential(cbs(64, 128, 3, 2), C2f(128, 128))
            self.p5 = nn.Sequential(cbs(128, 128, 3, 2), Sppf(128))
            self.up4, self.up3 = C2f(256, 128), C2f(192, 64)
            self.heads = nn.ModuleList(nn.Conv2d(c, 4 + 16, 1) for c in (64, 128, 128))

        def forward(self, x):
            p3 = self.p3(self.stem(x))
            p4 = self.p4(p3)
            p5 = self.p5(p4)
            u4 = self.up4(torch.cat([F.interpolate(p5, scale_factor=2.0, mode="nearest"), p4], 1))
            u3 = self.up3(torch.cat([F.interpolate(u4, scale_factor=2.0, mode="bilinear",
                                                   align_corners=False), p3], 1))
            outs = [h(f).flatten(2) for h, f in zip(self.heads, (u3, u4, p5))]
            box, cls = torch.cat(outs, 2).split((4, 16), 1)
            return torch.cat([box, cls.sigmoid()], 1)

    class MixerBlock(nn.Module):
        def __init__(self, tokens, d):
            super().__init__()
            self.n1, self.n2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.tok = nn.Sequential(nn.Linear(tokens, 64), nn.GELU(), nn.Linear(64, tokens))
            self.ch = nn.Sequential(nn.Linear(d, 256), nn.GELU(), nn.Linear(256, d))

        def forward(self, x):
            x = x + self.tok(self.n1(x).transpose(1, 2)).transpose(1, 2)
            return x + self.ch(self.n2(x))

    class Mixer(nn.Module):
        def __init__(self):
            super().__init__()
            self.patch = nn.Conv2d(3, 128, 16, 16)
            self.blocks = nn.Sequential(*[MixerBlock(36, 128) for _ in range(4)])
            self.norm = nn.LayerNorm(128)
            self.head = nn.Linear(128, 10)

        def forward(self, x):
            x = self.patch(x).flatten(2).transpose(1, 2)
            return self.head(self.norm(self.blocks(x)).mean(1))

    class Acts(nn.Module):
        def __init__(self):
            super().__init__()
            self.c1 = nn.Conv2d(3, 16, 3)
            self.prelu = nn.PReLU(16)
            self.c2 = nn.Conv2d(16, 16, 3)
            self.inorm = nn.InstanceNorm2d(16, affine=True)
            self.c3 = nn.Conv2d(16, 8, 3, padding=1, padding_mode="replicate")
            self.d1 = nn.Conv1d(8, 16, 3, dilation=3, groups=2)

        def forward(self, x):
            y = self.prelu(self.c1(F.pad(x, (1, 1, 1, 1), mode="reflect")))
            y = F.leaky_relu(self.c2(F.pad(y, (2, 0, 1, 1), mode="replicate")), 0.1)
            y = F.hardswish(self.inorm(y)) + F.hardsigmoid(y)
            y = F.interpolate(F.relu6(self.c3(y)), size=(45, 37), mode="bilinear",
                              align_corners=True)
            y = y.clamp(-0.3, 0.7) * y.mean((2, 3), keepdim=True).expand(-1, -1, 45, 37)
            z = self.d1(y.flatten(2))
            z = z / torch.norm(z, p=2, dim=2, keepdim=True)
            w = y.mean(3).repeat(1, 2, 3)
            return torch.cat([z.flatten(1), w.flatten(1)], 1)

    class RmsNorm(nn.Module):
        def __init__(self, d):
            super().__init__()
            self.weight = nn.Parameter(1 + 0.1 * torch.randn(d))

        def forward(self, x):
            return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * self.weight

    def rotate(x, cos, sin):
        half = x.shape[-1] // 2
        x1, x2 = x[..., :half], x[..., half:]
        return x * cos + torch.cat([-x2, x1], -1) * sin

    class LlamaBlock(nn.Module):
        def __init__(self, d, heads):
            super().__init__()
            self.heads = heads
            self.n1, self.n2 = RmsNorm(d), RmsNorm(d)
            self.q, self.k = nn.Linear(d, d, bias=False), nn.Linear(d, d, bias=False)
            self.v, self.o = nn.Linear(d, d, bias=False), nn.Linear(d, d, bias=False)
            self.gate, self.up = nn.Linear(d, 344, bias=False), nn.Linear(d, 344, bias=False)
            self.down = nn.Linear(344, d, bias=False)

        def forward(self, x, cos, sin):
            b, t, c = x.shape
            hd = c // self.heads
            h = self.n1(x)
            q, k, v = (p(h).view(b, t, self.heads, hd).transpose(1, 2)
                       for p in (self.q, self.k, self.v))
            q, k = rotate(q, cos, sin), rotate(k, cos, sin)
            a = q @ k.transpose(2, 3) / hd ** 0.5
            causal = torch.ones(t, t).triu(1) * -1e9
            a = (a + causal).softmax(-1)
            x = x + self.o((a @ v).transpose(1, 2).reshape(b, t, c))
            h = self.n2(x)
            return x + self.down(F.silu(self.gate(h)) * self.up(h))

    class Llama(nn.Module):
        def __init__(self, vocab=512, d=128):
            super().__init__()
            self.word = nn.Embedding(vocab, d)
            self.blocks = nn.ModuleList([LlamaBlock(d, 4), LlamaBlock(d, 4)])
            self.norm, self.head = RmsNorm(d), nn.Linear(d, vocab, bias=False)

        def forward(self, ids):
            t = ids.shape[1]
            inv = 1.0 / 10000 ** (torch.arange(0, 32, 2).float() / 32)
            ang = torch.arange(t).float()[:, None] * inv[None, :]
            ang = torch.cat([ang, ang], -1)
            cos, sin = ang.cos(), ang.sin()
            h = self.word(ids)
            for blk in self.blocks:
                h = blk(h, cos, sin)
            return self.head(self.norm(h))

    class PointNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.t1, self.t2 = nn.Conv1d(3, 64, 1), nn.Conv1d(64, 256, 1)
            self.tfc = nn.Linear(256, 9)
            self.c1, self.b1 = nn.Conv1d(3, 64, 1), nn.BatchNorm1d(64)
            self.c2, self.b2 = nn.Conv1d(64, 128, 1), nn.BatchNorm1d(128)
            self.c3, self.b3 = nn.Conv1d(128, 512, 1), nn.BatchNorm1d(512)
            self.head = nn.Sequential(nn.Linear(512, 128), nn.ReLU(), nn.Linear(128, 10))

        def forward(self, x):
            t = F.relu(self.t2(F.relu(self.t1(x)))).max(2)[0]
            m = self.tfc(t).view(-1, 3, 3) + torch.eye(3)
            x = torch.bmm(m, x)
            x = F.relu(self.b1(self.c1(x)))
            x = F.relu(self.b2(self.c2(x)))
            x = self.b3(self.c3(x)).amax(2)
            return self.head(x).log_softmax(-1)

    class Tcn(nn.Module):
        def __init__(self, c=32, layers=6):
            super().__init__()
            self.inp = nn.Conv1d(1, c, 1)
            self.filt = nn.ModuleList(nn.Conv1d(c, c, 2, dilation=2 ** i) for i in range(layers))
            self.gate = nn.ModuleList(nn.Conv1d(c, c, 2, dilation=2 ** i) for i in range(layers))
            self.res = nn.ModuleList(nn.Conv1d(c, c, 1) for _ in range(layers))
            self.out = nn.Conv1d(c, 8, 1)

        def forward(self, x):
            x = self.inp(x)
            skip = 0
            for i, (f, g, r) in enumerate(zip(self.filt, self.gate, self.res)):
                y = F.pad(x, (2 ** i, 0))
                z = torch.tanh(f(y)) * torch.sigmoid(g(y))
                skip = skip + z
                x = x + r(z)
            return self.out(F.relu(skip))

    class Dlrm(nn.Module):
        def __init__(self):
            super().__init__()
            self.bottom = nn.Sequential(nn.Linear(13, 64), nn.ReLU(), nn.Linear(64, 32), nn.ReLU())
            self.emb = nn.ModuleList(nn.Embedding(n, 32) for n in (100, 50, 200, 30))
            self.top = nn.Sequential(nn.Linear(32 + 10, 64), nn.ReLU(), nn.Linear(64, 1))
            self.register_buffer("upper", torch.triu_indices(5, 5, 1)[0] * 5 +
                                 torch.triu_indices(5, 5, 1)[1])

        def forward(self, x):
            dense = self.bottom(x[:, :13])
            cat = x[:, 13:].long()
            feats = [dense] + [e(cat[:, i]) for i, e in enumerate(self.emb)]
            z = torch.stack(feats, 1)
            inter = torch.bmm(z, z.transpose(1, 2)).flatten(1)[:, self.upper]
            return torch.sigmoid(self.top(torch.cat([dense, inter], 1)))

    # (a generator of their own: the models above keep their inputs)
    g = torch.Generator().manual_seed(2)
    ids = torch.randint(1, 1000, (1, 64), generator=g)
    ids[0, 50:] = 0
    later = {
        "bert": (Bert, ids),
        "bert768": (lambda: Bert(1000, 768, 128, 12, 4), torch.cat([ids, ids], 1)),
        "gpt": (Gpt, torch.randint(0, 512, (1, 64), generator=g)),
        "audio": (Audio, torch.randn(1, 1, 16000, generator=g)),
        "yolo": (Yolo, torch.randn(1, 3, 160, 160, generator=g)),
        "mixer": (Mixer, torch.randn(1, 3, 96, 96, generator=g)),
        "acts": (Acts, torch.randn(1, 3, 40, 32, generator=g)),
        "llama": (Llama, torch.randint(0, 512, (1, 48), generator=g)),
        "pointnet": (PointNet, torch.randn(1, 3, 1024, generator=g)),
        "tcn": (Tcn, torch.randn(1, 1, 4000, generator=g)),
        "dlrm": (Dlrm, torch.cat([torch.randn(4, 13, generator=g),
                                  torch.stack([torch.randint(0, n, (4,), generator=g)
                                               for n in (100, 50, 200, 30)], 1).float()], 1)),
    }
    g = torch.Generator().manual_seed(1)
    return dict(later, **{
        "lstm": (Lstm, torch.randn(1, 16, 32, generator=g)),
        "gru": (Gru, torch.randn(12, 1, 24, generator=g)),
        "unet": (UNet, torch.randn(1, 3, 64, 64, generator=g)),
        "norms": (Norms, torch.randn(1, 3, 64, 64, generator=g)),
        "misc": (Misc, torch.randn(1, 16, 32, generator=g)),
    })


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
    return instantiate(cls), x


def instantiate(cls):
    """cls() in eval mode, its parameters from torch.manual_seed(0) and its
    batch norms given random statistics (bench/new_export.py's models too)."""
    import torch
    torch.manual_seed(0)
    model = cls().eval()
    for m in model.modules():
        # random statistics, so that the normalizations compute something
        if isinstance(m, (torch.nn.BatchNorm1d, torch.nn.BatchNorm2d)):
            m.running_mean.uniform_(-0.5, 0.5)
            m.running_var.uniform_(0.5, 2.0)
    return model


def variant(name):
    """The model of a name with suffixes (see the top) and the keyword
    arguments of bench/ort_export.py's export (opset and torch.onnx.export's
    options) that they ask for."""
    base, opts = name, {"opset": 13}
    if base.endswith("_dyn"):
        base, opts["dynamic_axes"] = base[:-4], {"image": {0: "batch"}, "output": {0: "batch"}}
    if base.endswith("_initin"):
        base, opts["keep_initializers_as_inputs"] = base[:-7], True
    if base.endswith("_nofold"):
        base, opts["do_constant_folding"] = base[:-7], False
    stem, _, n = base.rpartition("_op")
    if stem and n.isdigit():
        base, opts["opset"] = stem, int(n)
    return base, opts


def main(argv):
    if len(argv) != 2:
        sys.stderr.write("usage: %s MODEL DIR\n" % PROG)
        return 2
    import torch
    name, out = argv
    base, opts = variant(name)
    model, x = build(base)
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
    ort_export.export(model, {"image": x}, onnx_path, **opts)
    return 0


if __name__ == "__main__":
    sys.exit(ort_export.run(main, PROG))
