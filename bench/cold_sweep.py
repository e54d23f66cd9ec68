#!/usr/bin/env python3
"""bench/cold_sweep.py — time to the first result of exported ONNX models,
with an empty cache and from the cache, for one or more tec binaries side
by side (A/B in turns, model by model, so both see the same load).

    bench/cold_sweep.py [--threads N] [--bin LABEL=PATH]... MODEL.onnx...

MODEL.onnx's inputs are the .npy files in MODEL.in/ (as bench/ort_export.py
writes them).  For every model and binary: a new, empty XDG_CACHE_HOME
(kernel, import, consts and run caches all empty), `tec -O2 --time-phases
MODEL.onnx --input ...` with TEC_NUM_THREADS=N (default 2), then the same
command once more (from the cache).  Printed per cell: elapsed seconds and,
in parentheses, the CPU seconds (user + system) of tec and every compiler
it ran; for the cold run also the C compiler's CPU and the kernels,
distinct kernels and units tec's compile row reports.  The CPU time holds
on a loaded machine; the elapsed time on a quiet two-processor machine is
about half the compiler's CPU plus the serial parts.  The load average is
printed with each row.
"""
import os, re, resource, shutil, subprocess, sys, tempfile, time


def run(cmd, env):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True)
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, p.returncode, p.stderr


def compile_row(err):
    """The C compiler's CPU seconds and 'kernels/distinct/units' of --time-phases."""
    m = re.search(r"^\s*compile(?: \(\d+\))?\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+(\d+) kernels, "
                  r"(\d+) distinct, (\d+) units", err, re.M)
    if not m:
        return None, "-"
    return float(m.group(3)) / 1000, "%s/%s/%s" % (m.group(4), m.group(5), m.group(6))


def main(argv):
    threads, bins, models = "2", [], []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--threads":
            threads = argv[i + 1]; i += 2; continue
        if a == "--bin":
            label, _, path = argv[i + 1].partition("="); bins.append((label, path)); i += 2; continue
        models.append(a); i += 1
    if not bins:
        bins = [("tec", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tec"))]
    print("cold_sweep: tec -O2 --time-phases, TEC_NUM_THREADS=%s; cells: elapsed (CPU) s; "
          "cold also cc CPU s and kernels/distinct/units" % threads)
    print("%-26s" % "model" + "".join(" | %-44s" % l for l, _ in bins) + " | load")
    sys.stdout.flush()
    for onnx in models:
        base = onnx[:-5] if onnx.endswith(".onnx") else onnx
        args = []
        ind = base + ".in"
        if os.path.isdir(ind):
            for f in sorted(os.listdir(ind)):
                if f.endswith(".npy"):
                    args += ["--input", "%s=%s" % (f[:-4], os.path.join(ind, f))]
        row = "%-26s" % os.path.basename(base)
        for label, path in bins:
            cache = tempfile.mkdtemp(prefix="cold_sweep.")
            env = dict(os.environ, XDG_CACHE_HOME=cache, TEC_NUM_THREADS=threads,
                       TEC_CACHE_MAX="16G")
            cmd = [path, "-O2", "--time-phases", onnx] + args
            w, c, rc, err = run(cmd, env)
            cc, kern = compile_row(err)
            w2, c2, rc2, _ = run(cmd, env)
            shutil.rmtree(cache, ignore_errors=True)
            cold = "FAIL" if rc else "%.2f (%.2f)" % (w, c)
            warm = "FAIL" if rc2 else "%.2f (%.2f)" % (w2, c2)
            row += " | %-14s cc %-5s %-11s %-13s" % (cold, "%.2f" % cc if cc is not None else "-",
                                                     kern, warm)
        row += " | " + " ".join(open("/proc/loadavg").read().split()[:1])
        print(row)
        sys.stdout.flush()


if __name__ == "__main__":
    main(sys.argv[1:])
