# ONNX external data is read only from a regular file inside the model's
# folder: a symlink (to a file, or through a symlinked folder) or a ".."
# that leads out, a FIFO and a device are each a located error, exit 1,
# without reading them (no hang on the FIFO); the same for an --input
# TensorProto (.pb) with external data.  Data inside the folder, also
# through a symlink that stays inside, is read.
. "$srcdir/testsuite/cli/lib.inc"
"$PYTHON" - "$srcdir/testsuite/onnx" <<'EOF' || fail "cannot write the models"
import struct, sys
sys.path.insert(0, sys.argv[1])
from make_hostile import field, model, node, tensor, value_info
X, Y = value_info("x", [2, 3]), value_info("y", [2, 3])

def external(name, location):
    return tensor(name, [2, 3], None,
                  [field(13, [field(1, "location"), field(2, location)]), field(14, 1)])

def add_model(path, location):
    with open(path, "wb") as f:
        f.write(model([node("Add", ["x", "w"], ["y"])], [X], [Y], [external("w", location)]))

import os
os.makedirs("m/sub", exist_ok=True)
for case in ["in", "link_out", "dir_out", "fifo", "dev", "link_in", "dotdot_in"]:
    loc = {"in": "w.bin", "link_out": "secret.bin", "dir_out": "up/secret.bin",
           "fifo": "fifo.bin", "dev": "zero.bin", "link_in": "alias.bin",
           "dotdot_in": "sub/../w.bin"}[case]
    add_model("m/%s.onnx" % case, loc)
with open("m/w.bin", "wb") as f:
    f.write(struct.pack("<6f", 1, 2, 3, 4, 5, 6))
with open("secret.bin", "wb") as f:           # outside the model's folder
    f.write(b"SECRET-BYTES-OUTSIDE-THE-FOLDER!")  # 24+ bytes
# an --input TensorProto whose data is external
with open("m/x_out.pb", "wb") as f:
    f.write(b"".join(external("x", "secret.bin")))
with open("m/x_in.pb", "wb") as f:
    f.write(b"".join(external("x", "w.bin")))
EOF
ln -s ../secret.bin m/secret.bin
ln -s .. m/up
mkfifo m/fifo.bin
ln -s /dev/zero m/zero.bin
ln -s w.bin m/alias.bin

# refused: each names the initializer and why
for case in link_out dir_out dev; do
    timeout 20 "$TEC" -O0 "m/$case.onnx" >out 2>err
    st=$?
    [ "$st" = 1 ] || { cat err; fail "$case: exit status $st, expected 1"; }
    grep -q "error: initializer 'w': its external data '.*' is outside the model's folder" err ||
        { cat err; fail "$case: no 'outside the model's folder' error"; }
    ! grep -q SECRET out err || fail "$case: the outside file's bytes were read"
done
timeout 20 "$TEC" -O0 m/fifo.onnx >out 2>err
st=$?
[ "$st" = 1 ] || { cat err; fail "fifo: exit status $st, expected 1 (124 is a hang)"; }
grep -q "error: initializer 'w': its external data 'fifo.bin' is not a regular file of the model's folder" err ||
    { cat err; fail "fifo: no 'not a regular file' error"; }

# read: inside the folder, directly, through a symlink that stays inside, and
# through a ".." that stays inside
for case in in link_in dotdot_in; do
    timeout 60 "$TEC" -O0 "m/$case.onnx" --input x=m/x_in.pb --save-outputs "o_$case" >out 2>err ||
        { cat err; fail "$case: the model inside its folder does not run"; }
    "$PYTHON" -c "
import numpy as np, sys
y = np.load('o_$case/y.npy')
sys.exit(0 if np.array_equal(y, 2 * np.arange(1, 7, dtype=np.float32).reshape(2, 3)) else 1)" ||
        fail "$case: wrong result"
done

# an --input .pb whose external data leads out of its folder
timeout 20 "$TEC" -O0 m/in.onnx --input x=m/x_out.pb >out 2>err
st=$?
[ "$st" = 1 ] || { cat err; fail "--input .pb: exit status $st, expected 1"; }
grep -q "m/x_out.pb: error: its external data 'secret.bin' is outside the model's folder" err ||
    { cat err; fail "--input .pb: no 'outside' error"; }
echo ok
