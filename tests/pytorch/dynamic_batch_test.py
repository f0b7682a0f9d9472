#!/usr/bin/env python3
"""Dynamic batch: `amanda convert M.pt --input-shape N,3,224,224` keeps the batch symbolic.

    dynamic_batch_test.py AMANDA MODELS_DIR [model ...]

For resnet18, mobilenet_v3_large and vit_b_16 (torchvision, random weights; parameters that
start at zero get random values so that no output is trivially zero), traced under
torch.no_grad() at batch 1 and saved to MODELS_DIR/NAME.dyn.pt (kept for reuse), converted with
`--input-shape N,3,224,224 --reader script`, then checked:

- the ONNX graph input's and output's first dimension is the dim_param "N" (no dim_value);
- onnx.checker.check_model(full_check=True) passes;
- onnxruntime-node runs the model at batch 1 and at batch 3, and each output matches torch's
  (the traced module run at that batch) within 1e-4 (max abs difference), torch's output not
  constant.

vit_b_16's x.shape[0] (class token expand, reshape with the batch) must stay in the graph as
Shape/Gather: a folded batch makes the batch-3 run fail or differ. Exit 1 on any failure.
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import torch
import torchvision

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODELS = ["resnet18", "mobilenet_v3_large", "vit_b_16"]
TOL = 1e-4


def make(name, path):
    torch.manual_seed(0)
    m = torchvision.models.get_model(name, weights=None).eval()
    with torch.no_grad():
        for p in m.parameters():
            if p.dim() >= 1 and float(p.abs().max()) == 0:
                p.normal_(0, 0.02)
        tm = torch.jit.trace(m, torch.randn(1, 3, 224, 224), check_trace=False)
    if not os.path.exists(path):
        tm.save(path)
    return torch.jit.load(path).eval()


def main():
    amanda, models_dir = sys.argv[1], sys.argv[2]
    names = sys.argv[3:] or MODELS
    os.makedirs(models_dir, exist_ok=True)
    node_dir = os.path.join(ROOT, "tests", "js")
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            pt = os.path.join(models_dir, name + ".dyn.pt")
            tm = make(name, pt)
            out = os.path.join(tmp, name + ".onnx")
            r = subprocess.run([amanda, "convert", pt, "--input-shape", "N,3,224,224", "--reader", "script", "-o", out],
                               capture_output=True, text=True)
            if r.returncode != 0:
                failures.append(f"{name}: amanda convert failed (exit {r.returncode}): {r.stdout[-1500:]}{r.stderr[-800:]}")
                continue
            try:
                onnx.checker.check_model(out, full_check=True)
            except Exception as e:  # noqa: BLE001
                failures.append(f"{name}: onnx.checker: {str(e).splitlines()[0]}")
            m = onnx.load(out, load_external_data=False)
            init = {i.name for i in m.graph.initializer}
            inputs = [i for i in m.graph.input if i.name not in init]
            for what, vi in (("input", inputs[0]), ("output", m.graph.output[0])):
                d0 = vi.type.tensor_type.shape.dim[0]
                if d0.HasField("dim_value") or d0.dim_param != "N":
                    failures.append(f"{name}: the {what}'s batch dimension is {d0} (expected dim_param N)")
            jobs, refs = [], {}
            for b in (1, 3):
                x = torch.randn(b, 3, 224, 224, generator=torch.Generator().manual_seed(b))
                with torch.no_grad():
                    refs[b] = tm(x).numpy()
                xin = os.path.join(tmp, f"{name}.x{b}.bin")
                x.numpy().astype("<f4").tofile(xin)
                jobs.append({"model": out, "inputs": {inputs[0].name: {"file": xin, "shape": [b, 3, 224, 224]}},
                             "out": os.path.join(tmp, f"{name}.b{b}")})
            jf = os.path.join(tmp, "jobs.json")
            with open(jf, "w") as f:
                json.dump(jobs, f)
            rr = subprocess.run(["node", os.path.join(node_dir, "ort_run.js"), jf], capture_output=True, text=True)
            if rr.returncode != 0:
                failures.append(f"{name}: onnxruntime-node failed: {rr.stderr[-600:]}")
                continue
            for b in (1, 3):
                res = json.load(open(os.path.join(tmp, f"{name}.b{b}.json")))
                if "error" in res:
                    failures.append(f"{name} batch {b}: onnxruntime: {res['error'][:400]}")
                    continue
                got = np.fromfile(os.path.join(tmp, f"{name}.b{b}.0.bin"), dtype="<f4").reshape(res["outputs"][0]["shape"])
                ref = refs[b]
                if got.shape != ref.shape:
                    failures.append(f"{name} batch {b}: output shape {got.shape}, torch gives {ref.shape}")
                    continue
                diff = float(np.max(np.abs(got - ref)))
                ok = diff <= TOL and float(np.std(ref)) > 0
                print(f"{name} batch {b}: max abs difference {diff:.3g} {'ok' if ok else 'FAIL'}")
                if not ok:
                    failures.append(f"{name} batch {b}: max abs difference {diff:.3g} (tolerance {TOL})")
    for f in failures:
        print("FAIL", f)
    print(f"{len(names) - len({f.split(':')[0].split(' ')[0] for f in failures})} of {len(names)} models pass")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
