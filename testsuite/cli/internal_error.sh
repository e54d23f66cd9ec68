# An internal error in a compiled kernel (a failure code no assert, bound
# or allocation of its own stands for) is tec's fault, not the user's: the
# run ends with exit status 70 and "tec: internal error: PART: in layer L:
# ...", the layer kept.  The fault is planted by a C compiler wrapper that
# builds every kernel so that it returns 99 where it returns 0.
. "$srcdir/testsuite/cli/lib.inc"
export XDG_CACHE_HOME=$PWD/cache
cc=${CC:-cc}
cat >badcc.sh <<EOF
#!/bin/sh
# $cc, but every kernel of the .c files it is given returns 99 at its end
case "\$1" in --version|-v|-dumpversion|-dumpfullversion) exec $cc "\$@" ;; esac
for a in "\$@"; do
    shift
    case \$a in
    *.c) sed 's/^    return 0;\$/    return 99;/' "\$a" >"\$a.bad.c" || exit 1
         grep -q 'return 99;' "\$a.bad.c" || { echo "badcc.sh: no kernel end in \$a" >&2; exit 1; }
         set -- "\$@" "\$a.bad.c" ;;
    *) set -- "\$@" "\$a" ;;
    esac
done
exec $cc "\$@"
EOF
chmod +x badcc.sh
printf 'input x: f32[2, 3]\ns[i] += x[i, j]\ny[i, j] = x[i, j] * s[i]\noutput y\n' >two.te

# the same program runs with the real compiler
expect_status 0 "$TEC" -O0 two.te

msg='tec: internal error: codegen: in layer y: in @y: kernel returned unknown status 99'
for opts in -O0 -O2 "-O2 --profile" "-O2 --threads 2"; do
    # (a cache of its own: the good kernels of the first run are not reused)
    # shellcheck disable=SC2086
    XDG_CACHE_HOME=$PWD/cache-bad CC=$PWD/badcc.sh expect_status 70 "$TEC" $opts two.te
    [ ! -s out ] || { cat out; fail "$opts: output printed after the internal error"; }
    expect_err "$msg"
done
# the same through the schedulers of --sched, which say where it ran
for s in serial op path dynamic dynamic-cp; do
    XDG_CACHE_HOME=$PWD/cache-bad CC=$PWD/badcc.sh expect_status 70 "$TEC" -O2 --sched=$s two.te
    expect_err "$msg (on cpu0)"
done

# the interpreter and the real compiler still agree on the program
expect_status 0 "$TEC" --interp two.te
cp out want_out
expect_status 0 "$TEC" -O2 two.te
diff -u want_out out || fail "-O2 and --interp disagree"
echo ok
