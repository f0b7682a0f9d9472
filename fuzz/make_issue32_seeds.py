#!/usr/bin/python3
"""Seed corpora of the issue-32 fuzz targets (savedmodel, tfjs, npy, run, writers), made from the
TensorFlow corpus and from the reproducers of tests/security/round2_test.py.
usage: fuzz/make_issue32_seeds.py AMANDA   (writes fuzz/corpus/{savedmodel,tfjs,npy,run,writers}/, and a
reproducer each into fuzz/corpus/{nd4j,tensorflow}/)"""
import io
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

import numpy as np
from onnx import TensorProto, helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "security"))
import round2_test as r2  # noqa: E402
from security_test import onnx_model  # noqa: E402

amanda = os.path.abspath(sys.argv[1])
corpus = os.path.join(HERE, "corpus")


def out(target, name, data):
    d = os.path.join(corpus, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


def sm_input(flags, pb, index=b"", data=b""):
    return bytes([flags]) + struct.pack("<II", len(pb), len(index)) + pb + index + data


# ---- savedmodel: the TensorFlow corpus's 's' seeds, and the reproducers with each flag
tf = os.path.join(corpus, "tensorflow")
for f in sorted(os.listdir(tf)):
    b = open(os.path.join(tf, f), "rb").read()
    if b[:1] == b"s":
        out("savedmodel", f.replace(".s", ""), b"\0" + b[1:])
        out("savedmodel", f.replace(".s", "") + "_variables_link", b"\1" + b[1:])
        out("savedmodel", f.replace(".s", "") + "_index_fifo", b"\2" + b[1:])
        out("savedmodel", f.replace(".s", "") + "_data_link", b"\4" + b[1:])
    if b[:1] == b"j":
        out("tfjs", f.replace(".j", ""), b[1:].replace(b"\0", b"\0", 1))
tmp = tempfile.mkdtemp()
r2.saved_model(tmp)
pb = open(os.path.join(tmp, "saved_model.pb"), "rb").read()
out("savedmodel", "round2_no_variables", sm_input(0, pb))
out("savedmodel", "round2_variables_folder_link", sm_input(1, pb, b"x" * 64))

# ---- tfjs: the reproducers (shard names from the manifest, links, FIFOs, many shards)
for name, paths in (("ssh_authorized_keys", [".ssh/authorized_keys"]), ("link", ["link.bin"]), ("fifo", ["fifo.bin"]),
                    ("dir", ["dir.bin"]), ("dotdot", ["../outside/secret.bin"]), ("sub", ["sub/s.bin"]),
                    ("many", ["s0.bin"] * 2000), ("two", ["s0.bin", "s1.bin"])):
    d = tempfile.mkdtemp()
    r2.tfjs(d, paths)
    out("tfjs", "round2_" + name, open(os.path.join(d, "model.json"), "rb").read() + b"\0" + b"\0" * 8 + b"\0" + b"\0" * 8)

# ---- npy
for name, arr in (("f32", np.arange(6, dtype=np.float32).reshape(2, 3)), ("i64", np.array([-2 ** 63, 7], dtype=np.int64)),
                  ("bool", np.array([True, False])), ("u5", np.array(["ab", "héllo"])), ("scalar", np.float64(3.5)),
                  ("empty", np.zeros((0, 4), dtype=np.int32)), ("f16", np.ones(3, dtype=np.float16))):
    b = io.BytesIO()
    np.save(b, arr)
    out("npy", name, b.getvalue())
header = "{'descr': '<U0', 'fortran_order': False, 'shape': (100000000000,), }"
header += " " * (((len(header) + 11) // 64 + 1) * 64 - len(header) - 11) + "\n"
out("npy", "round2_unicode_width0_huge", b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())

# ---- run: small models of the ops issue 32 names
d = tempfile.mkdtemp()


def model_bytes(make, *args):
    p = os.path.join(d, "m.onnx")
    make(p, *args)
    return open(p, "rb").read()


def const_div(op, dtype, a, b):
    t = {TensorProto.INT32: np.int32, TensorProto.INT64: np.int64}[dtype]
    x = helper.make_tensor_value_info("x", dtype, [2])
    y = helper.make_tensor_value_info("y", dtype, [2])
    inits = [helper.make_tensor("a", dtype, [2], np.array(a, dtype=t)), helper.make_tensor("b", dtype, [2], np.array(b, dtype=t))]
    nodes = [helper.make_node(op, ["a", "b"], ["q"]), helper.make_node("Add", ["q", "x"], ["y"])]
    p = os.path.join(d, "m.onnx")
    r2.save_raw(onnx_model(nodes, [x], [y], inits), p)
    return open(p, "rb").read()


out("run", "div_int32_min_by_minus_1", const_div("Div", TensorProto.INT32, [-2 ** 31, 7], [-1, -1]))
out("run", "mod_int64_min_by_minus_1", const_div("Mod", TensorProto.INT64, [-2 ** 63, 7], [-1, -1]))
out("run", "div_by_zero", const_div("Div", TensorProto.INT32, [1, 7], [0, 1]))
out("run", "loop_2_62", model_bytes(r2.loop_model, 2 ** 62))
out("run", "loop_3", model_bytes(r2.loop_model, 3))
out("run", "range_2_64", model_bytes(r2.range_model, -2 ** 63, 2 ** 63 - 1, 1))
out("run", "range_10", model_bytes(r2.range_model, 0, 10, 1))
for op in ("ConstantOfShape", "Expand", "Tile", "EyeLike"):
    out("run", op + "_huge", model_bytes(r2.shape_op_model, op, [1000000, 1000000]))
    out("run", op + "_small", model_bytes(r2.shape_op_model, op, [2, 3]))
# EyeLike of a tensor that is not 2-D (run_fuzz found it: the kernel read dimension 0 of a scalar)
out("run", "EyeLike_rank_1", model_bytes(r2.shape_op_model, "EyeLike", [3]))
out("run", "EyeLike_rank_0", model_bytes(r2.shape_op_model, "EyeLike", []))
x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2 ** 32, 2 ** 32])
y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
st = [helper.make_tensor(n, TensorProto.INT64, [1], [v]) for n, v in (("st", 0), ("en", 4), ("ax", 0))]
r2.save_raw(onnx_model([helper.make_node("Slice", ["x", "st", "en", "ax"], ["y"])], [x], [y], st), os.path.join(d, "m.onnx"))
out("run", "slice_2_32_squared", open(os.path.join(d, "m.onnx"), "rb").read())

# ---- reproducers of other targets' findings (session 13)
# nd4j_fuzz: a [long] vector whose elements are not 8-byte aligned (refused now)
out("nd4j", "regress_misaligned_extra_integer.fb", r2.misaligned_flatgraph())
# tensorflow_fuzz: a TF.js manifest whose shard path the writer renames (the round trip keeps the rest)
plain = open(os.path.join(tf, "tfjs_plain.j"), "rb").read()
out("tensorflow", "regress_shard_paths_renamed.j", plain.replace(b"group1-shard1of1.bin", b"evil.bin"))

# ---- writers: YAML forms of graphs of each framework
w = tempfile.mkdtemp()
r2.tfjs(w, ["w.bin"], shard_file="w.bin")
for src, name in ((os.path.join(w, "model.json"), "tfjs"),):
    subprocess.run([amanda, "fmt", src, "--to", "yaml", "--inline-limit", "4096", "-o", os.path.join(w, name + ".yaml")], check=True)
    out("writers", name, open(os.path.join(w, name + ".yaml"), "rb").read())
r2.relu_onnx(os.path.join(w, "r.onnx"))
subprocess.run([amanda, "fmt", os.path.join(w, "r.onnx"), "--to", "yaml", "-o", os.path.join(w, "r.yaml")], check=True)
out("writers", "onnx_relu", open(os.path.join(w, "r.yaml"), "rb").read())
for f in sorted(os.listdir(tf)):
    b = open(os.path.join(tf, f), "rb").read()
    if b[:1] == b"b":
        p = os.path.join(w, "g.pb")
        open(p, "wb").write(b[1:])
        r = subprocess.run([amanda, "fmt", p, "--to", "yaml", "--inline-limit", "4096", "-o", os.path.join(w, "g.yaml")])
        if r.returncode == 0:
            out("writers", "graphdef_" + f.replace(".b", ""), open(os.path.join(w, "g.yaml"), "rb").read())
print("seeds written:", {t: len(os.listdir(os.path.join(corpus, t))) for t in ("savedmodel", "tfjs", "npy", "run", "writers")})
