# Every scheduling strategy gives outputs bit-identical to the serial run on
# every model of the zoo (testsuite/models/NAME/meta.json: the program and
# its options), on two CPU workers, with the kernels of -O2 (parallel loops
# and the memory plan, which scheduled runs set aside).
. "$srcdir/testsuite/cli/lib.inc"
. "$srcdir/testsuite/models/common.sh"
for meta in "$srcdir"/testsuite/models/*/meta.json; do
    mapfile -t f < <(meta_fields "$meta") || fail "$meta"
    name=${f[0]} program=${f[2]}
    opts=("${f[@]:3}")
    expect_status 0 "$TEC" -O2 "${opts[@]}" --save-outputs "$name-serial" "$program"
    for s in op path dynamic dynamic-cp; do
        expect_status 0 "$TEC" -O2 "${opts[@]}" --sched=$s --devices=cpu:1,cpu:1 --repeat 1 \
            --save-outputs "$name-$s" "$program"
        for out in "$name-serial"/*.npy; do
            cmp -s "$out" "$name-$s/$(basename "$out")" ||
                fail "$name --sched=$s: $(basename "$out") differs from the serial run's"
        done
    done
done
exit 0
