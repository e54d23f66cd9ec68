# make install into a scratch prefix: tec, libtec, tec.h, nn.te and tec.pc.
# The installed tec, run from another folder, finds nn.te under the prefix
# (not where the build was configured); a C program built with
# `pkg-config --cflags --libs tec` runs without LD_LIBRARY_PATH (tec.pc's
# rpath) and compiles, through the library, a program that imports nn.te.
. "$srcdir/testsuite/cli/lib.inc"
prefix=$PWD/prefix
make -s -C "$builddir" install prefix="$prefix" >install.log 2>&1 ||
    { tail -20 install.log; fail "make install prefix=$prefix"; }
[ -f "$prefix/include/tec.h" ] || fail "tec.h is not installed"
[ -f "$prefix/share/tec/nn.te" ] || fail "nn.te is not installed"
pc=$(find "$prefix" -name tec.pc)
[ -n "$pc" ] || fail "tec.pc is not installed"
export PKG_CONFIG_PATH=$(dirname "$pc")
[ "$(pkg-config --modversion tec)" = "$("$TEC" --version | sed 's/^tec //')" ] ||
    fail "pkg-config --modversion tec is not tec --version's"
case $(pkg-config --libs tec) in
*"-Wl,-rpath,$prefix/lib "*) ;;
*) fail "pkg-config --libs tec has no rpath to $prefix/lib: $(pkg-config --libs tec)" ;;
esac

# The installed tec, from another folder, with an import of nn.te.
mkdir elsewhere
printf 'import "nn.te"\ninput x: f32[2, 3]\ny = relu(x)\noutput y\n' >elsewhere/relu.te
(cd elsewhere && "$prefix/bin/tec" relu.te) >out 2>err || { cat err; fail "installed tec"; }
grep -q '^y: f32\[2, 3\]' out || fail "installed tec printed $(cat out)"

cat >main.c <<'C'
#include <stdio.h>
#include <string.h>
#include <tec.h>
static int run(const char *src, int interpret)
{
    tec_program *p = tec_compile("two.te", src, strlen(src), 0, 1, NULL);
    if (!p || tec_run(p, interpret) != 0)
        return 1;
    const double *v = tec_output_values(p, 0);
    printf("%s %g %g %g\n", tec_output_name(p, 0), v[0], v[1], v[2]);
    tec_free(p);
    return 0;
}
int main(void)
{
    return run("input a: f32[3]\nb[i] = a[i] * 0 + 2 * f32(i)\noutput b\n", 1) ||
           run("import \"nn.te\"\ninput a: f32[1, 3]\nn[i, j] = a[i, j] * 0 + 3\n"
               "c = relu(n)\noutput c\n", 1);
}
C
# a sanitizer build's library needs its runtime in the program too
san=
ldd "$TEC" 2>/dev/null | grep -q libasan && san=-fsanitize=address,undefined
cc $san main.c $(pkg-config --cflags --libs tec) -o main || fail "cannot build against tec.pc"
(cd elsewhere && ../main) >got 2>err || { cat err; fail "the program failed"; }
printf 'b 0 2 4\nc 3 3 3\n' >want
diff -u want got || fail "the program printed other values"
