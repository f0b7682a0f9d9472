"""The comparison of generated one-op (or few-op) models for the ONNX -> PyTorch tests: convert with
`amanda convert M.onnx -o M.pt`, run the .pt in torch.jit.load and the model in onnxruntime
(tests/js/ort_run_typed.js, one node process for all), compare within 1e-5 relative to max(1, |x|)
(integers and bools exactly). Used by control_cases_test.py, model_op_cases_test.py and op_cases_test.py."""
import json
import os
import subprocess
import tempfile

import numpy as np
import onnx
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
JS = os.path.join(HERE, "..", "js")
TOL = 1e-5


def worst(got, want):
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape:
        return float("inf")
    if want.dtype.kind in "iub":
        return 0.0 if np.array_equal(got, want) else float("inf")
    if not want.size:
        return 0.0
    return float(np.max(np.abs(got.astype(np.float64) - want) / np.maximum(1.0, np.abs(want))))


def to_torch(v):
    return [to_torch(e) for e in v] if isinstance(v, list) else torch.from_numpy(v)


def run_cases(amanda, cases, refused, reference_is_ort=False, label="op cases"):
    """Converts each case (name, model, inputs, torch's expected outputs or None), runs the .pt in
    torch and the model in onnxruntime, and compares; `refused` cases must be refused naming the op.
    reference_is_ort: the expected outputs are a reference of onnxruntime's meaning (numpy), so they
    must also match onnxruntime's, and there must be as many."""
    failures = []
    with tempfile.TemporaryDirectory() as work:
        jobs, ready = [], []
        for i, (name, m, ins, want) in enumerate(cases):
            src = os.path.join(work, f"{i}.onnx")
            onnx.save(m, src)
            r = subprocess.run([amanda, "convert", src, "-o", os.path.join(work, f"{i}.pt")], capture_output=True, text=True)
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
                y = torch.jit.load(os.path.join(work, f"{i}.pt"))(*[to_torch(v) for v in ins.values()])
            ys = [t.numpy() for t in (y if isinstance(y, (tuple, list)) else [y])]
            if len(ys) != len(ref) or (reference_is_ort and len(ys) != len(want)):
                failures.append(f"{name}: {len(ys)} outputs, onnxruntime has {len(ref)}"
                                + (f", the reference {len(want)}" if reference_is_ort else ""))
                continue
            w_ort = max((worst(u, v) for u, v in zip(ys, ref)), default=0.0)
            w_torch = max((worst(u, v) for u, v in zip(ys, want)), default=0.0) if want is not None else 0.0
            # the reference against onnxruntime's outputs (it claims to be onnxruntime's meaning)
            w_ort_ref = max((worst(v, u) for u, v in zip(want, ref)), default=0.0) if reference_is_ort else 0.0
            nonzero |= any(v.size and np.abs(v).max() > 0 for v in ref)
            if w_ort > TOL or w_torch > TOL or w_ort_ref > TOL:
                failures.append(f"{name}: differs (onnxruntime {w_ort:.2e}, reference {w_torch:.2e}"
                                + (f", onnxruntime vs reference {w_ort_ref:.2e})" if reference_is_ort else ")"))
        for name, m, op in refused:
            src = os.path.join(work, name + ".onnx")
            onnx.save(m, src)
            r = subprocess.run([amanda, "convert", src, "-o", os.path.join(work, name + ".pt")], capture_output=True, text=True)
            if r.returncode == 0 or op not in r.stderr + r.stdout:
                failures.append(f"{name}: expected a refusal naming {op}, got exit {r.returncode}")
    for f in failures:
        print("FAIL", f)
    assert nonzero, "every onnxruntime output is zero: the comparison checks nothing"
    print(f"{label}: {len(cases)} generated, {len(cases) - len([f for f in failures if not f.startswith(tuple(n for n, _, _ in refused))])} match "
          f"onnxruntime and torch within {TOL}; {len(refused)} refusal case(s)")
    return 1 if failures else 0
