#!/usr/bin/python3
"""Hostile inputs, second round (issue 32): one case per failure the issue lists. Every input is
made here; the tool runs on it and must
  - end with exit 0, 1 or 2 (the case says which), within 10 s of CPU time (its children's
    included; a case may allow more: the libtorch child's default limit) and 60 s of wall time,
    under 2 GB peak memory;
  - read nothing outside the model's folder (under strace -f -y where strace exists: no file below
    the "outside" folder, which holds a secret, is opened);
  - write nothing but the defined output (the folder's listing after the run is the listing before
    plus exactly the files the case expects; a failed command leaves nothing).
Then the Python module (when built: --python DIR) reads every input in a child process, which must
end with an exception or a result, never a signal.

usage: round2_test.py AMANDA [--only NAME] [--keep] [--python DIR]
"""
import argparse
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

import numpy as np
from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from security_test import HAVE_STRACE, onnx_model, opened_outside, run, save_raw, torchscript, forward  # noqa: E402

LIMIT_CPU_S = 10.0
LIMIT_WALL_S = 60.0
LIMIT_RSS_KB = 2 * 1024 * 1024


# ---------------------------------------------------------------- a protobuf encoder (TF messages)

def varint(n):
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def fld(num, value):
    """A field: int -> varint, bytes/str -> length-delimited, float -> fixed32."""
    if isinstance(value, bool) or isinstance(value, int):
        return varint(num << 3) + varint(int(value))
    if isinstance(value, float):
        return varint(num << 3 | 5) + struct.pack("<f", value)
    if isinstance(value, str):
        value = value.encode()
    return varint(num << 3 | 2) + varint(len(value)) + value


DT_FLOAT, DT_INT32, DT_STRING = 1, 3, 7


def shape_proto(dims):
    return b"".join(fld(2, fld(1, d)) for d in dims)


def tensor_proto(dtype, dims, float_val=None, string_val=None, content=None):
    t = fld(1, dtype) + fld(2, shape_proto(dims))
    if content is not None:
        t += fld(4, content)
    if float_val is not None:
        t += fld(5, float_val)
    if string_val is not None:
        t += fld(8, string_val)
    return t


def attr(key, value_bytes):
    return fld(5, fld(1, key) + fld(2, value_bytes))


def node(name, op, inputs=(), attrs=b""):
    return fld(1, name) + fld(2, op) + b"".join(fld(3, i) for i in inputs) + attrs


def graphdef(nodes):
    return b"".join(fld(1, n) for n in nodes)


def const_node(name, tensor, dtype=DT_FLOAT):
    return node(name, "Const", attrs=attr("dtype", fld(6, dtype)) + attr("value", fld(8, tensor)))


def identity(name, src, dtype=DT_FLOAT):
    return node(name, "Identity", [src], attr("T", fld(6, dtype)))


def write(path, data):
    with open(path, "wb" if isinstance(data, bytes) else "w") as f:
        f.write(data)


# ---------------------------------------------------------------- small ONNX models

def int_binary_model(path, op, dtype=TensorProto.INT32):
    a = helper.make_tensor_value_info("a", dtype, [2])
    b = helper.make_tensor_value_info("b", dtype, [2])
    y = helper.make_tensor_value_info("y", dtype, [2])
    save_raw(onnx_model([helper.make_node(op, ["a", "b"], ["y"], name="op")], [a, b], [y]), path)


def loop_model(path, trips):
    """A Loop of `trips` iterations whose body passes a counter through an Add."""
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]), helper.make_node("Add", ["v_in", "one"], ["v_out"])],
        "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []), helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("v_in", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []), helper.make_tensor_value_info("v_out", TensorProto.FLOAT, [1])],
        [helper.make_tensor("one", TensorProto.FLOAT, [1], [1.0])])
    m = helper.make_tensor("M", TensorProto.INT64, [], [trips])
    c = helper.make_tensor("cond", TensorProto.BOOL, [], [True])
    v = helper.make_tensor("v0", TensorProto.FLOAT, [1], [0.0])
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])
    nodes = [helper.make_node("Loop", ["M", "cond", "v0"], ["v"], body=body, name="loop"), helper.make_node("Add", ["v", "x"], ["y"])]
    save_raw(onnx_model(nodes, [x], [y], [m, c, v]), path)


def shape_op_model(path, op, shape, extra_inits=()):
    """ConstantOfShape / Expand / Tile / EyeLike with a hostile size, output added to input x."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    inits = [helper.make_tensor("s", TensorProto.INT64, [len(shape)], shape)] + list(extra_inits)
    if op == "ConstantOfShape":
        nodes = [helper.make_node("ConstantOfShape", ["s"], ["c"])]
    elif op == "Expand":
        inits.append(helper.make_tensor("one", TensorProto.FLOAT, [1], [1.0]))
        nodes = [helper.make_node("Expand", ["one", "s"], ["c"])]
    elif op == "Tile":
        inits.append(helper.make_tensor("one", TensorProto.FLOAT, [1] * len(shape), [1.0]))
        nodes = [helper.make_node("Tile", ["one", "s"], ["c"])]
    elif op == "EyeLike":
        nodes = [helper.make_node("ConstantOfShape", ["s"], ["z"]), helper.make_node("EyeLike", ["z"], ["c"])]
    nodes.append(helper.make_node("Add", ["c", "x"], ["y"]))
    save_raw(onnx_model(nodes, [x], [y], inits), path)


def range_model(path, start, limit, delta):
    x = helper.make_tensor_value_info("x", TensorProto.INT64, [1])
    y = helper.make_tensor_value_info("y", TensorProto.INT64, None)
    inits = [helper.make_tensor(n, TensorProto.INT64, [], [v]) for n, v in (("s", start), ("l", limit), ("d", delta))]
    nodes = [helper.make_node("Range", ["s", "l", "d"], ["r"]), helper.make_node("Add", ["r", "x"], ["y"])]
    save_raw(onnx_model(nodes, [x], [y], inits), path)


def relu_onnx(path, in_name="x", out_name="y", shape=(2, 3)):
    x = helper.make_tensor_value_info(in_name, TensorProto.FLOAT, list(shape))
    y = helper.make_tensor_value_info(out_name, TensorProto.FLOAT, list(shape))
    save_raw(onnx_model([helper.make_node("Relu", [in_name], [out_name], name="r")], [x], [y]), path)


# ---------------------------------------------------------------- TF.js and SavedModel

def tfjs(d, paths, shard_bytes=b"\0" * 16, n=4, shard_file=None):
    """A TF.js model.json: Const w of n floats (from the shards) -> Identity y."""
    topo = {"node": [
        {"name": "w", "op": "Const", "attr": {"dtype": {"type": "DT_FLOAT"},
                                             "value": {"tensor": {"dtype": "DT_FLOAT", "tensorShape": {"dim": [{"size": str(n)}]}}}}},
        {"name": "y", "op": "Identity", "input": ["w"], "attr": {"T": {"type": "DT_FLOAT"}}}]}
    m = {"format": "graph-model", "generatedBy": "t", "convertedBy": "t", "modelTopology": topo,
         "weightsManifest": [{"paths": paths, "weights": [{"name": "w", "shape": [n], "dtype": "float32"}]}]}
    write(os.path.join(d, "model.json"), json.dumps(m))
    if shard_file:
        os.makedirs(os.path.dirname(os.path.join(d, shard_file)), exist_ok=True)
        write(os.path.join(d, shard_file), shard_bytes)


def saved_model(d, with_variables=True):
    """A SavedModel folder: saved_model.pb (tag serve, a graph of one Placeholder -> Identity) and,
    when asked, a variables/ folder (the caller makes it hostile)."""
    gd = graphdef([node("x", "Placeholder", attrs=attr("dtype", fld(6, DT_FLOAT))), identity("y", "x")])
    meta = fld(1, fld(4, "serve")) + fld(2, gd)
    write(os.path.join(d, "saved_model.pb"), fld(1, 1) + fld(2, meta))


# ---------------------------------------------------------------- the cases
# Each: make(model folder, amanda, outside folder) -> (args, allowed exit codes, words the message
# must contain, files the run may leave in the folder).

def c_tfjs_ssh_shard(d, amanda, outside):
    tfjs(d, [".ssh/authorized_keys"], shard_file=".ssh/authorized_keys")
    os.makedirs(os.path.join(d, "out"))
    return ["fmt", "model.json", "-o", "out/model.json"], {0}, [], {"out/model.json", "out/group1-shard1of1.bin"}


def c_tfjs_ssh_shard_convert(d, amanda, outside):
    tfjs(d, [".ssh/authorized_keys"], shard_file=".ssh/authorized_keys")
    os.makedirs(os.path.join(d, "out"))
    return ["convert", "model.json", "-o", "out/model.json"], {0, 1}, [], {"out/model.json", "out/group1-shard1of1.bin"}


def c_tfjs_20000_shards(d, amanda, outside):
    names = ["s%d.bin" % i for i in range(20000)]
    tfjs(d, names, n=4)
    for i in range(20000):
        write(os.path.join(d, names[i]), b"" if i else b"\0" * 16)
    os.makedirs(os.path.join(d, "out"))
    return ["fmt", "model.json", "-o", "out/model.json"], {1}, ["more than 10000 shards"], set()


def c_tfjs_300000_shards(d, amanda, outside):
    tfjs(d, ["w.bin"] * 300000, shard_file="w.bin")
    return ["inspect", "model.json"], {1}, ["more than 10000 shards"], set()


def c_tfjs_shard_symlink(d, amanda, outside):
    write(os.path.join(outside, "secret.bin"), b"\1" * 16)
    os.symlink(os.path.join(outside, "secret.bin"), os.path.join(d, "w.bin"))
    tfjs(d, ["w.bin"])
    return ["inspect", "model.json"], {1}, ["symbolic link"], set()


def c_savedmodel_variables_folder_symlink(d, amanda, outside):
    saved_model(d)
    os.makedirs(os.path.join(outside, "vars"))
    write(os.path.join(outside, "vars", "variables.index"), b"x" * 64)
    os.symlink(os.path.join(outside, "vars"), os.path.join(d, "variables"))
    return ["inspect", "."], {1}, ["symbolic link"], set()


def c_savedmodel_index_symlink(d, amanda, outside):
    saved_model(d)
    os.makedirs(os.path.join(d, "variables"))
    write(os.path.join(outside, "variables.index"), b"x" * 64)
    os.symlink(os.path.join(outside, "variables.index"), os.path.join(d, "variables", "variables.index"))
    return ["inspect", "."], {1}, ["symbolic link"], set()


def c_savedmodel_index_fifo(d, amanda, outside):
    saved_model(d)
    os.makedirs(os.path.join(d, "variables"))
    os.mkfifo(os.path.join(d, "variables", "variables.index"))
    return ["inspect", "."], {1}, ["FIFO"], set()


def c_pbtxt_nested_2200(d, amanda, outside):
    inner = "s: 'x'"
    for _ in range(2200):
        inner = "func { name: 'f' attr { key: 'a' value { %s } } }" % inner
    write(os.path.join(d, "m.pbtxt"), "node { name: 'n' op: 'NoOp' attr { key: 'a' value { %s } } }\n" % inner)
    return ["inspect", "m.pbtxt"], {1}, ["m.pbtxt"], set()


def c_pb_nested_2200(d, amanda, outside):
    v = fld(2, "x")
    for _ in range(2200):
        v = fld(10, fld(1, "f") + fld(2, fld(1, "a") + fld(2, v)))
    write(os.path.join(d, "m.pb"), graphdef([node("n", "NoOp", attrs=attr("a", v))]))
    return ["inspect", "m.pb"], {1}, ["m.pb"], set()


def c_tf1_loop_60k_identities(d, amanda, outside):
    """A TF1 while loop whose Switch output passes 60,000 Identities before NextIteration."""
    nodes = [node("x", "Placeholder", attrs=attr("dtype", fld(6, DT_FLOAT)) + attr("shape", fld(7, shape_proto([1])))),
             node("enter", "Enter", ["x"], attr("T", fld(6, DT_FLOAT)) + attr("frame_name", fld(2, "f"))),
             node("merge", "Merge", ["enter", "next"], attr("T", fld(6, DT_FLOAT)) + attr("N", fld(3, 2))),
             node("c", "Const", attrs=attr("dtype", fld(6, 10)) + attr("value", fld(8, fld(1, 10) + fld(2, b"") + fld(11, 1)))),
             node("cond", "LoopCond", ["c"]),
             node("switch", "Switch", ["merge", "cond"], attr("T", fld(6, DT_FLOAT))),
             node("exit", "Exit", ["switch"], attr("T", fld(6, DT_FLOAT)))]
    prev = "switch:1"
    for i in range(60000):
        nodes.append(identity("i%d" % i, prev))
        prev = "i%d" % i
    nodes.append(node("next", "NextIteration", [prev], attr("T", fld(6, DT_FLOAT))))
    nodes.append(identity("y", "exit"))
    write(os.path.join(d, "m.pb"), graphdef(nodes))
    return ["convert", "m.pb", "--to", "onnx/13", "-o", "out.onnx"], {0, 1}, [], {"out.onnx"}


def c_nested_frames_5k(d, amanda, outside):
    """5,000 frames, each Enter reading the one before (the quadratic nested-frame check): refused
    by the frame count before any nesting is worked out (nested loops are converted since session 13)."""
    nodes = [node("x", "Placeholder", attrs=attr("dtype", fld(6, DT_FLOAT)) + attr("shape", fld(7, shape_proto([1]))))]
    prev = "x"
    for i in range(5000):
        nodes.append(node("e%d" % i, "Enter", [prev], attr("T", fld(6, DT_FLOAT)) + attr("frame_name", fld(2, "f%d" % i))))
        nodes.append(identity("m%d" % i, "e%d" % i))
        prev = "m%d" % i
    nodes.append(identity("y", prev))
    write(os.path.join(d, "m.pb"), graphdef(nodes))
    return ["convert", "m.pb", "--to", "onnx/13", "-o", "out.onnx"], {1}, ["frames"], set()


def c_fifo_pb(d, amanda, outside):
    os.mkfifo(os.path.join(d, "x.pb"))
    return ["inspect", "x.pb"], {1}, ["FIFO"], set()


def c_fifo_onnx_convert(d, amanda, outside):
    os.mkfifo(os.path.join(d, "x.onnx"))
    return ["convert", "x.onnx", "-o", "y.onnx"], {1}, ["FIFO"], set()


def c_pb_const_6e8_zeros(d, amanda, outside):
    write(os.path.join(d, "m.pb"), graphdef([const_node("c", tensor_proto(DT_FLOAT, [600000000], float_val=0.0)), identity("y", "c")]))
    return ["convert", "m.pb", "--to", "onnx/13", "-o", "out.onnx", "--max-memory", "1G"], {1}, ["--max-memory"], set()


def c_pb_const_6e9_zeros(d, amanda, outside):
    write(os.path.join(d, "m.pb"), graphdef([const_node("c", tensor_proto(DT_FLOAT, [1500000000], float_val=0.0)), identity("y", "c")]))
    return ["convert", "m.pb", "--to", "onnx/13", "-o", "out.onnx"], {1}, ["--max-memory"], set()


def c_pb_string_const(d, amanda, outside):
    write(os.path.join(d, "m.pb"), graphdef([const_node("c", tensor_proto(DT_STRING, [1000000000], string_val=b"x" * 100), DT_STRING),
                                            identity("y", "c", DT_STRING)]))
    return ["convert", "m.pb", "--to", "onnx/13", "-o", "out.onnx"], {1}, ["--max-memory"], set()


def c_pb_split_20k(d, amanda, outside):
    split = node("s", "Split", ["axis", "c"], attr("T", fld(6, DT_FLOAT)) + attr("num_split", fld(3, 20000)))
    nodes = [const_node("axis", tensor_proto(DT_INT32, [], content=struct.pack("<i", 0)), DT_INT32),
             const_node("c", tensor_proto(DT_FLOAT, [20000, 256], float_val=0.0)), split]
    nodes += [identity("y%d" % i, "s:%d" % i) for i in range(20000)]
    write(os.path.join(d, "m.pb"), graphdef(nodes))
    return ["convert", "m.pb", "--to", "onnx/13", "-o", "out.onnx"], {0, 1}, [], {"out.onnx"}


def run_case(make_model, words, code={1}, extra=()):
    def make(d, amanda, outside):
        make_model(d)
        return ["run", "m.onnx", "-q"] + list(extra), code, words, set()
    return make


def c_div_int_min(d, amanda, outside):
    int_binary_model(os.path.join(d, "m.onnx"), "Div")
    np.save(os.path.join(d, "a.npy"), np.array([-2 ** 31, 7], dtype=np.int32))
    np.save(os.path.join(d, "b.npy"), np.array([-1, -1], dtype=np.int32))
    return ["run", "m.onnx", "--input", "a=a.npy", "--input", "b=b.npy", "-o", "out"], {0}, [], {
        "out", "out/y.npy", "out/outputs.json"}


def c_mod_int_min(d, amanda, outside):
    int_binary_model(os.path.join(d, "m.onnx"), "Mod", TensorProto.INT64)
    np.save(os.path.join(d, "a.npy"), np.array([-2 ** 63, 7], dtype=np.int64))
    np.save(os.path.join(d, "b.npy"), np.array([-1, -1], dtype=np.int64))
    return ["run", "m.onnx", "--input", "a=a.npy", "--input", "b=b.npy", "-o", "out"], {0}, [], {
        "out", "out/y.npy", "out/outputs.json"}


def c_div_by_zero(d, amanda, outside):
    int_binary_model(os.path.join(d, "m.onnx"), "Div")
    np.save(os.path.join(d, "a.npy"), np.array([1, 7], dtype=np.int32))
    np.save(os.path.join(d, "b.npy"), np.array([0, 1], dtype=np.int32))
    return ["run", "m.onnx", "--input", "a=a.npy", "--input", "b=b.npy", "-o", "out"], {1}, ["division by zero"], set()


def c_shape_2_32_squared(d, amanda, outside):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2 ** 32, 2 ** 32])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    st = [helper.make_tensor(n, TensorProto.INT64, [1], [v]) for n, v in (("st", 0), ("en", 4), ("ax", 0))]
    save_raw(onnx_model([helper.make_node("Slice", ["x", "st", "en", "ax"], ["y"])], [x], [y], st), os.path.join(d, "m.onnx"))
    return ["run", "m.onnx", "-q"], {1}, ["overflows"], set()


def c_random_input_huge(d, amanda, outside):
    relu_onnx(os.path.join(d, "m.onnx"), shape=(100000, 100000))
    return ["run", "m.onnx", "-q"], {1}, ["--max-memory"], set()


def c_loop_2_62_run(d, amanda, outside):
    loop_model(os.path.join(d, "m.onnx"), 2 ** 62)
    return ["run", "m.onnx", "-q", "-o", "out"], {1}, ["--max-steps"], set()


def c_loop_2_62_convert_tf(d, amanda, outside):
    loop_model(os.path.join(d, "m.onnx"), 2 ** 62)
    return ["convert", "m.onnx", "--to", "tensorflow", "-o", "out.pb"], {0, 1}, [], {"out.pb"}


def c_range_2_64(d, amanda, outside):
    range_model(os.path.join(d, "m.onnx"), -2 ** 63, 2 ** 63 - 1, 1)
    return ["run", "m.onnx", "-q"], {1}, ["past int64"], set()


def shape_case(op, shape):
    def make(d, amanda, outside):
        shape_op_model(os.path.join(d, "m.onnx"), op, shape)
        return ["run", "m.onnx", "-q", "-o", "out"], {1}, ["--max-memory"], set()
    return make


def eye_like_rank_case(rank):
    """EyeLike of a tensor that is not 2-D (found by run_fuzz: the kernel read dimension 0 of a
    scalar, a null reference under UBSan): refused with the node's location."""
    def make(d, amanda, outside):
        shape_op_model(os.path.join(d, "m.onnx"), "EyeLike", [3] * rank)
        return ["run", "m.onnx", "-q"], {1}, ["EyeLike", "2-D"], set()
    return make


def misaligned_flatgraph():
    """A SameDiff FlatGraph that FlatBuffers' verifier accepts, whose one node ("n", op "add")
    has an extraInteger ([long]) starting at byte 108: 4 mod 8 (nd4j_fuzz found such a file;
    FlatBuffers then reads the 8-byte numbers with unaligned loads). Hand-laid: root offset,
    FlatGraph's vtable and table (field 2: nodes), the nodes vector, FlatNode's vtable and table
    (fields 1 name, 9 extraInteger, 16 opName), the two strings, the vector."""
    def u16(*v):
        return struct.pack("<%dH" % len(v), *v)
    slots = [0] * 17
    slots[1], slots[9], slots[16] = 4, 8, 12
    b = struct.pack("<I", 16)                                   # 0: root table at 16
    b += u16(10, 8, 0, 0, 4) + b"\0\0"                         # 4: FlatGraph vtable (nodes at +4)
    b += struct.pack("<iI", 16 - 4, 24 - 20)                    # 16: FlatGraph table -> vector at 24
    b += struct.pack("<II", 1, 72 - 28)                         # 24: nodes: 1 -> FlatNode at 72
    b += u16(38, 16, *slots) + b"\0\0"                         # 32: FlatNode vtable
    b += struct.pack("<iIII", 72 - 32, 88 - 76, 104 - 80, 96 - 84)  # 72: FlatNode table
    b += struct.pack("<I", 1) + b"n\0" + b"\0\0"                # 88: name
    b += struct.pack("<I", 3) + b"add\0"                        # 96: opName
    b += struct.pack("<Iq", 1, 7)                               # 104: [long] of 1, element at 108
    assert len(b) == 116
    return b


def c_nd4j_misaligned_long_vector(d, amanda, outside):
    write(os.path.join(d, "m.fb"), misaligned_flatgraph())
    return ["inspect", "m.fb"], {1}, ["8-byte aligned"], set()


def c_npy_unicode(d, amanda, outside):
    x = helper.make_tensor_value_info("x", TensorProto.STRING, [None])
    y = helper.make_tensor_value_info("y", TensorProto.STRING, [None])
    save_raw(onnx_model([helper.make_node("Identity", ["x"], ["y"])], [x], [y]), os.path.join(d, "m.onnx"))
    header = "{'descr': '<U0', 'fortran_order': False, 'shape': (100000000000,), }"
    header += " " * (((len(header) + 11) // 64 + 1) * 64 - len(header) - 11) + "\n"
    write(os.path.join(d, "x.npy"), b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
    return ["run", "m.onnx", "--input", "x=x.npy", "-q"], {1}, ["--max-memory"], set()


def c_npy_fifo(d, amanda, outside):
    relu_onnx(os.path.join(d, "m.onnx"))
    os.mkfifo(os.path.join(d, "x.npy"))
    return ["run", "m.onnx", "--input", "x=x.npy", "-q"], {1}, ["FIFO"], set()


def c_run_failed_leaves_no_dir(d, amanda, outside):
    int_binary_model(os.path.join(d, "m.onnx"), "Div")
    np.save(os.path.join(d, "a.npy"), np.array([1, 7], dtype=np.int32))
    np.save(os.path.join(d, "b.npy"), np.array([0, 1], dtype=np.int32))
    return ["run", "m.onnx", "--input", "a=a.npy", "--input", "b=b.npy", "-o", "out", "--dump-intermediates"], {1}, [
        "division by zero"], set()


def c_outputs_json_escaped(d, amanda, outside):
    relu_onnx(os.path.join(d, "m.onnx"), out_name='y"\n,{"evil": 1}')
    return ["run", "m.onnx", "-q", "-o", "out"], {0}, [], {"out", "out/outputs.json", "out/y\"_,{\"evil\"_ 1}.npy"}


def c_table_repeat_long_string(d, amanda, outside):
    relu_onnx(os.path.join(d, "m.onnx"))
    write(os.path.join(d, "t.yaml"), "table:\n  src: amanda/onnx/13\n  dst: amanda/onnx/12\n  rules:\n"
          "  - rule_name: evil\n    priority: 100\n    src: {type: Relu}\n"
          "    when: \"len(repeat('" + "x" * 10000 + "', 900000)) > 0\"\n    dst: {type: Relu}\n")
    return ["convert", "m.onnx", "--to", "onnx/12", "--tables", "t.yaml", "-o", "out.onnx"], {1}, ["budget"], set()


def c_onnx_external_failed_leaves_nothing(d, amanda, outside):
    """A conversion that fails after the writer started: no model, no .data side file."""
    n = 4096
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [n])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [n])
    w = helper.make_tensor("w", TensorProto.FLOAT, [n], np.arange(n, dtype=np.float32).tobytes(), raw=True)
    save_raw(onnx_model([helper.make_node("Add", ["x", "w"], ["y"], name="add")], [x], [y], [w]), os.path.join(d, "m.onnx"))
    os.makedirs(os.path.join(d, "a.onnx.data"))  # the side file's target is a folder: refused at commit, nothing moved
    return ["convert", "m.onnx", "--external-data", "-o", "a.onnx"], {1}, ["folder"], {"a.onnx.data"}


def c_ts_from_file(d, amanda, outside):
    secret = os.path.join(outside, "secret")
    torchscript(os.path.join(d, "m.pt"), forward([
        "t = torch.from_file(\"%s\", False, 7, dtype=0)" % secret, "return torch.add(x, torch.sum(t))"]))
    return ["convert", "m.pt", "--input-shape", "1,3", "-o", "out.onnx"], {0, 1}, [], {"out.onnx"}


def forever(d):
    """A module whose forward() loops forever on any input (the sum only grows): the libtorch-free
    reader converts it (an ONNX Loop); libtorch's reader runs it while propagating shapes, and
    `--check` runs it. The libtorch children are stopped at their CPU-time limit."""
    torchscript(os.path.join(d, "m.pt"), forward([
        "y = x", "while bool(torch.gt(torch.sum(y), -1.0)):", "  y = torch.add(y, 1.0)", "return y"]))


def plugin_words(amanda, words):
    """The message words a libtorch case expects; without the PyTorch plugin the refusal says so."""
    return words if os.path.exists(os.path.join(os.path.dirname(amanda), "libamanda_torch.so")) else ["PyTorch"]


def c_ts_forward_forever_check(d, amanda, outside):
    forever(d)
    return (["convert", "m.pt", "--input-shape", "1,3", "--check", "-o", "out.onnx"], {1},
            plugin_words(amanda, ["CPU-time limit of 2 s"]), set(), {"env": {"AMANDA_TORCH_TIMEOUT": "2"}})


def c_ts_forward_forever_libtorch_reader(d, amanda, outside):
    forever(d)
    return (["convert", "m.pt", "--input-shape", "1,3", "--reader", "libtorch", "-o", "out.onnx"], {1},
            plugin_words(amanda, ["CPU-time limit of 2 s"]), set(), {"env": {"AMANDA_TORCH_TIMEOUT": "2"}})


def c_ts_forward_forever_check_default(d, amanda, outside):
    # The default limit of a small archive: 10 s of CPU time (the case's own CPU limit allows it).
    forever(d)
    return (["convert", "m.pt", "--input-shape", "1,3", "--check", "-o", "out.onnx"], {1},
            plugin_words(amanda, ["CPU-time limit of 10 s"]), set(), {"cpu": 14.0})


def c_ts_tuple_40_deep(d, amanda, outside):
    expr = "x"
    for _ in range(40):
        expr = "(%s, %s)" % (expr, expr) if len(expr) < 1000 else "(%s, x)" % expr
    torchscript(os.path.join(d, "m.pt"), forward(["t = " + expr, "return x"]))
    return ["convert", "m.pt", "--input-shape", "1,3", "--reader", "script", "-o", "out.onnx"], {0, 1}, [], {"out.onnx"}


def c_model_is_device(d, amanda, outside):
    os.symlink("/dev/zero", os.path.join(d, "zero.onnx"))  # (the user named it: followed, then refused as a device)
    return ["inspect", "zero.onnx"], {1}, ["character device"], set()


def c_model_is_folder(d, amanda, outside):
    os.makedirs(os.path.join(d, "m.onnx"))
    return ["convert", "m.onnx", "-o", "y.onnx"], {1}, ["m.onnx"], set()


def c_external_data_is_folder(d, amanda, outside):
    from security_test import external_model
    os.makedirs(os.path.join(d, "w.bin"))
    external_model(os.path.join(d, "m.onnx"), "w.bin")
    return ["inspect", "m.onnx"], {1}, ["folder"], set()


def c_external_data_is_device_link(d, amanda, outside):
    from security_test import external_model
    os.symlink("/dev/zero", os.path.join(d, "w.bin"))
    external_model(os.path.join(d, "m.onnx"), "w.bin")
    return ["inspect", "m.onnx"], {1}, ["symbolic link"], set()


def c_pbtxt_is_fifo_in_savedmodel(d, amanda, outside):
    os.mkfifo(os.path.join(d, "saved_model.pb"))
    return ["inspect", "."], {1}, ["FIFO"], set()


CASES = [
    ("files.tfjs_shard_named_ssh_authorized_keys_fmt", c_tfjs_ssh_shard),
    ("files.tfjs_shard_named_ssh_authorized_keys_convert", c_tfjs_ssh_shard_convert),
    ("files.tfjs_20000_shards", c_tfjs_20000_shards),
    ("hang.tfjs_300000_shards", c_tfjs_300000_shards),
    ("read.tfjs_shard_symlink_out", c_tfjs_shard_symlink),
    ("read.savedmodel_variables_folder_symlink", c_savedmodel_variables_folder_symlink),
    ("read.savedmodel_index_symlink", c_savedmodel_index_symlink),
    ("hang.savedmodel_index_fifo", c_savedmodel_index_fifo),
    ("read.torchscript_from_file_without_check", c_ts_from_file),
    ("crash.pbtxt_nested_2200", c_pbtxt_nested_2200),
    ("crash.pb_nested_2200", c_pb_nested_2200),
    ("crash.tf1_loop_60000_identities", c_tf1_loop_60k_identities),
    ("hang.tf1_nested_frames_5000", c_nested_frames_5k),
    ("crash.run_div_int_min_by_minus_1", c_div_int_min),
    ("crash.run_mod_int64_min_by_minus_1", c_mod_int_min),
    ("crash.run_div_by_zero", c_div_by_zero),
    ("crash.run_shape_2_32_squared_slice", c_shape_2_32_squared),
    ("hang.run_loop_2_62", c_loop_2_62_run),
    ("hang.convert_to_tensorflow_folds_loop_2_62", c_loop_2_62_convert_tf),
    ("hang.fifo_named_x_pb", c_fifo_pb),
    ("hang.fifo_named_x_onnx_convert", c_fifo_onnx_convert),
    ("hang.npy_input_fifo", c_npy_fifo),
    ("hang.torchscript_tuple_40_deep", c_ts_tuple_40_deep),
    ("hang.torchscript_forward_forever_check", c_ts_forward_forever_check),
    ("hang.torchscript_forward_forever_libtorch_reader", c_ts_forward_forever_libtorch_reader),
    ("hang.torchscript_forward_forever_check_default_limit", c_ts_forward_forever_check_default),
    ("memory.pb_const_6e8_zeros_max_memory_1G", c_pb_const_6e8_zeros),
    ("memory.pb_const_1_5e9_zeros_default_budget", c_pb_const_6e9_zeros),
    ("memory.pb_string_const", c_pb_string_const),
    ("memory.pb_split_20000", c_pb_split_20k),
    ("memory.npy_unicode", c_npy_unicode),
    ("memory.run_constant_of_shape", shape_case("ConstantOfShape", [1000000, 1000000])),
    ("memory.run_expand", shape_case("Expand", [1000000, 1000000])),
    ("memory.run_tile", shape_case("Tile", [1000000, 1000000])),
    ("memory.run_eye_like", shape_case("EyeLike", [1000000, 1000000])),
    ("memory.run_random_input_huge_shape", c_random_input_huge),
    ("crash.run_eye_like_rank_1", eye_like_rank_case(1)),
    ("crash.run_eye_like_rank_0", eye_like_rank_case(0)),
    ("crash.nd4j_misaligned_long_vector", c_nd4j_misaligned_long_vector),
    ("memory.table_repeat_long_string", c_table_repeat_long_string),
    ("wrong.run_range_2_64", c_range_2_64),
    ("partial.run_failed_leaves_no_output_dir", c_run_failed_leaves_no_dir),
    ("partial.onnx_external_data_failed", c_onnx_external_failed_leaves_nothing),
    ("wrong.outputs_json_names_escaped", c_outputs_json_escaped),
    ("refuse.model_is_a_device", c_model_is_device),
    ("refuse.model_is_a_folder", c_model_is_folder),
    ("refuse.external_data_is_a_folder", c_external_data_is_folder),
    ("refuse.external_data_is_a_link_to_a_device", c_external_data_is_device_link),
    ("refuse.saved_model_pb_is_a_fifo", c_pbtxt_is_fifo_in_savedmodel),
]


def listing(d):
    out = set()
    for root, dirs, files in os.walk(d):
        for n in dirs + files:
            out.add(os.path.relpath(os.path.join(root, n), d))
    return out


PY_READ = """
import sys
sys.path.insert(0, sys.argv[1])
import amanda
try:
    amanda.load(sys.argv[2])
except Exception as e:
    print("exception:", type(e).__name__, str(e)[:200])
"""


def python_survives(pydir, path):
    """amanda.load(path) in a child Python: an exception or a result, never a signal."""
    try:
        r = subprocess.run([sys.executable, "-c", PY_READ, pydir, path], capture_output=True, text=True, timeout=LIMIT_WALL_S)
    except subprocess.TimeoutExpired:
        return "amanda.load hung (> %d s)" % LIMIT_WALL_S
    if r.returncode < 0:
        return "amanda.load killed the process (signal %d)" % -r.returncode
    return None


PY_CYCLE = """
import os, sys
sys.path.insert(0, sys.argv[1])
import amanda
g = amanda.load(sys.argv[2])
try:
    amanda.save(g, sys.argv[3])
    print("saved")
except Exception as e:
    print("refused:", e)
"""


def check_python_cycle(pydir, root):
    """A cyclic ONNX read by amanda.load is refused by amanda.save, which writes nothing."""
    d = os.path.join(root, "python_cycle")
    os.makedirs(d)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])
    nodes = [helper.make_node("Add", ["x", "b"], ["a"], name="n1"), helper.make_node("Relu", ["a"], ["b"], name="n2"),
             helper.make_node("Identity", ["a"], ["y"], name="n3")]
    save_raw(onnx_model(nodes, [x], [y]), os.path.join(d, "cyclic.onnx"))
    r = subprocess.run([sys.executable, "-c", PY_CYCLE, pydir, os.path.join(d, "cyclic.onnx"), os.path.join(d, "out.onnx")],
                       capture_output=True, text=True, timeout=60)
    if r.returncode != 0 or "refused" not in r.stdout or "cycle" not in r.stdout or os.path.exists(os.path.join(d, "out.onnx")):
        return "amanda.load + amanda.save of a cyclic ONNX: exit %d, %s %s" % (r.returncode, r.stdout.strip()[-300:], r.stderr.strip()[-300:])
    print("  ok   wrong.python_load_save_cyclic_onnx refused: %s" % r.stdout.strip()[:120])
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("amanda")
    ap.add_argument("--only")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--python", help="folder holding the built amanda Python package")
    a = ap.parse_args()
    amanda = os.path.abspath(a.amanda)
    root = tempfile.mkdtemp(prefix="amanda-security2-")
    failures = []
    try:
        for name, make in CASES:
            if a.only and a.only not in name:
                continue
            base = os.path.join(root, name)
            d, outside = os.path.join(base, "model"), os.path.join(base, "outside")
            os.makedirs(d)
            os.makedirs(outside)
            write(os.path.join(outside, "secret"), "secret\n")
            made = make(d, amanda, outside)
            args, codes, words, may_leave = made[:4]
            opts = made[4] if len(made) > 4 else {}
            cpu_limit = opts.get("cpu", LIMIT_CPU_S)
            before = listing(d)
            outside_before = listing(outside)
            code, out, err, secs, rss, cpu = run(amanda, args, d, timeout=LIMIT_WALL_S + 5, env=opts.get("env"))
            after = listing(d)
            problems = []
            if code not in codes:
                problems.append("exit %d, not %s" % (code, sorted(codes)))
            missing = [w for w in words if w not in err + out]
            if missing:
                problems.append("the message lacks %s" % missing)
            if cpu > cpu_limit:
                problems.append("took %.1f s of CPU (limit %.0f s)" % (cpu, cpu_limit))
            if secs > LIMIT_WALL_S:
                problems.append("took %.1f s of wall time" % secs)
            if rss > LIMIT_RSS_KB:
                problems.append("peak memory %d MB (limit 2048 MB)" % (rss // 1024))
            new = after - before
            gone = before - after
            allowed = may_leave if code == 0 else {f for f in may_leave if f in before}
            if new - allowed or gone:
                problems.append("files written or removed beyond the defined output: new %s, gone %s" % (
                    sorted(new - allowed)[:5], sorted(gone)[:5]))
            if listing(outside) != outside_before:
                problems.append("the outside folder changed")
            if name == "wrong.outputs_json_names_escaped" and code == 0:
                try:
                    names = [o["name"] for o in json.load(open(os.path.join(d, "out", "outputs.json")))["outputs"]]
                    if names != ['y"\n,{"evil": 1}']:
                        problems.append("outputs.json names %r" % names)
                except ValueError as e:
                    problems.append("outputs.json is not JSON: %s" % e)
            if HAVE_STRACE and not problems:
                for f in new:
                    p = os.path.join(d, f)
                    if os.path.isdir(p):
                        shutil.rmtree(p)
                    elif os.path.exists(p):
                        os.remove(p)
                bad = opened_outside(amanda, args, d, outside, env=opts.get("env"))
                if bad:
                    problems.append("opened outside the model's folder: %s" % bad[:3])
            if a.python and not problems and not name.startswith("wrong.outputs") and not args[0] == "run":
                model = args[1]
                p = python_survives(os.path.abspath(a.python), os.path.join(d, model))
                if p:
                    problems.append(p)
            first = err.strip().splitlines()[0] if err.strip() else ""
            if problems:
                failures.append(name)
                print("  FAIL %s: %s\n       stderr: %s" % (name, "; ".join(problems), err.strip()[-1200:]))
            else:
                print("  ok   %-52s exit %d %6.2f s (CPU %5.2f s) %5d MB  %s" % (name, code, secs, cpu, rss // 1024, first[:140]))
        if a.python and (not a.only or "cycl" in a.only):
            p = check_python_cycle(os.path.abspath(a.python), root)
            if p:
                failures.append("wrong.python_load_save_cyclic_onnx")
                print("  FAIL wrong.python_load_save_cyclic_onnx: " + p)
    finally:
        if not a.keep:
            shutil.rmtree(root, ignore_errors=True)
        else:
            print("inputs kept in", root)
    if failures:
        print("%d failures: %s" % (len(failures), ", ".join(failures)))
        return 1
    print("all %d cases hold" % (len(CASES) if not a.only else sum(1 for n, _ in CASES if a.only in n)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
