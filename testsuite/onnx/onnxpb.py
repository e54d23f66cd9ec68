"""testsuite/onnx/onnxpb.py — just enough of the protobuf wire format to read
the ONNX backend tests' TensorProto files (.pb) as numpy arrays and the op
types of a model's nodes, without the onnx or protobuf Python packages.
Field numbers are those of onnx.proto (TensorProto, ModelProto, GraphProto,
NodeProto)."""
import numpy as np

def _varint(b, i):
    v = shift = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        shift += 7
        if c < 0x80:
            return v, i

def fields(b):
    """(field number, wire type, value) of each field of a message: an int
    for varints and fixed-width fields, bytes for length-delimited ones."""
    i = 0
    while i < len(b):
        key, i = _varint(b, i)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, i = _varint(b, i)
        elif wt == 1:
            v, i = b[i:i + 8], i + 8
        elif wt == 2:
            n, i = _varint(b, i)
            v, i = b[i:i + n], i + n
        elif wt == 5:
            v, i = b[i:i + 4], i + 4
        else:
            raise ValueError("unsupported wire type %d" % wt)
        yield num, wt, v

def _packed_varints(v):
    out, i = [], 0
    while i < len(v):
        x, i = _varint(v, i)
        out.append(x)
    return out

# ONNX data_type -> numpy dtype
DTYPES = {1: np.float32, 2: np.uint8, 3: np.int8, 4: np.uint16, 5: np.int16, 6: np.int32,
          7: np.int64, 9: np.bool_, 10: np.float16, 11: np.float64, 12: np.uint32, 13: np.uint64,
          16: np.uint16}   # bfloat16: its bits, as NumPy (and tec's .npy files) hold it


def bf16_values(bits):
    """The float32 values of an array of bfloat16 bit patterns (uint16)."""
    return (bits.astype(np.uint32) << 16).view(np.float32)


def tensor(b):
    """A TensorProto's contents as a numpy array."""
    dims, dtype, raw = [], 1, None
    floats, int32s, int64s, doubles = [], [], [], []
    for num, wt, v in fields(b):
        if num == 1:
            dims += _packed_varints(v) if wt == 2 else [v]
        elif num == 2:
            dtype = v
        elif num == 4:
            floats += list(np.frombuffer(v, '<f4')) if wt == 2 else [np.frombuffer(v, '<f4')[0]]
        elif num == 5:
            int32s += _packed_varints(v) if wt == 2 else [v]
        elif num == 7:
            int64s += _packed_varints(v) if wt == 2 else [v]
        elif num == 9:
            raw = v
        elif num == 10:
            doubles += list(np.frombuffer(v, '<f8')) if wt == 2 else [np.frombuffer(v, '<f8')[0]]
    dims = [d - (1 << 64) if d >= 1 << 63 else d for d in dims]
    dt = DTYPES.get(dtype)
    if dt is None:
        raise ValueError("unsupported dtype %d" % dtype)
    if raw is not None:
        a = np.frombuffer(raw, np.dtype(dt).newbyteorder('<')).astype(dt)
    elif dtype == 1:
        a = np.array(floats, np.float32)
    elif dtype == 11:
        a = np.array(doubles, np.float64)
    elif dtype == 7:
        a = np.array([x - (1 << 64) if x >= 1 << 63 else x for x in int64s], np.int64)
    else:
        a = np.array([x - (1 << 64) if x >= 1 << 63 else x for x in int32s]).astype(dt)
    return a.reshape(dims)

def op_types(model_bytes):
    """The op types of the model's nodes, in order."""
    ops = []
    for num, _, graph in fields(model_bytes):
        if num == 7:
            for gnum, _, node in fields(graph):
                if gnum == 1:
                    for nnum, _, v in fields(node):
                        if nnum == 4:
                            ops.append(v.decode())
    return ops


def input_names(model_bytes):
    """The names of the graph's inputs that are not initializers."""
    inputs, inits = [], set()
    for num, _, graph in fields(model_bytes):
        if num == 7:
            for gnum, _, v in fields(graph):
                if gnum == 11:
                    inputs += [x.decode() for n, _, x in fields(v) if n == 1]
                elif gnum == 5:
                    inits |= set(x.decode() for n, _, x in fields(v) if n == 8)
    return [n for n in inputs if n not in inits]


def non_tensor_inputs(model_bytes):
    """The names of the graph's inputs that are not tensors (sequences,
    optionals, maps: their TypeProto has no tensor_type, field 1)."""
    out = set()
    for num, _, graph in fields(model_bytes):
        if num == 7:
            for gnum, _, v in fields(graph):
                if gnum == 11:
                    info = dict((n, x) for n, _, x in fields(v))
                    if 2 in info and 1 not in [n for n, _, _ in fields(info[2])]:
                        out.add(info[1].decode())
    return out
