# Unusual but legal ONNX models import and compute what ONNX says (each
# once ended in an internal error, a crash or a silent wrong program):
# NaN attributes, INT64_MIN as Trilu's k, Div(INT64_MIN, -1) folded, a graph
# output that is its input, a dynamic dimension set with -D beyond 2^32,
# a path with a newline, and 10,000 nodes
# listed in reverse order (imported in linear time).
. "$srcdir/testsuite/cli/lib.inc"
"$PYTHON" - "$srcdir/testsuite/onnx" <<'EOF' || fail "cannot write the models"
import struct, sys
sys.path.insert(0, sys.argv[1])
from make_hostile import field, model, node, value_info, varint
import numpy as np

def attr_f(name, v):   # a FLOAT attribute: f is field 2, a fixed32
    return [field(1, name), field(20, 1), varint(2 << 3 | 5) + struct.pack("<f", v)]

def attr_i(name, v):
    return [field(1, name), field(20, 2), field(3, v)]

def init(name, arr, dtype):
    arr = np.asarray(arr)
    return [field(1, d) for d in arr.shape] + [field(2, dtype), field(8, name),
                                               field(9, arr.tobytes())]

X, Y = value_info("x", [2, 3]), value_info("y", [2, 3])
def save(name, data):
    with open(name + ".onnx", "wb") as f:
        f.write(data)

nan = float("nan")
save("leakyrelu_nan", model([node("LeakyRelu", ["x"], ["y"], attrs=[attr_f("alpha", nan)])], [X], [Y]))
save("gemm_beta_nan", model([node("Gemm", ["x", "w", "c"], ["y"], attrs=[attr_f("beta", nan)])],
                            [X], [value_info("y", [2, 2])],
                            [init("w", np.ones((3, 2), np.float32), 1),
                             init("c", np.ones((2,), np.float32), 1)]))
save("clip_max_nan", model([node("Clip", ["x"], ["y"], attrs=[attr_f("max", nan)])], [X], [Y],
                           opset=6))
save("batchnorm_eps_nan", model(
    [node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"], attrs=[attr_f("epsilon", nan)])],
    [value_info("x", [1, 2, 2, 2])], [value_info("y", [1, 2, 2, 2])],
    [init(n, np.ones((2,), np.float32), 1) for n in "sbmv"]))
save("trilu_kmin", model([node("Trilu", ["x", "k"], ["y"])], [X], [Y],
                         [init("k", np.array(-2**63, np.int64), 7)], opset=14))
save("div_int64_min", model([node("Div", ["a", "b"], ["q"]), node("Add", ["q", "x"], ["y"])],
                            [value_info("x", [2], 7)], [value_info("y", [2], 7)],
                            [init("a", np.array([-2**63, 7], np.int64), 7),
                             init("b", np.array([-1, -2], np.int64), 7)]))
save("output_is_input", model([node("Relu", ["x"], ["r"])], [X], [X, value_info("r", [2, 3])]))
save("dim_param", model([node("Sin", ["x"], ["y"])], [value_info("x", ["N", 3])],
                        [value_info("y", ["N", 3])]))
n = 10000
nodes = [node("Relu", ["x" if i == 0 else "t%d" % i], ["y" if i == n - 1 else "t%d" % (i + 1)])
         for i in range(n)]
save("chain_reversed", model(nodes[::-1], [X], [Y]))
np.save("x.npy", np.array([[-1, 0, 2], [3, -4, 5]], np.float32))
np.save("x4.npy", np.arange(-4, 4, dtype=np.float32).reshape(1, 2, 2, 2))
np.save("xi.npy", np.array([1, 2], np.int64))
EOF

run() {   # run NAME ARGS...: runs the model, outputs in o_NAME
    name=$1; shift
    timeout 120 "$TEC" -O0 "$name.onnx" "$@" --save-outputs "o_$name" >out 2>err ||
        { cat err; fail "$name: exit status $?"; }
}
check() {   # check PYTHON-EXPRESSION (y: the output of o_NAME/y.npy, x: x.npy)
    "$PYTHON" -c "
import numpy as np, sys
x = np.load('x.npy')
y = np.load('o_$name/y.npy')
sys.exit(0 if $1 else 1)" || fail "$name: wrong result"
}
run leakyrelu_nan --input x=x.npy
check "np.isnan(y[x < 0]).all() and (y[x >= 0] == x[x >= 0]).all()"
run gemm_beta_nan --input x=x.npy
check "np.isnan(y).all()"
run clip_max_nan --input x=x.npy
check "y.shape == (2, 3)"
run batchnorm_eps_nan --input x=x4.npy
check "np.isnan(y).all()"
run trilu_kmin --input x=x.npy
check "(y == x).all()"   # upper with k = -2^63 keeps every element
run div_int64_min --input x=xi.npy
check "(y == np.array([-2**63 + 1, -1], np.int64)).all()"   # INT64_MIN / -1 wraps; 7 / -2 = -3
run output_is_input --input x=x.npy
ls o_output_is_input >names
grep -qx 'x_2.npy' names || { cat names; fail "output_is_input: the copy of x is not saved as x_2.npy"; }
"$PYTHON" -c "
import numpy as np, sys
sys.exit(0 if (np.load('o_output_is_input/x_2.npy') == np.load('x.npy')).all() else 1)" ||
    fail "output_is_input: the output is not the input"

# -D beyond 2^32 is the size it says (not wrapped); beyond 2^40 an error
timeout 20 "$TEC" --emit=te -D N=4294967298 dim_param.onnx >out 2>err || { cat err; fail "-D N=2^32+2"; }
grep -q '^let N = 4294967298 ' out || { cat out; fail "-D N=4294967298 is not written as itself"; }
expect_status 1 timeout 20 "$TEC" --emit=te -D N=2199023255552 dim_param.onnx
expect_err "dim_param.onnx: error: -D N=2199023255552: the size of a dynamic dimension must be an integer from 1 to 2^40"
expect_status 1 timeout 20 "$TEC" --emit=te -D N=4x dim_param.onnx
expect_err "dim_param.onnx: error: -D N=4x: the size of a dynamic dimension must be an integer from 1 to 2^40"
# neither -D nor --input: the error says how to give it
expect_status 1 timeout 20 "$TEC" --emit=te dim_param.onnx
expect_err "dim_param.onnx: error: graph input 'x': dimension 0 is dynamic ('N'): give its size with -D N=N, or the input's file with --input x=FILE"
# the --input file's shape gives it
run dim_param --input x=x.npy
check "y.shape == (2, 3) and np.allclose(y, np.sin(x))"

# a path with a newline stays on the program's comment line
cp leakyrelu_nan.onnx "$(printf 'new\nline.onnx')"
timeout 60 "$TEC" --emit=te "$(printf 'new\nline.onnx')" >out 2>err || { cat err; fail "a path with a newline"; }
[ "$(sed -n 2p out)" = 'import "nn.te"' ] || { head -3 out; fail "the path broke the comment line"; }

# 10,000 nodes in reverse order: imported (linear time, well within the limit)
timeout 60 "$TEC" --emit=te chain_reversed.onnx >out 2>err || { cat err; fail "chain_reversed: exit status $?"; }
[ "$(grep -c '= relu(' out)" = 10000 ] || fail "chain_reversed: not 10000 layers"
echo ok
