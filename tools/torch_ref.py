#!/usr/bin/python3
"""tools/torch_ref.py — PyTorch reference outputs for tec's model zoo.

    /usr/bin/python3 tools/torch_ref.py MODEL --tec ./tec \\
        --program examples/MODEL.te --out testsuite/models/MODEL [-D T=128]

builds MODEL in PyTorch, asks tec (`--emit=tir --passes=`) for the program's
inputs, parameters and outputs, checks that tec's parameters are exactly the
model's state_dict (names and shapes), fills both with tec's default data
(doc/data.md, through testsuite/tecref.py), runs the model in float64 and
writes OUT/expected/OUTPUT.npy and OUT/meta.json.  Other modes:

    --export-weights DIR   write the state_dict as DIR/NAME.npy for tec --weights
    --torch-init           use PyTorch's own initialization instead of tec's
                           default data for the parameters (needs --export-weights)
    --compare DIR          compare tec's --save-outputs DIR with the reference
                           (max |got - ref| / max |ref| per output, limit 1e-4)
    --input NAME=FILE.npy  feed FILE to input NAME instead of tec's default
                           data, as tec --input does (the same dtype and shape
                           checks; repeatable; not with --out)
    --weights DIR          read the parameters from DIR/NAME.npy, as tec
                           --weights does (the same checks), instead of
                           filling them: the files tec read, e.g. an earlier
                           --export-weights --torch-init or your own export

MODEL is one of resnet18 resnet50 efficientnet_b0 googlenet mobilenet_v2 gpt2
tiny (a small conv/bn/relu/pool/linear net for testing this script), or any
name together with --model-file FILE.py, a file defining build(defines) that
returns an nn.Module.  gpt2 reads -D P=N as examples/gpt2.te does (logits of
the last N positions).  doc/models.md explains the conventions; its section
5 checks a model by hand:

    torch_ref.py resnet18 --export-weights W --torch-init
    tec -O2 examples/resnet18.te --weights W --input image=x.npy --save-outputs out
    torch_ref.py resnet18 --weights W --input image=x.npy --compare out

Needs Debian's python3-torch and python3-torchvision (run it with
/usr/bin/python3).  Every problem is reported as `torch_ref.py: error: ...`
with exit status 1; a failed comparison exits with status 1 as well.
"""
import argparse
import json
import math
import os
import re
import runpy
import subprocess
import sys

import numpy as np

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True    # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(TOP, "testsuite"))
import tecref  # noqa: E402  (the documented default-data formula)

PROG = "torch_ref.py"
LIMIT = 1e-4                # max relative error tec may have
ZOO = ["resnet18", "resnet50", "efficientnet_b0", "googlenet",
       "mobilenet_v2", "gpt2", "tiny"]


class RefError(Exception):
    """A problem with the user's input; main() prints it and exits 1."""


# ---------------------------------------------------------------- tec's IR
#
# tec prints the module as text (doc/ir.md).  Only the `graph { ... }`
# section matters here, but the whole text is tokenized so that braces
# inside strings or function bodies can never confuse the search for it.

TOKEN_RE = re.compile(r"""
    (?P<skip>\s+|\#[^\n]*)
  | (?P<str>"(?:[^"\\\n]|\\.)*")
  | (?P<num>[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?[a-z0-9]*)
  | (?P<func>@)
  | (?P<id>[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)*)
  | (?P<punct>\.\.|==|!=|<=|>=|&&|\|\||[()\[\]{},:=<>+\-*/!])
""", re.VERBOSE)

SIMPLE_ESCAPES = {"n": 10, "t": 9, "r": 13, "\\": 92, '"': 34, "'": 39}


def unquote(text):
    """The value of a quoted IR name: C escapes, octal \\ooo, hex \\xHH."""
    body = text[1:-1].encode("utf-8")
    out = bytearray()
    i = 0
    while i < len(body):
        c = body[i]
        i += 1
        if c != 0x5C:
            out.append(c)
            continue
        e = chr(body[i])
        if e in SIMPLE_ESCAPES:
            out.append(SIMPLE_ESCAPES[e])
            i += 1
        elif e in "01234567":
            j = i
            while j < len(body) and j < i + 3 and chr(body[j]) in "01234567":
                j += 1
            out.append(int(body[i:j], 8) & 0xFF)
            i = j
        elif e == "x":
            j = i + 1
            while (j < len(body) and j < i + 3
                   and chr(body[j]) in "0123456789abcdefABCDEF"):
                j += 1
            if j == i + 1:
                raise RefError("tec's IR: bad \\x escape in %s" % text)
            out.append(int(body[i + 1:j], 16))
            i = j
        else:
            raise RefError("tec's IR: unknown escape \\%s in %s" % (e, text))
    return out.decode("utf-8")


def tokenize(text):
    """(kind, value, line) triples; kind is str, num, func, id or punct."""
    toks = []
    pos = 0
    line = 1
    while pos < len(text):
        m = TOKEN_RE.match(text, pos)
        if not m:
            raise RefError("tec's IR, line %d: unexpected character %r"
                           % (line, text[pos]))
        kind = m.lastgroup
        if kind != "skip":
            toks.append((kind, m.group(), line))
        line += m.group().count("\n")
        pos = m.end()
    return toks


class GraphBuf:
    """One buffer of tec's graph: role input/param/output/temp, its name,
    dtype ("f32", "i64", ...), shape, default-data range (None if the IR
    gives no init), and for a param whether it is `state` (a non-trainable
    weight such as BatchNorm's running statistics: a PyTorch buffer)."""

    def __init__(self, role, name, dtype, shape, init, state=False):
        self.role = role
        self.name = name
        self.dtype = dtype
        self.shape = shape
        self.init = init
        self.state = state

    def describe(self):
        return "%s[%s]" % (self.dtype, ", ".join(str(d) for d in self.shape))


class GraphParser:
    """Reads the graph section of doc/ir.md's grammar from the tokens."""

    ROLES = ("input", "param", "output", "temp", "arg", "local")

    def __init__(self, toks):
        self.toks = toks
        self.i = 0

    def fail(self, what):
        if self.i < len(self.toks):
            kind, val, line = self.toks[self.i]
            raise RefError("tec's IR, line %d: expected %s, found '%s'"
                           % (line, what, val))
        raise RefError("tec's IR: expected %s, found the end of the text" % what)

    def peek(self):
        return self.toks[self.i] if self.i < len(self.toks) else (None, None, 0)

    def take(self, kind=None, value=None, what=None):
        k, v, _ = self.peek()
        if k is None or (kind and k != kind) or (value and v != value):
            if not what:
                what = "'%s'" % (value or "@") if value or kind == "func" else kind
            self.fail(what or "more text")
        self.i += 1
        return v

    def name(self):
        k, v, _ = self.peek()
        if k == "id":
            self.i += 1
            return v
        if k == "str":
            self.i += 1
            return unquote(v)
        self.fail("a name")

    def number(self):
        """An init bound: [-] (INT | FLOAT | inf | nan), dtype suffix ignored."""
        sign = 1.0
        if self.peek()[1] == "-":
            self.i += 1
            sign = -1.0
        k, v, _ = self.peek()
        m = re.fullmatch(r"([0-9.eE+-]+?)(f16|bf16|i32|f)?", v or "")
        if k == "num" and m:
            self.i += 1
            return sign * float(m.group(1))
        if k == "id" and v in ("inf", "inff", "nan", "nanf"):
            self.i += 1
            return sign * float(v[:3])
        self.fail("a number")

    def buffer(self, role):
        name = self.name()
        self.take("punct", ":")
        dtype = self.take("id", what="a dtype")
        self.take("punct", "[")
        shape = []
        while self.peek()[1] != "]":
            if shape:
                self.take("punct", ",")
            shape.append(int(self.take("num", what="an extent")))
        self.take("punct", "]")
        init = None
        state = False
        # Flags after the type, each at most once: `state` and `init(lo, hi)`.
        while self.peek()[0] == "id" and self.peek()[1] in ("state", "init"):
            flag = self.peek()[1]
            if (flag == "state" and state) or (flag == "init" and init):
                raise RefError("tec's IR, line %d: '%s' given twice for %s"
                               % (self.peek()[2], flag, name))
            self.i += 1
            if flag == "state":
                state = True
                continue
            self.take("punct", "(")
            lo = self.number()
            self.take("punct", ",")
            hi = self.number()
            self.take("punct", ")")
            init = (lo, hi)
        if state and role != "param":
            raise RefError("tec's IR, line %d: only a param can be state (%s %s)"
                           % (self.toks[self.i - 1][2], role, name))
        return GraphBuf(role, name, dtype, tuple(shape), init, state)

    def call(self):
        self.take("func")
        self.name()
        self.take("punct", "(")
        while self.peek()[1] != ")":
            self.take()
        self.take("punct", ")")

    def graph(self):
        """Finds `graph {` outside every function and reads its buffers."""
        depth = 0
        while self.i < len(self.toks):
            k, v, _ = self.toks[self.i]
            if depth == 0 and (k, v) == ("id", "graph"):
                break
            if (k, v) == ("punct", "{"):
                depth += 1
            elif (k, v) == ("punct", "}"):
                depth -= 1
            self.i += 1
        else:
            raise RefError("tec's IR has no graph section")
        self.i += 1
        self.take("punct", "{")
        bufs = []
        while self.peek()[1] != "}":
            k, v, _ = self.peek()
            if (k, v) == ("id", "call"):
                self.i += 1
                self.call()
            elif k == "id" and v in self.ROLES:
                self.i += 1
                bufs.append(self.buffer(v))
            else:
                self.fail("a graph buffer or call")
        self.take("punct", "}")
        return bufs


def parse_graph(text):
    """The graph buffers of a module printed by tec, in program order."""
    return GraphParser(tokenize(text)).graph()


def tec_graph(tec, program, tec_args):
    """Runs `tec --emit=tir --passes= ARGS PROGRAM` and parses its graph."""
    argv = [tec, "--emit=tir", "--passes="] + tec_args + [program]
    try:
        r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    except OSError as e:
        raise RefError("cannot run %s: %s" % (tec, e.strerror))
    if r.returncode != 0:
        raise RefError("%s failed (exit status %d):\n%s"
                       % (" ".join(argv), r.returncode,
                          r.stderr.decode("utf-8", "replace").rstrip()))
    return parse_graph(r.stdout.decode("utf-8"))


# ---------------------------------------------------------------- models

def build_torchvision(name):
    import torchvision.models as tvm
    if name == "googlenet":
        # No auxiliary heads, and no input re-normalization: the tec program
        # feeds the image to conv1 as it is (doc/models.md).
        return tvm.googlenet(weights=None, aux_logits=False,
                             init_weights=False, transform_input=False)
    return getattr(tvm, name)(weights=None)


def torch_modules():
    """The nn.Module classes of the GPT-2 and tiny models.  Defined in a
    function so that `import torch` happens only when a model is built."""
    import torch
    from torch import nn
    import torch.nn.functional as F

    class Conv1D(nn.Module):
        """GPT-2's linear layer, y = x W + b with weight [in, out]: the
        transpose of nn.Linear's, as in the published checkpoints."""

        def __init__(self, nin, nout, std=0.02):
            super().__init__()
            self.weight = nn.Parameter(torch.empty(nin, nout))
            self.bias = nn.Parameter(torch.zeros(nout))
            nn.init.normal_(self.weight, std=std)

        def forward(self, x):
            return x @ self.weight + self.bias

        def macs(self, inputs, output):
            return output.numel() * self.weight.shape[0]

    class MatMul(nn.Module):
        """a @ b as a module, so that the MAC-counting hooks see it."""

        def forward(self, a, b):
            return a @ b

        def macs(self, inputs, output):
            return output.numel() * inputs[0].shape[-1]

    class Attention(nn.Module):
        """Causal multi-head self-attention with a fused qkv projection."""

        def __init__(self, width, heads, nlayers):
            super().__init__()
            self.heads = heads
            self.c_attn = Conv1D(width, 3 * width)
            self.c_proj = Conv1D(width, width, 0.02 / math.sqrt(2 * nlayers))
            self.scores = MatMul()
            self.mix = MatMul()

        def split(self, x):
            # [..., T, C] -> [..., heads, T, C / heads]
            t = x.shape[:-1] + (self.heads, x.shape[-1] // self.heads)
            return x.reshape(t).transpose(-3, -2)

        def forward(self, x):
            width = x.shape[-1]
            q, k, v = self.c_attn(x).split(width, dim=-1)
            q, k, v = self.split(q), self.split(k), self.split(v)
            s = self.scores(q, k.transpose(-1, -2)) / math.sqrt(q.shape[-1])
            n = x.shape[-2]
            future = torch.ones(n, n, dtype=torch.bool).triu(1)
            p = F.softmax(s.masked_fill(future, -math.inf), dim=-1)
            y = self.mix(p, v).transpose(-3, -2)
            return self.c_proj(y.reshape(x.shape))

    class MLP(nn.Module):
        def __init__(self, width, nlayers):
            super().__init__()
            self.c_fc = Conv1D(width, 4 * width)
            self.c_proj = Conv1D(4 * width, width, 0.02 / math.sqrt(2 * nlayers))

        def forward(self, x):
            return self.c_proj(F.gelu(self.c_fc(x), approximate="tanh"))

    class Block(nn.Module):
        """Pre-LayerNorm transformer block."""

        def __init__(self, width, heads, nlayers):
            super().__init__()
            self.ln_1 = nn.LayerNorm(width, eps=1e-5)
            self.attn = Attention(width, heads, nlayers)
            self.ln_2 = nn.LayerNorm(width, eps=1e-5)
            self.mlp = MLP(width, nlayers)

        def forward(self, x):
            x = x + self.attn(self.ln_1(x))
            return x + self.mlp(self.ln_2(x))

    class GPT2(nn.Module):
        """GPT-2 small with its usual state_dict names.  Input: token ids
        [..., T].  Outputs (a dict, by examples/gpt2.te's output names):
        `logits` [..., P, vocab] for the last P positions (all T when
        positions is None) and `hidden` [..., T, width], the final hidden
        state after ln_f.  The LM head multiplies by wte.weight^T and has no
        parameter of its own."""

        def __init__(self, vocab=50257, ctx=1024, width=768, heads=12, nlayers=12,
                     positions=None):
            super().__init__()
            self.ctx = ctx
            self.positions = positions
            self.wte = nn.Embedding(vocab, width)
            self.wpe = nn.Embedding(ctx, width)
            nn.init.normal_(self.wte.weight, std=0.02)
            nn.init.normal_(self.wpe.weight, std=0.01)
            self.h = nn.ModuleList(Block(width, heads, nlayers) for _ in range(nlayers))
            self.ln_f = nn.LayerNorm(width, eps=1e-5)
            self.lm_head = MatMul()

        def forward(self, ids):
            n = ids.shape[-1]
            if n > self.ctx:
                raise RefError("gpt2: sequence length %d exceeds the context of %d"
                               % (n, self.ctx))
            vocab = self.wte.weight.shape[0]
            if ids.numel() and (int(ids.min()) < 0 or int(ids.max()) >= vocab):
                raise RefError("gpt2: token ids must be in [0, %d); the input "
                               "holds ids from %d to %d"
                               % (vocab, int(ids.min()), int(ids.max())))
            p = n if self.positions is None else self.positions
            if not 1 <= p <= n:
                raise RefError("gpt2: P = %d positions, but the sequence has %d"
                               % (p, n))
            x = self.wte(ids.long()) + self.wpe(torch.arange(n))
            for block in self.h:
                x = block(x)
            hidden = self.ln_f(x)
            logits = self.lm_head(hidden[..., n - p:, :], self.wte.weight.t())
            return {"logits": logits, "hidden": hidden}

    class Tiny(nn.Module):
        """conv1 (3x3, pad 1, no bias) -> bn1 -> relu -> mean over H, W -> fc;
        testsuite/models/tiny/tiny.te is the same net in tec."""

        def __init__(self, channels=3, width=8, classes=5):
            super().__init__()
            self.conv1 = nn.Conv2d(channels, width, 3, padding=1, bias=False)
            self.bn1 = nn.BatchNorm2d(width)
            self.fc = nn.Linear(width, classes)

        def forward(self, x):
            x = torch.relu(self.bn1(self.conv1(x)))
            return self.fc(x.mean(dim=(2, 3)))

    return {"gpt2": GPT2, "tiny": Tiny}


def build_model(name, model_file, defines):
    """The nn.Module for MODEL, in float64 and eval mode."""
    if model_file:
        try:
            ns = runpy.run_path(model_file)
        except Exception as e:
            raise RefError("%s: %s: %s" % (model_file, type(e).__name__, e))
        if not callable(ns.get("build")):
            raise RefError("%s defines no build(defines) function" % model_file)
        model = ns["build"](dict(defines))
    elif name == "gpt2":
        # -D P=N: logits for the last N positions only (examples/gpt2.te's P).
        positions = dict(defines).get("P")
        if positions is not None:
            if not re.fullmatch(r"[0-9]+", positions):
                raise RefError("-D P=%s: the number of positions must be an "
                               "integer" % positions)
            positions = int(positions)
        model = torch_modules()["gpt2"](positions=positions)
    elif name == "tiny":
        model = torch_modules()["tiny"]()
    elif name in ZOO:
        model = build_torchvision(name)
    else:
        raise RefError("unknown model '%s' (known: %s; or give --model-file)"
                       % (name, " ".join(ZOO)))
    import torch
    if not isinstance(model, torch.nn.Module):
        raise RefError("%s: build() returned %s, not an nn.Module"
                       % (model_file, type(model).__name__))
    return model.double().eval()


# ---------------------------------------------------------------- weights

NP_DTYPES = {"f16": np.float16, "f32": np.float32, "f64": np.float64,
             "i32": np.int32, "i64": np.int64, "bool": np.bool_}


def np_dtype(buf):
    if buf.dtype not in NP_DTYPES:
        raise RefError("%s %s is %s, which NumPy cannot hold"
                       % (buf.role, buf.name, buf.dtype))
    return NP_DTYPES[buf.dtype]


def tec_default(buf):
    """The contents tec gives BUF without a file (doc/data.md)."""
    if buf.init is None:
        raise RefError("%s %s has no init range in tec's IR, so its default "
                       "data is unknown" % (buf.role, buf.name))
    lo, hi = buf.init
    dt = np_dtype(buf)
    if dt is np.bool_:     # integer formula, then nonzero
        return tecref.default(buf.name, buf.shape, lo, hi, np.int64) != 0
    return tecref.default(buf.name, buf.shape, lo, hi, dt)


def weight_tensors(model):
    """The state_dict entries tec has as parameters, in order: without
    BatchNorm's num_batches_tracked (a training counter tec does not have),
    and with each tied tensor (one storage under two names) only under its
    first name."""
    seen = set()
    out = {}
    for name, t in model.state_dict(keep_vars=False).items():
        if name.endswith("num_batches_tracked"):
            continue
        key = (t.data_ptr(), tuple(t.shape), tuple(t.stride()))
        if t.numel() and key in seen:
            continue
        seen.add(key)
        out[name] = t
    return out


def buffer_names(model):
    """The state_dict names that are buffers (running statistics), not
    trainable parameters."""
    return {n for n, _ in model.named_buffers()}


def check_params(weights, params, buffers):
    """tec's parameters must be exactly the state_dict: names and shapes;
    and tec's `state` params exactly its BUFFERS (so that tec's trainable
    parameter count is PyTorch's sum(p.numel() for p in parameters()))."""
    tec = {b.name: b for b in params}
    missing = [n for n in weights if n not in tec]
    extra = [n for n in tec if n not in weights]
    shapes = [n for n in weights if n in tec
              and tuple(weights[n].shape) != tec[n].shape]
    kinds = [n for n in weights if n in tec and tec[n].state != (n in buffers)]
    if not (missing or extra or shapes or kinds):
        return
    lines = ["tec's parameters do not match the PyTorch model's state_dict:"]
    for n in missing:
        lines.append("  missing in tec: %s %s" % (n, list(weights[n].shape)))
    for n in extra:
        lines.append("  not in PyTorch: %s %s" % (n, list(tec[n].shape)))
    for n in shapes:
        lines.append("  shape of %s: tec %s, PyTorch %s"
                     % (n, list(tec[n].shape), list(weights[n].shape)))
    for n in kinds:
        if n in buffers:
            lines.append("  %s is a buffer in PyTorch but a trainable param in "
                         "tec (declare it state)" % n)
        else:
            lines.append("  %s is trainable in PyTorch but state in tec "
                         "(declare it param)" % n)
    raise RefError("\n".join(lines))


def fill_weights(weights, params, torch_init):
    """Gives every weight the values tec will use: its default data, or
    (torch_init) PyTorch's own values rounded to tec's dtype."""
    import torch
    tec = {b.name: b for b in params}
    with torch.no_grad():
        for name, t in weights.items():
            buf = tec[name]
            if torch_init:
                v = t.cpu().numpy().astype(np_dtype(buf))
            else:
                v = tec_default(buf)
            t.copy_(torch.from_numpy(v.astype(np.float64)).to(t.dtype))


def stray_files(wdir, tec):
    """The .npy files in WDIR that name no parameter in TEC, sorted."""
    try:
        files = os.listdir(wdir)
    except OSError as e:
        raise RefError("--weights %s: %s" % (wdir, e.strerror or e))
    return sorted(f for f in files if f.endswith(".npy") and f[:-4] not in tec)


def read_weights(weights, params, wdir):
    """Gives every weight the contents of WDIR/NAME.npy, with tec --weights's
    checks: a file for every parameter, of its dtype and shape, and no
    file that names no parameter."""
    import torch
    tec = {b.name: b for b in params}
    what = "--weights " + wdir
    stray = stray_files(wdir, tec)
    if stray:
        raise RefError("%s: %s matches no parameter of the program" % (what, stray[0]))
    with torch.no_grad():
        for name, t in weights.items():
            path = os.path.join(wdir, name + ".npy")
            if not os.path.exists(path):
                raise RefError("%s: no file for parameter %s (%s): %s"
                               % (what, name, tec[name].describe(), path))
            a = load_npy(what, path, tec[name])
            t.copy_(torch.from_numpy(a.astype(np.float64)).to(t.dtype))


def export_weights(weights, params, wdir):
    """DIR/NAME.npy for every parameter, in tec's dtype, ready for --weights.
    A stray .npy file would make tec reject the directory, so it is an error
    here rather than deleted."""
    tec = {b.name: b for b in params}
    os.makedirs(wdir, exist_ok=True)
    stray = stray_files(wdir, tec)
    if stray:
        raise RefError("%s: %s names no parameter of the program (tec --weights "
                       "rejects stray files); use an empty directory"
                       % (wdir, stray[0]))
    for name, t in weights.items():
        a = t.detach().cpu().numpy().astype(np_dtype(tec[name]))
        save_npy(os.path.join(wdir, name + ".npy"), a)


def save_npy(path, a):
    """np.save to PATH.tmp, then rename: never a half-written file."""
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        np.save(f, np.ascontiguousarray(a))
    os.replace(tmp, path)


# ---------------------------------------------------------------- running

def count_macs(model):
    """Forward hooks that count multiply-accumulates densely: convolutions
    (per output element, in_channels/groups * kernel size), nn.Linear (per
    output element, in_features) and any module with a macs(inputs, output)
    method (GPT-2's Conv1D and MatMul).  Returns (per-layer dict, handles)."""
    from torch import nn
    per_layer = {}
    handles = []

    def hook_for(name, fn):
        def hook(mod, inputs, output):
            per_layer[name] = per_layer.get(name, 0) + int(fn(mod, inputs, output))
        return hook

    def conv(mod, inputs, output):
        return (output.numel() * (mod.in_channels // mod.groups)
                * math.prod(mod.kernel_size))

    def linear(mod, inputs, output):
        return output.numel() * mod.in_features

    def custom(mod, inputs, output):
        return mod.macs(inputs, output)

    for name, mod in model.named_modules():
        fn = None
        if isinstance(mod, nn.modules.conv._ConvNd):
            fn = conv
        elif isinstance(mod, nn.Linear):
            fn = linear
        elif callable(getattr(mod, "macs", None)):
            fn = custom
        if fn:
            handles.append(mod.register_forward_hook(hook_for(name or "(model)", fn)))
    return per_layer, handles


def dtype_name(dt):
    """A NumPy dtype as tec names it (f32, i64, ...), or NumPy's own
    name (uint8, >f4) for one tec cannot read."""
    for name, t in NP_DTYPES.items():
        if dt == np.dtype(t):
            return name
    return dt.str if dt.byteorder == ">" else dt.name


def load_npy(what, path, buf):
    """The array in PATH after the checks tec makes on a file it reads for
    BUF: a .npy file of exactly BUF's dtype and shape (tec never converts a
    file).  WHAT starts each error message (the option that named PATH)."""
    try:
        with open(path, "rb") as f:
            if f.read(6) != b"\x93NUMPY":
                raise RefError("%s: %s is not a .npy file" % (what, path))
            f.seek(0)
            a = np.load(f, allow_pickle=False)
    except OSError as e:
        raise RefError("%s: cannot read %s: %s" % (what, path, e.strerror or e))
    except ValueError as e:
        raise RefError("%s: %s: %s" % (what, path, e))
    if a.dtype != np.dtype(np_dtype(buf)) or a.shape != buf.shape:
        got = "%s[%s]" % (dtype_name(a.dtype), ", ".join(str(d) for d in a.shape))
        raise RefError("%s: %s is %s but the program declares %s"
                       % (what, path, got, buf.describe()))
    return a


def load_inputs(specs, inputs):
    """The arrays of --input NAME=FILE.npy, {name: ndarray}: NAME must be an
    input of the program, given once, and its file must pass load_npy."""
    declared = {b.name: b for b in inputs}
    arrays = {}
    for spec in specs:
        name, path = spec.split("=", 1)
        what = "--input " + spec
        if name not in declared:
            raise RefError("%s: the program has no input named '%s' (its inputs: %s)"
                           % (what, name, ", ".join(declared) or "none"))
        if name in arrays:
            raise RefError("%s: input %s is given twice" % (what, name))
        arrays[name] = load_npy(what, path, declared[name])
    return arrays


def torch_input(buf, given):
    """The tensor forward gets for input BUF: the --input file's array if
    one was GIVEN, else tec's default data; floats widened to float64,
    token ids left integers."""
    import torch
    v = given[buf.name] if buf.name in given else tec_default(buf)
    if np.issubdtype(v.dtype, np.floating):
        return torch.from_numpy(v.astype(np.float64))
    return torch.from_numpy(np.ascontiguousarray(v))


def run_model(model, inputs, outputs, given=None):
    """Runs the model on tec's inputs (graph order = forward's positional
    arguments): the arrays in GIVEN by input name, default data for the
    rest.  Returns {output name: float64/int ndarray}."""
    import torch
    given = given or {}
    args = [torch_input(b, given) for b in inputs]
    per_layer, handles = count_macs(model)
    try:
        with torch.no_grad():
            got = model(*args)
    except RefError:
        raise
    except Exception as e:
        raise RefError("the PyTorch model failed on the inputs (%s): %s: %s"
                       % (", ".join(b.name + " " + b.describe() for b in inputs),
                          type(e).__name__, e))
    finally:
        for h in handles:
            h.remove()
    if isinstance(got, torch.Tensor):
        got = [got]
    if isinstance(got, dict):
        # Outputs by name: the program may output any of them.
        missing = [b.name for b in outputs if b.name not in got]
        if missing:
            raise RefError("the PyTorch model has no output %s (it has %s)"
                           % (", ".join(missing), ", ".join(got)))
        got = [got[b.name] for b in outputs]
    got = list(got)
    if len(got) != len(outputs):
        raise RefError("the PyTorch model returns %d tensors, tec's program "
                       "has %d outputs (%s)" % (len(got), len(outputs),
                                               ", ".join(b.name for b in outputs)))
    result = {}
    for b, t in zip(outputs, got):
        if tuple(t.shape) != b.shape:
            raise RefError("output %s: PyTorch gives %s, tec declares %s"
                           % (b.name, list(t.shape), b.describe()))
        result[b.name] = t.detach().cpu().numpy()
    return result, per_layer


# ---------------------------------------------------------------- results

def write_reference(out, outputs, ref):
    """OUT/expected/NAME.npy in tec's output dtype; stale files removed."""
    exp = os.path.join(out, "expected")
    os.makedirs(exp, exist_ok=True)
    names = {b.name + ".npy" for b in outputs}
    for f in os.listdir(exp):
        if f.endswith(".npy") and f not in names:
            os.remove(os.path.join(exp, f))
    for b in outputs:
        save_npy(os.path.join(exp, b.name + ".npy"), ref[b.name].astype(np_dtype(b)))


def program_path(path):
    """A file as meta.json records it: relative to the source tree when it
    lies inside it (so run-models.sh finds it from any srcdir)."""
    full = os.path.abspath(path)
    rel = os.path.relpath(full, TOP)
    return full if rel.startswith("..") else rel


def make_meta(a, bufs, weights, model, per_layer):
    import torch
    from torch import nn
    try:
        import torchvision
        tv = torchvision.__version__
    except ImportError:
        tv = None
    eps = sorted({m.eps for m in model.modules()
                  if isinstance(m, (nn.modules.batchnorm._BatchNorm, nn.LayerNorm))})

    def desc(b):
        d = {"dtype": b.dtype, "shape": list(b.shape)}
        if b.init is not None and b.role == "input":
            d["init"] = list(b.init)
        return d
    return {
        "model": a.model,
        "model_file": program_path(a.model_file) if a.model_file else None,
        "program": program_path(a.program),
        "tec_args": tec_args(a),
        "inputs": {b.name: desc(b) for b in bufs if b.role == "input"},
        "outputs": {b.name: desc(b) for b in bufs if b.role == "output"},
        "weights": (("files in %s" % program_path(a.weights)) if a.weights else
                    ("torch-init, seed %d" % a.seed) if a.torch_init else "tec default data"),
        # tec's parameter count: every state_dict tensor tec has (BatchNorm
        # running statistics included, num_batches_tracked and tied copies
        # not); torch_parameters is sum(p.numel() for p in parameters()),
        # the figure papers and torchvision publish.
        "parameters": sum(t.numel() for t in weights.values()),
        "torch_parameters": sum(p.numel() for p in model.parameters()),
        "macs": sum(per_layer.values()),
        "layer_macs": per_layer,
        "norm_eps": eps,
        "torch": torch.__version__,
        "torchvision": tv,
        "numpy": np.__version__,
    }


def json_text(v, depth=0):
    """JSON with the top two levels of dicts one entry a line and anything
    deeper on one line: short, and diffs well when a reference changes."""
    if not isinstance(v, dict) or depth >= 2 or not v:
        return json.dumps(v)
    pad = " " * (depth + 1)
    items = ",\n".join("%s%s: %s" % (pad, json.dumps(k), json_text(x, depth + 1))
                       for k, x in v.items())
    return "{\n%s\n%s}" % (items, " " * depth)


def write_meta(out, meta):
    path = os.path.join(out, "meta.json")
    with open(path + ".tmp", "w") as f:
        f.write(json_text(meta) + "\n")
    os.replace(path + ".tmp", path)


def compare(got_dir, outputs, ref):
    """Prints one line per output; True if every one is within LIMIT."""
    ok = True
    for b in outputs:
        path = os.path.join(got_dir, b.name + ".npy")
        try:
            g = np.load(path)
        except (OSError, ValueError) as e:
            print("%s: FAIL: cannot read %s: %s" % (b.name, path, e))
            ok = False
            continue
        if g.dtype != np_dtype(b) or g.shape != b.shape:
            print("%s: FAIL: %s is %s%s, expected %s"
                  % (b.name, path, g.dtype, list(g.shape), b.describe()))
            ok = False
            continue
        e = ref[b.name].astype(np.float64)
        scale = max(float(np.max(np.abs(e))) if e.size else 0.0, 1e-30)
        err = (float(np.max(np.abs(g.astype(np.float64) - e))) / scale
               if e.size else 0.0)
        good = math.isfinite(err) and err <= LIMIT
        print("%s: %s: max relative error %.3g (limit %g)"
              % (b.name, "PASS" if good else "FAIL", err, LIMIT))
        ok = ok and good
    return ok


# ---------------------------------------------------------------- main

def tec_args(a):
    args = []
    for d in a.define:
        args += ["-D", d]
    for i in a.include:
        args += ["-I", i]
    return args


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog=PROG, description="PyTorch reference outputs for tec's model zoo.",
        epilog="MODEL: " + " ".join(ZOO) + ", or any name with --model-file.")
    p.add_argument("model", metavar="MODEL")
    p.add_argument("--tec", default="./tec", help="the tec binary (default ./tec)")
    p.add_argument("--program", help="the tec program (default examples/MODEL.te)")
    p.add_argument("--out", help="write OUT/expected/*.npy and OUT/meta.json")
    p.add_argument("-D", dest="define", action="append", default=[],
                   metavar="NAME=VALUE", help="passed to tec (shape parameters)")
    p.add_argument("-I", dest="include", action="append", default=[],
                   metavar="DIR", help="passed to tec (import search path)")
    p.add_argument("--export-weights", metavar="DIR",
                   help="write the state_dict as DIR/NAME.npy for tec --weights")
    p.add_argument("--torch-init", action="store_true",
                   help="PyTorch's initialization instead of tec's default data")
    p.add_argument("--seed", type=int, default=0, help="torch seed for --torch-init")
    p.add_argument("--compare", metavar="DIR",
                   help="compare tec's --save-outputs DIR with the reference")
    p.add_argument("--model-file", metavar="FILE.py",
                   help="a file whose build(defines) returns the nn.Module")
    p.add_argument("--input", action="append", default=[], metavar="NAME=FILE.npy",
                   help="contents of input NAME, as for tec --input (repeatable)")
    p.add_argument("--weights", metavar="DIR",
                   help="parameters from DIR/NAME.npy, as for tec --weights")
    a = p.parse_args(argv)
    if not (a.out or a.export_weights or a.compare):
        p.error("nothing to do: give --out, --export-weights or --compare")
    if a.torch_init and not a.export_weights:
        p.error("--torch-init needs --export-weights: tec can only reproduce "
                "those weights by reading them")
    for d in a.define:
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.+", d):
            p.error("-D %s: expected NAME=VALUE" % d)
    for i in a.input:
        if not re.fullmatch(r"[^=]+=.+", i):
            p.error("--input %s: expected NAME=FILE.npy" % i)
    if a.weights and (a.export_weights or a.torch_init):
        p.error("--weights reads the parameters from files; it cannot be used "
                "with --export-weights or --torch-init")
    if a.input and a.out:
        # run-models.sh runs tec on default inputs only, so a reference made
        # from a file would be checked against the wrong outputs.
        p.error("--input cannot be used with --out (the model tests run tec "
                "on default inputs); use --compare")
    if a.program is None:
        a.program = os.path.join(TOP, "examples", a.model + ".te")
    return a


def main(argv):
    a = parse_args(argv)
    if a.model not in ZOO and not a.model_file:
        raise RefError("unknown model '%s' (known: %s; or give --model-file)"
                       % (a.model, " ".join(ZOO)))
    bufs = tec_graph(a.tec, a.program, tec_args(a))
    inputs = [b for b in bufs if b.role == "input"]
    params = [b for b in bufs if b.role == "param"]
    outputs = [b for b in bufs if b.role == "output"]
    if not outputs:
        raise RefError("%s has no outputs" % a.program)
    given = load_inputs(a.input, inputs)
    try:
        import torch
    except ImportError:
        raise RefError("PyTorch is not installed for %s (apt-get install "
                       "python3-torch python3-torchvision)" % sys.executable)
    torch.manual_seed(a.seed)
    model = build_model(a.model, a.model_file,
                        [tuple(d.split("=", 1)) for d in a.define])
    weights = weight_tensors(model)
    check_params(weights, params, buffer_names(model))
    if a.weights:
        read_weights(weights, params, a.weights)
    else:
        fill_weights(weights, params, a.torch_init)
    if a.export_weights:
        export_weights(weights, params, a.export_weights)
    ref, per_layer = run_model(model, inputs, outputs, given)
    if a.out:
        write_reference(a.out, outputs, ref)
        write_meta(a.out, make_meta(a, bufs, weights, model, per_layer))
    if a.compare:
        if not os.path.isdir(a.compare):
            raise RefError("%s: no such directory" % a.compare)
        if compare(a.compare, outputs, ref):
            return 0
        # The usual cause: tec read files that the reference did not.
        generated = [("input " + b.name) for b in inputs if b.name not in given]
        if params and not (a.weights or a.export_weights):
            generated.insert(0, "the weights")
        if generated:
            print("note: the reference used tec's default data for %s; if tec "
                  "read files there (--weights, --input), give this script the "
                  "same ones" % " and ".join(generated))
        return 1
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except RefError as e:
        sys.stderr.write("%s: error: %s\n" % (PROG, e))
        sys.exit(1)
