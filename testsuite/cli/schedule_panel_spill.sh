# The automatic scheduler's cost of a panel that the level-1 cache cannot
# keep (passes/schedule/auto_contraction.c, spill_cost) and its weight's
# rows outermost (weight_rows_outer): a 1x1 convolution 256 -> 1024 on a
# channels-first 28x28 map (FCN-ResNet50's layer3 conv3), the output
# channels in vectors by 7 columns of the map read in place, reads a line
# of x per step of the reduction beside the panel's 32 KB, 48 KB per tile
# with a 48 KB level-1 cache: the panel streams from the level-2 cache,
# and the tile runs along the merged map instead (a vector of 16 positions
# by 16 output channels), the weight's panels of 16 channels outermost
# (the 1 MB weight read once, x's 800 KB again from the level-2 cache per
# panel).  With 128 input channels (along the merged map before too) the
# weight and x together (912 KB) stay in the level-2 cache: blocks of 7
# column tiles inside the panels (column_block) as before.  TEC_SYSFS_CPU
# names a made-up sysfs with a 48 KB level-1 and a 2 MiB level-2 cache;
# the compiled programs agree with the interpreter on one and two threads.
. "$srcdir/testsuite/cli/lib.inc"
export XDG_CACHE_HOME=$PWD/cache
unset TEC_NUM_THREADS TEC_SYSFS_CPU
conv() {   # conv NAME C: a 1x1 convolution C -> 1024 on 28x28, channels first
    cat >"$1.tir" <<TIR
module "$1"

func @$1(x: f32[1, $2, 28, 28], weight: f32[1024, $2, 1, 1], y: f32[1, 1024, 28, 28]) attrs(layer = "$1", op = "conv2d", loc = "$1.te:3:5") {
  for n in 0..1 {
    for f in 0..1024 {
      for p in 0..28 {
        for q in 0..28 {
          for c in 0..$2 {
            block y(vn: spatial[1] = n, vf: spatial[1024] = f, vp: spatial[28] = p, vq: spatial[28] = q, vc: reduce[$2] = c) reads(y, x, weight) writes(y) {
              init {
                y[vn, vf, vp, vq] = 0.0f
              }
              y[vn, vf, vp, vq] = y[vn, vf, vp, vq] + x[vn, vc, vp, vq] * weight[vf, vc, 0, 0]
            }
          }
        }
      }
    }
  }
}

graph {
  input x: f32[1, $2, 28, 28] init(-1, 1)
  param $1.weight: f32[1024, $2, 1, 1] init(-0.05, 0.05)
  output y: f32[1, 1024, 28, 28]
  call @$1(x, $1.weight, y)
}
TIR
}
conv big 256
conv small 128
"$PYTHON" - <<'PY' || fail "cannot make the fake sysfs tree"
import os
for c in sorted(os.sched_getaffinity(0)):
    for i, (level, typ, size) in enumerate(((1, "Data", 48 << 10), (2, "Unified", 2 << 20))):
        d = "sys-2m/cpu%d/cache/index%d" % (c, i)
        os.makedirs(d)
        for f, v in (("level", level), ("type", typ), ("size", size), ("shared_cpu_list", c)):
            open(os.path.join(d, f), "w").write("%s\n" % v)
PY
export TEC_SYSFS_CPU=$PWD/sys-2m
for t in 1 2; do
    expect_status 0 "$TEC" -x tir --threads $t --passes=simplify,autoschedule --emit=tir big.tir
    for want in 'pq = merge(p, q)' 'pq_o, pq_i = split(pq, 16)' 'f_o, f_i = split(f, 16)' \
                'reorder(f_o, pq_o, c, f_i, pq_i)' 'parallel(f_o)'; do
        grep -qF "$want" out || { grep schedule_auto out; fail "256 -> 1024 on $t threads: no '$want'"; }
    done
    expect_status 0 "$TEC" -x tir --threads $t --passes=simplify,autoschedule --emit=tir small.tir
    grep -qF 'reorder(pq_o_b, f_o, pq_o_n, c, f_i, pq_i)' out ||
        { grep schedule_auto out; fail "128 -> 1024 on $t threads: no blocks of column tiles"; }
done
for m in big; do
    expect_status 0 "$TEC" -x tir --passes= --interp $m.tir --save-outputs $m-ref
    for t in 1 2; do
        TEC_NUM_THREADS=$t expect_status 0 "$TEC" -x tir -O2 $m.tir --save-outputs $m-t$t
        "$PYTHON" "$srcdir/testsuite/compare.py" $m-ref $m-t$t || fail "$m: -O2 on $t threads differs from the interpreter"
    done
done
