#!/usr/bin/python3
"""Per-op cases for the ONNX -> PyTorch rules added in session 30 (issue 29): generated small models
of one op each, converted with `amanda convert M.onnx -o M.pt`, run by torch.jit.load and compared
with onnxruntime (tests/js/ort_run_typed.js) on the same inputs and with torch's own function for the
op (torch.split / torch.nn.functional.layer_norm), within 1e-5 relative to max(1, |x|); integer
results exactly.

    op_cases_test.py AMANDA [--seed S] [--cases-per-op N]

Ops: Split (sizes as a constant, sizes as a graph input, equal parts; every axis of ranks 1-4,
negative axes, zero-size parts) and LayerNormalization (opset 17: every axis of ranks 2-4, with and
without a bias, epsilons, the Mean/InvStdDev outputs). Cases that must be refused are checked to be
refused with the op named: Split with no sizes into uneven parts.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
JS = os.path.join(HERE, "..", "js")
TOL = 1e-5
NP_TYPE = {np.float32: TensorProto.FLOAT, np.int64: TensorProto.INT64}


def vi(name, arr):
    return helper.make_tensor_value_info(name, NP_TYPE[arr.dtype.type], list(arr.shape))


def model(nodes, inputs, outputs, opset, inits=()):
    g = helper.make_graph(nodes, "case", [vi(k, v) for k, v in inputs.items()],
                          [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outputs],
                          [numpy_helper.from_array(v, k) for k, v in inits])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def split_cases(rng, n):
    cases = []
    for k in range(n):
        rank = int(rng.integers(1, 5))
        shape = [int(rng.integers(1, 5)) for _ in range(rank)]
        axis = int(rng.integers(-rank, rank))
        d = int(rng.integers(2, 9))
        shape[axis] = d
        x = rng.standard_normal(shape).astype(np.float32)
        kind = ["const", "input", "equal"][k % 3]
        if kind == "equal":
            parts = int(rng.choice([p for p in range(1, d + 1) if d % p == 0]))
            sizes = [d // parts] * parts
        else:
            cuts = sorted(int(c) for c in rng.integers(0, d + 1, size=int(rng.integers(1, 4))))
            sizes = [b - a for a, b in zip([0] + cuts, cuts + [d])]  # zero-size parts included
        outs = [f"y{i}" for i in range(len(sizes))]
        attrs = {} if (axis == 0 and k % 2) else {"axis": axis}
        ax = attrs.get("axis", 0)
        want = [t.numpy() for t in torch.split(torch.from_numpy(x), sizes, dim=ax)]
        s = np.array(sizes, dtype=np.int64)
        if kind == "const":
            m = model([helper.make_node("Split", ["x", "s"], outs, **attrs)], {"x": x}, outs, 13, [("s", s)])
            ins = {"x": x}
        elif kind == "input":
            m = model([helper.make_node("Split", ["x", "s"], outs, **attrs)], {"x": x, "s": s}, outs, 13)
            ins = {"x": x, "s": s}
        else:
            m = model([helper.make_node("Split", ["x"], outs, **attrs)], {"x": x}, outs, 13)
            ins = {"x": x}
        cases.append((f"split_{kind}_{k}_{shape}_axis{ax}_{sizes}", m, ins, want))
    return cases


def layer_norm_cases(rng, n):
    cases = []
    for k in range(n):
        rank = int(rng.integers(2, 5))
        shape = [int(rng.integers(1, 6)) for _ in range(rank)]
        axis = int(rng.integers(-rank, rank))
        a = axis % rank
        eps = float(rng.choice([1e-5, 1e-3, 0.1]))
        x = (rng.standard_normal(shape) * 3 + 1).astype(np.float32)
        w = rng.standard_normal(shape[a:]).astype(np.float32)
        b = rng.standard_normal(shape[a:]).astype(np.float32)
        bias = k % 2 == 0
        stats = k % 3 == 0
        outs = ["y", "mean", "inv_std"] if stats else ["y"]
        ins = {"x": x, "w": w, **({"b": b} if bias else {})}
        node = helper.make_node("LayerNormalization", list(ins), outs, axis=axis, epsilon=eps)
        m = model([node], ins, outs, 17)
        tx = torch.from_numpy(x).double()
        want_y = torch.nn.functional.layer_norm(tx, shape[a:], torch.from_numpy(w).double(),
                                                torch.from_numpy(b).double() if bias else None, eps).float().numpy()
        want = [want_y]
        if stats:
            dims = list(range(a, rank))
            mean = tx.mean(dim=dims, keepdim=True)
            var = ((tx - mean) ** 2).mean(dim=dims, keepdim=True)
            want += [mean.float().numpy(), (1 / torch.sqrt(var + eps)).float().numpy()]
        cases.append((f"layer_norm_{k}_{shape}_axis{axis}_eps{eps}_bias{int(bias)}_stats{int(stats)}", m, ins, want))
    return cases


def refused_cases():
    x = np.zeros((2, 5), np.float32)
    m = model([helper.make_node("Split", ["x"], ["a", "b"], axis=1)], {"x": x}, ["a", "b"], 13)
    return [("split_uneven_without_sizes", m, "Split")]


def worst(got, want):
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape:
        return float("inf")
    if want.dtype.kind in "iub":
        return 0.0 if np.array_equal(got, want) else float("inf")
    if not want.size:
        return 0.0
    return float(np.max(np.abs(got.astype(np.float64) - want) / np.maximum(1.0, np.abs(want))))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("amanda")
    ap.add_argument("--seed", type=int, default=30)
    ap.add_argument("--cases-per-op", type=int, default=24)
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)
    cases = split_cases(rng, a.cases_per_op) + layer_norm_cases(rng, a.cases_per_op)
    failures = []
    with tempfile.TemporaryDirectory() as work:
        jobs, ready = [], []
        for i, (name, m, ins, want) in enumerate(cases):
            src = os.path.join(work, f"{i}.onnx")
            onnx.save(m, src)
            r = subprocess.run([a.amanda, "convert", src, "-o", os.path.join(work, f"{i}.pt")], capture_output=True, text=True)
            if r.returncode != 0:
                failures.append(f"{name}: refused: {r.stderr.strip().splitlines()[-3:]}")
                continue
            feeds = {}
            for k, v in ins.items():
                f = os.path.join(work, f"{i}.{k}.bin")
                v.tofile(f)
                feeds[k] = {"file": f, "shape": list(v.shape), "type": str(v.dtype)}
            jobs.append({"model": src, "inputs": feeds, "out": os.path.join(work, f"{i}.ort")})
            ready.append(i)
        path = os.path.join(work, "jobs.json")
        with open(path, "w") as f:
            json.dump(jobs, f)
        subprocess.run(["node", os.path.join(JS, "ort_run_typed.js"), path], check=True, cwd=JS)
        nonzero = False
        for i in ready:
            name, m, ins, want = cases[i]
            meta = json.load(open(os.path.join(work, f"{i}.ort.json")))
            if "error" in meta:
                failures.append(f"{name}: onnxruntime: {meta['error']}")
                continue
            ref = [np.fromfile(os.path.join(work, f"{i}.ort.{k}.bin"), dtype=np.dtype(o["type"] if o["type"] != "bool" else "bool")).reshape(o["shape"])
                   for k, o in enumerate(meta["outputs"])]
            with torch.no_grad():
                y = torch.jit.load(os.path.join(work, f"{i}.pt"))(*[torch.from_numpy(v) for v in ins.values()])
            ys = [t.numpy() for t in (y if isinstance(y, (tuple, list)) else [y])]
            if len(ys) != len(ref):
                failures.append(f"{name}: {len(ys)} outputs, onnxruntime has {len(ref)}")
                continue
            w_ort = max((worst(u, v) for u, v in zip(ys, ref)), default=0.0)
            w_torch = max((worst(u, v) for u, v in zip(ys, want)), default=0.0)
            nonzero |= any(v.size and np.abs(v).max() > 0 for v in ref)
            if w_ort > TOL or w_torch > TOL:
                failures.append(f"{name}: differs (onnxruntime {w_ort:.2e}, torch {w_torch:.2e})")
        for name, m, op in refused_cases():
            src = os.path.join(work, name + ".onnx")
            onnx.save(m, src)
            r = subprocess.run([a.amanda, "convert", src, "-o", os.path.join(work, name + ".pt")], capture_output=True, text=True)
            if r.returncode == 0 or op not in r.stderr + r.stdout:
                failures.append(f"{name}: expected a refusal naming {op}, got exit {r.returncode}")
    for f in failures:
        print("FAIL", f)
    assert nonzero, "every onnxruntime output is zero: the comparison checks nothing"
    print(f"op cases: {len(cases)} generated, {len(cases) - len([f for f in failures if not f.startswith('split_uneven')])} match "
          f"onnxruntime and torch within {TOL}; {len(refused_cases())} refusal case(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
