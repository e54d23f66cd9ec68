# The IR that -O2 prints is a program of its own: read back with -x tir
# and run through the -O2 pipeline once more, it gives the outputs of the
# .te it came from.  (The passes then meet what -O2 made: load calls of
# prepacked weights, fused kernels, flat buffers; fuse once dropped the
# load kernels, "no compiled kernel #-1".)  Over the small examples,
# resnet18 (batchnorm folding, fusion, prepacking) and every run test
# with the inputs it is run with; ROUNDTRIP_ALL=1 takes every example.
. "$srcdir/testsuite/cli/lib.inc"
examples="conv matmul mlp resnet18"
[ "${ROUNDTRIP_ALL:-0}" = 1 ] &&
    examples=$(cd "$srcdir/examples" && ls ./*.te | sed 's|^\./||; s|\.te$||')
files=
for e in $examples; do files="$files $srcdir/examples/$e.te"; done
for f in $files "$srcdir"/testsuite/run/*.te; do
    base=$(basename "$f" .te)
    args=
    case $f in
    */testsuite/run/*)
        ref=$PWD/ref-$base
        "$PYTHON" "$srcdir/testsuite/run/$base.py" "$ref" >/dev/null || fail "$base.py"
        args=$(sed -n 's/^# ARGS: //p' "$f")
        # the IR declares its inputs and parameters flat: flat copies of the files
        "$PYTHON" -c '
import os, sys
import numpy as np
for d, _, fs in os.walk(sys.argv[1]):
    out = os.path.join(sys.argv[2], os.path.relpath(d, sys.argv[1]))
    os.makedirs(out, exist_ok=True)
    for n in fs:
        if n.endswith(".npy"):
            np.save(os.path.join(out, n), np.load(os.path.join(d, n)).ravel())
' "$ref" "$ref-flat" || fail "$base: flat inputs"
        targs=${args//%ref/$ref-flat}
        args=${args//%ref/$ref} ;;
    *) targs= ;;
    esac
    # shellcheck disable=SC2086
    "$TEC" -O2 $args --save-outputs "te-$base" "$f" >/dev/null 2>err ||
        { cat err; fail "$f: -O2"; }
    "$TEC" -O2 --emit=tir "$f" >"$base.tir" 2>err || { cat err; fail "$f: --emit=tir"; }
    # shellcheck disable=SC2086
    "$TEC" -O2 -x tir $targs --save-outputs "tir-$base" "$base.tir" >/dev/null 2>err ||
        { cat err; fail "$f: -O2 -x tir of its -O2 IR"; }
    "$PYTHON" - "te-$base" "tir-$base" <<'EOF' || fail "$f: the IR read back gives other outputs"
import os, sys
import numpy as np
a_dir, b_dir = sys.argv[1], sys.argv[2]
names = sorted(os.listdir(a_dir))
if not names or names != sorted(os.listdir(b_dir)):
    sys.exit("outputs %s against %s" % (names, sorted(os.listdir(b_dir))))
for n in names:
    a, b = np.load(os.path.join(a_dir, n)), np.load(os.path.join(b_dir, n))
    # the IR's buffers are flat: the same elements in the same order
    if a.dtype != b.dtype or a.size != b.size:
        sys.exit("%s: %s%s against %s%s" % (n, a.dtype, a.shape, b.dtype, b.shape))
    a, b = a.ravel(), b.ravel()
    if np.issubdtype(a.dtype, np.floating):
        a, b = a.astype(np.float64), b.astype(np.float64)
        scale = max(float(np.max(np.abs(a[np.isfinite(a)]), initial=0)), 1e-30)
        same = (np.isnan(a) == np.isnan(b)).all() and \
            np.allclose(a, b, rtol=0, atol=1e-5 * scale, equal_nan=True)
    else:
        same = np.array_equal(a, b)
    if not same:
        sys.exit("%s: values differ" % n)
EOF
done
echo ok
