#!/usr/bin/python3
"""Per-op cases for the ONNX -> PyTorch rules that TF / TF.js models and torchvision's swin needed
(issue 29): Resize linear with coordinate_transformation_mode asymmetric (TF's ResizeBilinear),
TopK, GatherND, Slice of several axes, Dropout with ratio 0 in training mode. Generated one-op
models, converted with `amanda convert M.onnx -o M.pt`, run by torch.jit.load and compared with
onnxruntime (tests/js/ort_run_typed.js) on the same inputs, and with a reference computed here in
numpy / torch (float64 where it computes), within 1e-5 relative to max(1, |x|); integers exactly.

    model_op_cases_test.py AMANDA [--seed S] [--cases-per-op N]
"""
import argparse
import os
import sys

import numpy as np
import torch
from onnx import TensorProto, helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from case_runner import run_cases  # noqa: E402  (convert, run in torch and onnxruntime, compare)
from op_cases_test import model  # noqa: E402  (the same model maker)


def linear_asymmetric(x, out, scales):
    """ONNX Resize linear, asymmetric: x_original = i / scale, clamped to [0, L - 1], per axis (float64)."""
    y = x.astype(np.float64)
    for a, (o, s) in enumerate(zip(out, scales)):
        ax = 2 + a
        n = y.shape[ax]
        src = np.clip(np.arange(o) / s, 0, n - 1)
        lo = np.floor(src).astype(int)
        hi = np.minimum(lo + 1, n - 1)
        f = (src - lo).reshape([-1 if k == ax else 1 for k in range(y.ndim)])
        y = np.take(y, lo, axis=ax) * (1 - f) + np.take(y, hi, axis=ax) * f
    return y


def resize_cases(rng, n):
    cases = []
    for k in range(n):
        r = 1 + k % 3
        shape = [int(rng.integers(1, 3)), int(rng.integers(1, 4))] + [int(rng.integers(2, 7)) for _ in range(r)]
        x = rng.standard_normal(shape).astype(np.float32)
        if k % 2 == 0:  # scales (up and down, not integers too)
            f = [float(rng.choice([0.5, 0.75, 1.5, 2, 3])) for _ in range(r)]
            out = [int(np.floor(d * q)) for d, q in zip(shape[2:], f)]
            inits = [("roi", np.zeros(0, np.float32)), ("scales", np.array([1, 1] + f, np.float32))]
            names = ["x", "roi", "scales"]
            sc = f
        else:  # sizes
            out = [int(rng.integers(1, 13)) for _ in shape[2:]]
            inits = [("roi", np.zeros(0, np.float32)), ("sizes", np.array(shape[:2] + out, np.int64))]
            names = ["x", "roi", "", "sizes"]
            sc = [np.float32(o) / np.float32(d) for o, d in zip(out, shape[2:])]
        if 0 in out:
            continue
        m = model([helper.make_node("Resize", names, ["y"], mode="linear", coordinate_transformation_mode="asymmetric")], {"x": x}, ["y"], 13, inits)
        cases.append((f"resize_linear_asymmetric_{k}_{shape}_{inits[-1][1].tolist()}", m, {"x": x}, [linear_asymmetric(x, out, sc)]))
    return cases


def topk_cases(rng, n):
    cases = []
    for k in range(n):
        rank = int(rng.integers(1, 4))
        shape = [int(rng.integers(1, 6)) for _ in range(rank)]
        axis = int(rng.integers(-rank, rank))
        kk = int(rng.integers(1, shape[axis] + 1))
        largest = int(k % 2)
        x = rng.permutation(np.prod(shape)).reshape(shape).astype(np.float32) * 0.5 - 3  # no ties
        m = model([helper.make_node("TopK", ["x", "k"], ["v", "i"], axis=axis, largest=largest)], {"x": x}, ["v", "i"], 13,
                  [("k", np.array([kk], np.int64))])
        m.graph.output[1].type.tensor_type.elem_type = TensorProto.INT64
        v, i = torch.topk(torch.from_numpy(x), kk, axis, bool(largest), True)
        cases.append((f"topk_{k}_{shape}_axis{axis}_k{kk}_largest{largest}", m, {"x": x}, [v.numpy(), i.numpy()]))
    return cases


def gather_nd_cases(rng, n):
    cases = []
    for k in range(n):
        rank = int(rng.integers(1, 5))
        shape = [int(rng.integers(1, 5)) for _ in range(rank)]
        mlen = int(rng.integers(1, rank + 1))
        ishape = [int(rng.integers(1, 4)) for _ in range(int(rng.integers(0, 3)))] + [mlen]
        idx = np.stack([rng.integers(-d, d, size=ishape[:-1]) for d in shape[:mlen]], axis=-1).astype(np.int64)
        x = rng.standard_normal(shape).astype(np.float32)
        flat = idx.reshape(-1, mlen)
        want = np.stack([x[tuple(int(v) for v in row)] for row in flat]).reshape(ishape[:-1] + shape[mlen:])
        ins = {"x": x, "i": idx}
        m = model([helper.make_node("GatherND", ["x", "i"], ["y"])], ins, ["y"], 13)
        cases.append((f"gather_nd_{k}_{shape}_{list(idx.shape)}", m, ins, [want]))
    return cases


def slice_cases(rng, n):
    cases = []
    for k in range(n):
        rank = int(rng.integers(2, 5))
        shape = [int(rng.integers(1, 7)) for _ in range(rank)]
        na = int(rng.integers(2, rank + 1))
        axes = [int(a) for a in rng.permutation(rank)[:na]]
        axes = [a - rank if rng.random() < 0.3 else a for a in axes]
        starts = [int(rng.integers(-shape[a], shape[a])) for a in axes]
        ends = [int(rng.choice([rng.integers(-shape[a], shape[a] + 1), 2**63 - 1])) for a in axes]
        steps = [int(rng.integers(1, 3)) for _ in axes]
        x = rng.standard_normal(shape).astype(np.float32)
        sl = [slice(None)] * rank
        for a, b, e, s in zip(axes, starts, ends, steps):
            sl[a] = slice(b, e, s)
        want = x[tuple(sl)]
        inits = [("b", np.array(starts, np.int64)), ("e", np.array(ends, np.int64))]
        names = ["x", "b", "e"]
        if k % 3 != 0:  # (k % 3 == 0: no axes input: axes 0..na-1)
            inits += [("a", np.array(axes, np.int64)), ("s", np.array(steps, np.int64))]
            names += ["a", "s"]
        else:
            sl = [slice(None)] * rank
            for a, (b, e) in enumerate(zip(starts, ends)):
                sl[a] = slice(b, e) if abs(b) < shape[a] or b == 0 else slice(None)
            starts = [min(max(b, -shape[a]), shape[a] - 1) for a, b in enumerate(starts)]
            inits[0] = ("b", np.array(starts, np.int64))
            sl = [slice(None)] * rank
            for a, (b, e) in enumerate(zip(starts, ends)):
                sl[a] = slice(b, e)
            want = x[tuple(sl)]
        if want.size == 0:
            continue
        m = model([helper.make_node("Slice", names, ["y"])], {"x": x}, ["y"], 13, inits)
        cases.append((f"slice_{k}_{shape}_{starts}_{ends}_{axes if k % 3 else ''}", m, {"x": x}, [want]))
    return cases


def dropout_cases(rng, n):
    cases = []
    for k in range(n):
        x = rng.standard_normal([int(rng.integers(1, 4)) for _ in range(int(rng.integers(1, 4)))]).astype(np.float32)
        mask = k % 2 == 0
        outs = ["y", "mask"] if mask else ["y"]
        m = model([helper.make_node("Dropout", ["x", "r", "t"], outs)], {"x": x}, outs, 13,
                  [("r", np.array(0.0, np.float32)), ("t", np.array(True))])
        if mask:
            m.graph.output[1].type.tensor_type.elem_type = TensorProto.BOOL
        cases.append((f"dropout_ratio0_training_{k}_{list(x.shape)}", m, {"x": x}, [x, np.ones(x.shape, bool)][:len(outs)]))
    return cases


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("amanda")
    ap.add_argument("--seed", type=int, default=31)
    ap.add_argument("--cases-per-op", type=int, default=24)
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)
    n = a.cases_per_op
    cases = resize_cases(rng, n) + topk_cases(rng, n) + gather_nd_cases(rng, n) + slice_cases(rng, n) + dropout_cases(rng, 4)
    return run_cases(a.amanda, cases, [], reference_is_ort=True, label="model op cases")

if __name__ == "__main__":
    sys.exit(main())
