# Einsum equations whose '...' is misspelled or does not fit are located
# errors in the equation's own words, exit status 1: a term or the output
# with '...' twice, a '.' outside a '...', and '...' dimensions of sizes 1
# and 2 (numpy broadcasts them, tec does not).  The messages named the
# letters tec writes for a '...' ("term 'AiA' has more letters", "output
# letter 'A' is in the output twice", "letter 'A' stands for sizes 1 and 2").
. "$srcdir/testsuite/cli/lib.inc"
"$PYTHON" - "$srcdir/testsuite/onnx" <<'PY' || fail "cannot write the models"
import sys
sys.path.insert(0, sys.argv[1])
from make_hostile import field, model, node, value_info

def einsum(file, eq, shapes, out):
    ins = ["x%d" % i for i in range(len(shapes))]
    open(file, "wb").write(model(
        [node("Einsum", ins, ["y"], name="e", attrs=[[field(1, "equation"), field(20, 3), field(4, eq)]])],
        [value_info(n, s) for n, s in zip(ins, shapes)], [value_info("y", out)], opset=12))
einsum("term_twice.onnx", "...i...->i", [[3, 3]], [3])
einsum("output_twice.onnx", "...i->......i", [[2, 3]], [2, 2, 3])
einsum("four_dots.onnx", "....i->i", [[3, 3]], [3])
einsum("sizes.onnx", "...ij,...jk->...ik", [[1, 3, 4], [2, 4, 5]], [2, 3, 5])
einsum("letters.onnx", "ij,jk->ik", [[3, 4], [3, 5]], [3, 5])
PY
expect_status 1 "$TEC" term_twice.onnx
expect_err "term_twice.onnx: error: node 'e' (Einsum, opset 12): term 1 of '...i...->i' has '...' twice"
expect_status 1 "$TEC" output_twice.onnx
expect_err "output_twice.onnx: error: node 'e' (Einsum, opset 12): the output of '...i->......i' has '...' twice"
expect_status 1 "$TEC" four_dots.onnx
expect_err "four_dots.onnx: error: node 'e' (Einsum, opset 12): the equation '....i->i' has a '.' that is not part of a '...'"
expect_status 1 "$TEC" sizes.onnx
expect_err "sizes.onnx: error: node 'e' (Einsum, opset 12): '...' stands for sizes 1 and 2 in one dimension (tec does not broadcast a '...' dimension of size 1)"
expect_status 1 "$TEC" letters.onnx
expect_err "letters.onnx: error: node 'e' (Einsum, opset 12): letter 'j' stands for sizes 4 and 3"
echo ok
