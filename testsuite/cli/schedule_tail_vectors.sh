# The automatic scheduler's last column tile (passes/schedule/auto_contraction.c,
# contraction_finish): a 1x1 convolution 528 -> 88 on a channels-last
# 14x14 map (EfficientNet-B2's projections) runs tiles of 32 channels;
# the last tile's 24 channels are one vector and 8 lanes of a second.
# Its loop over vectors is partitioned where the guard first fails, so
# the 8 lanes run as one narrower vector (tec_f32x8) inside the reduction
# rather than 8 scalar multiply-adds per row and step (the test fails
# without it).  116 -> 116 has a last tile of 20 = 16 + 4 (one vector of
# 4); 528 -> 80 (tiles of 16, five whole vectors) and 528 -> 72 (a last
# tile of 8, within one vector) need no partition.  The compiled programs agree with the interpreter on one and
# two threads.
. "$srcdir/testsuite/cli/lib.inc"
export XDG_CACHE_HOME=$PWD/cache
unset TEC_NUM_THREADS
conv() {   # conv NAME C F: a 1x1 convolution C -> F on 14x14, channels last
    cat >"$1.tir" <<TIR
module "$1"

func @$1(x: f32[1, 14, 14, $2], weight: f32[$3, $2], y: f32[1, 14, 14, $3]) attrs(layer = "$1", op = "conv2d", loc = "$1.te:3:5") {
  for n in 0..1 {
    for p in 0..14 {
      for q in 0..14 {
        for f in 0..$3 {
          for c in 0..$2 {
            block y(vn: spatial[1] = n, vp: spatial[14] = p, vq: spatial[14] = q, vf: spatial[$3] = f, vc: reduce[$2] = c) reads(y, x, weight) writes(y) {
              init {
                y[vn, vp, vq, vf] = 0.0f
              }
              y[vn, vp, vq, vf] = y[vn, vp, vq, vf] + x[vn, vp, vq, vc] * weight[vf, vc]
            }
          }
        }
      }
    }
  }
}

graph {
  input x: f32[1, 14, 14, $2] init(-1, 1)
  param $1.weight: f32[$3, $2] init(-0.05, 0.05)
  output y: f32[1, 14, 14, $3]
  call @$1(x, $1.weight, y)
}
TIR
}
conv c88 528 88
conv c116 116 116
conv c80 528 80
conv c72 528 72
for m in c88 c116; do
    expect_status 0 "$TEC" -x tir --passes=simplify,autoschedule --emit=tir $m.tir
    grep -q 'partition(f_v_tail' out || { grep schedule_auto out; fail "$m: last tile's vectors not partitioned"; }
    expect_status 0 "$TEC" -x tir -O2 --emit=c $m.tir
    grep -q 'tec_f32x[48] \*)&y_tile_tail' out || fail "$m: no narrower vector in the last tile"
done
for m in c80 c72; do
    expect_status 0 "$TEC" -x tir --passes=simplify,autoschedule --emit=tir $m.tir
    ! grep -q 'partition(f_v_tail' out || { grep schedule_auto out; fail "$m: a partition of whole or single vectors"; }
done
for m in c88 c116 c72; do
    expect_status 0 "$TEC" -x tir --passes= --interp $m.tir --save-outputs $m-ref
    for t in 1 2; do
        TEC_NUM_THREADS=$t expect_status 0 "$TEC" -x tir -O2 $m.tir --save-outputs $m-t$t
        "$PYTHON" "$srcdir/testsuite/compare.py" $m-ref $m-t$t || fail "$m: -O2 on $t threads differs from the interpreter"
    done
done
