#!/usr/bin/python3
"""ONNX -> PyTorch with list arguments fed as tensors (issue 29): the shape of a Reshape, the axes of
Unsqueeze / Squeeze / ReduceSum, the shape of Expand / ConstantOfShape, Tile's repeats, Pad's pads,
Slice's bounds, axes and steps, Resize's scales and sizes are graph inputs here, so the .pt must
read them when it runs (tables/pytorch/onnx_13_pytorch_1.13_run_time_lists.yaml). Generated
one-op models with random values (negative axes, 0 and -1 in shapes, negative steps, bounds out of
range, crops, every Resize mode but cubic tf_crop_and_resize), converted with `amanda convert M.onnx -o M.pt`, run by
torch.jit.load and compared with onnxruntime on the same inputs within 1e-5 relative to
max(1, |x|), integers exactly (tests/pytorch_export/case_runner.py). The lists are graph
inputs, so nothing can fold them into the .pt: it computes with the values it is given.

    run_time_lists_test.py AMANDA [--seed S] [--cases N]     (N per family; CI runs a few)
"""
import argparse
import os
import sys

import numpy as np
from onnx import TensorProto, helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from case_runner import run_cases  # noqa: E402
from op_cases_test import model  # noqa: E402

I64 = np.int64


def randn(rng, shape):
    return rng.standard_normal(shape).astype(np.float32)


def typed(m, outputs_elem):
    for o, e in zip(m.graph.output, outputs_elem):
        o.type.tensor_type.elem_type = e
    return m


def reshape_cases(rng, n):
    out = []
    for k in range(n):
        dims = [int(rng.integers(1, 5)) for _ in range(int(rng.integers(1, 5)))]
        x = randn(rng, dims)
        total = int(np.prod(dims))
        # a target: the factors regrouped, then a 0 (copy) where the index exists and a -1
        factors = [f for d in dims for f in ([d] if d < 4 else [2, d // 2] if d % 2 == 0 else [d])]
        rng.shuffle(factors)
        target = factors if factors else [1]
        if k % 3 == 0 and len(target) <= len(dims) and target[0] == dims[0]:
            target = [0] + target[1:]
        if k % 2 == 1:
            target[int(rng.integers(0, len(target)))] = -1
        assert int(np.prod([dims[i] if v == 0 else v for i, v in enumerate(target) if v != -1])) <= total
        m = model([helper.make_node("Reshape", ["x", "s"], ["y"])], {"x": x, "s": np.array(target, I64)}, ["y"], 13)
        out.append((f"reshape_{k}_{dims}_{target}", m, {"x": x, "s": np.array(target, I64)}, None))
    return out


def unsqueeze_cases(rng, n):
    out = []
    for k in range(n):
        dims = [int(rng.integers(1, 4)) for _ in range(int(rng.integers(0, 4)))]
        na = int(rng.integers(1, 4))
        r = len(dims) + na
        axes = [int(a) for a in rng.choice(r, size=na, replace=False)]
        axes = [a - r if rng.random() < 0.5 else a for a in axes]
        x = randn(rng, dims)
        a = np.array(axes, I64)
        m = model([helper.make_node("Unsqueeze", ["x", "a"], ["y"])], {"x": x, "a": a}, ["y"], 13)
        out.append((f"unsqueeze_{k}_{dims}_{axes}", m, {"x": x, "a": a}, None))
    return out


def squeeze_cases(rng, n):
    out = []
    for k in range(n):
        dims = [int(rng.choice([1, 2, 3])) for _ in range(int(rng.integers(1, 5)))]
        dims[int(rng.integers(0, len(dims)))] = 1
        ones = [i for i, d in enumerate(dims) if d == 1]
        pick = [int(i) for i in rng.choice(ones, size=int(rng.integers(1, len(ones) + 1)), replace=False)]
        axes = [i - len(dims) if rng.random() < 0.5 else i for i in pick]
        x = randn(rng, dims)
        a = np.array(axes, I64)
        m = model([helper.make_node("Squeeze", ["x", "a"], ["y"])], {"x": x, "a": a}, ["y"], 13)
        out.append((f"squeeze_{k}_{dims}_{axes}", m, {"x": x, "a": a}, None))
    return out


def reduce_sum_cases(rng, n):
    out = []
    for k in range(n):
        dims = [int(rng.integers(1, 4)) for _ in range(int(rng.integers(1, 5)))]
        r = len(dims)
        na = int(rng.integers(0, r + 1))
        axes = [int(a) for a in rng.choice(r, size=na, replace=False)]
        axes = [a - r if rng.random() < 0.5 else a for a in axes]
        kd, noop = int(k % 2), int((k // 2) % 2)
        x = randn(rng, dims) if k % 5 else rng.integers(-9, 9, dims).astype(np.int32)
        a = np.array(axes, I64)
        m = model([helper.make_node("ReduceSum", ["x", "a"], ["y"], keepdims=kd, noop_with_empty_axes=noop)], {"x": x, "a": a}, ["y"], 13)
        out.append((f"reduce_sum_{k}_{dims}_{axes}_kd{kd}_noop{noop}", m, {"x": x, "a": a}, None))
    return out


def expand_tile_cos_cases(rng, n):
    out = []
    for k in range(n):
        dims = [int(rng.choice([1, 2, 3])) for _ in range(int(rng.integers(1, 4)))]
        x = randn(rng, dims)
        # Expand: a shape broadcastable with x both ways (a 1 keeps x's size), maybe longer
        shape = [int(rng.choice([1, d, 2 if d == 1 else d])) for d in dims]
        shape = [int(rng.integers(1, 3)) for _ in range(int(rng.integers(0, 2)))] + shape
        s = np.array(shape, I64)
        m = model([helper.make_node("Expand", ["x", "s"], ["y"])], {"x": x, "s": s}, ["y"], 13)
        out.append((f"expand_{k}_{dims}_{shape}", m, {"x": x, "s": s}, None))
        rep = np.array([int(rng.integers(1, 4)) for _ in dims], I64)
        m = model([helper.make_node("Tile", ["x", "r"], ["y"])], {"x": x, "r": rep}, ["y"], 13)
        out.append((f"tile_{k}_{dims}_{rep.tolist()}", m, {"x": x, "r": rep}, None))
        cs = np.array([int(rng.integers(0, 4)) for _ in range(int(rng.integers(1, 4)))], I64)
        val = np.array([rng.standard_normal()], np.float32) if k % 2 else np.array([int(rng.integers(-5, 5))], np.int64)
        m = model([helper.make_node("ConstantOfShape", ["s"], ["y"], value=helper.make_tensor("v", TensorProto.FLOAT if k % 2 else TensorProto.INT64, [1], val.tolist()))],
                  {"s": cs}, ["y"], 13)
        typed(m, [TensorProto.FLOAT if k % 2 else TensorProto.INT64])
        out.append((f"constant_of_shape_{k}_{cs.tolist()}_{val.tolist()}", m, {"s": cs}, None))
    return out


def pad_cases(rng, n):
    out = []
    for k in range(n):
        mode = ["constant", "edge", "reflect"][k % 3]
        dims = [int(rng.integers(2, 5)) for _ in range(int(rng.integers(1, 5)))]
        r = len(dims)
        if mode == "constant":  # crops too (negative pads)
            pads = [int(rng.integers(-1, 3)) for _ in range(2 * r)]
        elif mode == "edge":
            pads = [int(rng.integers(0, 4)) for _ in range(2 * r)]
        else:  # reflect: each pad below the axis' size
            pads = [int(rng.integers(0, dims[i % r])) for i in range(2 * r)]
        x = randn(rng, dims)
        p = np.array(pads, I64)
        ins = {"x": x, "p": p}
        names = ["x", "p"]
        if mode == "constant" and k % 2 == 0:
            ins["v"] = np.array(rng.standard_normal(), np.float32)
            names.append("v")
        m = model([helper.make_node("Pad", names, ["y"], mode=mode)], ins, ["y"], 13)
        out.append((f"pad_{mode}_{k}_{dims}_{pads}", m, ins, None))
    return out


def slice_cases(rng, n):
    out = []
    for k in range(n):
        dims = [int(rng.integers(1, 7)) for _ in range(int(rng.integers(1, 4)))]
        r = len(dims)
        na = int(rng.integers(1, r + 1))
        axes = [int(a) for a in rng.choice(r, size=na, replace=False)]
        starts, ends, steps = [], [], []
        for a in axes:
            d = dims[a]
            st = int(rng.choice([1, 1, 2, -1, -2, 3]))
            b = int(rng.integers(-d - 2, d + 3))
            e = int(rng.choice([int(rng.integers(-d - 2, d + 3)), 2**62, -2**62]))
            starts.append(b), ends.append(e), steps.append(st)
        x = randn(rng, dims)
        ins = {"x": x, "b": np.array(starts, I64), "e": np.array(ends, I64)}
        names = ["x", "b", "e"]
        form = k % 3  # 0: axes and steps, 1: axes, 2: neither (axes 0.., steps 1)
        if form == 2:
            axes = list(range(na))
            steps = [1] * na
        if form <= 1:
            ins["a"] = np.array([a - r if rng.random() < 0.5 else a for a in axes], I64)
            names.append("a")
        if form == 0:
            ins["k"] = np.array(steps, I64)
            names.append("k")
        m = model([helper.make_node("Slice", names, ["y"])], ins, ["y"], 13)
        out.append((f"slice_{k}_{dims}_b{starts}_e{ends}_a{axes}_k{steps}_form{form}", m, ins, None))
    return out


RESIZE = [  # (mode, coordinate_transformation_mode, nearest_mode, extra attributes)
    ("nearest", "half_pixel", "round_prefer_floor", {}), ("nearest", "half_pixel", "round_prefer_ceil", {}),
    ("nearest", "asymmetric", "floor", {}), ("nearest", "align_corners", "ceil", {}),
    ("nearest", "tf_half_pixel_for_nn", "round_prefer_floor", {}), ("nearest", "pytorch_half_pixel", "round_prefer_ceil", {}),
    ("linear", "half_pixel", None, {}), ("linear", "align_corners", None, {}), ("linear", "asymmetric", None, {}),
    ("linear", "pytorch_half_pixel", None, {}),
    ("cubic", "half_pixel", None, {}), ("cubic", "align_corners", None, {}), ("cubic", "asymmetric", None, {}),
    ("cubic", "half_pixel", None, {"cubic_coeff_a": -0.5, "exclude_outside": 1}),
    ("cubic", "pytorch_half_pixel", None, {"cubic_coeff_a": -0.5}),
    ("linear", "tf_crop_and_resize", None, {"extrapolation_value": 10.0}),
    ("nearest", "tf_crop_and_resize", "round_prefer_ceil", {"extrapolation_value": -3.0}),
]


def resize_cases(rng, n):
    out = []
    for k in range(n):
        mode, ctm, nm, extra = RESIZE[k % len(RESIZE)]
        sp = 2 if mode != "nearest" else int(rng.choice([1, 2, 3]))  # onnxruntime: linear and cubic of 4-D only
        dims = [int(rng.integers(1, 3)), int(rng.integers(1, 3))] + [int(rng.integers(2, 6)) for _ in range(sp)]
        x = randn(rng, dims)
        attrs = dict(mode=mode, coordinate_transformation_mode=ctm, **extra)
        if nm:
            attrs["nearest_mode"] = nm
        roi = np.zeros(0, np.float32)
        if ctm == "tf_crop_and_resize":  # a box per spatial axis, partly outside the input too
            box = rng.uniform(-0.3, 1.3, size=(2, sp))
            roi = np.array([0.0, 0.0] + list(box[0]) + [1.0, 1.0] + list(box[1]), np.float32)
        if k % 2 == 0:  # scales (up and down); outer scales 1 (what onnxruntime's linear and cubic take)
            sc = np.array([1.0, 1.0] + [float(rng.choice([0.5, 0.75, 1.5, 2.0, 3.0])) for _ in range(sp)], np.float32)
            if any(int(np.floor(d * s)) == 0 for d, s in zip(dims, sc)):
                sc[2:] = 2.0
            ins = {"x": x, "roi": roi, "s": sc}
            names = ["x", "roi", "s"]
        else:
            sz = np.array(dims[:2] + [int(rng.integers(1, 9)) for _ in range(sp)], I64)
            ins = {"x": x, "roi": roi, "z": sz}
            names = ["x", "roi", "", "z"]
        m = model([helper.make_node("Resize", names, ["y"], **attrs)], ins, ["y"], 13)
        out.append((f"resize_{mode}_{ctm}_{nm}_{extra}_{k}_{dims}_{ins.get('s', ins.get('z')).tolist()}", m, ins, None))
    return out


def refused_cases():
    x = np.zeros((1, 1, 3, 3), np.float32)  # cubic tf_crop_and_resize is not written
    ins = {"x": x, "roi": np.array([0, 0, 0, 0, 1, 1, 1, 1], np.float32), "s": np.array([1, 1, 2, 2], np.float32)}
    m = model([helper.make_node("Resize", ["x", "roi", "s"], ["y"], mode="cubic", coordinate_transformation_mode="tf_crop_and_resize")], ins, ["y"], 13)
    return [("resize_cubic_tf_crop_and_resize_run_time", m, "Resize")]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("amanda")
    ap.add_argument("--seed", type=int, default=29)
    ap.add_argument("--cases", type=int, default=24, help="cases per family")
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)
    n = a.cases
    cases = (reshape_cases(rng, n) + unsqueeze_cases(rng, n) + squeeze_cases(rng, n) + reduce_sum_cases(rng, n)
             + expand_tile_cos_cases(rng, n) + pad_cases(rng, n) + slice_cases(rng, n) + resize_cases(rng, 2 * n))
    return run_cases(a.amanda, cases, refused_cases(), label="run-time list cases")


if __name__ == "__main__":
    sys.exit(main())
