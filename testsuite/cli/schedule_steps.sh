# --dump-ir=schedule-steps prints the function after each step of a written
# schedule, headed by the step's number, location and text; each dump shows
# what that step made (and not yet what the next one makes); a step that
# fails stops the dumps after the last one that worked.
. "$srcdir/testsuite/cli/lib.inc"
cat >k.te <<'TE'
def rowsum(x: f32[R, N]) -> s: f32[R] {
    s[r] += x[r, j]
}
schedule rowsum {
    jo, ji = split(j, 16)
    rfactor(s, ji)
    vectorize(ji)
}
input x: f32[4, 40]
y = rowsum(x)
output y
TE
expect_status 0 "$TEC" -O1 --emit=tir --dump-ir=schedule-steps k.te
grep '^# --' err >headers
printf '%s\n' \
    '# -- @y after schedule step 1, k.te:5:14: jo, ji = split(j, 16) --' \
    '# -- @y after schedule step 2, k.te:6:5: rfactor(s, ji) --' \
    '# -- @y after schedule step 3, k.te:7:5: vectorize(ji) --' >want
diff -u want headers || fail "unexpected step headers"
# step 1 split j but made no partials; step 2 made them, not yet vectorized
sed -n '/step 1,/,/step 2,/p' err >step1
grep -q 'for ji in 0..16 {' step1 || fail "step 1 does not show the split"
grep -q 's_rf' step1 && fail "step 1 shows what step 2 makes"
sed -n '/step 2,/,/step 3,/p' err >step2
grep -q 'block s_rf(' step2 || fail "step 2 does not show the partial block"
grep -q 'vectorized' step2 && fail "step 2 shows what step 3 makes"
sed -n '/step 3,/,$p' err >step3
grep -q 'for ji in 0..16 vectorized {' step3 || fail "step 3 does not show the vectorized loop"
# without the option there are no step dumps; with it, a failing step ends them
expect_status 0 "$TEC" -O1 --emit=tir --dump-ir=schedule k.te
grep -q 'schedule step' err && fail "--dump-ir=schedule prints steps"
sed -i 's/vectorize(ji)/vectorize(jo)/' k.te
expect_status 1 "$TEC" -O1 --emit=tir --dump-ir=schedule-steps k.te
[ "$(grep -c '^# -- @y after schedule step' err)" = 2 ] || fail "dumps after a failed step"
grep -q "k.te:7:5: error: cannot vectorize loop 'jo'" err || fail "no error for the failed step"
echo ok
