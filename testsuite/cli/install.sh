# make install into a scratch prefix: libtec, tec.h and tec.pc, and a C
# program built with `pkg-config --cflags --libs tec` that compiles and runs
# a .te program through the library.
. "$srcdir/testsuite/cli/lib.inc"
prefix=$PWD/prefix
make -s -C "$builddir" install prefix="$prefix" >install.log 2>&1 ||
    { tail -20 install.log; fail "make install prefix=$prefix"; }
[ -f "$prefix/include/tec.h" ] || fail "tec.h is not installed"
pc=$(find "$prefix" -name tec.pc)
[ -n "$pc" ] || fail "tec.pc is not installed"
export PKG_CONFIG_PATH=$(dirname "$pc")
[ "$(pkg-config --modversion tec)" = "$("$TEC" --version | sed 's/^tec //')" ] ||
    fail "pkg-config --modversion tec is not tec --version's"
cat >main.c <<'C'
#include <stdio.h>
#include <string.h>
#include <tec.h>
int main(void)
{
    const char *src = "input a: f32[3]\nb[i] = a[i] * 0 + 2 * f32(i)\noutput b\n";
    tec_program *p = tec_compile("two.te", src, strlen(src), 0, 1, NULL);
    if (!p || tec_run(p, 1) != 0)
        return 1;
    const double *v = tec_output_values(p, 0);
    printf("%s %g %g %g\n", tec_output_name(p, 0), v[0], v[1], v[2]);
    tec_free(p);
    return 0;
}
C
# a sanitizer build's library needs its runtime in the program too
san=
ldd "$TEC" 2>/dev/null | grep -q libasan && san=-fsanitize=address,undefined
cc $san main.c $(pkg-config --cflags --libs tec) -o main || fail "cannot build against tec.pc"
LD_LIBRARY_PATH=$(pkg-config --variable=libdir tec) ./main >got || fail "the program failed"
[ "$(cat got)" = "b 0 2 4" ] || fail "the program printed '$(cat got)', expected 'b 0 2 4'"
