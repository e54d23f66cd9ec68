#!/usr/bin/env python3
"""Writes resnet18.csv and resnet50.csv, SCALE-Sim convolution topologies of
ResNet-18 and ResNet-50 (He et al. 2015, Table 1; ResNet-50 with the stride
on the 3x3 convolution of each bottleneck, as torchvision's v1.5).

IFMAP sizes are the rows the convolution touches, padding included:
(out - 1) * stride + filter.  For those sizes floor((H - R) / S) + 1 (tec)
and ceil((H - R + S) / S) (SCALE-Sim) give the same output size.
Prints the layer count and total MACs (published: 1.81 G and 4.09 G)."""


def conv(name, out, r, s, c, f):
    h = (out - 1) * s + r
    return (name, h, h, r, r, c, f, s)


def resnet18():
    rows = [conv("conv1", 112, 7, 2, 3, 64)]
    cin, size = 64, 56
    for li, (w, stride) in enumerate([(64, 1), (128, 2), (256, 2), (512, 2)], 1):
        for b in range(2):
            s = stride if b == 0 else 1
            out = size // s
            rows.append(conv(f"layer{li}.{b}.conv1", out, 3, s, cin, w))
            rows.append(conv(f"layer{li}.{b}.conv2", out, 3, 1, w, w))
            if b == 0 and (s != 1 or cin != w):
                rows.append(conv(f"layer{li}.{b}.downsample", out, 1, s, cin, w))
            cin, size = w, out
    rows.append(("fc", 1, 1, 1, 1, 512, 1000, 1))
    return rows


def resnet50():
    rows = [conv("conv1", 112, 7, 2, 3, 64)]
    cin, size = 64, 56
    for li, (w, n, stride) in enumerate([(64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)], 1):
        for b in range(n):
            s = stride if b == 0 else 1
            out = size // s
            rows.append(conv(f"layer{li}.{b}.conv1", size, 1, 1, cin, w))
            rows.append(conv(f"layer{li}.{b}.conv2", out, 3, s, w, w))
            rows.append(conv(f"layer{li}.{b}.conv3", out, 1, 1, w, 4 * w))
            if b == 0:
                rows.append(conv(f"layer{li}.{b}.downsample", out, 1, s, cin, 4 * w))
            cin, size = 4 * w, out
    rows.append(("fc", 1, 1, 1, 1, 2048, 1000, 1))
    return rows


def macs(rows):
    return sum(((h - r) // st + 1) * ((w - s) // st + 1) * r * s * c * f
               for (_, h, w, r, s, c, f, st) in rows)


if __name__ == "__main__":
    for path, rows in (("resnet18.csv", resnet18()), ("resnet50.csv", resnet50())):
        with open(path, "w") as fh:
            fh.write("Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, "
                     "Channels, Num Filter, Strides,\n")
            for row in rows:
                fh.write(", ".join(str(x) for x in row) + ",\n")
        print(path, len(rows), "layers", macs(rows), "MACs")
