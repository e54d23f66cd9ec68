# An ONNX graph of more nodes than a program may make calls (10,000, each
# a layer) is refused as the model's error, not imported into a program
# that does not compile (an internal error, exit 70); one of 10,000 nodes
# still imports.
. "$srcdir/testsuite/cli/lib.inc"
"$PYTHON" - "$srcdir/testsuite/onnx" <<'EOF' || fail "cannot write the models"
import sys
sys.path.insert(0, sys.argv[1])
from make_hostile import model, node, value_info

for n in (10000, 10001):
    nodes = [node("Relu", ["x" if i == 0 else "t%d" % i], ["y" if i == n - 1 else "t%d" % (i + 1)])
             for i in range(n)]
    with open("chain%d.onnx" % n, "wb") as f:
        f.write(model(nodes, [value_info("x", [2, 3])], [value_info("y", [2, 3])]))
EOF
expect_status 0 timeout 120 "$TEC" --emit=te chain10000.onnx
[ "$(grep -c '= relu(' out)" = 10000 ] || fail "chain10000: not 10000 layers"
expect_status 1 timeout 120 "$TEC" --emit=te chain10001.onnx
expect_err "chain10001.onnx: error: the graph has 10001 nodes: tec imports at most 10000 (each node is a layer)"
expect_status 1 timeout 120 "$TEC" chain10001.onnx
expect_err "chain10001.onnx: error: the graph has 10001 nodes: tec imports at most 10000 (each node is a layer)"
echo ok
