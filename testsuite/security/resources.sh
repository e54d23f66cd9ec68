# Inputs cannot make tec allocate or loop without bound: a .npy header is
# checked against the declared type before its data is read, a trailing
# stream is counted only so far, source files have a size cap, and
# compile-time loops a total one.  Directories and oversized files read as
# sources get a clear error.
. "$srcdir/testsuite/cli/lib.inc"

printf 'input x: f32[2, 3]\ny[i, j] = x[i, j] * 2.0\noutput y\n' >small.te
# header SHAPE: a version 1.0 .npy header of f32 data with that shape.
header() { "$PYTHON" -c '
import io, sys
from numpy.lib import format as F
b = io.BytesIO()
F.write_array_header_1_0(b, {"descr": "<f4", "fortran_order": False, "shape": eval(sys.argv[1])})
sys.stdout.buffer.write(b.getvalue())' "$1"; }

# A header from a pipe that claims 40 GB, and then never ends: refused at
# once, for its type, before any data is read.
start=$(date +%s)
expect_status 1 timeout 60 "$TEC" small.te --input x=<(header '(100000, 100000)'; sleep 30)
[ $(( $(date +%s) - start )) -lt 20 ] || fail "the header was not checked before the data"
grep -q '^tec: error: input x: /dev/fd/[0-9]* is f32\[100000, 100000\] but the program declares f32\[2, 3\]$' err ||
    { cat err; fail "type mismatch message"; }
# The right header, its data, then an endless stream: counted only so far.
expect_status 1 timeout 60 "$TEC" small.te --input x=<(header '(2, 3)'; head -c 24 /dev/zero; cat /dev/zero)
grep -q 'trailing data: shape (2, 3) of <f4 needs 24 data bytes, file has more than [0-9]*$' err ||
    { cat err; fail "endless trailing stream"; }

# Header text quoted in a message cannot send escape sequences to the terminal.
"$PYTHON" -c '
import struct
h = b"{\x27descr\x27: \x27\x1b[31m<f4\x27, \x27fortran_order\x27: False, \x27shape\x27: (2, 3), }"
h = h + b" " * (118 - len(h)) + b"\n"
open("esc.npy", "wb").write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h + bytes(24))'
expect_status 1 "$TEC" small.te --input x=esc.npy
expect_err "tec: error: esc.npy: unsupported dtype '?[31m<f4' (tec reads <f2 <f4 <f8 <i4 <i8 |b1 |i1 |u1 <i2 <u2)"

# Source files: at most 64 MiB (an endless one stops there), never a directory.
expect_status 1 timeout 60 "$TEC" --emit=tir /dev/zero
expect_err "tec: error: cannot read /dev/zero: larger than the 64 MiB a source file may have"
expect_status 1 "$TEC" -x tir /dev/zero
grep -q 'larger than the 64 MiB' err || fail "-x tir /dev/zero"
mkdir -p dir.te
expect_status 1 "$TEC" dir.te
expect_err "tec: error: cannot read dir.te: Is a directory"
printf 'import "dir.te"\ninput x: f32[4]\ny[i] = x[i]\noutput y\n' >imports_dir.te
expect_status 1 "$TEC" imports_dir.te
grep -q '^imports_dir.te:1:8: error: cannot read import "dir.te" (\./dir.te): Is a directory$' err ||
    grep -q '^imports_dir.te:1:8: error: cannot read import "dir.te" (.*dir.te): Is a directory$' err ||
    { cat err; fail "importing a directory"; }

# Compile-time loops: 1e5 x 1e5 iterations are refused, not run for hours.
printf 'for a in 0..100000 {\n    for b in 0..100000 {\n        z = a + b\n    }\n}\ninput x: f32[4]\ny[i] = x[i]\noutput y\n' >loops.te
expect_status 1 timeout 120 "$TEC" loops.te
grep -q '^loops.te:2:5: error: compile-time loops run more than 1000000 iterations in all; this one is at b = 99990$' err ||
    { cat err; fail "total loop cap"; }

# Lowering names every statement's loops apart (i, i_1, i_2, ...) in
# linear time: 3000 statements that all index with i took minutes when
# each new name was looked for among all the others, suffix by suffix.
"$PYTHON" -c '
print("input x: f32[4]\nt0[i] = x[i] + 1.0")
for k in range(1, 3000):
    print(f"t{k}[i] = t{k - 1}[i] * 0.5")
print("output t2999")' >chain.te
expect_status 0 timeout 60 "$TEC" --interp chain.te
grep -q '^t2999: f32\[4\]' out || { cat out; fail "3000 statements"; }

# A missing home directory is not created for the kernel cache.
env -u XDG_CACHE_HOME HOME="$PWD/nohome" "$TEC" small.te >out 2>err
[ $? = 1 ] || fail "missing HOME: exit status"
expect_err "tec: error: no directory for the kernel cache: HOME ($PWD/nohome) is not a directory (set XDG_CACHE_HOME, or use --no-cache)"
[ ! -e nohome ] || fail "HOME was created"
echo ok
