# The automatic scheduler's loop of three filter taps (passes/schedule/auto_contraction.c,
# tap_loop): a temporal 3x1x1 convolution 144 -> 32 on a channels-first
# map of 8 frames of 14x14 (S3D's features.3.1.0 has 192 -> 192 on 8x56x56)
# runs tiles of 14 map columns by 32 output channels (28 accumulators);
# the taps' loop r0, innermost in the reduction, is unrolled, so GCC does
# not keep the 28 sums in rotating registers around a loop of 3 (S3D's
# layer 65 -> 50-59 ms on one thread, bench/results/contract_s25.txt).
# On 4 frames (2 of them reading a padding frame, which unrolled taps no
# longer skip) the loop stays.  The compiled programs agree with the
# interpreter on one and two threads.
. "$srcdir/testsuite/cli/lib.inc"
export XDG_CACHE_HOME=$PWD/cache
unset TEC_NUM_THREADS
conv() {   # conv NAME FRAMES: x padded by one frame each side
    P=$(($2 + 2))
    cat >"$1.tir" <<TIR
module "$1"

func @$1(x: f32[1, 144, $P, 14, 14], weight: f32[32, 144, 3], y: f32[1, 32, $2, 14, 14]) attrs(layer = "$1", op = "conv3d", loc = "$1.te:3:5") {
  for n in 0..1 {
    for f in 0..32 {
      for o0 in 0..$2 {
        for o1 in 0..14 {
          for o2 in 0..14 {
            for c in 0..144 {
              for r0 in 0..3 {
                block y(vn: spatial[1] = n, vf: spatial[32] = f, v0: spatial[$2] = o0, v1: spatial[14] = o1, v2: spatial[14] = o2, vc: reduce[144] = c, vr: reduce[3] = r0) reads(y, x, weight) writes(y) {
                  init {
                    y[vn, vf, v0, v1, v2] = 0.0f
                  }
                  y[vn, vf, v0, v1, v2] = y[vn, vf, v0, v1, v2] + x[vn, vc, v0 + vr, v1, v2] * weight[vf, vc, vr]
                }
              }
            }
          }
        }
      }
    }
  }
}

graph {
  input x: f32[1, 144, $P, 14, 14] init(-1, 1)
  param $1.weight: f32[32, 144, 3] init(-0.05, 0.05)
  output y: f32[1, 32, $2, 14, 14]
  call @$1(x, $1.weight, y)
}
TIR
}
conv f8 8
conv f4 4
expect_status 0 "$TEC" -x tir --passes=simplify,autoschedule --emit=tir f8.tir
grep -q 'unroll(r0)' out || { grep schedule_auto out; fail "8 frames: the three taps not unrolled"; }
expect_status 0 "$TEC" -x tir --passes=simplify,autoschedule --emit=tir f4.tir
! grep -q 'unroll(r0)' out || { grep schedule_auto out; fail "4 frames: the three taps unrolled"; }
for m in f8 f4; do
    expect_status 0 "$TEC" -x tir --passes= --interp $m.tir --save-outputs $m-ref
    for t in 1 2; do
        TEC_NUM_THREADS=$t expect_status 0 "$TEC" -x tir -O2 $m.tir --save-outputs $m-t$t
        "$PYTHON" "$srcdir/testsuite/compare.py" $m-ref $m-t$t || fail "$m: -O2 on $t threads differs from the interpreter"
    done
done
