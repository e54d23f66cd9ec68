# A chain of 200 elementwise layers (relu, add of a constant, relu6)
# fuses into few kernels, each computing its links in one store, but no
# store's value nests more than 64 deep (passes/fuse.c: FUSE_MAX_DEPTH),
# so the IR still reads back; the result equals the interpreter's.
. "$srcdir/testsuite/cli/lib.inc"
{
    echo 'import "nn.te"'
    echo 'input x: f32[1, 4, 5, 6]'
    echo 't0 = relu(x) as "l0"'
    k=1
    while [ $k -lt 200 ]; do
        case $((k % 3)) in
        0) echo "t$k = relu(t$((k - 1))) as \"l$k\"" ;;
        1) echo "t$k[n, c, h, w] = t$((k - 1))[n, c, h, w] + 0.25 where n in 0..1, c in 0..4, h in 0..5, w in 0..6" ;;
        2) echo "t$k = relu6(t$((k - 1))) as \"l$k\"" ;;
        esac
        k=$((k + 1))
    done
    echo 'output t199'
} >chain.te
expect_status 0 "$TEC" -O2 --emit=tir chain.te
mv out chain.tir
calls=$(grep -c '^  call @' chain.tir)
[ "$calls" -ge 2 ] && [ "$calls" -le 12 ] || fail "200 elementwise layers gave $calls calls"
expect_status 0 "$TEC" -x tir --passes= --emit=tir chain.tir
cmp out chain.tir || fail "the fused chain's IR does not read back the same"
expect_status 0 "$TEC" --interp chain.te --save-outputs ref
expect_status 0 "$TEC" -O2 chain.te --save-outputs o2
"$PYTHON" "$srcdir/testsuite/compare.py" ref o2 >cmp.log || { cat cmp.log; fail "-O2 differs from the interpreter"; }
echo ok
