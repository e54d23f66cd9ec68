# `schedule NAME { ... }` and `schedule "layer" { ... }` in .te: the frontend
# gives the right functions the attributes schedule (the body as written)
# and schedule_loc (where the body starts); a layer's schedule wins over its
# def's; schedules in imported files count; the text survives printing and
# parsing the IR.
. "$srcdir/testsuite/cli/lib.inc"
cat >lib.te <<'EOF'
def relu(x: f32[M, N]) -> y: f32[M, N] {
    y[i, j] = max(x[i, j], 0)
}

schedule relu {
    vectorize(j)
}
EOF
cat >main.te <<'EOF'
import "lib.te"

def matmul(A: f32[M, K], B: f32[K, N]) -> C: f32[M, N] {
    C[i, j] += A[i, k] * B[k, j]
}

# a composite: its own index statement is a function of op "twice"
def twice(x: f32[M, N]) -> y {
    a = relu(x)
    y[i, j] = a[i, j] * 2
}

schedule matmul {   # {tiles}
    io, ii = split(i, 4)    # a } in a comment
    x = "}" { nested }
}
schedule "mm2"
{
	unroll(j)
}
schedule twice {}

input A: f32[8, 4]
input B: f32[4, 4]
mm1 = matmul(A, B)
mm2 = matmul(mm1, B)
t = twice(mm2) as "tw"
z[i, j] = t[i, j] + 1
output z
EOF
cat >want <<'EOF'
func @mm1(A: f32[8, 4], B: f32[4, 4], C: f32[8, 4]) attrs(layer = "mm1", op = "matmul", loc = "main.te:25:7", schedule = "   # {tiles}\n    io, ii = split(i, 4)    # a } in a comment\n    x = \"}\" { nested }\n", schedule_loc = "main.te:13:18") {
func @mm2(A: f32[8, 4], B: f32[4, 4], C: f32[8, 4]) attrs(layer = "mm2", op = "matmul", loc = "main.te:26:7", schedule = "\n\tunroll(j)\n", schedule_loc = "main.te:18:2") {
func @tw.a(x: f32[8, 4], y: f32[8, 4]) attrs(layer = "tw.a", op = "relu", loc = "main.te:9:9", schedule = "\n    vectorize(j)\n", schedule_loc = "lib.te:5:16") {
func @tw.y(a: f32[8, 4], y: f32[8, 4]) attrs(layer = "tw.y", op = "twice", loc = "main.te:10:5", schedule = "", schedule_loc = "main.te:21:17") {
func @z(t: f32[8, 4], z: f32[8, 4]) attrs(layer = "z", op = "main", loc = "main.te:28:1") {
EOF
"$TEC" --passes= --emit=tir main.te >a.tir || fail "--emit=tir"
grep '^func' a.tir >got
diff -u want got || fail "schedule attributes"
"$TEC" -x tir --passes= --emit=tir a.tir >b.tir || fail "parsing the IR back"
cmp a.tir b.tir || fail "print -> parse -> print is not a fixed point"

# The schedule pass reads them: a valid schedule compiles and runs, and a
# mistake in one is reported at its place in the .te file.
cat >ok.te <<'EOF'
import "lib.te"
def matmul(A: f32[M, K], B: f32[K, N]) -> C: f32[M, N] {
    C[i, j] += A[i, k] * B[k, j]
}
schedule matmul {
    io, ii = split(i, 4)
    vectorize(j)
}
input A: f32[8, 4]
input B: f32[4, 4]
C = matmul(A, B)
R = relu(C)
output R
EOF
expect_status 0 "$TEC" -O1 ok.te
sed -e 's/vectorize(j)$/vectorise(j)/' ok.te >bad.te
expect_status 1 "$TEC" -O1 bad.te
grep -q '^bad.te:7:5: error: ' err || { cat err; fail "schedule error location"; }
echo ok
