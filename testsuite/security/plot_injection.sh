# Strings that reach a gnuplot script (module, file and layer names, sweep
# labels) cannot end their command: a newline in one must not run gnuplot's
# system(), nor a backquote or @ expand.  Each place is tried with
# newlines, carriage returns, quotes, backslashes and control characters.
. "$srcdir/testsuite/cli/lib.inc"
command -v gnuplot >/dev/null 2>&1 || fail "gnuplot is needed (bootstrap installs gnuplot-nox)"

# A .tir whose module name and layer names carry a payload (in the .tir's
# string escapes) that, if it escaped its gnuplot string, would create the
# file PWNED_*.
"$TEC" -O1 --emit=tir "$srcdir/examples/mlp.te" >mlp.tir || fail "emit mlp"
"$PYTHON" - mlp.tir evil.tir <<'PY' || fail "planting the payload"
import re, sys
def payload(tag):
    cmd = 'system(\\"touch PWNED_%s\\")' % tag
    return ('\\n %s\\r\\n %s \\\\ `touch PWNED_%s` @x \' \\" \\t \\x01'
            % (cmd, cmd, tag))
text = open(sys.argv[1]).read()
text = re.sub(r'^module "[^"]*"', lambda m: 'module "%s"' % payload("module"), text, count=1)
text = re.sub(r'layer = "[^"]*"', lambda m: 'layer = "%s"' % payload("layer"), text)
open(sys.argv[2], "w").write(text)
PY
grep -q 'touch PWNED_layer' evil.tir || fail "layer payload not planted"
"$TEC" --emit=tir -x tir evil.tir >/dev/null || fail "the planted .tir does not parse"

expect_status 0 "$TEC" -x tir --profile --no-run --plot=plot evil.tir
[ -s plot/macs.png ] || fail "no chart drawn"
expect_status 0 "$TEC" -x tir --profile --repeat 1 --plot=plot2 evil.tir
[ -s plot2/time.svg ] || fail "no time chart drawn"

# A .te file whose base name carries a newline (the module's name).
evil_te=$(printf 'net\nsystem("touch PWNED_file")\n.te')
cp "$srcdir/examples/mlp.te" "$evil_te"
expect_status 0 "$TEC" --profile --no-run --plot=plot3 "$evil_te"

# The accelerator sweep's charts: layer names and configuration labels.
expect_status 0 "$TEC" -x tir --accel "$srcdir/accel/configs/edge_os_32x32.cfg" --sweep \
    --sweep-arrays 8x8,16x16 --sweep-out sweep evil.tir
[ -s sweep/sweep.gp ] || fail "no sweep script"

# tec-sweep's charts, whose titles name the file.
expect_status 0 "$PYTHON" "$srcdir/tools/tec-sweep" --tec "$TEC" --pad-to 1,4 "$evil_te" --out tsweep

for f in PWNED_module PWNED_layer PWNED_file; do
    [ ! -e "$f" ] || fail "a name ran a command through gnuplot ($f)"
done
# Every script line is a command tec wrote: none starts with a name's text.
for gp in plot/profile.gp plot2/profile.gp plot3/profile.gp sweep/sweep.gp tsweep/sweep.gp; do
    [ -s "$gp" ] || fail "$gp missing"
    if grep -n '^ *system\|^ *`' "$gp"; then fail "$gp: a name's text became a command"; fi
    if LC_ALL=C grep -nP '[\x01-\x08\x0b-\x1f\x7f]' "$gp"; then fail "$gp: control character"; fi
done
echo ok
