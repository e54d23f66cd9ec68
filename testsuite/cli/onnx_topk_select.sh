# A TopK of few elements of long rows (k <= 32 and at most a quarter of
# the axis: DGCNN's 16 nearest of 512 points) selects them one at a time,
# a kernel of two reductions along the row per element (one def after the
# first: compiled once), instead of ranking every pair (512 rows of 512:
# 850 ms, 98x ONNX Runtime's whole model).  The order is op_topk's:
# largest, NaNs first by index, then numbers down, ties by index; smallest,
# numbers up, ties by index, then NaNs.  Rows with
# NaNs, ties, infinities and a row of only NaNs and equal numbers; along
# the last axis and along axis 0 of a [40, 3] input, a rank-1 input, and
# a row of 2^18 (too long to rank its pairs: refused before), k = 1, rows
# of 512 (whole vectors: DGCNN's shape) with ties, NaNs and infinities, f64
# rows, and i64 and i32 rows holding their types' extremes (refused
# before: no infinity for m's bound); against NumPy's stable sorts of the same order at -O0 and -O2.
# --emit=te shows the selection (two defs, the later one called k - 1
# times; no pairwise rank r) comparing index numbers of f32 (f64 for f64
# rows), and the C of the rows of 512 vector masks.
. "$srcdir/testsuite/cli/lib.inc"
"$PYTHON" - "$srcdir/testsuite/onnx" <<'EOF2' || fail "cannot write the models"
import os, sys
sys.path.insert(0, sys.argv[1])
from make_hostile import INT64, array_tensor, field, model, node, value_info
import numpy as np
rng = np.random.default_rng(27)
nan, inf = float("nan"), float("inf")
def attr_int(name, v):
    return [field(1, name), field(20, 2), field(3, v)]
def order(row, largest):
    def key(j):
        v = row[j]
        if np.isnan(v):
            return (0 if largest else 1, 0.0, j)
        v = v.item()   # a Python number: -v of the i64 minimum does not wrap
        return (1 if largest else 0, -v if largest else v, j)
    return sorted(range(len(row)), key=key)
def case(name, x, k, axis, largest, elem=1):
    xm = np.moveaxis(x, axis, -1)
    idx = np.array([order(r, largest)[:k] for r in xm.reshape(-1, xm.shape[-1])])
    idx = np.moveaxis(idx.reshape(xm.shape[:-1] + (k,)), -1, axis)
    val = np.take_along_axis(x, idx, axis)
    shape = list(x.shape)
    shape[axis] = k
    with open(name + ".onnx", "wb") as f:
        f.write(model([node("TopK", ["x", "k"], ["v", "i"],
                            attrs=[attr_int("axis", axis), attr_int("largest", int(largest))])],
                      [value_info("x", list(x.shape), elem)],
                      [value_info("v", shape, elem), value_info("i", shape, INT64)],
                      [array_tensor("k", np.array([k], np.int64), INT64)]))
    np.save(name + "_x.npy", x)
    os.mkdir("ref_" + name)
    np.save("ref_%s/v.npy" % name, val)
    np.save("ref_%s/i.npy" % name, idx.astype(np.int64))

x = rng.integers(-3, 4, (5, 40)).astype(np.float32)      # many ties
x[0, [3, 17, 30]] = nan
x[1, [0, 39]] = [inf, -inf]
x[2, :] = 1.0
x[2, [5, 6, 20]] = nan
x[3, :] = nan
x[3, [2, 9]] = [-inf, 0.5]
for largest in (0, 1):
    case("rows%d" % largest, x, 8, 1, bool(largest))
    case("cols%d" % largest, np.ascontiguousarray(x[:3].T), 10, 0, bool(largest))
    case("vec%d" % largest, x[0].copy(), 5, 0, bool(largest))
# a row of 2^18: 2^36 pairs, more than the pairwise ranking takes (refused
# before), few selections
case("long", rng.standard_normal(1 << 18).astype(np.float32), 6, 0, True)
# k = 1; rows of 512 (whole vectors, the selections' masks and blends:
# DGCNN's shape) with many ties, NaNs and infinities; f64 (index numbers
# of f64)
w = rng.integers(-4, 5, (24, 512)).astype(np.float32)
w[1, ::7] = nan
w[2, ::5] = np.resize([inf, -inf], 103)
w[3, :] = 2.0
w[4, :] = nan
w[4, 100] = 1.0
for largest in (0, 1):
    case("one%d" % largest, x, 1, 1, bool(largest))
    case("wide%d" % largest, w, 16, 1, bool(largest))
    case("f64%d" % largest, x.astype(np.float64), 8, 1, bool(largest), 11)
# integer rows (no infinity: m's bound is the type's), their extremes among
# the values
q = rng.integers(-3, 4, (5, 40)).astype(np.int64)
q[0, [1, 2, 30]] = [-2**63, 2**63 - 1, -2**63]
q[1, :] = -2**63
q[2, :] = 2**63 - 1
r = q.clip(-2**31, 2**31 - 1).astype(np.int32)
for largest in (0, 1):
    case("i64%d" % largest, q, 8, 1, bool(largest), 7)
    case("i32%d" % largest, r, 8, 1, bool(largest), 6)
EOF2
for m in rows0 rows1 cols0 cols1 vec0 vec1 long one0 one1 wide0 wide1 f640 f641 i640 i641 i320 i321; do
    for mode in -O0 -O2; do
        expect_status 0 "$TEC" $mode $m.onnx --input x=${m}_x.npy --save-outputs o_$m$mode
        "$PYTHON" - ref_$m o_$m$mode <<'EOF2' || fail "$m $mode: wrong result"
import sys
import numpy as np
for n in ("v", "i"):
    e, g = np.load("%s/%s.npy" % (sys.argv[1], n)), np.load("%s/%s.npy" % (sys.argv[2], n))
    if e.shape != g.shape or not np.array_equal(e, g, equal_nan=True):
        print(sys.argv[2], n, "differs:\n", e, "\n", g)
        sys.exit(1)
EOF2
    done
done
expect_status 0 "$TEC" --emit=te rows1.onnx
[ "$(grep -c '^def topk_select_' out)" = 2 ] || { cat out; fail "want 2 selection defs"; }
[ "$(grep -c '= topk_select_2(' out)" = 7 ] || { cat out; fail "want 7 calls of the later selection"; }
grep -q ' r\[' out && { cat out; fail "a pairwise rank"; }
# the indices they compare and pick are f32 numbers (f64 for f64 rows)
grep -q '^def topk_iota_1() -> y: f32\[40\] {$' out || { cat out; fail "no f32 index numbers"; }
expect_status 0 "$TEC" --emit=te f641.onnx
grep -q '^def topk_iota_1() -> y: f64\[40\] {$' out || { cat out; fail "no f64 index numbers"; }
# in vectors: masks and blends, not lane by lane
expect_status 0 "$TEC" -O2 --emit=c wide1.onnx
grep -q 'const tec_mf32x16 tec_k = ' out || fail "wide1: no vector masks"
echo ok
