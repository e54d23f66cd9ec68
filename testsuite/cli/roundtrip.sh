# The printed IR of every example, and of the language's run tests (every
# form of the language), parses back to the same text, at -O0 and -O2.
. "$srcdir/testsuite/cli/lib.inc"
for f in "$srcdir"/examples/*.te "$srcdir"/testsuite/run/lang_*.te; do
    for o in -O0 -O2; do
        "$TEC" $o --emit=tir "$f" >a.tir || fail "$f: --emit=tir"
        "$TEC" -x tir --passes= --emit=tir - <a.tir >b.tir || fail "$f: parsing the IR back"
        cmp a.tir b.tir || fail "$f $o: print -> parse -> print is not a fixed point"
    done
done

# The exact round trip of the README, at the default level on both sides.
"$TEC" --emit=tir "$srcdir/examples/conv.te" | "$TEC" -x tir --emit=tir - >c.tir || fail "conv pipe"
"$TEC" --emit=tir "$srcdir/examples/conv.te" | cmp - c.tir || fail "conv: printed IR changes when read back"
echo ok
