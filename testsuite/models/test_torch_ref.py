"""Unit tests of tools/torch_ref.py (needs python3-torch, python3-torchvision).

    /usr/bin/python3 testsuite/models/test_torch_ref.py

One line per check; exit status 1 if any failed.  The GPT-2 module is checked
against an independent NumPy forward pass, the zoo against the parameter and
MAC counts torchvision publishes."""
import math
import os
import shutil
import sys

import numpy as np

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.dont_write_bytecode = True    # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(TOP, "tools"))
import torch_ref as tr  # noqa: E402

failures = 0


def check(what, ok, detail=""):
    global failures
    print("%s: %s%s" % ("ok" if ok else "FAIL", what, "" if ok else " (%s)" % detail))
    if not ok:
        failures += 1


def error_of(fn, *args):
    """The RefError message fn raises, or None."""
    try:
        fn(*args)
    except tr.RefError as e:
        return str(e)
    return None


# ---------------------------------------------------------------- IR parsing

TEXT = r'''module "m"
# a { in a comment
func @"f{"(x: f32[2]) attrs(layer = "}{", op = "x") {
  for i in 0..2 {
    x[i] = 1.5f
  }
}
graph {
  input "conv-1.w\x41\101\n": f32[2, 3] init(-0.5, 1e-05)
  param layer1.0.conv1.weight: f32[4] init(-inf, 2)
  param bn.running_var: f32[4] state init(0.5, 1.5)
  param "for": f64[] init(3, 3)
  input ids: i64[7] init(0, 50257)
  temp t: f32[2]
  output y: f32[2]
  call @"f{"(t)
}
'''
bufs = tr.parse_graph(TEXT)
check("graph: every buffer, in order",
      [(b.role, b.name) for b in bufs] == [
          ("input", "conv-1.wAA\n"), ("param", "layer1.0.conv1.weight"),
          ("param", "bn.running_var"), ("param", "for"), ("input", "ids"),
          ("temp", "t"), ("output", "y")],
      [(b.role, b.name) for b in bufs])
check("graph: shapes and dtypes",
      [(b.dtype, b.shape) for b in bufs[:4]]
      == [("f32", (2, 3)), ("f32", (4,)), ("f32", (4,)), ("f64", ())])
check("graph: init ranges", [b.init for b in bufs] ==
      [(-0.5, 1e-05), (-math.inf, 2.0), (0.5, 1.5), (3.0, 3.0), (0.0, 50257.0), None, None])
check("graph: the state flag", [b.state for b in bufs] ==
      [False, False, True, False, False, False, False])
msg = error_of(tr.parse_graph, 'graph {\n  param w: f32[2] state state\n}\n')
check("graph: a flag given twice", msg == "tec's IR, line 2: 'state' given twice for w", msg)
msg = error_of(tr.parse_graph, 'graph {\n  input x: f32[2] state init(0, 1)\n}\n')
check("graph: only a param is state",
      msg == "tec's IR, line 2: only a param can be state (input x)", msg)
msg = error_of(tr.parse_graph, 'module "m"\nfunc @f() {\n  graph {\n}\n}\n')
check("graph: one inside a function body is not the graph",
      msg == "tec's IR has no graph section", msg)
msg = error_of(tr.parse_graph, 'module "m"\ngraph {\n  input x: f32[2, ] init(0, 1)\n}\n')
check("graph: syntax error names the line",
      msg == "tec's IR, line 3: expected an extent, found ']'", msg)
msg = error_of(tr.parse_graph, 'graph {\n  input x: f32[2] init(0, 1)\n')
check("graph: unterminated section", msg is not None and "end of the text" in msg, msg)

# ---------------------------------------------------------------- default data

x = tr.GraphBuf("input", "x", "f64", (4,), (-1.0, 1.0))
check("default data: doc/data.md's first values for x",
      list(tr.tec_default(x)) == [-0.5975834313129111, 0.617053524968139,
                                  0.28664726835009247, 0.656218802914484])
ids = tr.tec_default(bufs[4])
check("default data: token ids are integers in [lo, hi)",
      ids.dtype == np.int64 and ids.min() >= 0 and ids.max() < 50257)
b = tr.tec_default(tr.GraphBuf("input", "m", "bool", (64,), (0.0, 2.0)))
check("default data: bool is the integer formula, nonzero",
      b.dtype == np.bool_ and 0 < b.sum() < 64)
msg = error_of(tr.tec_default, tr.GraphBuf("param", "w", "f32", (2,), None))
check("default data: no init range is an error",
      msg == "param w has no init range in tec's IR, so its default data is unknown", msg)

# ---------------------------------------------------------------- weights

import torch  # noqa: E402
from torch import nn  # noqa: E402


class Tied(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 4)
        self.bn = nn.BatchNorm1d(4)
        self.head = nn.Linear(4, 10, bias=False)
        self.head.weight = self.emb.weight


w = tr.weight_tensors(Tied())
check("state_dict: num_batches_tracked and the tied copy are left out",
      list(w) == ["emb.weight", "bn.weight", "bn.bias", "bn.running_mean", "bn.running_var"],
      list(w))
params = [tr.GraphBuf("param", "emb.weight", "f32", (10, 5), (-1.0, 1.0)),
          tr.GraphBuf("param", "bn.weight", "f32", (4,), (0.5, 1.5)),
          tr.GraphBuf("param", "bn.scale", "f32", (4,), (0.5, 1.5))]
buffers = tr.buffer_names(Tied())
check("state_dict: the buffers", buffers ==
      {"bn.running_mean", "bn.running_var", "bn.num_batches_tracked"}, buffers)
msg = error_of(tr.check_params, w, params, buffers)
check("state_dict: mismatch lists missing, extra and mis-shaped names", msg == "\n".join([
    "tec's parameters do not match the PyTorch model's state_dict:",
    "  missing in tec: bn.bias [4]",
    "  missing in tec: bn.running_mean [4]",
    "  missing in tec: bn.running_var [4]",
    "  not in PyTorch: bn.scale [4]",
    "  shape of emb.weight: tec [10, 5], PyTorch [10, 4]"]), msg)
good = [tr.GraphBuf("param", n, "f32", tuple(t.shape), (0.0, 1.0), n in buffers)
        for n, t in w.items()]
check("state_dict: buffers as state params match", error_of(tr.check_params, w, good, buffers) is None)
good[3].state = False
good[0].state = True
msg = error_of(tr.check_params, w, good, buffers)
check("state_dict: state must be exactly the buffers", msg == "\n".join([
    "tec's parameters do not match the PyTorch model's state_dict:",
    "  emb.weight is trainable in PyTorch but state in tec (declare it param)",
    "  bn.running_mean is a buffer in PyTorch but a trainable param in tec (declare it state)"]),
      msg)

tiny = tr.build_model("tiny", None, [])
tw = tr.weight_tensors(tiny)
tparams = [tr.GraphBuf("param", n, "f32", tuple(t.shape), (-0.25, 0.75)) for n, t in tw.items()]
tr.fill_weights(tw, tparams, False)
want = torch.from_numpy(tr.tecref.default("fc.weight", (5, 8), -0.25, 0.75).astype(np.float64))
check("fill: the model holds tec's f32 default data, in float64",
      tiny.fc.weight.dtype == torch.float64 and torch.equal(tiny.fc.weight, want))
inp = [tr.GraphBuf("input", "image", "f32", (2, 3, 8, 8), (-1.0, 1.0))]
out, macs = tr.run_model(tiny, inp, [tr.GraphBuf("output", "logits", "f32", (2, 5), None)])
check("MACs: conv 2*8*8*8 outputs * 3*3*3, linear 2*5 * 8",
      macs == {"conv1": 2 * 8 * 8 * 8 * 27, "fc": 80}, macs)
msg = error_of(tr.run_model, tiny, inp, [tr.GraphBuf("output", "logits", "f32", (10,), None)])
check("run: an output shape mismatch is an error",
      msg == "output logits: PyTorch gives [2, 5], tec declares f32[10]", msg)

# ---------------------------------------------------------------- --input

import tempfile  # noqa: E402

tmp = tempfile.mkdtemp()


def npy(name, a):
    path = os.path.join(tmp, name)
    np.save(path, a)
    return path


x = np.random.default_rng(5).standard_normal((2, 3, 8, 8)).astype(np.float32)
xf = npy("x.npy", x)
given = tr.load_inputs(["image=" + xf], inp)
check("--input: the file's array, as saved", given["image"].dtype == np.float32
      and np.array_equal(given["image"], x))
with torch.no_grad():
    tiny.bn1.running_var.fill_(1.0)     # the range above made some negative
    want = tiny(torch.from_numpy(x.astype(np.float64))).numpy()
logits = [tr.GraphBuf("output", "logits", "f32", (2, 5), None)]
out_x, _ = tr.run_model(tiny, inp, logits, given)
out_d, _ = tr.run_model(tiny, inp, logits)
check("--input: forward runs on the file, not on default data",
      np.array_equal(out_x["logits"], want) and np.all(np.isfinite(want))
      and not np.allclose(out_x["logits"], out_d["logits"]))
declares = " but the program declares f32[2, 3, 8, 8]"
none = os.path.join(tmp, "none.npy")
for path, want in [
        (npy("x64.npy", x.astype(np.float64)), "%s is f64[2, 3, 8, 8]" + declares),
        (npy("xs.npy", x[:1]), "%s is f32[1, 3, 8, 8]" + declares),
        (npy("be.npy", x.astype(">f4")), "%s is >f4[2, 3, 8, 8]" + declares),
        (npy("u8.npy", x.astype(np.uint8)), "%s is uint8[2, 3, 8, 8]" + declares),
        (__file__, "%s is not a .npy file"),
        (none, "cannot read %s: No such file or directory")]:
    msg = error_of(tr.load_inputs, ["image=" + path], inp)
    check("--input: error for %s" % os.path.basename(path),
          msg == "--input image=%s: %s" % (path, want % path), msg)
msg = error_of(tr.load_inputs, ["img=" + xf], inp)
check("--input: an input the program does not have", msg ==
      "--input img=%s: the program has no input named 'img' (its inputs: image)" % xf, msg)
msg = error_of(tr.load_inputs, ["image=" + xf, "image=" + xf], inp)
check("--input: an input given twice", msg == "--input image=%s: input image is given twice" % xf, msg)

# ---------------------------------------------------------------- --weights

wdir = os.path.join(tmp, "w")
tr.export_weights(tw, tparams, wdir)
fresh = tr.build_model("tiny", None, [])
fw = tr.weight_tensors(fresh)
tr.read_weights(fw, tparams, wdir)
check("--weights: every parameter read back, exactly",
      all(torch.equal(fw[n], tw[n]) for n in tw) and not torch.equal(fw["fc.weight"], tr.weight_tensors(
          tr.build_model("tiny", None, []))["fc.weight"]))
os.rename(os.path.join(wdir, "fc.bias.npy"), os.path.join(wdir, "head.bias.npy"))
msg = error_of(tr.read_weights, fw, tparams, wdir)
check("--weights: a stray file", msg == "--weights %s: head.bias.npy matches no parameter "
      "of the program" % wdir, msg)
os.remove(os.path.join(wdir, "head.bias.npy"))
msg = error_of(tr.read_weights, fw, tparams, wdir)
check("--weights: a missing file", msg == "--weights %s: no file for parameter fc.bias (f32[5]): %s"
      % (wdir, os.path.join(wdir, "fc.bias.npy")), msg)
np.save(os.path.join(wdir, "fc.bias.npy"), np.zeros(5))
msg = error_of(tr.read_weights, fw, tparams, wdir)
check("--weights: a file of another dtype", msg == "--weights %s: %s is f64[5] but the program "
      "declares f32[5]" % (wdir, os.path.join(wdir, "fc.bias.npy")), msg)

# ---------------------------------------------------------------- GPT-2

GPT2 = tr.torch_modules()["gpt2"]


def layer_norm(x, g, b):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + 1e-5) * g + b


def gpt2_numpy(sd, ids, heads, nlayers):
    """GPT-2's forward pass written from its definition, in float64: the
    logits of every position and the final hidden state."""
    n = len(ids)
    x = sd["wte.weight"][ids] + sd["wpe.weight"][:n]
    causal = np.tril(np.ones((n, n), dtype=bool))
    for l in range(nlayers):
        p = lambda s: sd["h.%d.%s" % (l, s)]  # noqa: E731
        a = layer_norm(x, p("ln_1.weight"), p("ln_1.bias"))
        qkv = a @ p("attn.c_attn.weight") + p("attn.c_attn.bias")
        width = x.shape[1]
        d = width // heads
        y = np.zeros_like(x)
        for h in range(heads):
            q = qkv[:, h * d:(h + 1) * d]
            k = qkv[:, width + h * d:width + (h + 1) * d]
            v = qkv[:, 2 * width + h * d:2 * width + (h + 1) * d]
            s = np.where(causal, q @ k.T / math.sqrt(d), -np.inf)
            e = np.exp(s - s.max(1, keepdims=True))
            y[:, h * d:(h + 1) * d] = (e / e.sum(1, keepdims=True)) @ v
        x = x + y @ p("attn.c_proj.weight") + p("attn.c_proj.bias")
        a = layer_norm(x, p("ln_2.weight"), p("ln_2.bias"))
        f = a @ p("mlp.c_fc.weight") + p("mlp.c_fc.bias")
        g = 0.5 * f * (1 + np.tanh(math.sqrt(2 / math.pi) * (f + 0.044715 * f ** 3)))
        x = x + g @ p("mlp.c_proj.weight") + p("mlp.c_proj.bias")
    x = layer_norm(x, sd["ln_f.weight"], sd["ln_f.bias"])
    return x @ sd["wte.weight"].T, x


torch.manual_seed(1)
small = GPT2(vocab=37, ctx=16, width=24, heads=3, nlayers=2).double().eval()
with torch.no_grad():
    for t in small.state_dict().values():
        t.uniform_(-0.5, 0.5)       # biases and LayerNorms nonzero too
sd = {k: v.numpy() for k, v in small.state_dict().items()}
tok = np.array([3, 0, 36, 5, 5, 17, 2, 9, 30, 1, 4])


def rel_err(got, want):
    return float(np.max(np.abs(got - want)) / np.max(np.abs(want)))


with torch.no_grad():
    out = small(torch.from_numpy(tok))
got, hid = out["logits"].numpy(), out["hidden"].numpy()
want, want_hid = gpt2_numpy(sd, tok, 3, 2)
err = max(rel_err(got, want), rel_err(hid, want_hid))
check("gpt2: forward equals an independent NumPy GPT-2 (logits, hidden)",
      err < 1e-12 and got.shape == (11, 37) and hid.shape == (11, 24), "error %.3g" % err)
with torch.no_grad():
    got2 = small(torch.from_numpy(tok[None, :6]))["logits"].numpy()
check("gpt2: causal (a prefix gives the same logits), batched input",
      got2.shape == (1, 6, 37) and np.allclose(got2[0], got[:6], rtol=0, atol=1e-12))
small.positions = 3
inp = [tr.GraphBuf("input", "ids", "i64", (1, 11), (0.0, 37.0))]
outs = [tr.GraphBuf("output", "hidden", "f32", (1, 11, 24), None),
        tr.GraphBuf("output", "logits", "f32", (1, 3, 37), None)]
out, macs = tr.run_model(small, inp, outs)
ids0 = tr.tec_default(inp[0])[0]
want, want_hid = gpt2_numpy(sd, ids0, 3, 2)
check("gpt2: P = 3 gives the logits of the last 3 positions, by output name",
      rel_err(out["logits"][0], want[-3:]) < 1e-12 and rel_err(out["hidden"][0], want_hid) < 1e-12)
check("gpt2: MACs of Conv1D, attention matmuls and the LM head",
      macs["h.1.attn.c_attn"] == 11 * 72 * 24 and macs["h.0.attn.c_proj"] == 11 * 24 * 24
      and macs["h.0.mlp.c_fc"] == 11 * 96 * 24 and macs["h.1.mlp.c_proj"] == 11 * 24 * 96
      and macs["h.0.attn.scores"] == 3 * 11 * 11 * 8 and macs["h.1.attn.mix"] == 3 * 11 * 8 * 11
      and macs["lm_head"] == 3 * 37 * 24 and len(macs) == 2 * 6 + 1, macs)
msg = error_of(tr.run_model, small, inp, outs[:1] + [tr.GraphBuf("output", "probs", "f32", (3,), None)])
check("gpt2: an output the model does not have is an error",
      msg == "the PyTorch model has no output probs (it has logits, hidden)", msg)
small.positions = 12
msg = error_of(small, torch.from_numpy(tok))
check("gpt2: more positions than tokens is an error",
      msg == "gpt2: P = 12 positions, but the sequence has 11", msg)
small.positions = None
msg = error_of(small, torch.zeros(17, dtype=torch.int64))
check("gpt2: longer than the context is an error",
      msg == "gpt2: sequence length 17 exceeds the context of 16", msg)
msg = error_of(small, torch.tensor([0, 37]))
check("gpt2: token id out of range is an error", msg == "gpt2: token ids must be in "
      "[0, 37); the input holds ids from 0 to 37", msg)
small.positions = 3
given = tr.load_inputs(["ids=" + npy("ids.npy", tok[None, :].astype(np.int64))], inp)
out, _ = tr.run_model(small, inp, outs, given)
want, want_hid = gpt2_numpy(sd, tok, 3, 2)
check("gpt2: --input token ids (i64) feed the forward",
      rel_err(out["logits"][0], want[-3:]) < 1e-12 and rel_err(out["hidden"][0], want_hid) < 1e-12)
msg = error_of(tr.load_inputs, ["ids=" + npy("ids32.npy", tok[None, :].astype(np.int32))], inp)
check("gpt2: --input ids must be i64", msg is not None and msg.endswith(
    "ids32.npy is i32[1, 11] but the program declares i64[1, 11]"), msg)
small.positions = None

full = tr.build_model("gpt2", None, [("T", "64"), ("P", "2")])
check("gpt2: -D P=2 sets the positions", full.positions == 2, full.positions)
msg = error_of(tr.build_model, "gpt2", None, [("P", "-1")])
check("gpt2: -D P must be a number of positions",
      msg == "-D P=-1: the number of positions must be an integer", msg)
fw = tr.weight_tensors(full)
shapes = {n: tuple(t.shape) for n, t in fw.items()}
check("gpt2 small: 124439808 parameters, head tied",
      sum(t.numel() for t in fw.values()) == 124439808
      and sum(p.numel() for p in full.parameters()) == 124439808)
check("gpt2 small: GPT-2's names and Conv1D shapes",
      len(shapes) == 2 + 12 * 12 + 2
      and shapes["wte.weight"] == (50257, 768) and shapes["wpe.weight"] == (1024, 768)
      and shapes["h.11.attn.c_attn.weight"] == (768, 2304)
      and shapes["h.0.attn.c_attn.bias"] == (2304,)
      and shapes["h.3.attn.c_proj.weight"] == (768, 768)
      and shapes["h.5.mlp.c_fc.weight"] == (768, 3072)
      and shapes["h.5.mlp.c_proj.weight"] == (3072, 768)
      and shapes["ln_f.bias"] == (768,), sorted(shapes)[:5])
del full, fw

# ---------------------------------------------------------------- the zoo

# torchvision's published parameter counts and GMACs ("GFLOPS" in its docs).
ZOO = {"resnet18": (11689512, 1.81), "resnet50": (25557032, 4.09),
       "efficientnet_b0": (5288548, 0.39), "googlenet": (6624904, 1.50),
       "mobilenet_v2": (3504872, 0.30)}
for name, (nparams, gmacs) in ZOO.items():
    m = tr.build_model(name, None, [])
    inputs = [tr.GraphBuf("input", "image", "f32", (1, 3, 224, 224), (-1.0, 1.0))]
    _, macs = tr.run_model(m, inputs, [tr.GraphBuf("output", "logits", "f32", (1, 1000), None)])
    total = sum(macs.values()) / 1e9
    check("%s: %d parameters, %.2f GMACs" % (name, nparams, gmacs),
          sum(p.numel() for p in m.parameters()) == nparams
          and round(total, 2) == gmacs, "%.4f GMACs" % total)

shutil.rmtree(tmp)
print("%d failed" % failures)
sys.exit(1 if failures else 0)
