# An imported ONNX model's program imports tec's op library, nn.te.  A tec
# whose nn.te is missing (copied away from its build or installed tree)
# says so, where it looked and how to fix it, with exit status 1 (it was an
# internal error, exit 70, located in the generated program); with
# -I naming the library's folder the model runs.
. "$srcdir/testsuite/cli/lib.inc"
"$PYTHON" - "$srcdir/testsuite/onnx" <<'PY' || fail "cannot build the model"
import sys
sys.path.insert(0, sys.argv[1])
from make_hostile import node, value_info, model
open("m.onnx", "wb").write(model([node("Relu", ["x"], ["y"], name="r")],
                                 [value_info("x", [2, 3])], [value_info("y", [2, 3])], []))
PY
mkdir -p inst/bin
cp "$TEC" inst/bin/tec
here=$(pwd -P)
inst/bin/tec m.onnx >out 2>err
st=$?
if [ $st = 0 ]; then
    echo "nn.te is installed in the configured data folder: skipped"
    exit 0
fi
[ $st = 1 ] || { cat err; fail "exit status $st, expected 1"; }
pre="tec: error: m.onnx: cannot find tec's op library nn.te, which an imported ONNX model uses (searched: $here/inst/bin/lib, $here/inst/share/tec, "
post='); install tec (`make install`) or name the folder that holds nn.te with -I DIR'
[ "$(wc -l <err)" = 1 ] && [ "${pre}" = "$(head -c ${#pre} err)" ] &&
    [ "${post}" = "$(tail -c $((${#post} + 1)) err | head -c ${#post})" ] ||
    { cat err; fail "unexpected diagnostic"; }
expect_status 0 inst/bin/tec -I "$srcdir/lib" m.onnx
grep -q '^y: f32\[2, 3\]' out || { cat out; fail "with -I: $(cat out)"; }
