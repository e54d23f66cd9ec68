# tec --emit=lib (doc/aot.md): make install into a scratch prefix; the
# installed tec writes ResNet-18 as libresnet18.so and libresnet18.a, and
# doc/aot.md's own example program, built against each, prints the top 5
# of `tec -O2 examples/resnet18.te`'s logits for the same image.  Then the
# MLP: weights from a directory, two instances on two threads at once
# (each equal to tec's run with the same weights), and the errors.
. "$srcdir/testsuite/cli/lib.inc"
prefix=$PWD/prefix
make -s -C "$builddir" install prefix="$prefix" >install.log 2>&1 ||
    { tail -20 install.log; fail "make install prefix=$prefix"; }
# (the op library's directory is configure's, which `make install prefix=`
# does not change: -I names the installed one)
tec() { "$prefix/bin/tec" -I "$prefix/share/tec" "$@"; }
san=
ldd "$TEC" 2>/dev/null | grep -q libasan && san=-fsanitize=address,undefined

"$PYTHON" - <<'PY' || fail "cannot write the image"
import numpy as np
np.save("image.npy", np.random.default_rng(1).standard_normal((1, 3, 224, 224)).astype(np.float32))
PY
tec -O2 "$srcdir/examples/resnet18.te" --input image=image.npy --save-outputs ref >/dev/null ||
    fail "tec -O2 examples/resnet18.te"
"$PYTHON" - >want <<'PY' || fail "cannot read tec's logits"
import numpy as np
logits = np.load("ref/logits.npy").ravel().copy()
for rank in range(1, 6):
    best = int(np.argmax(logits))
    print("%d: class %d, logit %.4f" % (rank, best, logits[best]))
    logits[best] = -np.inf
PY
sed -n '/^```c$/,/^```$/p' "$srcdir/doc/aot.md" | sed '1d;$d' >main.c
grep -q resnet18_run main.c || fail "doc/aot.md has no example program"
for kind in so a; do
    mkdir $kind
    ( cd $kind && tec -O2 --emit=lib -o libresnet18.$kind "$srcdir/examples/resnet18.te" ) ||
        fail "tec --emit=lib -o libresnet18.$kind"
    [ -f $kind/resnet18.h ] || fail "--emit=lib -o libresnet18.$kind wrote no resnet18.h"
    libs=-lresnet18
    [ $kind = a ] && libs="-lresnet18 -fopenmp -lmvec -lm"
    cc $san -Wall -Werror main.c -I$kind -L$kind $libs -o $kind/resnet ||
        fail "cannot build doc/aot.md's program against libresnet18.$kind"
    LD_LIBRARY_PATH=$kind $kind/resnet image.npy >got || fail "the $kind program failed"
    diff -u want got || fail "libresnet18.$kind's top 5 differ from tec's"
done
# doc/aot.md's static link line takes the .a even with the .so beside it.
line=$(grep -o 'cc main.c .*-l:libresnet18.a.*-o resnet' "$srcdir/doc/aot.md")
[ -n "$line" ] || fail "doc/aot.md has no static link line"
cp so/libresnet18.so main.c a/
( cd a && $line $san ) || fail "doc/aot.md's static link line: $line"
ldd a/resnet | grep -q libresnet18 && fail "doc/aot.md's static line linked libresnet18.so"
a/resnet image.npy >got || fail "the program of the static line failed"
diff -u want got || fail "the static line's program's top 5 differ from tec's"
nm -D --defined-only so/libresnet18.so | awk '{print $3}' | grep -v '^resnet18_' >extra
[ -s extra ] && fail "libresnet18.so exports more than resnet18_*: $(cat extra)"
# The archive too: every other symbol is local, so two libraries link together.
nm --defined-only --extern-only a/libresnet18.a | awk 'NF == 3 {print $3}' |
    grep -v '^resnet18_' >extra
[ -s extra ] && fail "libresnet18.a defines more global symbols than resnet18_*: $(head extra)"
# The library's kernels are the run's units, from the kernel cache: only
# the library's own unit is compiled.
tec -v -O2 --emit=lib -o so/again.so "$srcdir/examples/resnet18.te" 2>err >/dev/null ||
    { cat err; fail "tec --emit=lib again"; }
set -- $(sed -nE 's/^tec: [0-9]+ kernels, [0-9]+ distinct: ([0-9]+) translation units \(([0-9]+) from the cache\), compiled 1 at a time$/\1 \2/p' err)
[ -n "${2:-}" ] && [ "$2" = $(($1 - 1)) ] ||
    { grep '^tec: [0-9]* kernels' err; fail "--emit=lib did not take the run's kernels from the cache"; }

# The MLP with other weights from a directory, beside its embedded ones.
"$PYTHON" - <<'PY' || fail "cannot write the MLP's weights and input"
import numpy as np, os
rng = np.random.default_rng(2)
os.mkdir("w")
for name, shape in [("net.fc1.weight", (128, 784)), ("net.fc1.bias", (128,)),
                    ("net.fc2.weight", (10, 128)), ("net.fc2.bias", (10,))]:
    np.save("w/%s.npy" % name, (rng.standard_normal(shape) / 10).astype(np.float32))
np.save("x.npy", rng.standard_normal((8, 784)).astype(np.float32))
os.mkdir("bad")
np.save("bad/net.fc1.weight.npy", np.zeros((784, 128), np.float32))
PY
tec -O2 "$srcdir/examples/mlp.te" --input x=x.npy --save-outputs ref_default >/dev/null &&
tec -O2 "$srcdir/examples/mlp.te" --input x=x.npy --weights w --save-outputs ref_w >/dev/null ||
    fail "tec -O2 examples/mlp.te"
tec -O2 --emit=lib -o libmlp.so "$srcdir/examples/mlp.te" || fail "tec --emit=lib -o libmlp.so"
cat >two.c <<'C'
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mlp.h"
typedef struct { mlp *net; float *x, *y; int ok; } job;
static void *work(void *p)
{
    job *j = p;
    char err[256];
    j->ok = 1;
    for (int k = 0; k < 50; k++)
        j->ok &= mlp_run(j->net, j->x, j->y, err, sizeof err) == 0;
    return NULL;
}
int main(void)
{
    char err[512];
    const tec_aot_tensor *in = mlp_input(0), *out = mlp_output(0);
    if (mlp_num_inputs() != 1 || mlp_num_outputs() != 1 || strcmp(in->name, "x") ||
        strcmp(out->dtype, "f32") || out->ndim != 2 || out->shape[0] != 8 ||
        out->shape[1] != 10 || out->nbytes != 320 || mlp_input(1) || mlp_output(-1))
        return printf("wrong metadata\n"), 1;
    float *x = malloc(in->nbytes);
    FILE *f = fopen("x.npy", "rb");
    if (!f || fseek(f, 128, SEEK_SET) || fread(x, 4, in->numel, f) != (size_t)in->numel)
        return printf("cannot read x.npy\n"), 1;
    fclose(f);
    mlp_set_threads(2);
    job a = {mlp_create(NULL, err, sizeof err), x, malloc(out->nbytes), 0};
    job b = {mlp_create("w", err, sizeof err), x, malloc(out->nbytes), 0};
    if (!a.net || !b.net)
        return printf("%s\n", err), 1;
    pthread_t ta, tb;
    pthread_create(&ta, NULL, work, &a);
    pthread_create(&tb, NULL, work, &b);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    if (!a.ok || !b.ok)
        return printf("a run failed\n"), 1;
    f = fopen("a.bin", "wb");
    fwrite(a.y, 4, out->numel, f);
    fclose(f);
    f = fopen("b.bin", "wb");
    fwrite(b.y, 4, out->numel, f);
    fclose(f);
    mlp_free(a.net);
    mlp_free(b.net);
    if (mlp_create("bad", err, sizeof err) || !mlp_create("nowhere", NULL, 0))
        printf("%s\n", err);
    free(x);
    free(a.y);
    free(b.y);
    return 0;
}
C
cc $san -Wall -Werror two.c -I. -L. -lmlp -pthread -o two || fail "cannot build two.c"
LD_LIBRARY_PATH=. ./two >got || { cat got; fail "two instances on two threads"; }
"$PYTHON" - <<'PY' || fail "the instances' outputs differ from tec's"
import numpy as np
for got, ref in [("a.bin", "ref_default"), ("b.bin", "ref_w")]:
    y = np.fromfile(got, np.float32).reshape(8, 10)
    assert np.array_equal(y, np.load(ref + "/logits.npy")), got
PY
cat >want <<'E'
bad/net.fc1.weight.npy: not a .npy file as np.save writes one with the header {'descr': '<f4', 'fortran_order': False, 'shape': (128, 784), }
E
diff -u want got || fail "a mis-shaped weight file"

# An ONNX model: its initializers are embedded.
"$PYTHON" - "$srcdir/testsuite/onnx" <<'PY' || fail "cannot build the ONNX model"
import sys
import numpy as np
sys.path.insert(0, sys.argv[1])
from make_hostile import node, value_info, tensor, model
w = (np.arange(12, dtype=np.float32).reshape(4, 3) - 5) / 7
b = np.array([0.5, -1.0, 2.0], np.float32)
open("m.onnx", "wb").write(model(
    [node("MatMul", ["x", "w"], ["t"], name="fc"), node("Add", ["t", "b"], ["u"], name="add"),
     node("Relu", ["u"], ["y"], name="act")],
    [value_info("x", ["N", 4])], [value_info("y", ["N", 3])],
    [tensor("w", [4, 3], w.tobytes()), tensor("b", [3], b.tobytes())]))
x = np.linspace(-1, 1, 8, dtype=np.float32).reshape(2, 4)
x.tofile("x.bin")
np.maximum(x @ w + b, 0).tofile("want.bin")
PY
tec -D N=2 --emit=lib -o libtiny.a m.onnx || fail "tec --emit=lib m.onnx"
cat >m.c <<'C'
#include <stdio.h>
#include "tiny.h"
int main(void)
{
    float x[8], y[6];
    char err[256];
    FILE *f = fopen("x.bin", "rb");
    if (!f || fread(x, 4, 8, f) != 8)
        return 1;
    fclose(f);
    tiny *net = tiny_create(NULL, err, sizeof err);
    if (!net || tiny_run(net, x, y, err, sizeof err))
        return printf("%s\n", err), 1;
    fwrite(y, 4, 6, stdout);
    tiny_free(net);
    return 0;
}
C
cc $san m.c -I. -L. -ltiny -fopenmp -lmvec -lm -o m_prog 2>cc.err ||
    { cat cc.err; fail "cannot build against the ONNX model's libtiny.a"; }
./m_prog >got.bin || fail "the ONNX model's library failed"
# A library needs no kernel cache: without one its units are built beside it.
mkdir nocache
( cd nocache && env -u HOME -u XDG_CACHE_HOME "$prefix/bin/tec" -I "$prefix/share/tec" -O2 \
      --emit=lib -o libmlp.so "$srcdir/examples/mlp.te" ) 2>err ||
    { cat err; fail "--emit=lib without a cache directory"; }
[ "$(ls -A nocache)" = "libmlp.so
mlp.h" ] || fail "--emit=lib without a cache left: $(ls -A nocache)"
# Two static libraries of tec in one program: their kernels do not clash.
tec -O2 --emit=lib -o libmlp.a "$srcdir/examples/mlp.te" || fail "tec --emit=lib -o libmlp.a"
cat >both.c <<'C'
#include <stdio.h>
#include "mlp.h"
#include "tiny.h"
int main(void)
{
    char err[256];
    mlp *a = mlp_create(NULL, err, sizeof err);
    tiny *b = tiny_create(NULL, err, sizeof err);
    if (!a || !b)
        return printf("%s\n", err), 1;
    mlp_free(a);
    tiny_free(b);
    return 0;
}
C
cc $san both.c -I. -L. -l:libmlp.a -l:libtiny.a -fopenmp -lmvec -lm -o both 2>cc.err ||
    { cat cc.err; fail "two static libraries of tec do not link into one program"; }
./both || fail "the program of two libraries failed"
cmp -s got.bin want.bin || "$PYTHON" -c 'import numpy as np, sys
sys.exit(0 if np.allclose(np.fromfile("got.bin", np.float32), np.fromfile("want.bin", np.float32),
                          rtol=1e-6, atol=1e-6) else 1)' || fail "the ONNX model's library differs"

# Errors: usage (2), and a stray weight file at build time (1).
expect_status 2 tec --emit=lib "$srcdir/examples/mlp.te"
expect_err "tec: error: --emit=lib needs -o FILE
tec: try 'tec --help'"
expect_status 2 tec --emit=lib -o libmlp.dll "$srcdir/examples/mlp.te"
expect_err "tec: error: --emit=lib -o libmlp.dll: the library's name must end in .so (a shared library) or .a (a static one)
tec: try 'tec --help'"
expect_status 2 tec --emit=lib -o lib-mlp.so "$srcdir/examples/mlp.te"
expect_err "tec: error: --emit=lib -o lib-mlp.so: '-mlp' is not a C identifier, and the library's functions are named after it (NAME_create, NAME_run ...): name the file libNAME.so or libNAME.a
tec: try 'tec --help'"
expect_status 2 tec --emit=lib -o libmlp.so --profile "$srcdir/examples/mlp.te"
cp -r w w2 && touch w2/stray.npy
expect_status 1 tec --emit=lib -o libmlp.so --weights w2 "$srcdir/examples/mlp.te"
expect_err "tec: error: --weights w2: stray.npy matches no parameter of the program"
exit 0
