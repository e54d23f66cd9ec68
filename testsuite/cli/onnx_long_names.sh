# Node names have no bound in ONNX.  An LSTM's steps and inputs are values
# named "<node>_<step>" and layers "<layer>.<step>"; with the names cut to
# a fixed buffer (96 and 1024 bytes) a node named with 1,100 characters
# gave two steps one layer name ("duplicate layer name").  The model with
# the long name must compute what the same model with a short name does.
. "$srcdir/testsuite/cli/lib.inc"
"$PYTHON" - "$srcdir/testsuite/onnx" <<'PY' || fail "cannot write the models"
import sys
sys.path.insert(0, sys.argv[1])
from make_hostile import field, model, node, value_info, tensor
import numpy as np

def lstm(name):
    rng = np.random.default_rng(0)
    w = rng.standard_normal((2, 12, 2), np.float32).tobytes()
    r = rng.standard_normal((2, 12, 3), np.float32).tobytes()
    nodes = [node("LSTM", ["x", "w", "r"], ["y", "yh", "yc"], name=name,
                  attrs=[[field(1, "hidden_size"), field(20, 2), field(3, 3)],
                         [field(1, "direction"), field(20, 3), field(4, "bidirectional")]])]
    return model(nodes, [value_info("x", [4, 1, 2])],
                 [value_info("y", [4, 2, 1, 3]), value_info("yh", [2, 1, 3]),
                  value_info("yc", [2, 1, 3])],
                 [tensor("w", [2, 12, 2], w), tensor("r", [2, 12, 3], r)])

open("short.onnx", "wb").write(lstm("lstm"))
open("long.onnx", "wb").write(lstm("/encoder/" + "rnn" * 370 + "/LSTM"))
np.save("x.npy", np.random.default_rng(1).standard_normal((4, 1, 2)).astype(np.float32))
PY
for m in short long; do
    expect_status 0 timeout 120 "$TEC" -O2 $m.onnx --input x=x.npy --save-outputs o_$m
done
expect_status 0 "$TEC" --emit=te long.onnx
# each step is a layer of its own, named in full
[ "$(grep -c 'rnnrnn.*LSTM\.forward\.step[0-9]"' out)" = 4 ] || { cat out; fail "want 4 forward steps"; }
for y in y yh yc; do
    cmp o_short/$y.npy o_long/$y.npy || fail "$y differs between the short and the long name"
done
echo ok
