# Every input in testsuite/fuzz/crashers/ once crashed or hung tec (found by
# make fuzz, or by hand); each goes through tec the way its harness reads
# it and must end in success or a clean error (exit status 0 or 1), never a
# signal, a hang or an internal error (70).
. "$srcdir/testsuite/cli/lib.inc"
printf 'input x: f32[2, 3]\ny[i, j] = x[i, j]\noutput y\n' >small.te
cfg=$srcdir/accel/configs/edge_os_32x32.cfg
n=0
for f in "$srcdir"/testsuite/fuzz/crashers/*/*; do
    [ -f "$f" ] || continue
    case $(basename "$(dirname "$f")") in
    te)  set -- --emit=tir -x te "$f" ;;
    tir) set -- --emit=tir -x tir "$f" ;;
    npy) set -- small.te --input x="$f" ;;
    cfg) set -- --accel "$f" "$srcdir/examples/matmul.te" ;;
    onnx) set -- -x onnx "$f" ;;
    *)   fail "unknown harness of $f" ;;
    esac
    timeout 60 "$TEC" "$@" >out 2>err
    st=$?
    [ "$st" = 0 ] || [ "$st" = 1 ] || { head -c 1000 err; fail "$f: exit status $st"; }
    if [ "$(basename "$(dirname "$f")")" = cfg ] && [ "$st" = 1 ]; then
        # the same bytes as a topology too
        timeout 60 "$TEC" --topology "$f" --accel "$cfg" >out 2>err
        st=$?
        [ "$st" = 0 ] || [ "$st" = 1 ] || { head -c 1000 err; fail "$f as a topology: exit status $st"; }
    fi
    n=$((n + 1))
done
[ "$n" -gt 0 ] || fail "no crashers found"
echo "ok: $n inputs"
