#!/usr/bin/python3
"""testsuite/onnx/make_hostile.py — writes the malformed and hostile ONNX
models of testsuite/errors/onnx/ (each NAME.onnx has a NAME.err with the
message tec must give, and tec must exit 1).  The models are built here
with a few lines of protobuf encoding (field numbers from onnx.proto), so
that each one breaks exactly one rule.

    testsuite/onnx/make_hostile.py testsuite/errors/onnx
"""
import os
import struct
import sys


def varint(v):
    v &= (1 << 64) - 1
    out = b""
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


def field(num, value):
    """One field: an int is a varint, bytes/str/list a length-delimited one."""
    if isinstance(value, int):
        return varint(num << 3) + varint(value)
    if isinstance(value, str):
        value = value.encode()
    if isinstance(value, list):
        value = b"".join(value)
    return varint(num << 3 | 2) + varint(len(value)) + value


FLOAT, UINT16, INT64 = 1, 4, 7


def dim(d):
    """A TensorShapeProto.Dimension: a size or a name."""
    return field(1, d) if isinstance(d, int) else field(2, d)


def value_info(name, shape, elem=FLOAT):
    tensor = [field(1, elem), field(2, [field(1, dim(d)) for d in shape])]
    return field(1, name) + field(2, [field(1, tensor)])


def node(op, inputs, outputs, name="", attrs=()):
    return ([field(1, i) for i in inputs] + [field(2, o) for o in outputs] +
            [field(3, name or outputs[0]), field(4, op)] + [field(5, a) for a in attrs])


def attr_ints(name, vals):
    return [field(1, name), field(20, 7)] + [field(8, v) for v in vals]


def tensor(name, dims, raw=None, extra=()):
    t = [field(1, d) for d in dims] + [field(2, FLOAT), field(8, name)]
    if raw is not None:
        t.append(field(9, raw))
    return t + list(extra)


def array_tensor(name, arr, elem):
    """An initializer of a numpy array arr, of ONNX data type elem."""
    return [field(1, d) for d in arr.shape] + [field(2, elem), field(8, name),
                                               field(9, arr.tobytes())]


def model(nodes, inputs, outputs, inits=(), opset=13, graph=True):
    g = ([field(1, n) for n in nodes] + [field(2, "g")] + [field(5, t) for t in inits] +
         [field(11, i) for i in inputs] + [field(12, o) for o in outputs])
    m = field(1, 8) + field(8, [field(1, ""), field(2, opset)])
    return m + (field(7, g) if graph else b"")


def floats(n):
    return struct.pack("<%df" % n, *([0.5] * n))


X = value_info("x", [2, 3])
Y = value_info("y", [2, 3])
RELU = model([node("Relu", ["x"], ["y"])], [X], [Y])

CASES = {
    # the protobuf itself
    "truncated": RELU[:len(RELU) // 2],
    "not_protobuf": b"this is not an ONNX model\n",
    # field 7 (graph) sent as a varint, not a message
    "wrong_field_type": field(1, 8) + field(8, [field(1, ""), field(2, 13)]) + field(7, 5),
    "no_graph": model([], [], [], graph=False),
    "opset_too_new": model([node("Relu", ["x"], ["y"])], [X], [Y], opset=99),
    # the graph
    "cycle": model([node("Relu", ["b"], ["a"]), node("Relu", ["a"], ["b"]),
                    node("Add", ["x", "a"], ["y"])], [X], [Y]),
    "undefined_input": model([node("Add", ["x", "nope"], ["y"])], [X], [Y]),
    "defined_twice": model([node("Relu", ["x"], ["y"]), node("Neg", ["x"], ["y"])], [X], [Y]),
    "unknown_op": model([node("FrobnicateTensor", ["x"], ["y"], name="frob")], [X], [Y]),
    "unsupported_dtype": model([node("Relu", ["x"], ["y"])], [value_info("x", [2, 3], UINT16)],
                               [Y]),
    # tensors and shapes
    "init_size_mismatch": model([node("Add", ["x", "w"], ["y"])], [X], [Y],
                                [tensor("w", [2, 3], floats(4))]),
    "huge_shape": model([node("Relu", ["x"], ["y"])],
                        [value_info("x", [1 << 31, 1 << 31])], [Y]),
    "external_outside": model([node("Add", ["x", "w"], ["y"])], [X], [Y],
                              [tensor("w", [2, 3], None,
                                      [field(13, [field(1, "location"),
                                                  field(2, "../../../etc/passwd")]),
                                       field(14, 1)])]),
    "external_missing": model([node("Add", ["x", "w"], ["y"])], [X], [Y],
                              [tensor("w", [2, 3], None,
                                      [field(13, [field(1, "location"), field(2, "w.bin")]),
                                       field(14, 1)])]),
    "broadcast_mismatch": model([node("Add", ["x", "w"], ["y"], name="add1")], [X], [Y],
                                [tensor("w", [4], floats(4))]),
    "bad_perm": model([node("Transpose", ["x"], ["y"], name="t",
                            attrs=[attr_ints("perm", [0, 0])])], [X], [Y]),
    # Slice with one axis twice: undefined in ONNX, refused by ONNX Runtime
    "slice_repeated_axis": model(
        [node("Slice", ["x", "starts", "ends", "axes"], ["y"], name="s")], [X], [Y],
        [[field(1, 2), field(2, INT64), field(8, "starts"), field(9, struct.pack("<2q", 0, 1))],
         [field(1, 2), field(2, INT64), field(8, "ends"), field(9, struct.pack("<2q", 2, 3))],
         [field(1, 2), field(2, INT64), field(8, "axes"), field(9, struct.pack("<2q", 1, 1))]]),
    # a value that must be constant comes from a graph input: the error names
    # the chain back to it
    "dynamic_chain": model([node("Cast", ["i"], ["f"], attrs=[[field(1, "to"), field(20, 2),
                                                               field(3, INT64)]]),
                            node("Mul", ["f", "f"], ["m"]),
                            node("Slice", ["x", "zero", "m"], ["y"], name="s")],
                           [X, value_info("i", [1], INT64)], [Y],
                           [[field(1, 1), field(2, INT64), field(8, "zero"),
                             field(9, struct.pack("<q", 0))]]),
    # sizes computed from huge attributes and constants are errors, not
    # overflows (UBSan's findings)
    "tile_huge_repeat": model([node("Tile", ["x", "r"], ["y"], name="t")], [X], [Y],
                              [[field(1, 2), field(2, INT64), field(8, "r"),
                                field(9, struct.pack("<2q", 1 << 62, 3))]]),
    "convtranspose_short_output_shape": model(
        [node("ConvTranspose", ["x", "w"], ["y"], name="ct",
              attrs=[attr_ints("output_shape", [4])])],
        [value_info("x", [1, 1, 3, 3])], [value_info("y", [1, 1, 4, 4])],
        [tensor("w", [1, 1, 2, 2], floats(4))]),
    # ConvTranspose's attributes are checked as Conv's are: one of the
    # wrong length was ignored, and negative pads or an output_padding of a
    # whole stride made a result that ONNX Runtime refuses to compute
    "convtranspose_strides_length": model(
        [node("ConvTranspose", ["x", "w"], ["y"], name="ct", attrs=[attr_ints("strides", [2])])],
        [value_info("x", [1, 1, 3, 3])], [value_info("y", [1, 1, 4, 4])],
        [tensor("w", [1, 1, 2, 2], floats(4))]),
    "convtranspose_negative_pads": model(
        [node("ConvTranspose", ["x", "w"], ["y"], name="ct",
              attrs=[attr_ints("pads", [-1, 0, 0, 0])])],
        [value_info("x", [1, 1, 3, 3])], [value_info("y", [1, 1, 5, 4])],
        [tensor("w", [1, 1, 2, 2], floats(4))]),
    "convtranspose_output_padding": model(
        [node("ConvTranspose", ["x", "w"], ["y"], name="ct",
              attrs=[attr_ints("strides", [2, 2]), attr_ints("output_padding", [2, 0])])],
        [value_info("x", [1, 1, 3, 3])], [value_info("y", [1, 1, 8, 6])],
        [tensor("w", [1, 1, 2, 2], floats(4))]),
    # what the recurrent ops do not compute is refused by name
    "lstm_relu_activation": model(
        [node("LSTM", ["x", "w", "r"], ["y"], name="lstm",
              attrs=[[field(1, "hidden_size"), field(20, 2), field(3, 1)],
                     [field(1, "activations"), field(20, 8)] +
                     [field(9, a) for a in ("Relu", "Tanh", "Tanh")]])],
        [value_info("x", [2, 1, 2])], [value_info("y", [2, 1, 1, 1])],
        [tensor("w", [1, 4, 2], floats(8)), tensor("r", [1, 4, 1], floats(4))]),
    # an activation list not one per function and direction
    "lstm_partial_activations": model(
        [node("LSTM", ["x", "w", "r"], ["y"], name="lstm",
              attrs=[[field(1, "hidden_size"), field(20, 2), field(3, 1)],
                     [field(1, "activations"), field(20, 8), field(9, "Sigmoid")]])],
        [value_info("x", [2, 1, 2])], [value_info("y", [2, 1, 1, 1])],
        [tensor("w", [1, 4, 2], floats(8)), tensor("r", [1, 4, 1], floats(4))]),
    # no steps: nothing for Y or the last state to be
    "gru_no_steps": model(
        [node("GRU", ["x", "w", "r"], ["y"], name="gru",
              attrs=[[field(1, "hidden_size"), field(20, 2), field(3, 1)]])],
        [value_info("x", [0, 1, 2])], [value_info("y", [0, 1, 1, 1])],
        [tensor("w", [1, 3, 2], floats(6)), tensor("r", [1, 3, 1], floats(3))]),
    # Y of 2000 steps in two directions: more steps than tec gathers (blocks
    # of 31 times, at most 62 blocks)
    "gru_long_y": model(
        [node("GRU", ["x", "w", "r"], ["y"], name="gru",
              attrs=[[field(1, "hidden_size"), field(20, 2), field(3, 1)],
                     [field(1, "direction"), field(20, 3), field(4, "bidirectional")]])],
        [value_info("x", [2000, 1, 2])], [value_info("y", [2000, 2, 1, 1])],
        [tensor("w", [2, 3, 2], floats(12)), tensor("r", [2, 3, 1], floats(6))]),
    # what opsets 18 to 21 added that tec does not compute, refused by name
    "resize_antialias_shrink": model(
        [node("Resize", ["x", "", "s"], ["y"], name="r",
              attrs=[[field(1, "mode"), field(20, 3), field(4, "linear")],
                     [field(1, "antialias"), field(20, 2), field(3, 1)]])],
        [value_info("x", [1, 1, 4, 4])], [value_info("y", [1, 1, 2, 2])],
        [tensor("s", [4], struct.pack("<4f", 1, 1, 0.5, 0.5))], opset=18),
    "quantize_block_size": model(
        [node("QuantizeLinear", ["x", "s"], ["y"], name="q",
              attrs=[[field(1, "block_size"), field(20, 2), field(3, 2)]])],
        [value_info("x", [2, 4])], [value_info("y", [2, 4], 2)],
        [tensor("s", [2, 2], floats(4))], opset=21),
    "split_num_outputs_and_split": model(
        [node("Split", ["x", "sp"], ["a", "b"], name="sp",
              attrs=[[field(1, "num_outputs"), field(20, 2), field(3, 2)]])],
        [X], [value_info("a", [2, 1]), value_info("b", [2, 2])],
        [[field(1, 2), field(2, INT64), field(8, "sp"), field(9, struct.pack("<2q", 1, 2))]],
        opset=18),
    "split_num_outputs_empty_last": model(
        [node("Split", ["x"], ["a", "b", "c"], name="sp",
              attrs=[[field(1, "axis"), field(20, 2), field(3, 1)],
                     [field(1, "num_outputs"), field(20, 2), field(3, 3)]])],
        [value_info("x", [2, 4])],
        [value_info("a", [2, 2]), value_info("b", [2, 2]), value_info("c", [2, 0])], opset=18),
    "pad_axes_count": model(
        [node("Pad", ["x", "p", "", "ax"], ["y"], name="pad")],
        [X], [Y],
        [[field(1, 4), field(2, INT64), field(8, "p"), field(9, struct.pack("<4q", 0, 1, 0, 1))],
         [field(1, 1), field(2, INT64), field(8, "ax"), field(9, struct.pack("<q", 1))]],
        opset=18),
    # opset 18's scale is one per group (21's one per channel)
    "groupnorm_scale_per_channel_at_18": model(
        [node("GroupNormalization", ["x", "s", "b"], ["y"], name="gn",
              attrs=[[field(1, "num_groups"), field(20, 2), field(3, 2)]])],
        [value_info("x", [1, 4, 3])], [value_info("y", [1, 4, 3])],
        [tensor("s", [4], floats(4)), tensor("b", [4], floats(4))], opset=18),
    "gelu_opset17": model([node("Gelu", ["x"], ["y"], name="g")], [X], [Y], opset=17),
    "conv_huge_stride": model(
        [node("Conv", ["x", "w"], ["y"], name="c", attrs=[attr_ints("strides", [1 << 62, 1])])],
        [value_info("x", [1, 1, 3, 3])], [value_info("y", [1, 1, 1, 2])],
        [tensor("w", [1, 1, 2, 2], floats(4))]),
}

if __name__ == "__main__":
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name, data in sorted(CASES.items()):
        with open(os.path.join(out, name + ".onnx"), "wb") as f:
            f.write(data)
