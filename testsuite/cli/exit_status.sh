# Exit statuses: 1 for the user's input (a .tir that breaks a verifier
# rule included), 2 for usage, 70 only for tec's own faults.
. "$srcdir/testsuite/cli/lib.inc"
mm=$srcdir/examples/matmul.te
two=$srcdir/testsuite/security/two_outputs.tir

# Unknown pass names are usage errors, found before any work.
expect_status 2 "$TEC" --passes=simplify,bogus "$mm"
expect_err "tec: error: unknown pass 'bogus' (see tec --list-passes)
tec: try 'tec --help'"
expect_status 2 "$TEC" --dump-ir=bogus "$mm"
grep -q "unknown pass 'bogus'" err || fail "--dump-ir=bogus"
expect_status 0 "$TEC" --passes=simplify,dce --dump-ir=all --emit=tir "$mm"
# -o without --emit would be ignored: a usage error.
expect_status 2 "$TEC" -o out.txt "$mm"
expect_err "tec: error: -o out.txt needs --emit=te, tir, c, so or lib (outputs of a run: --save-outputs DIR)
tec: try 'tec --help'"
[ ! -e out.txt ] || fail "-o wrote a file"

# A .tir input that breaks a verifier rule is the input's error.
sed 's/writes(a, b)/writes()/' "$two" >nowrites.tir
expect_status 1 "$TEC" -x tir nowrites.tir
expect_err "nowrites.tir: error: in @f: block 'f' stores to 'a' but does not list it in writes
nowrites.tir: error: in @f: block 'f' stores to 'b' but does not list it in writes"
sed 's/reads(x, w)/reads(x)/' "$two" >noreads.tir
expect_status 1 "$TEC" -x tir noreads.tir
grep -q "^noreads.tir: error: in @f: " err || { cat err; fail "missing reads"; }
sed 's/call @f(x, w, a, b)/call @f(x, w, a, a)/' "$two" >unwritten.tir
expect_status 1 "$TEC" -x tir unwritten.tir
grep -q "^unwritten.tir: error: in graph: output 'b' is not written by any call" err ||
    { cat err; fail "unwritten output"; }

# The C compiler: a broken $CC is the user's setup (1), with a message
# that says what happened; a hanging one is stopped; its output reaches
# the terminal as text.
export XDG_CACHE_HOME=$PWD/cache
CC=false expect_status 1 "$TEC" "$mm"
expect_err "tec: error: the C compiler 'false' failed before compiling the generated code (check CC)
  false exited with status 1"
CC=true expect_status 1 "$TEC" "$mm"
expect_err "tec: error: the C compiler 'true' exited with status 0 but wrote no shared object (is CC a C compiler?)"
printf '#!/bin/sh\nsleep 60\n' >hang.sh && chmod +x hang.sh
start=$(date +%s)
CC=$PWD/hang.sh expect_status 1 "$TEC" --cc-timeout=1 "$mm"
[ $(( $(date +%s) - start )) -lt 20 ] || fail "--cc-timeout=1 did not stop the compiler"
expect_err "tec: error: the C compiler '$PWD/hang.sh' did not finish within 1 seconds and was stopped (--cc-timeout sets the limit)"
expect_status 2 "$TEC" --cc-timeout=soon "$mm"
grep -q -- "--cc-timeout expects seconds from 0 to 86400, got 'soon'" err || fail "--cc-timeout=soon"
printf '#!/bin/sh\nprintf "\\033[31mred\\001\\n" >&2\nexit 3\n' >noisy.sh && chmod +x noisy.sh
CC=$PWD/noisy.sh expect_status 1 "$TEC" "$mm"
if LC_ALL=C grep -q "$(printf '[\033\001]')" err; then fail "control characters of the compiler's output reached stderr"; fi
grep -q '^  ?\[31mred?$' err || { cat err; fail "filtered compiler output"; }
# A compiler path with a space in it.
mkdir -p "my tools" && ln -s "$(command -v "${CC:-cc}")" "my tools/cc"
CC="$PWD/my tools/cc" expect_status 0 "$TEC" --no-cache "$mm"

# SIGTERM during a build: the compiler's whole process group is stopped
# and the build's temporary directory removed.
printf '#!/bin/sh\ncase "$1" in --version) exec cc --version;; esac\nsleep 3\ntouch "%s/still_ran"\n' "$PWD" >slow.sh
chmod +x slow.sh
rm -rf cache
CC=$PWD/slow.sh "$TEC" "$mm" >/dev/null 2>&1 &
pid=$!
for _ in 1 2 3 4 5 6 7 8 9 10; do
    ls -a cache/tec 2>/dev/null | grep -q '^\.tec-' && break
    sleep 0.2
done
ls -a cache/tec | grep -q '^\.tec-' || fail "no build under way"
kill -TERM $pid
wait $pid
[ $? = 143 ] || fail "tec did not end by SIGTERM"
sleep 4
[ ! -e still_ran ] || fail "the compiler went on after tec was stopped"
[ -z "$(ls -a cache/tec | grep '^\.tec-')" ] || fail "a temporary build directory was left behind"
echo ok
