# An ONNX graph that makes more layers than a program may make calls
# (10,000) is refused as the model's error, not imported into a program
# that does not compile (an internal error, exit 70); one of 10,000 layers
# still imports.  Nodes that make no layer (shape arithmetic folded at
# import: Swin-S's export has 13,691 nodes) do not count: 9,000 layers and
# 3,000 Shape nodes import (they were refused as 12,000 nodes before).
. "$srcdir/testsuite/cli/lib.inc"
"$PYTHON" - "$srcdir/testsuite/onnx" <<'EOF2' || fail "cannot write the models"
import sys
sys.path.insert(0, sys.argv[1])
from make_hostile import model, node, value_info

def chain(n):
    return [node("Relu", ["x" if i == 0 else "t%d" % i], ["y" if i == n - 1 else "t%d" % (i + 1)])
            for i in range(n)]

for n in (10000, 10001):
    with open("chain%d.onnx" % n, "wb") as f:
        f.write(model(chain(n), [value_info("x", [2, 3])], [value_info("y", [2, 3])]))
nodes = chain(9000) + [node("Shape", ["t%d" % (i + 1)], ["s%d" % i]) for i in range(3000)]
with open("folded12000.onnx", "wb") as f:
    f.write(model(nodes, [value_info("x", [2, 3])], [value_info("y", [2, 3])]))
EOF2
expect_status 0 timeout 120 "$TEC" --emit=te chain10000.onnx
[ "$(grep -c '= relu(' out)" = 10000 ] || fail "chain10000: not 10000 layers"
expect_status 1 timeout 120 "$TEC" --emit=te chain10001.onnx
expect_err "chain10001.onnx: error: the graph makes more than 10000 layers (node 'y' is one past them): tec imports at most 10000"
expect_status 1 timeout 120 "$TEC" chain10001.onnx
expect_err "chain10001.onnx: error: the graph makes more than 10000 layers (node 'y' is one past them): tec imports at most 10000"
expect_status 0 timeout 120 "$TEC" --emit=te folded12000.onnx
[ "$(grep -c '= relu(' out)" = 9000 ] || fail "folded12000: not 9000 layers"
expect_status 0 timeout 120 "$TEC" folded12000.onnx
echo ok
