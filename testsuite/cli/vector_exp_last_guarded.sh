# A row loop calling exp whose length is not a whole number of vectors
# (ir/vectorize.c, guard_read's last_guarded): softmax's exponentials on
# rows of 197 run 12 vectors as one loop and the 13th, e[192..207], as a
# whole vector into the row buffer enlarged to 208, under the test that
# its last lane reads inside the input (the last row of the input reads
# past its end: there the same vector from loads clamped to the last
# element), instead of an overlapping vector at e[181].  Rows of 211 (13
# vectors and 3) the same; rows of 49 (3 vectors and 1) and 15 (one
# narrower vector) keep their forms.  The compiled programs agree with
# the interpreter on one and two threads, the last row's clamped path
# included (the test fails without the change: no e[208]).
. "$srcdir/testsuite/cli/lib.inc"
export XDG_CACHE_HOME=$PWD/cache
unset TEC_NUM_THREADS
cat >sm.te <<'TE'
import "nn.te"

input a: f32[3, 197] = uniform(-8, 8)
input b: f32[2, 2, 211] = uniform(-8, 8)
input c: f32[5, 49] = uniform(-8, 8)
input d: f32[4, 15] = uniform(-100, 8)
input f: f32[2, 17] = uniform(-8, 8)
sa = softmax(a)
sb = softmax(b)
sc = softmax(c)
sd = softmax(d)
sf = softmax(f)
output sa
output sb
output sc
output sd
output sf
TE
expect_status 0 "$TEC" -O2 --emit=c sm.te
grep -q 'float e\[208\]' out || fail "rows of 197: the row buffer is not enlarged to whole vectors"
grep -q '+ 207 < 591)' out || fail "rows of 197: the last vector is not under the test of its last lane"
grep -q '&e\[181\]' out && fail "rows of 197: an overlapping last vector"
grep -q 'float e\[224\]' out || fail "rows of 211: the row buffer is not enlarged to whole vectors"
expect_status 0 "$TEC" --interp sm.te --save-outputs ref
for t in 1 2; do
    TEC_NUM_THREADS=$t expect_status 0 "$TEC" -O2 sm.te --save-outputs o$t
    "$PYTHON" "$srcdir/testsuite/compare.py" ref o$t || fail "-O2 on $t threads differs from the interpreter"
done
exit 0
