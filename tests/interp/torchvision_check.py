#!/usr/bin/python3
"""The torchvision exports through the interpreter: `amanda run` matches onnxruntime-node on the
same input (abs diff <= 1e-4 relative to the output scale... see TOL), and `amanda convert --check`
passes for their conversions to other opsets.

  torchvision_check.py AMANDA MODELS_DIR [--all]

CI runs resnet18 and mobilenet_v2 to opsets 11 and 17; --all (or AMANDA_INTERP_TORCHVISION_ALL=1)
runs the eight models to every opset 9..17 the tables reach.
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ALL_MODELS = ["resnet18", "mobilenet_v2", "squeezenet1_0", "efficientnet_b0", "densenet121", "convnext_tiny",
              "vit_b_16", "swin_t"]
TOL = 1e-4  # |ours - onnxruntime| <= TOL * max(1, max|onnxruntime|)


def main():
    amanda, models_dir = sys.argv[1], sys.argv[2]
    full = "--all" in sys.argv or os.environ.get("AMANDA_INTERP_TORCHVISION_ALL") == "1"
    models = ALL_MODELS if full else ["resnet18", "mobilenet_v2"]
    opsets = list(range(9, 18)) if full else [11, 17]
    modules = os.environ.get("AMANDA_ORT_NODE_MODULES", os.path.join(HERE, "..", "js", "node_modules"))
    fails = []
    with tempfile.TemporaryDirectory() as d:
        x = np.random.default_rng(0).standard_normal((1, 3, 224, 224)).astype(np.float32)
        np.save(os.path.join(d, "x.npy"), x)
        x.tofile(os.path.join(d, "x.bin"))
        jobs = []
        for m in models:
            path = os.path.join(models_dir, m + ".onnx")
            jobs.append({"model": path, "inputs": {"input": {"file": os.path.join(d, "x.bin"), "shape": [1, 3, 224, 224]}},
                         "out": os.path.join(d, "ort_" + m)})
        json.dump(jobs, open(os.path.join(d, "jobs.json"), "w"))
        env = dict(os.environ, NODE_PATH=modules)
        subprocess.run(["node", os.path.join(HERE, "..", "js", "ort_run.js"), os.path.join(d, "jobs.json")], check=True,
                       env=env, timeout=1800)
        for m in models:
            path = os.path.join(models_dir, m + ".onnx")
            out = os.path.join(d, "ours_" + m)
            p = subprocess.run([amanda, "run", path, "--input", f"input={d}/x.npy", "-o", out, "-q"], capture_output=True,
                               text=True, timeout=900)
            meta = json.load(open(os.path.join(d, "ort_" + m + ".json")))
            if p.returncode != 0 or "error" in meta:
                fails.append(f"{m}: run failed: {p.stderr[-300:]} {meta.get('error', '')}")
                continue
            ours = np.load(os.path.join(out, json.load(open(os.path.join(out, "outputs.json")))["outputs"][0]["files"][0]))
            ref = np.fromfile(os.path.join(d, "ort_" + m + ".0.bin"), dtype=np.float32).reshape(meta["outputs"][0]["shape"])
            scale = max(1.0, float(np.abs(ref).max()))
            diff = float(np.abs(ours - ref).max())
            status = "ok" if ours.shape == ref.shape and diff <= TOL * scale and np.abs(ref).max() > 0 else "FAIL"
            print(f"{m}: amanda run vs onnxruntime-node max abs diff {diff:.2e} (max |out| {np.abs(ref).max():.3g}) {status}")
            if status != "ok":
                fails.append(f"{m}: differs from onnxruntime by {diff}")
            for v in opsets:
                p = subprocess.run([amanda, "convert", path, "--to", f"onnx/{v}", "--check", "-q",
                                    "--check-input", f"input={d}/x.npy"], capture_output=True, text=True, timeout=1800)
                text = (p.stdout + p.stderr).strip()
                if "no rule" in text or "cannot be converted" in text or "unsupported" in text.lower():
                    print(f"  {m} -> opset {v}: not convertible (tables): skipped")
                    continue
                print(f"  {m} -> opset {v}: {text.splitlines()[-1] if text else p.returncode}")
                if p.returncode != 0:
                    fails.append(f"{m} -> opset {v}: {text[-400:]}")
    for f in fails:
        print("FAIL:", f)
    print("ok" if not fails else f"{len(fails)} failure(s)")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
