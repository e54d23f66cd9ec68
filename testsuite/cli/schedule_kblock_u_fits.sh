# The automatic scheduler's K blocks (passes/schedule/auto_contraction.c,
# k_block_pick) need a row operand U that the level-2 cache does not hold
# alone.  A linear layer 2304 -> 32 on 96 rows: its packed weight panel
# (2304 rows of 32 columns, 288 KiB) is more than an eighth of a 1 MiB
# level-2 cache, and panel and U (96 rows of x, 864 KiB) together exceed
# it, but U fits with a quarter of the panel: it stays in the cache for
# the column tile while the panel streams beside it, so the reduction
# keeps one loop (ResNet-50's
# 3x3 convolutions of stride 2 on an AMD Zen 5: 0.83-0.87 of their time
# without blocks; bench/results/contract_s28.txt).  With a 768 KiB
# level-2 cache U does not fit, and the reduction splits into blocks
# (i_o, i_i) with the sums in y_acc across them.  A linear layer 6912 -> 32
# on 36 rows (panel 864 KiB, U 972 KiB) leaves no room for a quarter of
# the panel beside U in a 1 MiB cache and keeps its blocks (R3D-18's
# 3x3x3 convolutions in its layer3).  TEC_SYSFS_CPU names a made-up sysfs;
# the compiled programs agree with the interpreter.
. "$srcdir/testsuite/cli/lib.inc"
export XDG_CACHE_HOME=$PWD/cache
unset TEC_NUM_THREADS TEC_SYSFS_CPU
cat >fc.tir <<'TIR'
module "kbu"

func @fc(x: f32[1, 96, 2304], weight: f32[32, 2304], y: f32[1, 96, 32]) attrs(layer = "fc", op = "linear", loc = "kbu.te:3:5") {
  for t in 0..96 {
    for o in 0..32 {
      for i in 0..2304 {
        block y(vb: spatial[1] = 0, vt: spatial[96] = t, vo: spatial[32] = o, vi: reduce[2304] = i) reads(y, x, weight) writes(y) {
          init {
            y[0, vt, vo] = 0.0f
          }
          y[0, vt, vo] = y[0, vt, vo] + x[0, vt, vi] * weight[vo, vi]
        }
      }
    }
  }
}

graph {
  input x: f32[1, 96, 2304] init(-1, 1)
  param fc.weight: f32[32, 2304] init(-0.02, 0.02)
  output y: f32[1, 96, 32]
  call @fc(x, fc.weight, y)
}
TIR
"$PYTHON" - <<'PY' || fail "cannot make the fake sysfs trees"
import os
for name, l2 in (("sys-1m", 1 << 20), ("sys-768k", 768 << 10)):
    for c in sorted(os.sched_getaffinity(0)):
        for i, (level, typ, size) in enumerate(((1, "Data", 48 << 10), (2, "Unified", l2))):
            d = "%s/cpu%d/cache/index%d" % (name, c, i)
            os.makedirs(d)
            for f, v in (("level", level), ("type", typ), ("size", size), ("shared_cpu_list", c)):
                open(os.path.join(d, f), "w").write("%s\n" % v)
PY
expect_status 0 "$TEC" -x tir --passes= --interp fc.tir --save-outputs ref
TEC_SYSFS_CPU=$PWD/sys-1m expect_status 0 "$TEC" -x tir --passes=simplify,autoschedule --emit=tir fc.tir
grep -q 'schedule_auto' out || fail "L2 1 MiB: no automatic schedule"
! grep -q 'split(i, ' out || { grep schedule_auto out; fail "L2 1 MiB: U fits, yet K blocks"; }
! grep -q 'z_acc\|y_acc' out || { grep schedule_auto out; fail "L2 1 MiB: sums across K blocks"; }
TEC_SYSFS_CPU=$PWD/sys-768k expect_status 0 "$TEC" -x tir --passes=simplify,autoschedule --emit=tir fc.tir
grep -q 'i_o, i_i = split(i, ' out || { grep schedule_auto out; fail "L2 768 KiB: no K blocks"; }
grep -q 'y_acc = cache_write(y, ' out || { grep schedule_auto out; fail "L2 768 KiB: no sums across the blocks"; }
for s in 1m 768k; do
    TEC_SYSFS_CPU=$PWD/sys-$s expect_status 0 "$TEC" -x tir -O2 fc.tir --save-outputs o-$s
    "$PYTHON" "$srcdir/testsuite/compare.py" ref o-$s || fail "L2 $s: -O2 differs from the interpreter"
done
sed -e 's/96/36/g' -e 's/2304/6912/g' fc.tir >wide.tir
TEC_SYSFS_CPU=$PWD/sys-1m expect_status 0 "$TEC" -x tir --passes=simplify,autoschedule --emit=tir wide.tir
grep -q 'i_o, i_i = split(i, ' out || { grep schedule_auto out; fail "L2 1 MiB, panel and U 1.8 MiB: no K blocks"; }
expect_status 0 "$TEC" -x tir --passes= --interp wide.tir --save-outputs wref
TEC_SYSFS_CPU=$PWD/sys-1m expect_status 0 "$TEC" -x tir -O2 wide.tir --save-outputs wo
"$PYTHON" "$srcdir/testsuite/compare.py" wref wo || fail "6912 -> 32: -O2 differs from the interpreter"
