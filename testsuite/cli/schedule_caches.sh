# The automatic scheduler reads this machine's cache sizes (TEC_SYSFS_CPU
# names a made-up sysfs): a 1x1 convolution on a channels-last map whose
# weight (64 KB) fits a quarter of the level-2 cache while its input
# (3.2 MB) does not fit half of it runs the rows of the map outermost, the
# weight's column panels inside them, so the input is read once for all
# panels instead of once per panel (passes/schedule/auto_contraction.c,
# contraction_order); with an 8 MiB level-2 cache, which holds the input,
# the panels stay outermost.  Needs two processors (the rule moves the
# loop the threads run).
. "$srcdir/testsuite/cli/lib.inc"
export XDG_CACHE_HOME=$PWD/cache
unset TEC_NUM_THREADS TEC_SYSFS_CPU
cat >pw.tir <<'TIR'
module "pw"

func @y(x: f32[1, 56, 56, 256], weight: f32[64, 256, 1, 1], y: f32[1, 56, 56, 64]) attrs(layer = "y", op = "conv2d", loc = "pw.te:3:5") {
  for p in 0..56 {
    for q in 0..56 {
      for f in 0..64 {
        for c in 0..256 {
          block y(vp: spatial[56] = p, vq: spatial[56] = q, vf: spatial[64] = f, vc: reduce[256] = c) reads(y, x, weight) writes(y) {
            init {
              y[0, vp, vq, vf] = 0.0f
            }
            y[0, vp, vq, vf] = y[0, vp, vq, vf] + x[0, vp, vq, vc] * weight[vf, vc, 0, 0]
          }
        }
      }
    }
  }
}

graph {
  input x: f32[1, 56, 56, 256] init(-1, 1)
  param y.weight: f32[64, 256, 1, 1] init(-0.2, 0.2)
  output y: f32[1, 56, 56, 64]
  call @y(x, y.weight, y)
}
TIR
# sysfs trees: L1d 48 KiB, L2 $1 bytes, per processor this process may use
"$PYTHON" - <<'PY' || fail "cannot make the fake sysfs trees"
import os
for name, l2 in (("sys-2m", 2 << 20), ("sys-8m", 8 << 20)):
    for c in sorted(os.sched_getaffinity(0)):
        for i, (level, typ, size) in enumerate(((1, "Data", 48 << 10), (2, "Unified", l2))):
            d = "%s/cpu%d/cache/index%d" % (name, c, i)
            os.makedirs(d)
            for f, v in (("level", level), ("type", typ), ("size", size), ("shared_cpu_list", c)):
                open(os.path.join(d, f), "w").write("%s\n" % v)
PY
if [ "$(nproc)" -ge 2 ]; then
    TEC_SYSFS_CPU=$PWD/sys-2m expect_status 0 "$TEC" -x tir --passes=simplify,autoschedule --emit=tir pw.tir
    grep -q 'reorder(p, f_o, q_o, c, q_i, f_i)' out || { grep schedule_auto out; fail "L2 2 MiB: rows not outermost"; }
    TEC_SYSFS_CPU=$PWD/sys-8m expect_status 0 "$TEC" -x tir --passes=simplify,autoschedule --emit=tir pw.tir
    grep -q 'reorder(f_o, p, q_o, c, q_i, f_i)' out || { grep schedule_auto out; fail "L2 8 MiB: panels not outermost"; }
fi
# either way the compiled program agrees with the interpreter
expect_status 0 "$TEC" -x tir --passes= --interp pw.tir --save-outputs ref
TEC_SYSFS_CPU=$PWD/sys-2m expect_status 0 "$TEC" -x tir -O2 pw.tir --save-outputs o2
"$PYTHON" "$srcdir/testsuite/compare.py" ref o2 || fail "-O2 differs from the interpreter"
