#!/usr/bin/python3
"""DFT (opset 17) converted to older opsets, where it is a product with a matrix of sines and
cosines (src/frameworks/onnx/functions.cpp, lowerings/dft.cpp): many generated cases (rank 3 to 5, every
signal axis, real and complex input, forward and inverse, onesided, dft_length absent, longer than
the signal (zero padding) and shorter (truncation), float and double), each converted to opsets 16,
13 and 9, run in onnxruntime-node and compared with numpy's FFT in float64 (1e-5 relative to
max(1, |x|)) and with onnxruntime's run of the opset-17 original. Refusals are checked too: a
dft_length computed at run time and an onesided complex input are refused naming the reason.

  dft_lowering_test.py AMANDA
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
TOL = 1e-5
TARGETS = [16, 13, 9]


def reference(x, axis, inverse, onesided, n):
    """numpy's DFT of an ONNX DFT input ([..., 1 or 2]) in float64, as an ONNX DFT output."""
    axis %= x.ndim  # ONNX counts a negative axis on the input, whose last dimension is re/im
    sig = x[..., 0].astype(np.float64) + (1j * x[..., 1].astype(np.float64) if x.shape[-1] == 2 else 0)
    y = (np.fft.ifft if inverse else np.fft.fft)(sig, n=n, axis=axis)
    if onesided:
        y = np.take(y, np.arange(n // 2 + 1), axis=axis)
    return np.stack([y.real, y.imag], -1)


def make(path, shape, elem, axis, inverse, onesided, n_const, n_runtime=False):
    inputs = [helper.make_tensor_value_info("x", elem, shape)]
    ins, inits = ["x"], []
    if n_runtime:
        inputs.append(helper.make_tensor_value_info("n", TensorProto.INT64, []))
        ins.append("n")
    elif n_const is not None:
        inits.append(numpy_helper.from_array(np.array(n_const, dtype=np.int64), "n"))
        ins.append("n")
    node = helper.make_node("DFT", ins, ["y"], axis=axis, inverse=inverse, onesided=onesided)
    g = helper.make_graph([node], "dft", inputs, [helper.make_tensor_value_info("y", elem, None)], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.save(m, path)


def main():
    amanda = sys.argv[1]
    modules = os.environ.get("AMANDA_ORT_NODE_MODULES", os.path.join(HERE, "..", "js", "node_modules"))
    rng = np.random.default_rng(17)
    fails, compared, cases = [], 0, []
    with tempfile.TemporaryDirectory() as d:
        jobs = []
        for i in range(24):
            rank = int(rng.integers(3, 6))
            shape = [int(rng.integers(1, 3))] + [int(rng.integers(2, 9)) for _ in range(rank - 2)]
            c = int(rng.integers(1, 3))
            shape.append(c)
            axis = int(rng.integers(1, rank - 1))
            if rng.random() < 0.3:
                axis -= rank  # negative axes
            inverse = int(rng.random() < 0.4)
            onesided = int(c == 1 and rng.random() < 0.4)
            length = shape[axis]
            n_const = [None, length + int(rng.integers(1, 4)), max(1, length - int(rng.integers(1, 3)))][i % 3]
            elem, npt = (TensorProto.DOUBLE, np.float64) if i % 4 == 3 else (TensorProto.FLOAT, np.float32)
            path = os.path.join(d, f"dft{i}.onnx")
            make(path, shape, elem, axis, inverse, onesided, n_const)
            x = rng.standard_normal(shape).astype(npt) * 3
            x.tofile(os.path.join(d, f"x{i}.bin"))
            n = n_const if n_const is not None else length
            want = reference(x, axis, inverse, onesided, n)
            typ = "float64" if npt == np.float64 else "float32"
            for t in TARGETS:
                out = os.path.join(d, f"dft{i}_{t}.onnx")
                p = subprocess.run([amanda, "convert", path, "--to", f"onnx/{t}", "-o", out, "-q"], capture_output=True,
                                   text=True, timeout=120)
                if p.returncode != 0:
                    fails.append(f"case {i} {shape} axis {axis} -> {t}: refused: {p.stderr.strip()[-300:]}")
                    continue
                jobs.append({"model": out, "inputs": {"x": {"file": os.path.join(d, f"x{i}.bin"), "shape": shape, "type": typ}},
                             "out": os.path.join(d, f"o{i}_{t}")})
                cases.append((i, t, shape, axis, inverse, onesided, n_const, want))
            jobs.append({"model": path, "inputs": {"x": {"file": os.path.join(d, f"x{i}.bin"), "shape": shape, "type": typ}},
                         "out": os.path.join(d, f"o{i}_17")})
            cases.append((i, 17, shape, axis, inverse, onesided, n_const, want))
        json.dump(jobs, open(os.path.join(d, "jobs.json"), "w"))
        subprocess.run(["node", os.path.join(HERE, "..", "js", "ort_run_typed.js"), os.path.join(d, "jobs.json")], check=True,
                       env=dict(os.environ, NODE_PATH=modules), timeout=600)
        worst = {}
        for i, t, shape, axis, inverse, onesided, n_const, want in cases:
            meta = json.load(open(os.path.join(d, f"o{i}_{t}.json")))
            what = f"case {i}: shape {shape} axis {axis} inverse {inverse} onesided {onesided} dft_length {n_const} -> opset {t}"
            if "error" in meta:
                if t != 17:
                    fails.append(f"{what}: onnxruntime: {meta['error'][:200]}")
                continue
            o = meta["outputs"][0]
            got = np.fromfile(os.path.join(d, f"o{i}_{t}.0.bin"), dtype=np.float64 if o["type"] == "float64" else np.float32)
            got = got.reshape(o["shape"]).astype(np.float64)
            if got.shape != want.shape:
                fails.append(f"{what}: shape {got.shape}, numpy {want.shape}")
                continue
            rel = float((np.abs(got - want) / np.maximum(1, np.abs(want))).max())
            worst[t] = max(worst.get(t, 0.0), rel)
            if t != 17:
                compared += 1
                if not rel <= TOL or not np.abs(want).max() > 0:
                    fails.append(f"{what}: relative difference from numpy {rel:.3g}")
        # Refusals name the reason.
        for kind, kw in [("dft_length computed at run time", dict(n_const=None, n_runtime=True)),
                         ("onesided complex", dict(n_const=None))]:
            path = os.path.join(d, "refused.onnx")
            make(path, [1, 8, 2], TensorProto.FLOAT, 1, 0, 1 if kind.startswith("onesided") else 0, **kw)
            p = subprocess.run([amanda, "convert", path, "--to", "onnx/16", "-o", os.path.join(d, "r.onnx")], capture_output=True,
                               text=True, timeout=120)
            said = p.stdout + p.stderr
            ok = p.returncode != 0 and "DFT" in said and ("dft_length a constant" in said or "onesided" in said)
            if not ok or os.path.exists(os.path.join(d, "r.onnx")):
                fails.append(f"{kind}: expected a refusal naming DFT and the reason, got exit {p.returncode}: {said[-300:]}")
    print(f"DFT lowering: {len({c[0] for c in cases})} cases, {compared} conversions compared with numpy's FFT; "
          f"worst relative difference per opset {json.dumps({k: float(f'{v:.3g}') for k, v in sorted(worst.items())})} "
          f"(17: onnxruntime's own DFT on the original); {len(fails)} failures")
    for f in fails:
        print("FAIL", f)
    sys.exit(1 if fails or compared == 0 else 0)


if __name__ == "__main__":
    main()
