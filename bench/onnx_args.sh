# bench/onnx_args.sh — sourced by the bench scripts that run ONNX exports.
#
# onnx_args MODEL.onnx: sets the array args to MODEL.onnx and an
# `--input NAME=FILE` for each MODEL.in/NAME.npy beside it (the inputs
# bench/ort_export.py writes).
onnx_args() {
    args=("$1")
    local f
    for f in "${1%.onnx}.in"/*.npy; do
        [ -e "$f" ] && args+=(--input "$(basename "$f" .npy)=$f")
    done
}
