#!/usr/bin/python3
"""bench/models_torch.py — PyTorch's latency on one model of tec's zoo.

    /usr/bin/python3 bench/models_torch.py MODEL [--tec ./tec] [-D NAME=VALUE]
        [--threads 1,2] [--repeat 20] [--cap 20]

The PyTorch side of bench/models.sh.  Builds MODEL with tools/torch_ref.py's
builder (the same module `make check` compares tec against), asks tec for
the program's inputs (`tec --emit=tir --passes=`, so the shapes are the
program's own), fills the parameters and the inputs with tec's default data
(doc/data.md), so both sides compute on the same numbers, and converts the
model to float32 in eval mode, batch 1.  Then, for each thread count N:
torch.set_num_threads(N), torch.inference_mode(), warm-up runs (at least 2,
and until 1 s has passed, at most 10), then the median of REPEAT timed runs
(fewer when REPEAT runs would take more than CAP seconds, at least 3).
Times are wall clock (time.perf_counter) around model(*inputs).

Prints one line per thread count, for bench/models.sh to parse:

    torch-result MODEL threads=N median_ms=M runs=R

and `torch-version V` first.  Exit status 1 on an error (message on
stderr), 3 when PyTorch is not installed.
"""
import argparse
import os
import statistics
import sys
import time

sys.dont_write_bytecode = True
TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(TOP, "tools"))

PROG = "models_torch.py"


def main(argv):
    p = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n")[0])
    p.add_argument("model")
    p.add_argument("--tec", default=os.path.join(TOP, "tec"))
    p.add_argument("--program", help="default examples/MODEL.te")
    p.add_argument("-D", dest="define", action="append", default=[])
    p.add_argument("--threads", default="1,2", help="comma-separated counts")
    p.add_argument("--repeat", type=int, default=20)
    p.add_argument("--cap", type=float, default=20.0,
                   help="seconds the timed runs of one thread count may take")
    a = p.parse_args(argv)
    program = a.program or os.path.join(TOP, "examples", a.model + ".te")
    threads = [int(t) for t in a.threads.split(",") if t]

    try:
        import torch
    except ImportError:
        sys.stderr.write("%s: PyTorch is not installed for %s (apt-get install "
                         "python3-torch python3-torchvision)\n" % (PROG, sys.executable))
        return 3
    import torch_ref as ref     # tools/torch_ref.py: the model builders

    targs = []
    for d in a.define:
        targs += ["-D", d]
    bufs = ref.tec_graph(a.tec, program, targs)
    inputs = [b for b in bufs if b.role == "input"]
    params = [b for b in bufs if b.role == "param"]
    torch.manual_seed(0)
    model = ref.build_model(a.model, None, [tuple(d.split("=", 1)) for d in a.define])
    weights = ref.weight_tensors(model)
    ref.check_params(weights, params, ref.buffer_names(model))
    ref.fill_weights(weights, params, False)
    model = model.float().eval()
    args = []
    for b in inputs:
        t = ref.torch_input(b, {})
        args.append(t.float() if t.is_floating_point() else t)

    print("torch-version %s" % torch.__version__, flush=True)
    for n in threads:
        torch.set_num_threads(n)
        with torch.inference_mode():
            start = time.perf_counter()
            warm = 0
            while warm < 2 or (warm < 10 and time.perf_counter() - start < 1.0):
                t0 = time.perf_counter()
                model(*args)
                last = time.perf_counter() - t0
                warm += 1
            runs = max(min(a.repeat, 3), min(a.repeat, int(a.cap / max(last, 1e-9))))
            times = []
            for _ in range(runs):
                t0 = time.perf_counter()
                model(*args)
                times.append(time.perf_counter() - t0)
        print("torch-result %s threads=%d median_ms=%.3f runs=%d"
              % (a.model, n, 1e3 * statistics.median(times), runs), flush=True)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except Exception as e:      # RefError and anything the model raises
        sys.stderr.write("%s: error: %s: %s\n" % (PROG, type(e).__name__, e))
        sys.exit(1)
