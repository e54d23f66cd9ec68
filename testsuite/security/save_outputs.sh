# --save-outputs DIR and --weights DIR map tensor names to DIR/NAME.npy: a
# name that would leave DIR is refused, a file planted in DIR cannot
# redirect the write, and a failed save leaves the old files as they were.
. "$srcdir/testsuite/cli/lib.inc"
two=$srcdir/testsuite/security/two_outputs.tir   # outputs a and b, parameter w

# Names that leave DIR, in .tir and .te programs.
sed -e 's|output a:|output "../../escaped":|' -e 's|@f(x, w, a, b)|@f(x, w, "../../escaped", b)|' \
    "$two" >escape.tir
mkdir -p d1/sub
expect_status 1 "$TEC" -x tir escape.tir --save-outputs d1/sub
expect_err 'tec: error: --save-outputs d1/sub: the output named "../../escaped" cannot be a file name there: it contains '"'/'"
[ -z "$(find . -name 'escaped*')" ] || fail "an output was written outside DIR"
[ -z "$(ls d1/sub)" ] || fail "a partial save"

sed 's|\bw\b|"../outside"|g' "$two" >param.tir
"$PYTHON" -c 'import numpy; numpy.save("outside.npy", numpy.ones(4, numpy.float32))'
mkdir -p weights
expect_status 1 "$TEC" -x tir param.tir --weights weights
expect_err 'tec: error: --weights weights: the parameter named "../outside" cannot be a file name there: it contains '"'/'"

for name in /abs sub/x .. . ""; do
    printf 'input x: f32[4]\ny[i] = x[i] * 2.0\noutput y as "%s"\n' "$name" >named.te
    expect_status 1 "$TEC" named.te --save-outputs d2
    grep -q 'cannot be a file name there\|invalid layer name' err || { cat err; fail "name '$name'"; }
done
[ ! -e /abs.npy ] && [ ! -e sub ] && [ ! -e d2 ] || fail "a refused name wrote a file"
# Control characters are refused and shown escaped, not sent to the terminal.
sed -e 's|output a:|output "a\\033]0;x\\007":|' -e 's|@f(x, w, a, b)|@f(x, w, "a\\033]0;x\\007", b)|' \
    "$two" >ctl.tir
expect_status 1 "$TEC" -x tir ctl.tir --save-outputs d3
expect_err 'tec: error: --save-outputs d3: the output named "a\x1b]0;x\x07" cannot be a file name there: it contains a control character'

# Missing parents are created.
expect_status 0 "$TEC" -x tir "$two" --save-outputs new/deep/dir
[ -s new/deep/dir/a.npy ] && [ -s new/deep/dir/b.npy ] || fail "outputs not saved in new/deep/dir"
# ... or the one that cannot be is named.
touch plain
expect_status 1 "$TEC" -x tir "$two" --save-outputs plain/dir
expect_err 'tec: error: --save-outputs plain/dir: plain is not a directory'

# Symbolic links planted at the old fixed temporary names and at the
# outputs themselves: the victims stay untouched, the outputs are files.
mkdir planted
echo victim >victim
for f in a.npy.tmp b.npy.tmp .a.npy.tmp b.npy; do ln -s ../victim "planted/$f"; done
expect_status 0 "$TEC" -x tir "$two" --save-outputs planted
[ "$(cat victim)" = victim ] || fail "a planted link redirected a write"
[ -f planted/b.npy ] && [ ! -L planted/b.npy ] || fail "planted/b.npy is not a new file"
cmp -s planted/a.npy new/deep/dir/a.npy || fail "planted/a.npy differs"
# A new output gets the mode of a file created under the umask.
[ "$(umask 022 && "$TEC" -x tir "$two" --save-outputs m >/dev/null && stat -c %a m/a.npy)" = 644 ] ||
    fail "mode under umask 022"

# All or nothing: when b cannot be saved (a directory stands in its way),
# the old a.npy stays as it was and no temporary is left behind.
mkdir keep
echo old >keep/a.npy
mkdir keep/b.npy
expect_status 1 "$TEC" -x tir "$two" --save-outputs keep
expect_err 'tec: error: --save-outputs keep: keep/b.npy is a directory'
[ "$(cat keep/a.npy)" = old ] || fail "a.npy was replaced although b failed"
[ "$(ls -A keep)" = "$(printf 'a.npy\nb.npy')" ] || { ls -A keep; fail "a temporary was left behind"; }
# A directory that cannot be written: the same.
mkdir ro && echo old >ro/a.npy && chmod 555 ro
if ! touch ro/probe 2>/dev/null; then   # (root can write anyway)
    expect_status 1 "$TEC" -x tir "$two" --save-outputs ro
    grep -q 'cannot create a temporary file beside it: Permission denied' err || fail "ro message"
    [ "$(cat ro/a.npy)" = old ] || fail "ro/a.npy changed"
fi
chmod 755 ro
echo ok
