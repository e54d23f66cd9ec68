# An LSTM or GRU whose output Y holds more steps than one kernel reads
# (62: a CRNN's bidirectional LSTM over 32 columns has 64) was refused
# ("tec gathers at most 62 steps' h into one output"): Y is gathered in
# blocks of consecutive times, laid side by side along time by one more
# kernel.  lstm.onnx: bidirectional, 40 steps (80 step outputs: blocks
# of 31 times), sequence first, with biases, Y and Y_h.  gru.onnx: forward,
# 70 steps, batch first (layout 1), linear_before_reset as PyTorch exports
# it, with biases and an initial h.  Against NumPy's ONNX recurrences at
# -O0 and -O2.
. "$srcdir/testsuite/cli/lib.inc"
"$PYTHON" - "$srcdir/testsuite/onnx" <<'EOF2' || fail "cannot write the models"
import os, sys
sys.path.insert(0, sys.argv[1])
from make_hostile import FLOAT, array_tensor, field, model, node, value_info
import numpy as np
rng = np.random.default_rng(27)
def sig(v):
    return 1 / (1 + np.exp(-v))
def attr_int(name, v):
    return [field(1, name), field(20, 2), field(3, v)]
def attr_str(name, v):
    return [field(1, name), field(20, 3), field(4, v)]
def f32(*shape):
    return (0.5 * rng.standard_normal(shape)).astype(np.float32)

# LSTM: gates i, o, f, c; Y [T, D, B, H], Y_h [D, B, H]
T, B, I, H, D = 40, 2, 3, 4, 2
x, w, r, b = f32(T, B, I), f32(D, 4 * H, I), f32(D, 4 * H, H), f32(D, 8 * H)
y = np.zeros((T, D, B, H))
yh = np.zeros((D, B, H))
for d in range(D):
    h, c = np.zeros((B, H)), np.zeros((B, H))
    for t in (range(T) if d == 0 else reversed(range(T))):
        a = x[t] @ w[d].T + h @ r[d].T + b[d, :4 * H] + b[d, 4 * H:]
        i, o, f, g = (a[:, k * H:(k + 1) * H] for k in range(4))
        c = sig(f) * c + sig(i) * np.tanh(g)
        h = sig(o) * np.tanh(c)
        y[t, d] = h
    yh[d] = h
nodes = [node("LSTM", ["x", "w", "r", "b"], ["y", "yh"], name="lstm",
              attrs=[attr_int("hidden_size", H), attr_str("direction", "bidirectional")])]
with open("lstm.onnx", "wb") as fh:
    fh.write(model(nodes, [value_info("x", [T, B, I])],
                   [value_info("y", [T, D, B, H]), value_info("yh", [D, B, H])],
                   [array_tensor("w", w, FLOAT), array_tensor("r", r, FLOAT),
                    array_tensor("b", b, FLOAT)], opset=14))
np.save("x.npy", x)
os.mkdir("ref_lstm")
np.save("ref_lstm/y.npy", y.astype(np.float32))
np.save("ref_lstm/yh.npy", yh.astype(np.float32))

# GRU: gates z, r, h; layout 1: X [B, T, I], initial_h [B, D, H], Y [B, T, D, H]
T, B, I, H = 70, 1, 2, 3
x, w, r, b, h0 = f32(B, T, I), f32(1, 3 * H, I), f32(1, 3 * H, H), f32(1, 6 * H), f32(B, 1, H)
y = np.zeros((B, T, 1, H))
h = h0[:, 0].astype(np.float64)
for t in range(T):
    xw = x[:, t] @ w[0].T + b[0, :3 * H]
    hr = h @ r[0].T + b[0, 3 * H:]
    z = sig(xw[:, :H] + hr[:, :H])
    rr = sig(xw[:, H:2 * H] + hr[:, H:2 * H])
    n = np.tanh(xw[:, 2 * H:] + rr * hr[:, 2 * H:])
    h = (1 - z) * n + z * h
    y[:, t, 0] = h
nodes = [node("GRU", ["x", "w", "r", "b", "", "h0"], ["y"], name="gru",
              attrs=[attr_int("hidden_size", H), attr_int("layout", 1),
                     attr_int("linear_before_reset", 1)])]
with open("gru.onnx", "wb") as fh:
    fh.write(model(nodes, [value_info("x", [B, T, I])], [value_info("y", [B, T, 1, H])],
                   [array_tensor("w", w, FLOAT), array_tensor("r", r, FLOAT),
                    array_tensor("b", b, FLOAT), array_tensor("h0", h0, FLOAT)], opset=14))
np.save("xg.npy", x)
os.mkdir("ref_gru")
np.save("ref_gru/y.npy", y.astype(np.float32))
EOF2
for mode in -O0 -O2; do
    expect_status 0 "$TEC" $mode lstm.onnx --input x=x.npy --save-outputs o_lstm$mode
    "$PYTHON" "$srcdir/testsuite/compare.py" ref_lstm o_lstm$mode || fail "LSTM $mode: wrong result"
    expect_status 0 "$TEC" $mode gru.onnx --input x=xg.npy --save-outputs o_gru$mode
    "$PYTHON" "$srcdir/testsuite/compare.py" ref_gru o_gru$mode || fail "GRU $mode: wrong result"
done
echo ok
