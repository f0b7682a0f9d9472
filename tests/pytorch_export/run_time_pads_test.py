#!/usr/bin/python3
"""ONNX Conv with auto_pad SAME_UPPER / SAME_LOWER on inputs whose spatial sizes are symbolic ->
TorchScript (issue 29, tables/pytorch/onnx_13_pytorch_1.13_run_time_pads.yaml): the padding is
computed when the model runs. Generated one-op models (1-3 spatial axes, kernels 1-5, strides 1-3 (dilation 1:
onnxruntime refuses others with SAME), groups, with and without bias), each run at two input sizes (odd and even, smaller
than the kernel's reach too) by torch.jit.load and onnxruntime (tests/js/ort_run_typed.js) on the
same inputs, within 1e-5 relative to max(1, |x|).

    run_time_pads_test.py AMANDA [--seed S] [--cases N]
"""
import argparse
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from case_runner import run_cases  # noqa: E402


def cases(rng, count):
    out = []
    for k in range(count):
        r = 1 + k % 3
        mode = ["SAME_UPPER", "SAME_LOWER"][(k // 3) % 2]
        group = [1, 2][(k // 6) % 2]
        cin, cout = 2 * group, 2 * group
        ks = [int(v) for v in rng.integers(1, 6, r)]
        st = [int(v) for v in rng.integers(1, 4, r)]
        dl = [1] * r  # (onnxruntime refuses dilations with auto_pad SAME)
        w = rng.standard_normal([cout, cin // group] + ks).astype(np.float32)
        inits = [numpy_helper.from_array(w, "w")]
        names = ["x", "w"]
        if k % 2:
            inits.append(numpy_helper.from_array(rng.standard_normal(cout).astype(np.float32), "b"))
            names.append("b")
        attrs = {"auto_pad": mode, "strides": st, "group": group}
        if any(v != 1 for v in dl):
            attrs["dilations"] = dl
        node = helper.make_node("Conv", names, ["y"], **attrs)
        dims = ["N", "C"][:1] + [cin] + [f"s{i}" for i in range(r)]
        g = helper.make_graph([node], "conv", [helper.make_tensor_value_info("x", TensorProto.FLOAT, dims)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
        m.ir_version = 8
        for size in ([int(v) for v in rng.integers(1, 4, r)], [int(v) for v in rng.integers(5, 12, r)]):
            x = rng.standard_normal([1 + k % 2, cin] + size).astype(np.float32)
            out.append((f"conv{k}_{mode}_r{r}_k{ks}_s{st}_d{dl}_g{group}_x{size}", m, {"x": x}, None))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("amanda")
    ap.add_argument("--seed", type=int, default=29)
    ap.add_argument("--cases", type=int, default=24)
    a = ap.parse_args()
    return run_cases(a.amanda, cases(np.random.default_rng(a.seed), a.cases), [], label="Conv SAME with run-time sizes")


if __name__ == "__main__":
    sys.exit(main())
