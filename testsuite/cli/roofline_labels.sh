# The roofline chart names only the slowest layers, and only where a name
# does not cover another: MobileNetV2's 54 timed units get at most 15
# labels (the slowest among them), in units.dat's last column, which the
# chart's labels use; the rest stay points without text.
. "$srcdir/testsuite/cli/lib.inc"
command -v gnuplot >/dev/null || { echo "gnuplot not installed: skipped"; exit 0; }
expect_status 0 "$TEC" -O2 --profile --plot=plots "$srcdir/examples/mobilenet_v2.te"
grep -q "using 4:5:6 title 'names: the slowest layers, where they fit' with labels" plots/profile.gp ||
    fail "the roofline does not label from column 6"
"$PYTHON" - <<'X' || fail "roofline labels"
import math
rows = []
for line in open("plots/units.dat"):
    if line.startswith("#"):
        continue
    f = line.rstrip("\n").split("\t")
    rows.append((f[1].strip('"'), float(f[2]), f[3], f[4], f[5].strip('"')))
assert len(rows) > 40, len(rows)
plotted = [r for r in rows if r[2] != "?" and r[3] != "?"]
labeled = [r for r in rows if r[4]]
assert 3 <= len(labeled) <= 15, len(labeled)
assert all(r[4] == r[0] for r in labeled)
slowest = max(plotted, key=lambda r: r[1])
assert slowest[4], slowest
# boxes in the chart's estimated pixels do not overlap
ys = [math.log10(float(r[3])) for r in plotted]
d0, d1 = math.floor(min(ys)), math.ceil(max(ys))
d1 = d1 if d1 > d0 else d0 + 1
boxes = []
for r in labeled:
    px = (math.log10(float(r[2])) + 2) / 5 * 1100
    py = (math.log10(float(r[3])) - d0) / (d1 - d0) * 560
    w = 5.5 * len(r[0])
    boxes.append((px - w / 2, px + w / 2, py + 7, py + 21))
for i, a in enumerate(boxes):
    for b in boxes[:i]:
        assert not (a[0] < b[1] and b[0] < a[1] and a[2] < b[3] and b[2] < a[3]), (a, b)
X
exit 0
