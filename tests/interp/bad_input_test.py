#!/usr/bin/python3
"""`amanda run` on bad input: an op without a kernel is named (with its path) and nothing is
computed or written; an input .npy of the wrong element type or shape, an unknown input name and
a file that is not .npy are refused naming the input; every case exits 1. A good run writes
outputs numpy agrees with, and --dump-intermediates writes every value.

  bad_input_test.py AMANDA
"""
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import helper, TensorProto


def model(path, op="Add"):
    nodes = [helper.make_node(op, ["a", "b"], ["t"], name="first"), helper.make_node("Relu", ["t"], ["y"], name="relu")]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("a", TensorProto.FLOAT, [2, 3]),
                                       helper.make_tensor_value_info("b", TensorProto.FLOAT, [3])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.save(m, path)


def run(args):
    p = subprocess.run(args, capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout + p.stderr


def main():
    amanda = sys.argv[1]
    fails = []
    with tempfile.TemporaryDirectory() as d:
        good, bad = os.path.join(d, "good.onnx"), os.path.join(d, "bad.onnx")
        model(good)
        model(bad, op="NoSuchOp")
        a = np.arange(-3, 3, dtype=np.float32).reshape(2, 3)
        b = np.array([0.5, -1.0, 2.0], dtype=np.float32)
        np.save(os.path.join(d, "a.npy"), a)
        np.save(os.path.join(d, "b.npy"), b)
        np.save(os.path.join(d, "a_int.npy"), a.astype(np.int64))
        np.save(os.path.join(d, "a_shape.npy"), a.reshape(3, 2))
        open(os.path.join(d, "junk.npy"), "w").write("not numpy")
        ins = ["--input", f"a={d}/a.npy", "--input", f"b={d}/b.npy"]

        out = os.path.join(d, "out_bad")
        rc, text = run([amanda, "run", bad, "-o", out] + ins)
        if rc != 1 or "NoSuchOp" not in text or "first" not in text or os.path.exists(os.path.join(out, "outputs.json")):
            fails.append(f"missing kernel: exit {rc}: {text}")
        for f, want in [("a_int.npy", "element type int64"), ("a_shape.npy", "shape [3, 2]"), ("junk.npy", "not an .npy")]:
            rc, text = run([amanda, "run", good, "--input", f"a={d}/{f}", "--input", f"b={d}/b.npy"])
            if rc != 1 or want not in text or ("'a'" not in text and f != "junk.npy"):
                fails.append(f"{f}: exit {rc}: {text}")
        rc, text = run([amanda, "run", good, "--input", f"nosuch={d}/a.npy"])
        if rc != 1 or "nosuch" not in text:
            fails.append(f"unknown input: exit {rc}: {text}")

        out = os.path.join(d, "out_good")
        rc, text = run([amanda, "run", good, "-o", out, "--dump-intermediates"] + ins)
        y = np.load(os.path.join(out, "y.npy")) if rc == 0 else None
        expect = np.maximum(a + b, 0)
        if y is None or y.dtype != np.float32 or not np.array_equal(y, expect) or not expect.any():
            fails.append(f"good run: exit {rc}: {text}")
        t = os.path.join(out, "intermediates", "t.npy")
        if not os.path.exists(t) or not np.array_equal(np.load(t), a + b):
            fails.append("--dump-intermediates did not write t.npy = a + b")
    for f in fails:
        print("FAIL:", f)
    print("ok" if not fails else f"{len(fails)} failure(s)")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
