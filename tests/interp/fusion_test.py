#!/usr/bin/python3
"""The interpreter's fusions and native layouts against onnxruntime-node, on many small graphs.

`amanda run` fuses a Conv with its only reader when that is a Relu, Clip or LeakyRelu, and keeps
oneDNN's blocked layout between the kernels that take it (Conv, Add, Relu). Every pattern where
that could go wrong is generated here with random sizes (channel counts that are and are not
multiples of oneDNN's block of 16, strides, padding, groups): activations fused or not (a second
reader, a graph output, a bound computed at run time, opset 6's attribute bounds), native values
read by kernels that do not take them (pooling, a Loop body's capture), Add of a native and a
row-major value, residual blocks. Each graph's outputs must match onnxruntime-node within 1e-4
(relative to max(1, |x|)) and not be all zero; the same graphs run with AMANDA_NO_FUSION=1 must
and with AMANDA_NO_DNNL=1 (the kernels' own loops) must match too.

  fusion_test.py AMANDA [--cases N]
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
TOL = 1e-4


class G:
    """A small ONNX graph under construction."""

    def __init__(self, rng, opset=13):
        self.rng, self.opset = rng, opset
        self.nodes, self.inits, self.outputs, self.n = [], [], [], 0

    def name(self, p):
        self.n += 1
        return f"{p}{self.n}"

    def const(self, arr):
        n = self.name("c")
        self.inits.append(numpy_helper.from_array(np.asarray(arr), n))
        return n

    def op(self, t, ins, **attrs):
        out = self.name(t.lower())
        self.nodes.append(helper.make_node(t, ins, [out], **attrs))
        return out

    def conv(self, x, cin, cout, k=3, stride=1, group=1, bias=True):
        w = self.const((self.rng.standard_normal((cout, cin // group, k, k)) / np.sqrt(cin * k * k / group)).astype(np.float32))
        ins = [x, w] + ([self.const(self.rng.standard_normal(cout).astype(np.float32) * 0.1)] if bias else [])
        return self.op("Conv", ins, kernel_shape=[k, k], strides=[stride, stride], pads=[k // 2] * 4, group=group)

    def clip(self, x, lo=0.0, hi=6.0):
        if self.opset < 11:
            return self.op("Clip", [x], min=lo, max=hi)
        return self.op("Clip", [x, self.const(np.float32(lo)), self.const(np.float32(hi))])

    def model(self, inputs, path):
        g = helper.make_graph(self.nodes, "g", [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs],
                              [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in self.outputs], self.inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", self.opset)])
        m.ir_version = 7
        m = onnx.shape_inference.infer_shapes(m)
        onnx.checker.check_model(m)
        onnx.save(m, path)


def case(kind, rng):
    """One graph of the given pattern; returns (G, inputs [(name, shape)])."""
    c = int(rng.choice([3, 8, 16, 20, 32, 48]))
    hw = int(rng.choice([7, 12, 17, 28]))
    opset = 13
    if kind == "clip_attr":
        opset = 6
    g = G(rng, opset)
    inputs = [("x", [1, c, hw, hw])]
    m = int(rng.choice([8, 16, 24, 40]))
    if kind == "relu_out":  # Conv -> Relu, the Relu a graph output
        g.outputs.append(g.op("Relu", [g.conv("x", c, m, stride=int(rng.integers(1, 3)))]))
    elif kind == "chain":  # Conv+Clip -> depthwise Conv+Clip -> Conv 1x1 -> Add (residual) -> Relu -> Conv
        a = g.clip(g.conv("x", c, m, k=1))
        b = g.clip(g.conv(a, m, m, group=m))
        p = g.conv(b, m, m, k=1)
        r = g.op("Relu", [g.op("Add", [p, a])])
        g.outputs.append(g.conv(r, m, 8))
    elif kind == "two_readers":  # the Conv has two readers: no fusion, its own value is kept
        a = g.conv("x", c, m)
        g.outputs += [g.op("Relu", [a]), g.op("Add", [a, a])]
    elif kind == "act_also_output":  # the activation feeds a Conv and is a graph output
        a = g.op("Relu", [g.conv("x", c, m)])
        g.outputs += [a, g.conv(a, m, 8)]
    elif kind == "runtime_bound":  # Clip's max is a graph input, known only at run time
        inputs.append(("hi", []))
        a = g.conv("x", c, m)
        g.outputs.append(g.conv(g.op("Clip", [a, g.const(np.float32(-0.5)), "hi"]), m, 8))
    elif kind == "leaky_pool":  # LeakyRelu fused, then a reader without native layouts (MaxPool)
        a = g.op("LeakyRelu", [g.conv("x", c, m)], alpha=0.2)
        g.outputs.append(g.op("MaxPool", [a], kernel_shape=[2, 2], strides=[2, 2]))
    elif kind == "clip_attr":  # opset 6: Clip's bounds are attributes
        a = g.clip(g.conv("x", c, m), -0.3, 0.4)
        g.outputs.append(g.op("GlobalAveragePool", [g.conv(a, m, m, group=m)]))
    elif kind == "mixed_add":  # Add of a Conv's output and a graph input (row-major), then a Conv
        inputs.append(("y", [1, m, hw, hw]))
        s = g.op("Add", [g.conv("x", c, m), "y"])
        g.outputs.append(g.conv(g.op("Relu", [s]), m, 8))
    elif kind == "broadcast_add":  # Add of a Conv's output and a per-channel constant
        a = g.conv("x", c, m)
        s = g.op("Add", [a, g.const(rng.standard_normal((m, 1, 1)).astype(np.float32))])
        g.outputs.append(g.conv(s, m, 8))
    elif kind == "capture":  # a Conv's output read inside a Loop body (an outer-scope capture)
        a = g.op("Relu", [g.conv("x", c, m)])
        body = helper.make_graph(
            [helper.make_node("Add", [a, a], ["s"]), helper.make_node("Identity", ["cond_in"], ["cond_out"])], "body",
            [helper.make_tensor_value_info("i", TensorProto.INT64, []),
             helper.make_tensor_value_info("cond_in", TensorProto.BOOL, [])],
            [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
             helper.make_tensor_value_info("s", TensorProto.FLOAT, None)])
        out = g.name("loop")
        g.nodes.append(helper.make_node("Loop", [g.const(np.int64(2)), g.const(np.bool_(True))], [out], body=body))
        g.outputs.append(out)
        g.outputs.append(g.conv(a, m, 8))
    else:
        raise ValueError(kind)
    return g, inputs


# How each graph is run: as users run it; without fusion; without oneDNN (the fused activation is
# then applied by the kernel's own loop).
MODES = {"default": {}, "no fusion": {"AMANDA_NO_FUSION": "1"}, "no oneDNN": {"AMANDA_NO_DNNL": "1"}}

KINDS = ["relu_out", "chain", "two_readers", "act_also_output", "runtime_bound", "leaky_pool", "clip_attr", "mixed_add",
         "broadcast_add", "capture"]


def main():
    amanda = sys.argv[1]
    n = int(sys.argv[sys.argv.index("--cases") + 1]) if "--cases" in sys.argv else 4
    modules = os.environ.get("AMANDA_ORT_NODE_MODULES", os.path.join(HERE, "..", "js", "node_modules"))
    rng = np.random.default_rng(7)
    fails, checked = [], 0
    with tempfile.TemporaryDirectory() as d:
        jobs, cases = [], []
        for kind in KINDS:
            for i in range(n):
                g, inputs = case(kind, rng)
                path = os.path.join(d, f"{kind}_{i}.onnx")
                g.model(inputs, path)
                feeds = {}
                for name, shape in inputs:
                    v = (rng.standard_normal(shape) if shape else np.float32(rng.uniform(0.2, 1.0))).astype(np.float32)
                    np.save(os.path.join(d, f"{kind}_{i}_{name}.npy"), v)
                    v.tofile(os.path.join(d, f"{kind}_{i}_{name}.bin"))
                    feeds[name] = {"file": os.path.join(d, f"{kind}_{i}_{name}.bin"), "shape": shape}
                jobs.append({"model": path, "inputs": feeds, "out": os.path.join(d, f"ort_{kind}_{i}")})
                cases.append((kind, i, path, [name for name, _ in inputs]))
        json.dump(jobs, open(os.path.join(d, "jobs.json"), "w"))
        subprocess.run(["node", os.path.join(HERE, "..", "js", "ort_run.js"), os.path.join(d, "jobs.json")], check=True,
                       env=dict(os.environ, NODE_PATH=modules), timeout=600)
        for kind, i, path, names in cases:
            meta = json.load(open(os.path.join(d, f"ort_{kind}_{i}.json")))
            if "error" in meta:
                fails.append(f"{kind}_{i}: onnxruntime failed: {meta['error']}")
                continue
            results = {}
            for fusion in MODES:
                out = os.path.join(d, f"ours_{kind}_{i}_{fusion}")
                args = [amanda, "run", path, "-o", out, "-q"]
                for name in names:
                    args += ["--input", f"{name}={d}/{kind}_{i}_{name}.npy"]
                env = dict(os.environ, **MODES[fusion])
                p = subprocess.run(args, capture_output=True, text=True, timeout=300, env=env)
                if p.returncode != 0:
                    fails.append(f"{kind}_{i} ({fusion}): amanda run failed: {p.stderr[-400:]}")
                    break
                listing = json.load(open(os.path.join(out, "outputs.json")))["outputs"]
                results[fusion] = [np.load(os.path.join(out, o["files"][0])) for o in listing]
            if len(results) != len(MODES):
                continue
            for k, o in enumerate(meta["outputs"]):
                ref = np.fromfile(os.path.join(d, f"ort_{kind}_{i}.{k}.bin"), dtype=np.float32).reshape(o["shape"])
                scale = max(1.0, float(np.abs(ref).max()))
                for fusion in MODES:
                    ours = results[fusion][k]
                    diff = float(np.abs(ours.astype(np.float64) - ref).max()) if ours.shape == ref.shape else float("inf")
                    checked += 1
                    if not (diff <= TOL * scale) or not np.abs(ref).max() > 0:
                        fails.append(f"{kind}_{i} output {k} ({fusion}): max abs diff {diff:.3g}, shapes "
                                     f"{ours.shape} {ref.shape}, max |ref| {np.abs(ref).max():.3g}")
    print(f"fusion and native layouts: {len(cases)} graphs, {checked} outputs compared with onnxruntime-node, "
          f"{len(fails)} failures")
    for f in fails:
        print("FAIL", f)
    sys.exit(1 if fails or checked == 0 else 0)


if __name__ == "__main__":
    main()
