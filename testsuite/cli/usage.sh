# Usage errors exit 2 with a message; --help and --version exit 0.
. "$srcdir/testsuite/cli/lib.inc"
expect_status 0 "$TEC" --help
grep -q '^usage: tec' out || fail "--help prints no usage"
# The help is made from the option table: every option it names is in the
# man page, and the man page names no option tec does not take.
"$TEC" --help | grep -oE '(^|[ ,])--[a-z]+(-[a-z]+)*' | sed 's/^[ ,]//' | sort -u >help_opts
grep -oE '\\-\\-[a-z]+(\\-[a-z]+)*' "$srcdir/doc/tec.1" | sed 's/\\//g' | sort -u >man_opts
[ "$(wc -l <help_opts)" -gt 40 ] || fail "--help names too few options"
diff -u help_opts man_opts || fail "tec --help and doc/tec.1 name different options"
expect_status 0 "$TEC" --version
grep -q '^tec [0-9]' out || fail "--version"
expect_status 2 "$TEC"
expect_err "tec: error: no input file
tec: try 'tec --help'"
expect_status 2 "$TEC" --frobnicate x.te
expect_err "tec: error: unknown option '--frobnicate'
tec: try 'tec --help'"
expect_status 2 "$TEC" -O7 x.te
expect_err "tec: error: unknown optimization level '-O7' (use -O0 to -O3)
tec: try 'tec --help'"
expect_status 2 "$TEC" -D N x.te
expect_err "tec: error: -D expects NAME=VALUE, got 'N'
tec: try 'tec --help'"
expect_status 2 "$TEC" --emit=asm x.te
expect_err "tec: error: unknown --emit=asm (use te, tir, c, so or lib)
tec: try 'tec --help'"
expect_status 2 "$TEC" --emit=so "$srcdir/examples/matmul.te"
expect_err "tec: error: --emit=so needs -o FILE
tec: try 'tec --help'"
expect_status 1 "$TEC" no-such-file.te
expect_err "tec: error: cannot read no-such-file.te: No such file or directory"
echo ok
