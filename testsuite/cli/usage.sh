# Usage errors exit 2 with a message; --help and --version exit 0.
. "$srcdir/testsuite/cli/lib.inc"
expect_status 0 "$TEC" --help
grep -q '^usage: tec' out || fail "--help prints no usage"
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
