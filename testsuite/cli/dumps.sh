# --dump-ir=all shows the IR after every pass under its name; --dump-dir
# writes one numbered file per pass.
. "$srcdir/testsuite/cli/lib.inc"
pipeline=$("$TEC" --list-passes | sed -n 's/^  -O1  //p')
[ -n "$pipeline" ] || fail "no -O1 pipeline in --list-passes"
"$TEC" -O1 --emit=tir --dump-ir=all "$srcdir/examples/mlp.te" >/dev/null 2>dump || fail "dump-ir"
IFS=, read -r -a passes <<<"$pipeline"
for p in "${passes[@]}"; do
    grep -q "IR after $p" dump || fail "--dump-ir=all shows no IR after $p"
done
"$TEC" -O1 --emit=tir --dump-dir=d "$srcdir/examples/mlp.te" >/dev/null || fail "dump-dir"
[ -f d/mlp.00.input.tir ] || fail "no d/mlp.00.input.tir"
n=1
for p in "${passes[@]}"; do
    f=$(printf 'd/mlp.%02d.%s.tir' "$n" "$p")
    [ -f "$f" ] || fail "no $f"
    "$TEC" -x tir --passes= --emit=tir "$f" >/dev/null || fail "$f does not parse"
    n=$((n + 1))
done
echo ok
