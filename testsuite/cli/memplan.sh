# Memory planning (the memplan pass, -O2/-O3): the profile reports the
# activation memory with and without the plan; the plan shrinks resnet18's;
# results do not change, compiled or interpreted, even when every planned
# temp is poisoned (TEC_POISON_ARENA) before its first call.
. "$srcdir/testsuite/cli/lib.inc"
r18=$srcdir/examples/resnet18.te
mlp=$srcdir/examples/mlp.te

expect_status 0 "$TEC" -O2 --profile --no-run --report=o2.json --report=o2.csv "$r18"
grep -q '^activations: .* planned (.* unplanned); 67 of 67 temporaries share a .* arena (memplan)$' out ||
    { cat out; fail "no activations line at -O2"; }
expect_status 0 "$TEC" -O1 --profile --no-run --report=o1.json "$r18"
grep -q '^activations: .* planned (.* unplanned); no memory plan' out ||
    { cat out; fail "no activations line at -O1"; }
expect_status 0 "$TEC" -O2 --emit=tir "$r18"
mv out o2.tir
expect_status 0 "$TEC" -O1 --emit=tir "$r18"
mv out o1.tir
"$PYTHON" - <<'PY' || fail "resnet18 activation memory"
import csv, json, re
o2 = json.load(open("o2.json"))["totals"]
o1 = json.load(open("o1.json"))["totals"]
# Without a plan: every input, temp and output in storage of its own (at
# -O2 the temps of the layout pass with their borders).
size = {"f32": 4, "f64": 8, "i32": 4, "i64": 8, "bool": 1}
def memory(tir):
    unplanned = planned = 0
    arena = None
    for line in open(tir):
        m = re.match(r"  arena (\d+)$", line)
        if m:
            arena = int(m.group(1))
        m = re.match(r"  (input|temp|output) \S+: (\w+)\[(\d+)\]", line)
        if m:
            n = size[m.group(2)] * int(m.group(3))
            unplanned += n
            planned += 0 if re.search(r" arena\(\d+\)$", line) else n
    return unplanned, planned, arena
unplanned, planned, arena = memory("o2.tir")
assert arena is not None and arena % 64 == 0, arena
planned += arena
assert o2["activation_memory_unplanned_bytes"] == unplanned, (o2, unplanned)
assert o2["activation_memory_bytes"] == planned, (o2, planned)
unplanned1, planned1, arena1 = memory("o1.tir")
assert arena1 is None and planned1 == unplanned1, (arena1, planned1, unplanned1)
assert o1["activation_memory_bytes"] == o1["activation_memory_unplanned_bytes"] == unplanned1, o1
# The plan must pay: resnet18's temps mostly die young.
assert o2["activation_memory_bytes"] < o2["activation_memory_unplanned_bytes"] / 4, o2
rows = list(csv.DictReader(open("o2.csv")))
assert rows[-1]["kind"] == "total", rows[-1]
assert int(rows[-1]["activation_memory_bytes"]) == planned, rows[-1]
assert int(rows[-1]["activation_memory_unplanned_bytes"]) == unplanned, rows[-1]
assert all(r["activation_memory_bytes"] == "" for r in rows[:-1])
PY

# The same outputs with and without the plan (mlp: fc1 -> relu -> fc2 through
# temps), compiled and interpreted, the planned temps poisoned.
expect_status 0 "$TEC" -O0 "$mlp" --save-outputs ref
export TEC_POISON_ARENA=1
expect_status 0 "$TEC" -O2 "$mlp" --save-outputs o2
"$PYTHON" "$srcdir/testsuite/compare.py" ref o2 || fail "-O2 outputs differ"
expect_status 0 "$TEC" -O2 --interp "$mlp" --save-outputs o2i
"$PYTHON" "$srcdir/testsuite/compare.py" ref o2i || fail "-O2 --interp outputs differ"
expect_status 0 "$TEC" -O2 --emit=tir "$mlp"
grep -q '^  arena [0-9]*$' out || fail "mlp -O2 has no arena"
grep -q '^  temp .* arena(0)$' out || fail "mlp -O2 places no temp"
unset TEC_POISON_ARENA
# --passes without memplan: no plan.
expect_status 0 "$TEC" --passes=simplify,flatten --emit=tir "$mlp"
if grep -q 'arena' out; then fail "a plan without the memplan pass"; fi
# A pass that changes the graph's calls after memplan (fuse moves a residual
# add's other input into the conv's call) drops the plan; memplan again
# makes a new one.
expect_status 0 "$TEC" --verify-each --passes=simplify,schedule,autoschedule,memplan,fuse --emit=tir "$r18"
if grep -q 'arena' out; then fail "a stale plan survived fuse"; fi
expect_status 0 "$TEC" --verify-each --passes=simplify,schedule,autoschedule,memplan,fuse,memplan --emit=tir "$r18"
grep -q '^  arena [0-9]*$' out || fail "no plan after memplan,fuse,memplan"
exit 0
