#!/usr/bin/python3
"""bench/new_export.py — architectures that bench/ort_export.py and
bench/unseen_export.py leave out, as ONNX with their inputs and PyTorch's
output, in their layout (DIR/MODEL.onnx, DIR/MODEL.in/NAME.npy,
DIR/MODEL.ref.npy), for the same measurements (session 27's survey,
bench/results/newmodels_s27.txt).

    /usr/bin/python3 bench/new_export.py MODEL DIR      (MODEL "all": every one)

Random weights (torch.manual_seed(0), batch norms given random statistics),
batch 1, torch.onnx.export at opset 13 (ops_mix2: 14) or with
bench/unseen_export.py's suffixes (MODEL_op17: opset 17, where
LayerNormalization replaces the written-out layer norm; MODEL_nofold, _dyn
...).  MODEL is one of

    clip_text     a CLIP-like text encoder: 77 token ids (int64 input "ids",
                  the end token the largest id) -> token + learned position
                  embeddings, 4 pre-norm layers of d 512 (8 heads) with a
                  causal float mask and QuickGELU (x * sigmoid(1.702 x)),
                  final LayerNorm, the end token's row (ArgMax, Gather) and
                  a projection
    bert_nomask   a BERT-like encoder without a padding mask: 128 ids, d 256,
                  4 nn.TransformerEncoder layers (4 heads, GELU), the first
                  token's row through a tanh pooler
    whisper_enc   a Whisper-like audio encoder: 80 mel bins x 1000 frames ->
                  Conv1d 3 + GELU, Conv1d 3 stride 2 + GELU, sinusoid
                  positions, 4 pre-norm layers of d 384 (6 heads)
    mixer_s16     MLP-Mixer S/16 at 224x224 (8 layers of 196 tokens x 512)
    convmixer     ConvMixer-256/8: patch Conv 7x7/7, 8 blocks of depthwise
                  9x9 Conv (same padding) + GELU + BN with a residual, 1x1
                  Conv + GELU + BN, global average pool, Linear
    audio_dw      a 1-D conv audio net on 1x1x16000 samples: strided Conv1d,
                  BatchNorm1d, GELU, MaxPool1d, conformer-like conv modules
                  (pointwise Conv1d + GLU, depthwise Conv1d kernel 9 and 31,
                  BatchNorm1d, SiLU, pointwise)
    crnn          a CRNN text recognizer: 1x1x32x128 image -> Conv/BN/ReLU,
                  MaxPool 2x2 and 2x1 -> 32 columns -> 2-layer
                  bidirectional LSTM (256) -> Linear to 37 classes,
                  LogSoftmax
    crnn_gru      the same with a bidirectional GRU
    yolo416       a YOLOv5s-like detector at 416x416: Conv/BN/SiLU, stride-2
                  convs, C3 blocks, SPPF, nearest Upsample, Concat, three
                  heads (52x52, 26x26, 13x13) reshaped and concatenated
    yolo320       the same at 320x320 (40, 20, 10)
    gn_unet       a GroupNorm / InstanceNorm U-Net at 128x128: SiLU,
                  stride-2 convs, ConvTranspose2d and bilinear Upsample,
                  skip Concat
    espcn         ESPCN super-resolution x3 on 1x1x224x224: Conv 5x5, 3x3,
                  tanh, PixelShuffle(3) (DepthToSpace), sigmoid
    effnet_lite0  EfficientNet-lite0-like: MBConv blocks (3x3 and 5x5
                  depthwise) with ReLU6 and no squeeze-excitation, 224x224
    lstm_lm       an LSTM language model: 35 ids -> Embedding 10000 x 256 ->
                  2-layer LSTM 512 -> Linear 10000
    dcgan_gen     a DCGAN generator: 100-d noise (1x100x1x1) -> ConvTranspose2d
                  4x4 from 1x1, then stride-2 4x4 up to 64x64, BN, ReLU, Tanh
    conv_tasnet   a Conv-TasNet-like separator on 1x1x8000 samples: Conv1d
                  encoder 16/8, global layer norm (GroupNorm 1), dilated
                  depthwise Conv1d blocks with PReLU, sigmoid masks,
                  ConvTranspose1d decoder
    poolformer    PoolFormer-like blocks at 56x56 and 28x28: GroupNorm(1),
                  AvgPool 3x3 stride 1 count_include_pad=False minus x,
                  1x1 Conv MLP with GELU, layer scale
    convnextv2    ConvNeXt-V2-like blocks: 7x7 depthwise, channels-last
                  LayerNorm, Linear, GELU, global response norm (L2 over
                  the map, divided by its channel mean)
    nerf_mlp      a NeRF MLP on 4096 points: sin/cos positional encoding of
                  10 frequencies, 8 Linear+ReLU with a skip Concat, density
                  and colour heads
    dgcnn         a DGCNN-like point net on 1x3x512 points: k-nearest
                  neighbours by TopK of the negative pairwise distances
                  (run time), neighbour features by index (Gather), edge
                  Conv2d, max over neighbours
    seq2seq       nn.Transformer (2 encoder, 2 decoder layers, d 256) over
                  source ids 40 and target ids 30 with a causal target mask
                  and source padding mask, the logits of 1000 words
    hrnet_like    two HRNet-like exchange stages: branches at 1/4 and 1/8
                  of 256x256, strided 3x3 down, 1x1 + bilinear up, sums
    tsm           temporal shift on 8 frames of 56x56 (slices and Concat of
                  zeros along time) around ResNet-like blocks
    perceiver     Perceiver-like cross attention: 16 learned latents attend to
                  200 inputs by Einsum, a Softmax between
    t5_bias       T5-like relative position bias: buckets of the position
                  differences (Abs, Log, Floor, Min, Where; computed at run
                  time in the _nofold variant) through an Embedding, added
                  to 4 heads' attention logits
    embbag        nn.EmbeddingBag (mode mean) over 4 bags of 5 ids
    ops_mix2      opset 14 (Trilu): cosine similarity, pairwise distance,
                  cdist, var / std, unfold, tril / triu, sort and argsort of
                  a row, a scalar sum flattened, baddbmm, addcmul, cumsum,
                  fmod / remainder, softmin, hardswish, mish, tanh GELU,
                  sign, round

An existing DIR/MODEL.onnx is kept (delete it to export again).  Needs
Debian's python3-torch (torch 1.13).
"""
import os
import sys

import numpy as np

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ort_export  # noqa: E402

PROG = "new_export.py"


def models():
    """name -> (builder, {input name: tensor})."""
    import math
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class QuickGelu(nn.Module):
        def forward(self, x):
            return x * torch.sigmoid(1.702 * x)

    class ClipLayer(nn.Module):
        def __init__(self, d, heads):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
            self.mlp = nn.Sequential(nn.Linear(d, 4 * d), QuickGelu(), nn.Linear(4 * d, d))

        def forward(self, x, mask):
            h = self.ln1(x)
            x = x + self.attn(h, h, h, attn_mask=mask, need_weights=False)[0]
            return x + self.mlp(self.ln2(x))

    class ClipText(nn.Module):
        def __init__(self, vocab=49408, d=512, T=77, heads=8, layers=4, out=512):
            super().__init__()
            self.tok = nn.Embedding(vocab, d)
            self.pos = nn.Parameter(torch.randn(T, d) * 0.01)
            self.layers = nn.ModuleList([ClipLayer(d, heads) for _ in range(layers)])
            self.ln = nn.LayerNorm(d)
            self.proj = nn.Parameter(torch.randn(d, out) * d ** -0.5)
            self.register_buffer("mask", torch.full((T, T), float("-inf")).triu(1))

        def forward(self, ids):
            x = self.tok(ids) + self.pos
            for layer in self.layers:
                x = layer(x, self.mask)
            x = self.ln(x)
            return x[torch.arange(x.shape[0]), ids.argmax(-1)] @ self.proj

    class BertNoMask(nn.Module):
        def __init__(self, vocab=30522, d=256, T=128, heads=4, layers=4):
            super().__init__()
            self.word, self.pos = nn.Embedding(vocab, d), nn.Embedding(T, d)
            self.norm = nn.LayerNorm(d)
            layer = nn.TransformerEncoderLayer(d, heads, 4 * d, dropout=0.0, activation="gelu",
                                               batch_first=True)
            self.enc = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
            self.pool = nn.Linear(d, d)

        def forward(self, ids):
            pos = torch.arange(ids.shape[1]).unsqueeze(0)
            h = self.enc(self.norm(self.word(ids) + self.pos(pos)))
            return torch.tanh(self.pool(h[:, 0]))

    class WhisperEnc(nn.Module):
        def __init__(self, mels=80, d=384, heads=6, layers=4, frames=1000):
            super().__init__()
            self.c1 = nn.Conv1d(mels, d, 3, padding=1)
            self.c2 = nn.Conv1d(d, d, 3, stride=2, padding=1)
            t = frames // 2
            inc = math.log(10000) / (d // 2 - 1)
            ts = torch.exp(-inc * torch.arange(d // 2))
            st = torch.arange(t)[:, None] * ts[None, :]
            self.register_buffer("pos", torch.cat([st.sin(), st.cos()], 1))
            layer = nn.TransformerEncoderLayer(d, heads, 4 * d, dropout=0.0, activation="gelu",
                                               batch_first=True, norm_first=True)
            self.enc = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
            self.ln = nn.LayerNorm(d)

        def forward(self, mel):
            x = F.gelu(self.c2(F.gelu(self.c1(mel))))
            return self.ln(self.enc(x.transpose(1, 2) + self.pos))

    class MixerBlock(nn.Module):
        def __init__(self, n, d, tok, ch):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.tok = nn.Sequential(nn.Linear(n, tok), nn.GELU(), nn.Linear(tok, n))
            self.ch = nn.Sequential(nn.Linear(d, ch), nn.GELU(), nn.Linear(ch, d))

        def forward(self, x):
            x = x + self.tok(self.ln1(x).transpose(1, 2)).transpose(1, 2)
            return x + self.ch(self.ln2(x))

    class MixerS16(nn.Module):
        def __init__(self, d=512, layers=8, classes=1000):
            super().__init__()
            self.stem = nn.Conv2d(3, d, 16, 16)
            self.blocks = nn.Sequential(*[MixerBlock(196, d, 256, 2048) for _ in range(layers)])
            self.ln = nn.LayerNorm(d)
            self.head = nn.Linear(d, classes)

        def forward(self, x):
            x = self.stem(x).flatten(2).transpose(1, 2)
            return self.head(self.ln(self.blocks(x)).mean(1))

    class Residual(nn.Module):
        def __init__(self, f):
            super().__init__()
            self.f = f

        def forward(self, x):
            return self.f(x) + x

    def convmixer(dim=256, depth=8, k=9, p=7, classes=1000):
        return nn.Sequential(
            nn.Conv2d(3, dim, p, p), nn.GELU(), nn.BatchNorm2d(dim),
            *[nn.Sequential(Residual(nn.Sequential(nn.Conv2d(dim, dim, k, groups=dim, padding=k // 2),
                                                   nn.GELU(), nn.BatchNorm2d(dim))),
                            nn.Conv2d(dim, dim, 1), nn.GELU(), nn.BatchNorm2d(dim))
              for _ in range(depth)],
            nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(dim, classes))

    class ConvModule(nn.Module):
        def __init__(self, d, k):
            super().__init__()
            self.pw1 = nn.Conv1d(d, 2 * d, 1)
            self.dw = nn.Conv1d(d, d, k, padding=k // 2, groups=d)
            self.bn = nn.BatchNorm1d(d)
            self.pw2 = nn.Conv1d(d, d, 1)

        def forward(self, x):
            y = F.glu(self.pw1(x), 1)
            return x + self.pw2(F.silu(self.bn(self.dw(y))))

    class AudioDw(nn.Module):
        def __init__(self, classes=35):
            super().__init__()
            self.stem = nn.Sequential(nn.Conv1d(1, 64, 80, stride=4), nn.BatchNorm1d(64), nn.GELU(),
                                      nn.MaxPool1d(4),
                                      nn.Conv1d(64, 128, 3, padding=1), nn.BatchNorm1d(128), nn.GELU(),
                                      nn.MaxPool1d(4))
            self.mods = nn.Sequential(ConvModule(128, 9), ConvModule(128, 31), ConvModule(128, 9))
            self.head = nn.Linear(128, classes)

        def forward(self, x):
            return self.head(self.mods(self.stem(x)).mean(2))

    class Crnn(nn.Module):
        def __init__(self, rnn="lstm", classes=37):
            super().__init__()

            def cbr(i, o):
                return [nn.Conv2d(i, o, 3, padding=1), nn.BatchNorm2d(o), nn.ReLU()]

            self.cnn = nn.Sequential(*cbr(1, 64), nn.MaxPool2d(2), *cbr(64, 128), nn.MaxPool2d(2),
                                     *cbr(128, 256), *cbr(256, 256), nn.MaxPool2d((2, 1)),
                                     *cbr(256, 256), nn.MaxPool2d((4, 1)))
            cls = nn.LSTM if rnn == "lstm" else nn.GRU
            self.rnn = cls(256, 256, 2, bidirectional=True)
            self.fc = nn.Linear(512, classes)

        def forward(self, x):
            f = self.cnn(x)                              # 1x256x1x32
            s = f.squeeze(2).permute(2, 0, 1)            # 32x1x256 (time, batch, features)
            y, _ = self.rnn(s)
            return self.fc(y).log_softmax(-1)

    class Cbs(nn.Module):
        def __init__(self, i, o, k=1, s=1, p=None):
            super().__init__()
            self.conv = nn.Conv2d(i, o, k, s, k // 2 if p is None else p, bias=False)
            self.bn = nn.BatchNorm2d(o)

        def forward(self, x):
            return F.silu(self.bn(self.conv(x)))

    class Bottleneck(nn.Module):
        def __init__(self, c, shortcut=True):
            super().__init__()
            self.cv1, self.cv2 = Cbs(c, c, 1), Cbs(c, c, 3)
            self.add = shortcut

        def forward(self, x):
            y = self.cv2(self.cv1(x))
            return x + y if self.add else y

    class C3(nn.Module):
        def __init__(self, i, o, n=1, shortcut=True):
            super().__init__()
            h = o // 2
            self.cv1, self.cv2, self.cv3 = Cbs(i, h), Cbs(i, h), Cbs(2 * h, o)
            self.m = nn.Sequential(*[Bottleneck(h, shortcut) for _ in range(n)])

        def forward(self, x):
            return self.cv3(torch.cat([self.m(self.cv1(x)), self.cv2(x)], 1))

    class Sppf(nn.Module):
        def __init__(self, i, o):
            super().__init__()
            self.cv1, self.cv2 = Cbs(i, i // 2), Cbs(i * 2, o)
            self.m = nn.MaxPool2d(5, 1, 2)

        def forward(self, x):
            ys = [self.cv1(x)]
            for _ in range(3):          # pools of 5, 9 and 13 as three of 5
                ys.append(self.m(ys[-1]))
            return self.cv2(torch.cat(ys, 1))

    class Yolo5s(nn.Module):
        def __init__(self, classes=80, anchors=3):
            super().__init__()
            self.no = classes + 5
            self.b0, self.b1, self.b2 = Cbs(3, 32, 6, 2, 2), Cbs(32, 64, 3, 2), C3(64, 64, 1)
            self.b3, self.b4 = Cbs(64, 128, 3, 2), C3(128, 128, 2)
            self.b5, self.b6 = Cbs(128, 256, 3, 2), C3(256, 256, 3)
            self.b7, self.b8 = Cbs(256, 512, 3, 2), C3(512, 512, 1)
            self.b9 = Sppf(512, 512)
            self.h10, self.h13 = Cbs(512, 256), C3(512, 256, 1, False)
            self.h14, self.h17 = Cbs(256, 128), C3(256, 128, 1, False)
            self.h18, self.h20 = Cbs(128, 128, 3, 2), C3(256, 256, 1, False)
            self.h21, self.h23 = Cbs(256, 256, 3, 2), C3(512, 512, 1, False)
            self.up = nn.Upsample(scale_factor=2, mode="nearest")
            self.det = nn.ModuleList([nn.Conv2d(c, anchors * self.no, 1) for c in (128, 256, 512)])

        def forward(self, x):
            p3 = self.b4(self.b3(self.b2(self.b1(self.b0(x)))))
            p4 = self.b6(self.b5(p3))
            p5 = self.b9(self.b8(self.b7(p4)))
            t10 = self.h10(p5)
            t13 = self.h13(torch.cat([self.up(t10), p4], 1))
            t14 = self.h14(t13)
            o17 = self.h17(torch.cat([self.up(t14), p3], 1))
            o20 = self.h20(torch.cat([self.h18(o17), t14], 1))
            o23 = self.h23(torch.cat([self.h21(o20), t10], 1))
            outs = []
            for conv, f in zip(self.det, (o17, o20, o23)):
                y = conv(f)
                b, _, h, w = y.shape
                y = y.view(b, 3, self.no, h, w).permute(0, 1, 3, 4, 2).sigmoid()
                outs.append(y.reshape(b, -1, self.no))
            return torch.cat(outs, 1)

    class GnBlock(nn.Module):
        def __init__(self, i, o, inst=False):
            super().__init__()
            self.c1, self.c2 = nn.Conv2d(i, o, 3, padding=1), nn.Conv2d(o, o, 3, padding=1)
            self.n1 = nn.InstanceNorm2d(o, affine=True) if inst else nn.GroupNorm(8, o)
            self.n2 = nn.GroupNorm(8, o)
            self.skip = nn.Conv2d(i, o, 1) if i != o else nn.Identity()

        def forward(self, x):
            y = F.silu(self.n1(self.c1(x)))
            return self.skip(x) + F.silu(self.n2(self.c2(y)))

    class GnUnet(nn.Module):
        def __init__(self):
            super().__init__()
            self.e1, self.e2, self.e3 = GnBlock(3, 32, True), GnBlock(32, 64), GnBlock(64, 128)
            self.d1, self.d2 = nn.Conv2d(32, 32, 3, 2, 1), nn.Conv2d(64, 64, 3, 2, 1)
            self.mid = GnBlock(128, 128)
            self.up2 = nn.ConvTranspose2d(128, 64, 2, 2)
            self.u2 = GnBlock(128, 64)
            self.u1 = GnBlock(64 + 32, 32, True)
            self.out = nn.Conv2d(32, 3, 1)

        def forward(self, x):
            s1 = self.e1(x)                                       # 32 x 128
            s2 = self.e2(self.d1(s1))                             # 64 x 64
            m = self.mid(self.e3(self.d2(s2)))                    # 128 x 32
            y = self.u2(torch.cat([self.up2(m), s2], 1))          # 64 x 64
            y = F.interpolate(y, scale_factor=2, mode="bilinear", align_corners=False)
            return self.out(self.u1(torch.cat([y, s1], 1)))

    class Espcn(nn.Module):
        def __init__(self, r=3):
            super().__init__()
            self.c1, self.c2 = nn.Conv2d(1, 64, 5, padding=2), nn.Conv2d(64, 32, 3, padding=1)
            self.c3 = nn.Conv2d(32, r * r, 3, padding=1)
            self.shuffle = nn.PixelShuffle(r)

        def forward(self, x):
            y = torch.tanh(self.c2(torch.tanh(self.c1(x))))
            return torch.sigmoid(self.shuffle(self.c3(y)))

    class MbConv(nn.Module):
        def __init__(self, i, o, k, s, e):
            super().__init__()
            h = i * e
            layers = []
            if e != 1:
                layers += [nn.Conv2d(i, h, 1, bias=False), nn.BatchNorm2d(h), nn.ReLU6()]
            layers += [nn.Conv2d(h, h, k, s, k // 2, groups=h, bias=False), nn.BatchNorm2d(h),
                       nn.ReLU6(), nn.Conv2d(h, o, 1, bias=False), nn.BatchNorm2d(o)]
            self.body = nn.Sequential(*layers)
            self.res = s == 1 and i == o

        def forward(self, x):
            return x + self.body(x) if self.res else self.body(x)

    def effnet_lite0(classes=1000):
        # (expansion, channels, repeats, stride, kernel) of EfficientNet-B0
        cfg = [(1, 16, 1, 1, 3), (6, 24, 2, 2, 3), (6, 40, 2, 2, 5), (6, 80, 3, 2, 3),
               (6, 112, 3, 1, 5), (6, 192, 4, 2, 5), (6, 320, 1, 1, 3)]
        layers = [nn.Conv2d(3, 32, 3, 2, 1, bias=False), nn.BatchNorm2d(32), nn.ReLU6()]
        c = 32
        for e, o, n, s, k in cfg:
            for j in range(n):
                layers.append(MbConv(c, o, k, s if j == 0 else 1, e))
                c = o
        layers += [nn.Conv2d(c, 1280, 1, bias=False), nn.BatchNorm2d(1280), nn.ReLU6(),
                   nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(1280, classes)]
        return nn.Sequential(*layers)

    class LstmLm(nn.Module):
        def __init__(self, vocab=10000, d=256, h=512):
            super().__init__()
            self.emb = nn.Embedding(vocab, d)
            self.rnn = nn.LSTM(d, h, 2, batch_first=True)
            self.out = nn.Linear(h, vocab)

        def forward(self, ids):
            y, _ = self.rnn(self.emb(ids))
            return self.out(y)


    class Dcgan(nn.Module):
        def __init__(self, nz=100, f=64):
            super().__init__()
            def up(i, o, first=False):
                return [nn.ConvTranspose2d(i, o, 4, 1 if first else 2, 0 if first else 1, bias=False),
                        nn.BatchNorm2d(o), nn.ReLU()]
            self.net = nn.Sequential(*up(nz, f * 8, True), *up(f * 8, f * 4), *up(f * 4, f * 2),
                                     *up(f * 2, f), nn.ConvTranspose2d(f, 3, 4, 2, 1), nn.Tanh())

        def forward(self, z):
            return self.net(z)

    class TasBlock(nn.Module):
        def __init__(self, c, h, dil):
            super().__init__()
            self.c1 = nn.Conv1d(c, h, 1)
            self.a1, self.a2 = nn.PReLU(), nn.PReLU()
            self.n1, self.n2 = nn.GroupNorm(1, h), nn.GroupNorm(1, h)
            self.dw = nn.Conv1d(h, h, 3, padding=dil, dilation=dil, groups=h)
            self.res = nn.Conv1d(h, c, 1)

        def forward(self, x):
            y = self.n1(self.a1(self.c1(x)))
            y = self.n2(self.a2(self.dw(y)))
            return x + self.res(y)

    class ConvTasNet(nn.Module):
        def __init__(self, n=128, b=64, h=128, spk=2):
            super().__init__()
            self.spk = spk
            self.enc = nn.Conv1d(1, n, 16, 8, bias=False)
            self.ln = nn.GroupNorm(1, n)
            self.bott = nn.Conv1d(n, b, 1)
            self.blocks = nn.Sequential(*[TasBlock(b, h, 2 ** i) for r in range(2) for i in range(4)])
            self.mask = nn.Conv1d(b, spk * n, 1)
            self.dec = nn.ConvTranspose1d(n, 1, 16, 8, bias=False)

        def forward(self, x):
            w = F.relu(self.enc(x))                                  # 1 x n x L
            m = torch.sigmoid(self.mask(self.blocks(self.bott(self.ln(w)))))
            m = m.view(1, self.spk, -1, w.shape[-1])
            return self.dec((m * w[:, None]).flatten(0, 1))           # spk x 1 x samples

    class PoolBlock(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.n1, self.n2 = nn.GroupNorm(1, c), nn.GroupNorm(1, c)
            self.pool = nn.AvgPool2d(3, 1, 1, count_include_pad=False)
            self.mlp = nn.Sequential(nn.Conv2d(c, 4 * c, 1), nn.GELU(), nn.Conv2d(4 * c, c, 1))
            self.s1 = nn.Parameter(torch.rand(c, 1, 1))
            self.s2 = nn.Parameter(torch.rand(c, 1, 1))

        def forward(self, x):
            y = self.n1(x)
            x = x + self.s1 * (self.pool(y) - y)
            return x + self.s2 * self.mlp(self.n2(x))

    class PoolFormer(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Conv2d(3, 64, 7, 4, 2)
            self.s1 = nn.Sequential(*[PoolBlock(64) for _ in range(2)])
            self.down = nn.Conv2d(64, 128, 3, 2, 1)
            self.s2 = nn.Sequential(*[PoolBlock(128) for _ in range(2)])
            self.head = nn.Linear(128, 1000)

        def forward(self, x):
            x = self.s2(self.down(self.s1(self.stem(x))))
            return self.head(x.mean((2, 3)))

    class Grn(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.gamma = nn.Parameter(torch.randn(1, 1, 1, c) * 0.1)
            self.beta = nn.Parameter(torch.randn(1, 1, 1, c) * 0.1)

        def forward(self, x):
            g = torch.norm(x, p=2, dim=(1, 2), keepdim=True)
            n = g / (g.mean(dim=-1, keepdim=True) + 1e-6)
            return self.gamma * (x * n) + self.beta + x

    class V2Block(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.dw = nn.Conv2d(c, c, 7, padding=3, groups=c)
            self.ln = nn.LayerNorm(c, eps=1e-6)
            self.fc1, self.fc2 = nn.Linear(c, 4 * c), nn.Linear(4 * c, c)
            self.grn = Grn(4 * c)

        def forward(self, x):
            y = self.ln(self.dw(x).permute(0, 2, 3, 1))
            y = self.fc2(self.grn(F.gelu(self.fc1(y))))
            return x + y.permute(0, 3, 1, 2)

    class ConvNextV2(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Conv2d(3, 80, 4, 4)
            self.s1 = nn.Sequential(V2Block(80), V2Block(80))
            self.down = nn.Conv2d(80, 160, 2, 2)
            self.s2 = nn.Sequential(V2Block(160), V2Block(160))
            self.head = nn.Linear(160, 1000)

        def forward(self, x):
            return self.head(self.s2(self.down(self.s1(self.stem(x)))).mean((2, 3)))

    class Nerf(nn.Module):
        def __init__(self, freqs=10, w=256):
            super().__init__()
            self.register_buffer("f", (2.0 ** torch.arange(freqs)) * math.pi)
            d = 3 + 6 * freqs
            self.l1 = nn.ModuleList([nn.Linear(d, w)] + [nn.Linear(w, w) for _ in range(3)])
            self.l2 = nn.ModuleList([nn.Linear(w + d, w)] + [nn.Linear(w, w) for _ in range(3)])
            self.sigma, self.feat = nn.Linear(w, 1), nn.Linear(w, w)
            self.rgb = nn.Sequential(nn.Linear(w, w // 2), nn.ReLU(), nn.Linear(w // 2, 3),
                                     nn.Sigmoid())

        def forward(self, p):
            e = (p[..., None] * self.f).flatten(-2)
            x = torch.cat([p, e.sin(), e.cos()], -1)
            h = x
            for l in self.l1:
                h = F.relu(l(h))
            h = torch.cat([h, x], -1)
            for l in self.l2:
                h = F.relu(l(h))
            return torch.cat([F.relu(self.sigma(h)), self.rgb(self.feat(h))], -1)

    class EdgeConv(nn.Module):
        def __init__(self, i, o, k):
            super().__init__()
            self.k = k
            self.conv = nn.Sequential(nn.Conv2d(2 * i, o, 1, bias=False), nn.BatchNorm2d(o),
                                      nn.LeakyReLU(0.2))

        def forward(self, x):                       # 1 x C x N
            n = x.shape[-1]
            inner = -2 * x.transpose(1, 2) @ x
            sq = (x * x).sum(1, keepdim=True)
            idx = (-sq.transpose(1, 2) - inner - sq).topk(self.k, -1)[1]    # 1 x N x k
            nb = x.transpose(1, 2)[0][idx.reshape(-1)].view(1, n, self.k, -1)
            c = x.transpose(1, 2)[:, :, None, :].expand(-1, -1, self.k, -1)
            f = torch.cat([nb - c, c], 3).permute(0, 3, 1, 2)
            return self.conv(f).amax(-1)

    class Dgcnn(nn.Module):
        def __init__(self, k=16):
            super().__init__()
            self.e1, self.e2 = EdgeConv(3, 64, k), EdgeConv(64, 64, k)
            self.out = nn.Conv1d(128, 256, 1)
            self.head = nn.Linear(256, 40)

        def forward(self, x):
            a = self.e1(x)
            b = self.e2(a)
            return self.head(self.out(torch.cat([a, b], 1)).amax(-1))

    class Seq2Seq(nn.Module):
        def __init__(self, vocab=1000, d=256):
            super().__init__()
            self.emb = nn.Embedding(vocab, d, padding_idx=0)
            self.pos = nn.Parameter(torch.randn(64, d) * 0.02)
            self.tr = nn.Transformer(d, 4, 2, 2, 512, dropout=0.0, batch_first=True)
            # (the fast path's nested tensor drops the padded positions from
            # the memory, which the decoder's padding mask then mismatches)
            self.tr.encoder.enable_nested_tensor = False
            self.out = nn.Linear(d, vocab)

        def forward(self, ids):
            src, tgt = ids[:, :40], ids[:, 40:]
            s = self.emb(src) + self.pos[:40]
            t = self.emb(tgt) + self.pos[:30]
            causal = torch.full((30, 30), float("-inf")).triu(1)
            y = self.tr(s, t, tgt_mask=causal, src_key_padding_mask=src == 0,
                        memory_key_padding_mask=src == 0)
            return self.out(y)

    def cbr(i, o, s=1):
        return nn.Sequential(nn.Conv2d(i, o, 3, s, 1, bias=False), nn.BatchNorm2d(o), nn.ReLU())

    class HrExchange(nn.Module):
        def __init__(self, a, b):
            super().__init__()
            self.ba = nn.Sequential(cbr(a, a), cbr(a, a))
            self.bb = nn.Sequential(cbr(b, b), cbr(b, b))
            self.down = nn.Sequential(nn.Conv2d(a, b, 3, 2, 1, bias=False), nn.BatchNorm2d(b))
            self.up = nn.Sequential(nn.Conv2d(b, a, 1, bias=False), nn.BatchNorm2d(a))

        def forward(self, xa, xb):
            ya, yb = self.ba(xa), self.bb(xb)
            up = F.interpolate(self.up(yb), scale_factor=2, mode="bilinear", align_corners=False)
            return F.relu(ya + up), F.relu(yb + self.down(ya))

    class HrNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Sequential(cbr(3, 32, 2), cbr(32, 32, 2))
            self.t = cbr(32, 64, 2)
            self.x1, self.x2 = HrExchange(32, 64), HrExchange(32, 64)
            self.head = nn.Conv2d(32, 17, 1)

        def forward(self, x):
            a = self.stem(x)
            a, b = self.x2(*self.x1(a, self.t(a)))
            return self.head(a)

    class Tsm(nn.Module):
        def __init__(self, frames=8, c=64):
            super().__init__()
            self.t = frames
            self.stem = cbr(3, c, 2)
            self.blocks = nn.ModuleList([nn.Sequential(cbr(c, c), nn.Conv2d(c, c, 3, 1, 1))
                                         for _ in range(3)])
            self.head = nn.Linear(c, 10)

        def shift(self, x):
            nt, c, h, w = x.shape
            x = x.view(nt // self.t, self.t, c, h, w)
            f = c // 8
            z = torch.zeros_like(x[:, :1, :f])
            back = torch.cat([x[:, 1:, :f], z], 1)
            fwd = torch.cat([z, x[:, :-1, f:2 * f]], 1)
            return torch.cat([back, fwd, x[:, :, 2 * f:]], 2).view(nt, c, h, w)

        def forward(self, x):                        # frames x 3 x 112 x 112
            x = self.stem(x)
            for b in self.blocks:
                x = F.relu(x + b(self.shift(x)))
            return self.head(x.mean((2, 3)).view(-1, self.t, x.shape[1]).mean(1))


    class Perceiver(nn.Module):
        def __init__(self):
            super().__init__()
            self.lat = nn.Parameter(torch.randn(16, 64))
            self.q, self.kv, self.o = nn.Linear(64, 64), nn.Linear(32, 128), nn.Linear(64, 10)

        def forward(self, x):                            # 1 x 200 x 32
            q = self.q(self.lat)[None]
            k, v = self.kv(x).chunk(2, -1)
            a = torch.einsum("bld,bnd->bln", q, k).softmax(-1)
            return self.o(torch.einsum("bln,bnd->bld", a, v).mean(1))

    class T5Bias(nn.Module):
        def __init__(self, heads=4, buckets=32, d=64):
            super().__init__()
            self.rel, self.qkv, self.h = nn.Embedding(buckets, heads), nn.Linear(d, 3 * d), heads

        @staticmethod
        def bucket(rel, nb=32, maxd=128):
            nb //= 2
            ret, n, exact = (rel > 0).long() * nb, rel.abs(), nb // 2
            large = exact + (torch.log(n.float() / exact + 1e-6) / math.log(maxd / exact)
                             * (nb - exact)).long()
            large = torch.min(large, torch.full_like(large, nb - 1))
            return ret + torch.where(n < exact, n, large)

        def forward(self, x):                            # 1 x T x d
            t = x.shape[1]
            pos = torch.arange(t)
            b = self.rel(self.bucket(pos[None, :] - pos[:, None])).permute(2, 0, 1)[None]
            q, k, v = self.qkv(x).view(1, t, 3, self.h, -1).permute(2, 0, 3, 1, 4)
            a = (q @ k.transpose(-1, -2) + b).softmax(-1)
            return (a @ v).transpose(1, 2).reshape(1, t, -1)

    class EmbBag(nn.Module):
        def __init__(self):
            super().__init__()
            self.e = nn.EmbeddingBag(100, 16, mode="mean")

        def forward(self, ids):
            return self.e(ids.view(4, 5))

    class OpsMix2(nn.Module):
        def forward(self, x):                            # 1 x 8 x 6 x 6
            r = x[0, 0].flatten()
            parts = [F.cosine_similarity(x[:, :4], x[:, 4:], dim=1),
                     F.pairwise_distance(x[0, :, 0], x[0, :, 1]),
                     torch.cdist(x[0, :, 0].T[None], x[0, :, 1].T[None]),
                     torch.var(x, dim=(2, 3), unbiased=True) + torch.std(x, dim=1).mean(),
                     F.unfold(x, 2, stride=2),
                     torch.tril(x[0, 0]) + torch.triu(x[0, 1], 1),
                     torch.sort(r, descending=True)[0][:5],
                     x[0, :, 0].sum(),           # a scalar: its flatten reads its (empty) Shape
                     torch.argsort(x[0, 1].flatten())[:5].float(),
                     torch.baddbmm(x[0, :2], x[0, :2], x[0, 2:4]),
                     torch.addcmul(x[0, :2], x[0, 2:4], x[0, 4:6], value=0.5),
                     torch.cumsum(x, 3)[..., -1],
                     torch.fmod(x[:, :4], 0.3) + torch.remainder(x[:, 4:], 0.3),
                     F.softmin(x, 1) + F.log_softmax(x, 2) + F.hardswish(x) + F.mish(x)
                     + F.gelu(x, approximate="tanh"),
                     torch.clamp(x, min=-0.5) + x.clamp(max=0.2) + torch.sign(x) + x.round()]
            return torch.cat([p.flatten() for p in parts])

    g = torch.Generator().manual_seed(27)
    clip_ids = torch.randint(1, 49000, (1, 77), generator=g)
    clip_ids[0, 12] = 49407          # the end token (largest id), then padding
    clip_ids[0, 13:] = 0
    return {
        "clip_text": (ClipText, {"ids": clip_ids}),
        "bert_nomask": (BertNoMask, {"ids": torch.randint(1, 30522, (1, 128), generator=g)}),
        "whisper_enc": (WhisperEnc, {"image": torch.randn(1, 80, 1000, generator=g)}),
        "mixer_s16": (MixerS16, {"image": torch.randn(1, 3, 224, 224, generator=g)}),
        "convmixer": (convmixer, {"image": torch.randn(1, 3, 224, 224, generator=g)}),
        "audio_dw": (AudioDw, {"image": torch.randn(1, 1, 16000, generator=g)}),
        "crnn": (Crnn, {"image": torch.randn(1, 1, 32, 128, generator=g)}),
        "crnn_gru": (lambda: Crnn("gru"), {"image": torch.randn(1, 1, 32, 128, generator=g)}),
        "yolo416": (Yolo5s, {"image": torch.randn(1, 3, 416, 416, generator=g)}),
        "yolo320": (Yolo5s, {"image": torch.randn(1, 3, 320, 320, generator=g)}),
        "gn_unet": (GnUnet, {"image": torch.randn(1, 3, 128, 128, generator=g)}),
        "espcn": (Espcn, {"image": torch.rand(1, 1, 224, 224, generator=g)}),
        "effnet_lite0": (effnet_lite0, {"image": torch.randn(1, 3, 224, 224, generator=g)}),
        "lstm_lm": (LstmLm, {"ids": torch.randint(0, 10000, (1, 35), generator=g)}),
        "dcgan_gen": (Dcgan, {"image": torch.randn(1, 100, 1, 1, generator=g)}),
        "conv_tasnet": (ConvTasNet, {"image": torch.randn(1, 1, 8000, generator=g)}),
        "poolformer": (PoolFormer, {"image": torch.randn(1, 3, 224, 224, generator=g)}),
        "convnextv2": (ConvNextV2, {"image": torch.randn(1, 3, 224, 224, generator=g)}),
        "nerf_mlp": (Nerf, {"image": torch.rand(4096, 3, generator=g) * 2 - 1}),
        "dgcnn": (Dgcnn, {"image": torch.randn(1, 3, 512, generator=g)}),
        "seq2seq": (Seq2Seq, {"ids": torch.cat([torch.randint(1, 1000, (1, 33), generator=g),
                                                torch.zeros(1, 7, dtype=torch.long),
                                                torch.randint(1, 1000, (1, 30), generator=g)], 1)}),
        "hrnet_like": (HrNet, {"image": torch.randn(1, 3, 256, 256, generator=g)}),
        "tsm": (Tsm, {"image": torch.randn(8, 3, 112, 112, generator=g)}),
        "perceiver": (Perceiver, {"image": torch.randn(1, 200, 32, generator=g)}),
        "t5_bias": (T5Bias, {"image": torch.randn(1, 40, 64, generator=g)}),
        "embbag": (EmbBag, {"ids": torch.randint(0, 100, (20,), generator=g)}),
        "ops_mix2": (OpsMix2, {"image": torch.randn(1, 8, 6, 6, generator=g)}),
    }


def build(name):
    """The model of a name (without suffixes) and its inputs by name."""
    import unseen_export
    ms = models()
    if name not in ms:
        raise ValueError("unknown model %s (one of %s)" % (name, " ".join(ms)))
    cls, args = ms[name]
    return unseen_export.instantiate(cls), args


def export_one(name, out):
    import torch
    import unseen_export
    base, opts = unseen_export.variant(name)
    if base == "ops_mix2" and "_op" not in name:
        opts["opset"] = 14      # torch.tril / triu: Trilu
    onnx_path = os.path.join(out, name + ".onnx")
    if os.path.exists(onnx_path):
        return
    model, args = build(base)
    indir = os.path.join(out, name + ".in")
    os.makedirs(indir, exist_ok=True)
    for n, t in args.items():
        np.save(os.path.join(indir, n + ".npy"), t.numpy())
    with torch.no_grad():
        ref = model(*args.values())
    np.save(os.path.join(out, name + ".ref.npy"), ref.float().numpy())
    ort_export.export(model, args, onnx_path, **opts)


def main(argv):
    if len(argv) != 2:
        sys.stderr.write("usage: %s MODEL DIR\n" % PROG)
        return 2
    name, out = argv
    os.makedirs(out, exist_ok=True)
    for n in (list(models()) if name == "all" else [name]):
        export_one(n, out)
    return 0


if __name__ == "__main__":
    sys.exit(ort_export.run(main, PROG))
