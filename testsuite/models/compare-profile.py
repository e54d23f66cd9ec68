"""compare-profile.py META.json REPORT.json: tec's profile against PyTorch.

META.json is a model's reference (tools/torch_ref.py); REPORT.json is
`tec --profile --report=REPORT.json` of the same program with the same
options.  Checks, one line each:

- totals.macs equals meta's `macs` (forward hooks in PyTorch);
- totals.params equals meta's `torch_parameters`
  (sum(p.numel() for p in model.parameters()));
- for every entry of meta's `layer_macs`, the tec layer of the same name
  has exactly those MACs (a PyTorch module path names its tec layer:
  `h.0.attn.c_attn`, `layer1.0.conv1`; a tec layer made of several stages
  is found as the block of that name);
- no other tec layer has MACs.

Exit status 1 if any check fails."""
import json
import sys

LIST_MAX = 20       # mismatching layers printed before "... and N more"


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        sys.exit("compare-profile.py: %s: %s" % (path, e))


def main(meta_path, report_path):
    meta = load(meta_path)
    report = load(report_path)
    ok = True

    def total(what, got, want):
        nonlocal ok
        good = got == want
        ok = ok and good
        print("%s: %s: tec %s, PyTorch %s" % (what, "PASS" if good else "FAIL", got, want))

    total("macs", report["totals"]["macs"], meta["macs"])
    total("params", report["totals"]["params"], meta["torch_parameters"])

    layers = {r["name"]: r for r in report["layers"]}
    blocks = {r["name"]: r for r in report["blocks"]}
    bad = []
    for name, want in meta["layer_macs"].items():
        row = layers.get(name) or blocks.get(name)
        if row is None:
            bad.append("%s: no tec layer of that name (PyTorch: %d MACs)" % (name, want))
        elif row["macs"] != want:
            bad.append("%s: tec %d MACs, PyTorch %d" % (name, row["macs"], want))
    covered = set(meta["layer_macs"])
    for name, row in layers.items():
        inside = any(name.startswith(c + ".") for c in covered)
        if row["macs"] and name not in covered and not inside:
            bad.append("%s: tec %d MACs, PyTorch has no such layer" % (name, row["macs"]))
    print("layer macs: %s: %d PyTorch layers, %d mismatches"
          % ("FAIL" if bad else "PASS", len(meta["layer_macs"]), len(bad)))
    for line in bad[:LIST_MAX]:
        print("  " + line)
    if len(bad) > LIST_MAX:
        print("  ... and %d more" % (len(bad) - LIST_MAX))
    return ok and not bad


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: compare-profile.py META.json REPORT.json")
    sys.exit(0 if main(sys.argv[1], sys.argv[2]) else 1)
