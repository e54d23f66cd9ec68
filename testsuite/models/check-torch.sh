#!/bin/bash
# testsuite/models/check-torch.sh — the model tests of `make check-torch`:
# the same models as run-models.sh, but against PyTorch run live.
#
#   testsuite/models/check-torch.sh
#
# 1. unit/torch_ref: testsuite/models/test_torch_ref.py (the script's parts;
#    GPT-2 against an independent NumPy forward; the zoo's published counts).
# 2. torch_ref/*: the command line of tools/torch_ref.py on the tiny model:
#    --compare, --input, --export-weights and --torch-init through tec
#    --weights, --weights read back, and its errors.
# 3. live/NAME: for every testsuite/models/NAME/meta.json, regenerates the
#    references with the recorded model, program and options, checks that
#    the committed ones are up to date, and compares tec -O2 with them;
#    live/gpt2-T1024 does GPT-2 once more at its full context, with the
#    logits of every position (without the recorded -D T=... and -D P=...).
# 4. onnx/NAME: ResNet-18, MobileNetV2 and GPT-2 through torch.onnx.export
#    and tec NAME.onnx (testsuite/models/onnx_torch.py).
# 5. torchvision/NAME: five small torchvision models and two video ones no
#    other test names, exported by bench/ort_export.py, tec -O2 on two
#    threads against PyTorch.
# 6. small/NAME: LSTM, GRU, U-Net, normalization and Einsum/GatherElements
#    models of bench/unseen_export.py, the same way.
#
# Prints PASS/FAIL lines and "N passed, N failed"; exits 1 if any failed.
# Without PyTorch it prints "SKIP: ..." and exits 0.  Environment as for
# run-models.sh (srcdir, builddir, TEC, PYTHON, OUT).
. "$(dirname "$0")/common.sh"
OUT=${OUT:-$builddir/testsuite/out}/torch
REF=$srcdir/tools/torch_ref.py
COMPARE=$srcdir/testsuite/compare.py
TINY=$here/tiny/tiny.te
export XDG_CACHE_HOME=${XDG_CACHE_HOME:-$OUT/cache}
rm -rf "$OUT"
mkdir -p "$OUT" || exit 1

if ! "$PYTHON" -c 'import torch, torchvision' 2>/dev/null; then
    echo "SKIP: models against live PyTorch ($PYTHON has no torch/torchvision;"
    echo "      apt-get install python3-torch python3-torchvision)"
    exit 0
fi

# expect LOG STATUS cmd...: runs cmd (output to LOG); fails unless it exits
# with STATUS.
expect() {
    local log=$1 want=$2
    shift 2
    echo "\$ $*" >>"$log"
    "$@" >>"$log" 2>&1
    local got=$?
    [ "$got" = "$want" ] || { echo "exit status $got, expected $want" >>"$log"; return 1; }
}

# has LOG TEXT: LOG contains the line TEXT.
has() {
    grep -qxF -- "$2" "$1" || { echo "missing the line: $2" >>"$1"; return 1; }
}

# ---------------------------------------------------------------- 1
log=$OUT/unit.log
"$PYTHON" "$here/test_torch_ref.py" >"$log" 2>&1
report unit/torch_ref $? "$log"

# ---------------------------------------------------------------- 2
t=$OUT/tiny
mkdir -p "$t"

log=$t/compare.log
: >"$log"
expect "$log" 0 "$TEC" -O2 "$TINY" --save-outputs "$t/got" &&
    expect "$log" 0 "$PYTHON" "$REF" tiny --tec "$TEC" --program "$TINY" --compare "$t/got" &&
    grep -q "^logits: PASS: max relative error .* (limit 0.0001)$" "$log" &&
    "$PYTHON" -c 'import numpy as np, sys; a = np.load(sys.argv[1]); a[1, 2] *= 1.001; np.save(sys.argv[1], a)' "$t/got/logits.npy" &&
    expect "$log" 1 "$PYTHON" "$REF" tiny --tec "$TEC" --program "$TINY" --compare "$t/got" &&
    grep -q "^logits: FAIL: max relative error" "$log"
report torch_ref/compare $? "$log"

# --input: one file feeds tec and the reference.  The reference must use it
# (tec's outputs on it differ from those on default data by far more than
# the limit), and it gets tec's dtype and shape checks.
log=$t/input.log
: >"$log"
"$PYTHON" -c 'import numpy as np, sys; np.save(sys.argv[1], np.random.default_rng(3).standard_normal((2, 3, 8, 8)).astype("<f4")); np.save(sys.argv[2], np.zeros((2, 3, 8, 8)))' \
        "$t/x.npy" "$t/x64.npy" >>"$log" 2>&1 &&
    expect "$log" 0 "$TEC" -O2 "$TINY" --input image="$t/x.npy" --save-outputs "$t/got-x" &&
    expect "$log" 0 "$PYTHON" "$REF" tiny --tec "$TEC" --program "$TINY" --compare "$t/got-x" \
        --input image="$t/x.npy" &&
    expect "$log" 1 "$PYTHON" "$REF" tiny --tec "$TEC" --program "$TINY" --compare "$t/got-x" &&
    expect "$log" 1 "$PYTHON" "$REF" tiny --tec "$TEC" --program "$TINY" --compare "$t/got" \
        --input image="$t/x.npy" &&
    expect "$log" 1 "$PYTHON" "$REF" tiny --tec "$TEC" --program "$TINY" --compare "$t/got-x" \
        --input image="$t/x64.npy" &&
    has "$log" "torch_ref.py: error: --input image=$t/x64.npy: $t/x64.npy is f64[2, 3, 8, 8] but the program declares f32[2, 3, 8, 8]" &&
    expect "$log" 1 "$PYTHON" "$REF" tiny --tec "$TEC" --program "$TINY" --compare "$t/got-x" \
        --input img="$t/x.npy" &&
    has "$log" "torch_ref.py: error: --input img=$t/x.npy: the program has no input named 'img' (its inputs: image)" &&
    expect "$log" 2 "$PYTHON" "$REF" tiny --tec "$TEC" --program "$TINY" --out "$t/x" \
        --input image="$t/x.npy"
report torch_ref/input $? "$log"

# Default data exported as files must give tec the same outputs as no files.
log=$t/weights.log
: >"$log"
expect "$log" 0 "$PYTHON" "$REF" tiny --tec "$TEC" --program "$TINY" --export-weights "$t/w" &&
    expect "$log" 0 ls "$t/w/conv1.weight.npy" "$t/w/bn1.running_var.npy" "$t/w/fc.bias.npy" &&
    expect "$log" 2 ls "$t/w/bn1.num_batches_tracked.npy" &&
    expect "$log" 0 "$TEC" -O0 "$TINY" --weights "$t/w" --save-outputs "$t/got-w" &&
    expect "$log" 0 "$PYTHON" "$REF" tiny --tec "$TEC" --program "$TINY" --compare "$t/got-w"
report torch_ref/export-weights $? "$log"

# PyTorch's own initialization: the reference must follow the weights.
log=$t/torch-init.log
: >"$log"
expect "$log" 0 "$PYTHON" "$REF" tiny --tec "$TEC" --program "$TINY" --torch-init --seed 7 \
        --export-weights "$t/wt" --out "$t/ref-t" &&
    expect "$log" 0 "$TEC" -O2 "$TINY" --weights "$t/wt" --save-outputs "$t/got-t" &&
    expect "$log" 0 "$PYTHON" "$COMPARE" "$t/ref-t/expected" "$t/got-t" &&
    expect "$log" 1 "$PYTHON" "$COMPARE" "$t/ref-t/expected" "$t/got" &&
    grep -q '"weights": "torch-init, seed 7"' "$t/ref-t/meta.json"
report torch_ref/torch-init $? "$log"

# --weights: the reference reads the files tec read.  Without them it runs
# on default data, fails, and says so; a file tec would reject is rejected.
log=$t/read-weights.log
: >"$log"
expect "$log" 0 "$PYTHON" "$REF" tiny --tec "$TEC" --program "$TINY" --weights "$t/wt" \
        --compare "$t/got-t" &&
    expect "$log" 1 "$PYTHON" "$REF" tiny --tec "$TEC" --program "$TINY" --compare "$t/got-t" &&
    has "$log" "note: the reference used tec's default data for the weights and input image; if tec read files there (--weights, --input), give this script the same ones" &&
    cp -r "$t/wt" "$t/wt2" && rm "$t/wt2/fc.bias.npy" &&
    expect "$log" 1 "$PYTHON" "$REF" tiny --tec "$TEC" --program "$TINY" --weights "$t/wt2" \
        --compare "$t/got-t" &&
    has "$log" "torch_ref.py: error: --weights $t/wt2: no file for parameter fc.bias (f32[5]): $t/wt2/fc.bias.npy" &&
    touch "$t/wt/stray.npy" &&
    expect "$log" 1 "$PYTHON" "$REF" tiny --tec "$TEC" --program "$TINY" --weights "$t/wt" \
        --compare "$t/got-t" &&
    has "$log" "torch_ref.py: error: --weights $t/wt: stray.npy matches no parameter of the program" &&
    expect "$log" 2 "$PYTHON" "$REF" tiny --tec "$TEC" --program "$TINY" --weights "$t/wt" \
        --torch-init --export-weights "$t/wt3"
report torch_ref/read-weights $? "$log"

# A parameter renamed and one resized in the tec program.
log=$t/mismatch.log
: >"$log"
sed -e 's/as "fc"/as "head"/' -e 's/conv(image, 8,/conv(image, 6,/' "$TINY" >"$t/bad.te"
expect "$log" 1 "$PYTHON" "$REF" tiny --tec "$TEC" --program "$t/bad.te" --out "$t/bad" &&
    has "$log" "torch_ref.py: error: tec's parameters do not match the PyTorch model's state_dict:" &&
    has "$log" "  missing in tec: fc.weight [5, 8]" &&
    has "$log" "  not in PyTorch: head.bias [5]" &&
    has "$log" "  shape of conv1.weight: tec [6, 3, 3, 3], PyTorch [8, 3, 3, 3]" &&
    has "$log" "  shape of bn1.running_var: tec [6], PyTorch [8]" &&
    expect "$log" 2 ls "$t/bad"
report torch_ref/mismatch $? "$log"

# Other errors: tec's own diagnostics passed on, stray weight files, usage.
log=$t/errors.log
: >"$log"
echo 'input x: f32[2' >"$t/syntax.te"
touch "$t/w/stray.npy"
expect "$log" 1 "$PYTHON" "$REF" tiny --tec "$TEC" --program "$t/syntax.te" --out "$t/x" &&
    grep -q "^torch_ref.py: error: .* failed (exit status 1):" "$log" &&
    grep -q "syntax.te:1:" "$log" &&
    expect "$log" 1 "$PYTHON" "$REF" tiny --tec "$t/no-such-tec" --program "$TINY" --out "$t/x" &&
    grep -q "^torch_ref.py: error: cannot run $t/no-such-tec: No such file or directory" "$log" &&
    expect "$log" 1 "$PYTHON" "$REF" tiny --tec "$TEC" --program "$TINY" --export-weights "$t/w" &&
    has "$log" "torch_ref.py: error: $t/w: stray.npy names no parameter of the program (tec --weights rejects stray files); use an empty directory" &&
    expect "$log" 1 "$PYTHON" "$REF" nosuch --tec "$TEC" --program "$TINY" --out "$t/x" &&
    grep -q "^torch_ref.py: error: unknown model 'nosuch'" "$log" &&
    expect "$log" 2 "$PYTHON" "$REF" tiny --tec "$TEC" --program "$TINY" &&
    grep -q "nothing to do" "$log" &&
    expect "$log" 2 "$PYTHON" "$REF" tiny --program "$TINY" --torch-init --out "$t/x" &&
    expect "$log" 2 "$PYTHON" "$REF" tiny --program "$TINY" -D T --out "$t/x"
report torch_ref/errors $? "$log"

# --model-file: a model defined outside the script.
log=$t/model-file.log
: >"$log"
cat >"$t/net.py" <<'EOF'
import torch
from torch import nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.fc = nn.Linear(8, 5)

    def forward(self, x):
        return self.fc(torch.relu(self.bn1(self.conv1(x))).mean(dim=(2, 3)))

def build(defines):
    return Net()
EOF
expect "$log" 0 "$PYTHON" "$REF" mynet --model-file "$t/net.py" --tec "$TEC" --program "$TINY" \
        --out "$t/ref-m" &&
    expect "$log" 0 "$PYTHON" "$COMPARE" "$here/tiny/expected" "$t/ref-m/expected"
report torch_ref/model-file $? "$log"

# ---------------------------------------------------------------- 3

# same_counts LIVE COMMITTED: two meta.json files agree on what
# run-models.sh checks besides the outputs (the options, the shapes and the
# parameter and MAC counts).
same_counts() {
    "$PYTHON" - "$1" "$2" <<'EOF'
import json, sys
live, old = (json.load(open(p)) for p in sys.argv[1:])
keys = ["tec_args", "inputs", "outputs", "parameters", "torch_parameters",
        "macs", "layer_macs"]
stale = [k for k in keys if live.get(k) != old.get(k)]
for k in stale:
    print("%s differs: live %s, committed %s" % (k, json.dumps(live.get(k))[:200],
                                                json.dumps(old.get(k))[:200]))
sys.exit(1 if stale else 0)
EOF
}

# live DIR MODEL MODELFILE PROGRAM ARGS...: tec -O2, then one PyTorch run
# that regenerates the references into DIR and compares tec's outputs.
live() {
    local dir=$1 model=$2 mfile=$3 program=$4
    shift 4
    local mf=()
    [ -n "$mfile" ] && mf=(--model-file "$mfile")
    mkdir -p "$dir" &&
        expect "$log" 0 "$TEC" -O2 "$@" "$program" --save-outputs "$dir/got" &&
        expect "$log" 0 "$PYTHON" "$REF" "$model" "${mf[@]}" --tec "$TEC" --program "$program" \
            "$@" --out "$dir" --compare "$dir/got"
}

for meta in "$here"/*/meta.json; do
    [ -f "$meta" ] || continue
    name=$(basename "$(dirname "$meta")")
    log=$OUT/live-$name.log
    : >"$log"
    if ! mapfile -t f < <(meta_fields "$meta" 2>>"$log") || [ ${#f[@]} -lt 3 ]; then
        report "live/$name" 1 "$log"
        continue
    fi
    # Weights kept in NAME/weights are not PyTorch's to regenerate.
    if [ -d "$here/$name/weights" ]; then
        echo "SKIP: live/$name (its weights come from $here/$name/weights)"
        continue
    fi
    live "$OUT/live-$name" "${f[0]}" "${f[1]}" "${f[2]}" "${f[@]:3}" &&
        expect "$log" 0 "$PYTHON" "$COMPARE" "$OUT/live-$name/expected" "$here/$name/expected" &&
        expect "$log" 0 same_counts "$OUT/live-$name/meta.json" "$meta"
    report "live/$name" $? "$log"
    if [ "$name" = gpt2 ]; then
        # The recorded options without their -D T=... and -D P=..., then
        # T=1024: every position's logits.
        args=()
        set -- "${f[@]:3}"
        while [ $# -gt 0 ]; do
            if [ "$1" = -D ] && [ $# -gt 1 ] && [[ $2 == [TP]=* ]]; then
                shift 2
            else
                args+=("$1")
                shift
            fi
        done
        log=$OUT/live-gpt2-T1024.log
        : >"$log"
        live "$OUT/live-gpt2-T1024" "${f[0]}" "${f[1]}" "${f[2]}" "${args[@]}" -D T=1024
        report "live/gpt2-T1024" $? "$log"
    fi
done

# ---------------------------------------------------------------- 4
# onnx/NAME: ResNet-18, MobileNetV2 and GPT-2 exported with torch.onnx.export
# and run as tec MODEL.onnx: outputs within 1e-4 of PyTorch's, MAC and
# parameter totals those of examples/NAME.te (onnx_torch.py, doc/onnx.md).
for name in resnet18 mobilenet_v2 gpt2; do
    log=$OUT/onnx-$name.log
    "$PYTHON" "$here/onnx_torch.py" --tec "$TEC" --out "$OUT/onnx" "$name" >"$log" 2>&1
    report "onnx/$name" $? "$log"
done

# ---------------------------------------------------------------- 5
# torchvision/NAME: small torchvision models named by no other test,
# exported by bench/ort_export.py (opset 13, random weights, a random
# image and PyTorch's output) and run as tec -O2 NAME.onnx on two threads:
# the output within 1e-4 of PyTorch's, relative to its largest magnitude.
# (Their squeeze-and-excitation, depthwise 5x5, channel-shuffle and
# grouped layers take schedules and layouts the zoo's do not: a layout
# bug that gave MnasNet and EfficientNet-B2/B3 wrong results at -O2 passed
# every other test.)  The video classifiers r3d_18 (3x3x3 convolutions,
# stride 2 in time too) and r2plus1d_18 (1x3x3 then 3x1x1) on an 8-frame
# 112x112 clip are the only 3-D convolutions any test runs at -O2.
# raft_small (two frames, opset 16: GridSample, 12 refinements of a
# convolutional GRU) is the only optical-flow model;
# deeplabv3_mobilenet_v3_large (batch norms fitted to random inputs, since
# with PyTorch's initialization its output is its last bias) the only
# segmentation model on a MobileNetV3 backbone with an ASPP head.
# exported NAME GROUP SCRIPT [ARG...]: exports NAME with SCRIPT NAME DIR ARG...
# (bench/ort_export.py's layout) and reports GROUP/NAME: tec -O2 NAME.onnx on two threads within
# 1e-4 of PyTorch's output, relative to its largest magnitude.
exported() {
    local name=$1 group=$2 script=$3
    shift 3
    local log=$OUT/$group-$name.log d=$OUT/$group
    {
        "$PYTHON" "$script" "$name" "$d" "$@" &&
        ins=() && for f in "$d/$name.in"/*.npy; do ins+=(--input "$(basename "$f" .npy)=$f"); done &&
        TEC_NUM_THREADS=2 "$TEC" -O2 "$d/$name.onnx" "${ins[@]}" --save-outputs "$d/$name.out" &&
        "$PYTHON" -c '
import glob, sys, numpy as np
ref = np.load(sys.argv[1]).astype(np.float64)
got = np.load(glob.glob(sys.argv[2] + "/*.npy")[0]).astype(np.float64).reshape(ref.shape)
err = np.abs(got - ref).max() / max(np.abs(ref).max(), 1e-30)
print("max |tec - torch| / max |torch| = %.2e" % err)
sys.exit(0 if err <= 1e-4 else 1)' "$d/$name.ref.npy" "$d/$name.out"
    } >"$log" 2>&1
    report "$group/$name" $? "$log"
}

for name in mnasnet0_5 shufflenet_v2_x0_5 mobilenet_v3_small regnet_x_400mf efficientnet_b2 \
        r3d_18 r2plus1d_18 raft_small deeplabv3_mobilenet_v3_large; do
    exported $name torchvision "$srcdir/bench/ort_export.py" --no-time
done

# ---------------------------------------------------------------- 6
# small/NAME: models beyond torchvision's classifiers, exported by
# bench/unseen_export.py: a 2-layer LSTM and a bidirectional GRU (ONNX
# LSTM and GRU, unrolled by the importer), a U-Net (ConvTranspose,
# bilinear Resize with and without align_corners, nearest Upsample),
# InstanceNorm/GroupNorm/LayerNorm, and attention written with Einsum,
# GatherElements, Where, CumSum, TopK and shapes read from the input.
for name in lstm gru unet norms misc; do
    exported $name small "$srcdir/bench/unseen_export.py"
done

summary
