# The automatic scheduler's row blocks (passes/schedule/auto_contraction.c,
# row_blocks): a 1x1 convolution 992 -> 128 on a channels-first 14x14 map
# (DenseNet-121's dense block 3) runs the map's rows outermost and reads
# them through a copy per row; its weight (508 KB, an eighth of a 2 MiB
# level-2 cache or more) comes from memory in a network, so the rows run
# in blocks of 7 inside the weight's column panels (one block per thread
# on two, two blocks while 14 rows of the copy would exceed a quarter of
# the cache on one) and the copy is made per block: each panel, once
# fetched, serves a block of rows.  A weight of 128 KB (256 input
# channels) keeps one row per copy.  TEC_SYSFS_CPU names a made-up sysfs
# with a 2 MiB level-2 cache; the compiled programs agree with the
# interpreter on one and two threads.
. "$srcdir/testsuite/cli/lib.inc"
export XDG_CACHE_HOME=$PWD/cache
unset TEC_NUM_THREADS TEC_SYSFS_CPU
conv() {   # conv NAME C: a 1x1 convolution C -> 128 on 14x14, channels first
    cat >"$1.tir" <<TIR
module "$1"

func @$1(x: f32[1, $2, 14, 14], weight: f32[128, $2, 1, 1], y: f32[1, 128, 14, 14]) attrs(layer = "$1", op = "conv2d", loc = "$1.te:3:5") {
  for n in 0..1 {
    for f in 0..128 {
      for p in 0..14 {
        for q in 0..14 {
          for c in 0..$2 {
            block y(vn: spatial[1] = n, vf: spatial[128] = f, vp: spatial[14] = p, vq: spatial[14] = q, vc: reduce[$2] = c) reads(y, x, weight) writes(y) {
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
  input x: f32[1, $2, 14, 14] init(-1, 1)
  param $1.weight: f32[128, $2, 1, 1] init(-0.05, 0.05)
  output y: f32[1, 128, 14, 14]
  call @$1(x, $1.weight, y)
}
TIR
}
conv big 992
conv small 256
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
expect_status 0 "$TEC" -x tir --passes=simplify,autoschedule --emit=tir big.tir
for want in 'p_o, p_i = split(p, 7)' 'reorder(p_o, f_o, p_i, q_o, c, q_i, f_i)' 'xs = cache_read(x, p_o)'; do
    grep -qF "$want" out || { grep schedule_auto out; fail "992 -> 128: no '$want'"; }
done
expect_status 0 "$TEC" -x tir --passes=simplify,autoschedule --emit=tir small.tir
grep -qF 'xs = cache_read(x, p)' out && ! grep -qF 'p_o, p_i' out ||
    { grep schedule_auto out; fail "256 -> 128: row blocks for a weight of 128 KB"; }
for m in big small; do
    expect_status 0 "$TEC" -x tir --passes= --interp $m.tir --save-outputs $m-ref
    for t in 1 2; do
        TEC_NUM_THREADS=$t expect_status 0 "$TEC" -x tir -O2 $m.tir --save-outputs $m-t$t
        "$PYTHON" "$srcdir/testsuite/compare.py" $m-ref $m-t$t || fail "$m: -O2 on $t threads differs from the interpreter"
    done
done
