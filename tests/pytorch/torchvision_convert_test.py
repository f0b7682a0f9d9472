#!/usr/bin/env python3
"""TorchScript -> ONNX with `amanda convert`, checked against torch itself.

    torchvision_convert_test.py AMANDA MODELS_DIR [--readers script,libtorch] [model ...]

For each torchvision classification model (random weights, no download; parameters that start at
zero, such as ViT's classification head, get random values so that no output is trivially zero):
trace it under torch.no_grad(), torch.jit.save it to MODELS_DIR/NAME.pt (kept for reuse, remade
when torch or this script changes), run torch on a seeded random input, then

    amanda convert NAME.pt --input-shape 1,3,224,224 --reader READER -o NAME.onnx

once with each reader (`script`: the libtorch-free reader, the default; `libtorch`: the plugin),
and check: onnx.checker.check_model(NAME.onnx, full_check=True) passes, and onnxruntime-node's
output on the same input matches torch's within 1e-4 (max abs difference), torch's output not
all zeros. Models listed in NOT_YET must instead be refused: exit 1, a report naming the ops that
have no rule, and no output file. Run with Debian's /usr/bin/python3 (torch, torchvision, onnx).
"""
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
import torch
import torchvision

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
READERS = ["script", "libtorch"]
MODELS = ["resnet18", "mobilenet_v2", "squeezenet1_0", "efficientnet_b0", "densenet121", "convnext_tiny",
          "vit_b_16", "swin_t"]
# Not converted yet: the report must name what is missing (docs/pytorch.md, "Coverage").
NOT_YET = set()
TOL = 1e-4


def stamp():
    h = hashlib.sha256(open(__file__, "rb").read()).hexdigest()[:16]
    return f"{h} torch {torch.__version__} torchvision {torchvision.__version__}"


def make(models_dir, name):
    pt = os.path.join(models_dir, name + ".pt")
    st = pt + ".stamp"
    if os.path.exists(pt) and os.path.exists(st) and open(st).read() == stamp():
        return pt
    torch.manual_seed(0)
    m = getattr(torchvision.models, name)(weights=None).eval()
    with torch.no_grad():
        for p in m.parameters():
            if p.numel() and not p.abs().gt(0).any():
                p.normal_(0, 0.02)
        t = torch.jit.trace(m, torch.randn(1, 3, 224, 224))
    torch.jit.save(t, pt)
    with open(st, "w") as f:
        f.write(stamp())
    return pt


class NoRules(torch.nn.Module):
    """Ops that the table has no rule for: cumsum twice, erfinv once."""

    def forward(self, x):
        return torch.erfinv(torch.cumsum(torch.cumsum(x, 1), 0) * 0.01)


def bad_inputs(amanda, models_dir):
    """Unmapped ops give the full report; corrupt and foreign files give a clear error."""
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        pt = os.path.join(tmp, "norules.pt")
        torch.jit.save(torch.jit.trace(NoRules(), torch.randn(2, 3)), pt)
        out = os.path.join(tmp, "norules.onnx")
        r = subprocess.run([amanda, "convert", pt, "--input-shape", "2,3", "-o", out], capture_output=True, text=True)
        rep = r.stdout
        if r.returncode != 1 or os.path.exists(out):
            failures.append(f"no-rule model: exit {r.returncode}, output written: {os.path.exists(out)}")
        for op, n in (("aten::cumsum", 2), ("aten::erfinv", 1)):
            if not any(l.split()[:2] == [op, f"x{n}"] for l in rep.splitlines()):
                failures.append(f"no-rule model: the report does not list {op} x{n}: {rep}")
        good = open(os.path.join(models_dir, "resnet18.pt"), "rb").read() if os.path.exists(os.path.join(models_dir, "resnet18.pt")) else open(pt, "rb").read()
        cases = {
            "empty.pt": b"",
            "random.pt": bytes(np.random.default_rng(0).integers(0, 256, 4096, dtype=np.uint8)),
            "truncated.pt": good[: len(good) // 2],
            "not_torchscript.pt": b"PK\x03\x04" + b"\x00" * 200,
            "model.onnx.pt": onnx.helper.make_model(onnx.helper.make_graph([], "g", [], [])).SerializeToString(),
        }
        for name, data in cases.items():
            path = os.path.join(tmp, name)
            with open(path, "wb") as f:
                f.write(data)
            out = os.path.join(tmp, name + ".onnx")
            r = subprocess.run([amanda, "convert", path, "--input-shape", "1,3,224,224", "-o", out], capture_output=True, text=True, timeout=120)
            if r.returncode != 1 or os.path.exists(out) or path not in r.stderr or "error" not in r.stderr:
                failures.append(f"{name}: expected exit 1, no output, an error naming the file; got exit {r.returncode}: {r.stderr[-300:]}")
            else:
                print(f"{name}: {r.stderr.strip().splitlines()[-1][:160]}")
        missing = subprocess.run([amanda, "convert", os.path.join(tmp, "nope.pt"), "-o", os.path.join(tmp, "x.onnx")], capture_output=True, text=True)
        if missing.returncode != 1 or "no such file" not in missing.stderr.lower():
            failures.append(f"missing file: exit {missing.returncode}: {missing.stderr[-300:]}")
    return failures


def main():
    global READERS
    amanda, models_dir = sys.argv[1], sys.argv[2]
    rest = sys.argv[3:]
    if rest[:1] == ["--readers"]:
        READERS = rest[1].split(",")
        rest = rest[2:]
    names = rest or MODELS
    os.makedirs(models_dir, exist_ok=True)
    node_dir = os.path.join(ROOT, "tests", "js")
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        jobs, expected = [], {}
        for name in names:
            pt = make(models_dir, name)
            torch.manual_seed(1)
            x = torch.randn(1, 3, 224, 224)
            with torch.no_grad():
                ref = torch.jit.load(pt).eval()(x).numpy()
            xin = os.path.join(tmp, name + ".in.bin")
            x.numpy().astype("<f4").tofile(xin)
            for reader in READERS:
                key = f"{name}.{reader}"
                out = os.path.join(tmp, key + ".onnx")
                t0 = time.time()
                r = subprocess.run([amanda, "convert", pt, "--input-shape", "1,3,224,224", "--reader", reader, "-o", out],
                                   capture_output=True, text=True)
                dt = time.time() - t0
                if name in NOT_YET:
                    if r.returncode != 1 or os.path.exists(out) or "have no rule" not in r.stdout:
                        failures.append(f"{key}: expected a refusal with a report (exit 1, no output), got exit {r.returncode}: {r.stdout[-800:]}{r.stderr[-400:]}")
                    else:
                        print(f"{key}: refused as expected ({dt:.2f} s); report: " + " | ".join(l.strip() for l in r.stdout.splitlines() if l.startswith("  "))[:400])
                    continue
                if r.returncode != 0:
                    failures.append(f"{key}: amanda convert failed (exit {r.returncode}): {r.stdout[-1500:]}{r.stderr[-800:]}")
                    continue
                try:
                    onnx.checker.check_model(out, full_check=True)
                except Exception as e:  # noqa: BLE001 - the checker's own exception types vary
                    failures.append(f"{key}: onnx.checker: {str(e).splitlines()[0]}")
                m = onnx.load(out, load_external_data=False)
                init = {i.name for i in m.graph.initializer}
                inputs = [i.name for i in m.graph.input if i.name not in init]
                jobs.append({"model": out, "inputs": {inputs[0]: {"file": xin, "shape": [1, 3, 224, 224]}}, "out": os.path.join(tmp, key)})
                expected[key] = (ref, dt)
        if jobs:
            jf = os.path.join(tmp, "jobs.json")
            with open(jf, "w") as f:
                json.dump(jobs, f)
            r = subprocess.run(["node", os.path.join(node_dir, "ort_run.js"), jf], capture_output=True, text=True)
            if r.returncode != 0:
                failures.append("onnxruntime-node failed: " + r.stderr[-800:])
        for name, (ref, dt) in expected.items():
            res_path = os.path.join(tmp, name + ".json")
            if not os.path.exists(res_path):
                failures.append(f"{name}: no onnxruntime result")
                continue
            res = json.load(open(res_path))
            if "error" in res:
                failures.append(f"{name}: onnxruntime: {res['error'][:400]}")
                continue
            got = np.fromfile(os.path.join(tmp, name + ".0.bin"), dtype="<f4").reshape(res["outputs"][0]["shape"])
            if got.shape != ref.shape:
                failures.append(f"{name}: output shape {got.shape}, torch gives {ref.shape}")
                continue
            diff = float(np.max(np.abs(got - ref)))
            scale = float(np.max(np.abs(ref)))
            if scale == 0 or float(np.std(ref)) == 0:
                failures.append(f"{name}: torch's output is trivially constant; the check would prove nothing")
            if not diff <= TOL:
                failures.append(f"{name}: max abs difference {diff:.3g} > {TOL} (max |torch| {scale:.3g})")
            print(f"{name}: amanda convert {dt:.2f} s; max abs diff vs torch {diff:.3g} (max |torch| {scale:.3g})")
    failures += bad_inputs(amanda, models_dir)
    for f in failures:
        print("FAIL " + f)
    print(f"{len(names)} models, {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
