"""Shared by the ONNX -> TF.js tests: convert with amanda, write inputs, run onnx2tf_compare.js."""
import json
import os
import subprocess

import numpy as np
import onnx

HERE = os.path.dirname(os.path.abspath(__file__))
NUMPY = {1: np.float32, 11: np.float64, 6: np.int32, 7: np.int64, 9: np.bool_, 2: np.uint8, 3: np.int8}
NAMES = {1: "float32", 11: "float64", 6: "int32", 7: "int64", 9: "bool", 2: "uint8", 3: "int8"}


def convert(amanda, onnx_path, out_json, extra=()):
    """Runs `amanda convert`; returns (exit code, stdout + stderr)."""
    r = subprocess.run([amanda, "convert", onnx_path, "-o", out_json, "-q", *extra], capture_output=True, text=True)
    return r.returncode, r.stdout + r.stderr


def make_inputs(model, folder, seed, given=None, symbolic=1):
    """Random inputs for the graph inputs that are not initializers (symbolic dims as `symbolic`)."""
    given = given or {}
    rng = np.random.default_rng(seed)
    inits = {i.name for i in model.graph.initializer}
    out = []
    for k, vi in enumerate(model.graph.input):
        if vi.name in inits:
            continue
        t = vi.type.tensor_type
        shape = [d.dim_value if d.HasField("dim_value") else symbolic for d in t.shape.dim]
        if vi.name in given:
            a = np.asarray(given[vi.name])
        elif t.elem_type in (1, 11):
            a = rng.standard_normal(shape).astype(NUMPY[t.elem_type])
        elif t.elem_type == 9:
            a = rng.random(shape) < 0.5
        else:
            a = rng.integers(-5, 6, shape).astype(NUMPY[t.elem_type])
        f = os.path.join(folder, f"input{k}.bin")
        np.ascontiguousarray(a.astype(NUMPY[t.elem_type])).tofile(f)
        out.append({"name": vi.name, "dtype": NAMES[t.elem_type], "shape": list(a.shape), "file": f})
    return out


def compare(jobs, folder):
    path = os.path.join(folder, "jobs.json")
    with open(path, "w") as f:
        json.dump(jobs, f)
    r = subprocess.run(["node", os.path.join(HERE, "onnx2tf_compare.js"), path], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("onnx2tf_compare.js failed: " + r.stderr[-2000:])
    return {x["id"]: x for x in json.loads(r.stdout)}
