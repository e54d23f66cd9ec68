# The automatic scheduler's register tile for an odd number of vectors of
# output channels on a channels-first map (passes/schedule/auto_contraction.c,
# tile_model): a 1x1x1 convolution 512 -> 112 on 4 frames of 14x14 (S3D's
# features.9.branch1.0) has 7 vectors of channels; it runs tiles of two
# vectors by 14 map columns (28 sums, 16 loads per 28 multiply-adds)
# rather than one vector by 14 (15 loads per 14), the last column tile of
# one vector apart, and keeps the copy of its input per frame that its 4
# column tiles (3 whole, 1 partial) share.  The compiled programs agree
# with the interpreter on one and two threads.
. "$srcdir/testsuite/cli/lib.inc"
export XDG_CACHE_HOME=$PWD/cache
unset TEC_NUM_THREADS
cat >c112.tir <<'TIR'
module "c112"

func @c112(x: f32[1, 512, 4, 14, 14], weight: f32[112, 512], y: f32[1, 112, 4, 14, 14]) attrs(layer = "c112", op = "conv3d", loc = "c112.te:3:5") {
  for n in 0..1 {
    for f in 0..112 {
      for o0 in 0..4 {
        for o1 in 0..14 {
          for o2 in 0..14 {
            for c in 0..512 {
              block y(vn: spatial[1] = n, vf: spatial[112] = f, v0: spatial[4] = o0, v1: spatial[14] = o1, v2: spatial[14] = o2, vc: reduce[512] = c) reads(y, x, weight) writes(y) {
                init {
                  y[vn, vf, v0, v1, v2] = 0.0f
                }
                y[vn, vf, v0, v1, v2] = y[vn, vf, v0, v1, v2] + x[vn, vc, v0, v1, v2] * weight[vf, vc]
              }
            }
          }
        }
      }
    }
  }
}

graph {
  input x: f32[1, 512, 4, 14, 14] init(-1, 1)
  param c112.weight: f32[112, 512] init(-0.05, 0.05)
  output y: f32[1, 112, 4, 14, 14]
  call @c112(x, c112.weight, y)
}
TIR
expect_status 0 "$TEC" -x tir --passes=simplify,autoschedule --emit=tir c112.tir
for want in 'f_o, f_i = split(f, 32)' 'o2_o, o2_i = split(o2, 14)' 'xs = cache_read(x, o0)'; do
    grep -qF "$want" out || { grep schedule_auto out; fail "512 -> 112: no '$want'"; }
done
expect_status 0 "$TEC" -x tir --passes= --interp c112.tir --save-outputs ref
for t in 1 2; do
    TEC_NUM_THREADS=$t expect_status 0 "$TEC" -x tir -O2 c112.tir --save-outputs t$t
    "$PYTHON" "$srcdir/testsuite/compare.py" ref t$t || fail "-O2 on $t threads differs from the interpreter"
done
