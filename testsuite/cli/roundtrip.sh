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

# The exact round trip of the README, at the default level on both sides:
# the printed IR is vector IR (what the C emitter gets), and -O2 run on it
# once more (simplify, vectorize, ...) prints it unchanged.
for e in conv matmul mlp; do
    "$TEC" --emit=tir "$srcdir/examples/$e.te" >c1.tir || fail "$e: --emit=tir"
    grep -q 'ramp(' c1.tir || fail "$e: the -O2 IR has no vector IR"
    "$TEC" -x tir --emit=tir - <c1.tir >c2.tir || fail "$e pipe"
    cmp c1.tir c2.tir || fail "$e: printed IR changes when read back"
done

# The same for networks: -O2 on the IR of a whole network leaves every
# kernel's schedule, the fused layers and prepack's load functions (which
# run once, at load, and keep the schedule of the kernel they came from)
# as they are.
for e in resnet18 mobilenet_v2 gpt2; do
    "$TEC" -O2 --emit=tir "$srcdir/examples/$e.te" >n1.tir || fail "$e: --emit=tir"
    grep -q 'op = "prepack"' n1.tir || fail "$e: the -O2 IR has no prepack function"
    "$TEC" -O2 -x tir --emit=tir - <n1.tir >n2.tir || fail "$e pipe"
    cmp n1.tir n2.tir || fail "$e: -O2 on its own printed IR changes it"
done
echo ok
