# Inputs that would exhaust the stack or the terminal get a located error:
# expressions nested too deeply (.te and .tir), and diagnostics on very
# long source lines show a window of the line, not all of it.
. "$srcdir/testsuite/cli/lib.inc"

# sum N TERM SEP: N copies of TERM joined by SEP.
sum() { "$PYTHON" -c 'import sys; print(sys.argv[3].join([sys.argv[2]] * int(sys.argv[1])))' "$@"; }

# A .te sum of 14000 terms (it overflowed the stack), and deep parentheses.
{ echo 'input x: f32[4]'; echo "y[i] = $(sum 14000 'x[i]' ' + ')"; echo 'output y'; } >sum.te
expect_status 1 "$TEC" sum.te
grep -q '^sum.te:2:7006: error: expression nested more than 1000 levels deep; compute parts of it into temporaries$' err ||
    { head -c 600 err; fail "deep .te sum"; }
[ "$(wc -l <err)" = 3 ] || { head -c 600 err; fail "one error expected"; }
{ echo 'input x: f32[4]'; echo "y[i] = $(sum 3000 '-(' '')x[i]$(sum 3000 ')' '')"; echo 'output y'; } >neg.te
expect_status 1 "$TEC" neg.te
grep -q 'error: expression nested more than 1000 levels deep' err || { head -c 600 err; fail "deep .te negation"; }
# ... and just under the limit, it compiles and runs.
{ echo 'input x: f32[4]'; echo "y[i] = $(sum 999 'x[i]' ' + ')"; echo 'output y'; } >ok.te
expect_status 0 "$TEC" -O2 ok.te

# The same in .tir: a chain of 100000 terms.
cat >sum.tir <<TIR
module "deep"

func @f(x: f32[4], y: f32[4]) attrs(layer = "f") {
  for i in 0..4 {
    y[i] = $(sum 100000 'x[i]' ' + ')
  }
}

graph {
  input x: f32[4] init(-1, 1)
  output y: f32[4]
  call @f(x, y)
}
TIR
expect_status 1 "$TEC" -x tir sum.tir
grep -q '^sum.tir:5:28017: error: expression nested more than 4000 levels deep; split it with let or a temporary buffer$' err ||
    { head -c 600 err; fail "deep .tir sum"; }

# A syntax error at column 10^7 of one line: a window of the line around
# the caret, quickly (the caret line was written a character per write).
{ echo 'input x: f32[4]'; head -c 10000000 /dev/zero | tr '\0' ' '; echo ' $ y[i] = x[i]'; echo 'output y'; } >long.te
start=$(date +%s)
expect_status 1 "$TEC" long.te
[ $(( $(date +%s) - start )) -lt 10 ] || fail "the diagnostic took $(( $(date +%s) - start )) s"
grep -q '^long.te:2:10000002: error: ' err || { head -c 300 err; fail "long line error"; }
[ "$(wc -c <err)" -lt 2000 ] || fail "the whole line was echoed ($(wc -c <err) bytes)"
grep -q '^    2 | \.\.\. .*\$ y\[i\] = x\[i\]$' err || { cat err; fail "no window around the caret"; }
# Control characters of a source line are not sent to the terminal.
printf 'input x: f32[4]\ny[i] = x[i] \033[31m $\noutput y\n' >ctl.te
expect_status 1 "$TEC" ctl.te
if LC_ALL=C grep -q "$(printf '\033')" err; then fail "an escape sequence reached stderr"; fi
echo ok
