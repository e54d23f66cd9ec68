# fuse (passes/fuse.c): a group that took in a consumer tries its own
# producer again, and a consumer's input that the group reads already is
# read through the group's parameter, not a second one.  The gate
# 1 / (1 + exp(-h)) cannot join the linear layer writing h while the
# multiply h * gate still reads h; once the multiply has joined the gate,
# the group reads h through one parameter and joins the linear layer's
# tile (as GELU's x * (1 + erf(x / sqrt 2)) after a Linear does).  When h
# is an output of the program too, the group stays a kernel of its own,
# still with a single parameter for h.  The compiled programs agree with
# the interpreter on one and two threads.
. "$srcdir/testsuite/cli/lib.inc"
export XDG_CACHE_HOME=$PWD/cache
cat >swish.te <<'TE'
import "nn.te"
def gate(x: f32[B, C]) -> y: f32[B, C] { y[b, c] = 1.0 / (1.0 + exp(0.0 - x[b, c])) }
def times(a: f32[B, C], g: f32[B, C]) -> y: f32[B, C] { y[b, c] = a[b, c] * g[b, c] }
input x: f32[64, 96]
h = linear(x, 384) as "fc"
g = gate(h) as "act.gate"
y = times(h, g) as "act.mul"
output y
TE
sed 's/^output y$/output y\noutput h/' swish.te >swish_h.te

expect_status 0 "$TEC" -O2 --profile --no-run swish.te --report=r.json
"$PYTHON" -c "
import json
g = [r['name'] for r in json.load(open('r.json'))['groups']]
assert g == ['fc+act.gate+mul'], g" || fail "the gate and the multiply did not join the linear layer"

expect_status 0 "$TEC" -O2 --passes=simplify,autoschedule,fuse --emit=tir swish_h.te
grep '^func @act.gate(' out >f || fail "no kernel of the group act.gate+mul"
grep -q '^func @act.gate(x: f32\[24576\], act.mul.y: f32\[24576\])' f || { cat f; fail "the group reads h through more than one parameter"; }

for t in swish swish_h; do
    expect_status 0 "$TEC" --interp $t.te --save-outputs $t-ref
    for n in 1 2; do
        TEC_NUM_THREADS=$n expect_status 0 "$TEC" -O2 $t.te --save-outputs $t-o2-$n
        expect_status 0 "$PYTHON" "$srcdir/testsuite/compare.py" $t-ref $t-o2-$n
    done
done
