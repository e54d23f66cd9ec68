# Exit statuses: 1 for the user's input (a .tir that breaks a verifier
# rule included), 2 for usage, 70 only for tec's own faults.
. "$srcdir/testsuite/cli/lib.inc"
mm=$srcdir/examples/matmul.te
two=$srcdir/testsuite/security/two_outputs.tir

# Unknown pass names are usage errors, found before any work.
expect_status 2 "$TEC" --passes=simplify,bogus "$mm"
expect_err "tec: error: unknown pass 'bogus' (see tec --list-passes)
tec: try 'tec --help'"
expect_status 2 "$TEC" --dump-ir=bogus "$mm"
grep -q "unknown pass 'bogus'" err || fail "--dump-ir=bogus"
expect_status 0 "$TEC" --passes=simplify,dce --dump-ir=all --emit=tir "$mm"
# -o without --emit would be ignored: a usage error.
expect_status 2 "$TEC" -o out.txt "$mm"
expect_err "tec: error: -o out.txt needs --emit=tir, c or so (outputs of a run: --save-outputs DIR)
tec: try 'tec --help'"
[ ! -e out.txt ] || fail "-o wrote a file"

# A .tir input that breaks a verifier rule is the input's error.
sed 's/writes(a, b)/writes()/' "$two" >nowrites.tir
expect_status 1 "$TEC" -x tir nowrites.tir
expect_err "nowrites.tir: error: in @f: block 'f' stores to 'a' but does not list it in writes
nowrites.tir: error: in @f: block 'f' stores to 'b' but does not list it in writes"
sed 's/reads(x, w)/reads(x)/' "$two" >noreads.tir
expect_status 1 "$TEC" -x tir noreads.tir
grep -q "^noreads.tir: error: in @f: " err || { cat err; fail "missing reads"; }
sed 's/call @f(x, w, a, b)/call @f(x, w, a, a)/' "$two" >unwritten.tir
expect_status 1 "$TEC" -x tir unwritten.tir
grep -q "^unwritten.tir: error: in graph: output 'b' is not written by any call" err ||
    { cat err; fail "unwritten output"; }
echo ok
