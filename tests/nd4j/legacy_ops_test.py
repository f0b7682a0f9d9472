#!/usr/bin/python3
"""nd4j -> ONNX for the legacy forms of reduce_sum and cast that older SameDiff files hold (libnd4j's
simpleif_0_alt and tensor_array_split graphs): reduce_sum with its axes in FlatNode.dimensions
(2147483647 for every axis) or as its dimensions input, and cast with the target type as INT argument 0 (nd4j's DType number).
Each case is a one-op nd4j graph in Amanda's text form, converted with nd4j_convert and run in
onnxruntime (tests/nd4j/ort_outputs.js); numpy computes what libnd4j documents for it (a sum over
the axes; a C++ static_cast, which truncates toward zero like numpy's astype). A cast to a type ONNX
lacks must be refused naming the op.

Usage: legacy_ops_test.py ND4J_CONVERT
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
X = np.array([[1.5, -2.25, 3.0, 0.0], [4.75, 5.5, -6.0, 0.5], [-7.5, 8.25, 0.0, -1.0]], dtype=np.float32)


def graph(op, attrs, dims=None):
    """A one-op graph; `dims`: an int32 constant for reduce_sum's dimensions input."""
    lines = ["graph:", "  namespace: amanda/nd4j/1.0", "  input_ports:", "    - name: x", "      attrs:",
             "        initializer: !tensor {dtype: float32, shape: [3, 4], data: [%s]}" % ", ".join(repr(float(v)) for v in X.ravel())]
    if dims is not None:
        lines += ["    - name: d", "      attrs:",
                  "        initializer: !tensor {dtype: int32, shape: [%d], data: [%s]}" % (len(dims), ", ".join(map(str, dims)))]
    lines += ["  output_ports:", "    - name: y", "  ops:", "    - type: " + op, "      name: op"]
    if attrs:
        lines += ["      attrs:"] + ["        %s: %s" % (k, v) for k, v in attrs.items()]
    lines += ["      input_ports:", "        - name: input"] + (["        - name: dimensions"] if dims is not None else [])
    lines += ["      output_ports:", "        - name: outputs", "  edges:",
              "    - output_port: {op: \"\", port: x}", "      input_port: {op: op, port: input}",
              "    - output_port: {op: op, port: outputs}", "      input_port: {op: \"\", port: y}"]
    if dims is not None:
        lines += ["    - output_port: {op: \"\", port: d}", "      input_port: {op: op, port: dimensions}"]
    return "\n".join(lines) + "\n"


CASES = [  # (name, op, attrs, expected)
    ("reduce_sum_all", "reduce_sum", {"keepDims": "false", '"@nd4j.dimensions"': "[2147483647]"}, X.sum()),
    ("reduce_sum_all_keep", "reduce_sum", {"keepDims": "true", '"@nd4j.dimensions"': "[2147483647]"}, X.sum(keepdims=True)),
    ("reduce_sum_empty_dims", "reduce_sum", {'"@nd4j.dimensions"': "[]"}, X.sum()),
    ("reduce_sum_axis1_keep", "reduce_sum", {"keepDims": "true", '"@nd4j.dimensions"': "[1]"}, X.sum(axis=1, keepdims=True)),
    ("reduce_sum_axis0", "reduce_sum", {"keepDims": "false", '"@nd4j.dimensions"': "[0]"}, X.sum(axis=0)),
    ("reduce_sum_axis_neg", "reduce_sum", {"keepDims": "false", '"@nd4j.dimensions"': "[-1]"}, X.sum(axis=-1)),
    ("reduce_sum_axes_input", "reduce_sum", {"keepDims": "false", '"@nd4j.dimensions"': "[2147483647]", "#dims": [0, 1]}, X.sum(axis=(0, 1))),
    ("reduce_sum_axes_input_keep", "reduce_sum", {"keepDims": "true", "#dims": [1]}, X.sum(axis=1, keepdims=True)),
    ("reduce_sum_axes_input_empty", "reduce_sum", {"#dims": []}, X.sum()),
    ("cast_int64", "cast", {"rest_int": "[10]"}, X.astype(np.int64)),
    ("cast_int32", "cast", {"rest_int": "[9]"}, X.astype(np.int32)),
    ("cast_double", "cast", {"rest_int": "[6]"}, X.astype(np.float64)),
    ("cast_bool", "cast", {"rest_int": "[1]"}, X.astype(np.bool_)),
    ("cast_half", "cast", {"rest_int": "[3]"}, X.astype(np.float16)),
]
REFUSED = [("cast_float8", "cast", {"rest_int": "[2]"})]  # FLOAT8: no ONNX type


def main():
    conv = sys.argv[1]
    tmp = tempfile.mkdtemp()
    fails = []
    for name, op, attrs, want in CASES:
        src, out, res = (os.path.join(tmp, name + e) for e in (".yaml", ".onnx", ".json"))
        plain = {k: v for k, v in attrs.items() if k != "#dims"}
        open(src, "w").write(graph(op, plain, attrs.get("#dims")))
        r = subprocess.run([conv, src, out, "--to", "onnx/13"], capture_output=True, text=True)
        if r.returncode != 0:
            fails.append("%s: not converted: %s" % (name, r.stderr.strip()[-400:]))
            continue
        subprocess.run(["node", os.path.join(HERE, "ort_outputs.js"), out, res], check=True)
        got = json.load(open(res))
        if "error" in got:
            fails.append("%s: onnxruntime: %s" % (name, got["error"]))
            continue
        y = got["y"]
        arr = np.array(y["data"]).reshape(y["dims"])
        if y["type"] == "float16":  # onnxruntime-node gives float16 as its bits
            arr = arr.astype(np.uint16).view(np.float16)
        if list(arr.shape) != list(np.shape(want)) or not np.allclose(arr.astype(np.float64), np.asarray(want, dtype=np.float64), atol=1e-5):
            fails.append("%s: got %s %s, want %s" % (name, y["type"], arr.tolist(), np.asarray(want).tolist()))
        elif np.abs(np.asarray(want, dtype=np.float64)).max() == 0:
            fails.append("%s: the expected output is all zeros" % name)
        else:
            print("%-24s matches (%s %s)" % (name, y["type"], list(arr.shape)))
    for name, op, attrs in REFUSED:
        src = os.path.join(tmp, name + ".yaml")
        open(src, "w").write(graph(op, attrs))
        r = subprocess.run([conv, src, os.path.join(tmp, name + ".onnx"), "--to", "onnx/13"], capture_output=True, text=True)
        if r.returncode == 0 or op not in r.stderr:
            fails.append("%s: expected a refusal naming %s, got exit %d: %s" % (name, op, r.returncode, r.stderr.strip()[-300:]))
        else:
            print("%-24s refused, naming %s" % (name, op))
    for f in fails:
        print("FAIL:", f)
    print("legacy nd4j ops -> ONNX: %d cases, %d refusals, %d problems" % (len(CASES), len(REFUSED), len(fails)))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
