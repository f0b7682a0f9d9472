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
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
READERS = ["script", "libtorch"]
MODELS = ["resnet18", "mobilenet_v2", "squeezenet1_0", "efficientnet_b0", "densenet121", "convnext_tiny",
          "vit_b_16", "swin_t"]
# More torchvision models, through the libtorch-free reader only: they exercise the table's rules
# the eight do not use (hardswish, hardsigmoid, mean.dim, adaptive pooling to a size > 1).
EXTRA = ["alexnet", "googlenet", "mobilenet_v3_small", "mnasnet1_0", "regnet_y_400mf"]
# Scripted (torch.jit.script) rather than traced: the code calls torch.nn.functional's scripted
# functions, with their argument checks and branches, and aten::conv2d.
EXTRA += ["scripted.resnet18", "scripted.mobilenet_v2", "scripted.squeezenet1_0", "scripted.densenet121",
          "scripted.efficientnet_b0"]
# Not converted yet: the report must name what is missing (docs/pytorch.md, "Coverage").
NOT_YET = set()
TOL = 1e-4


def stamp():
    h = hashlib.sha256(open(__file__, "rb").read()).hexdigest()[:16]
    return f"{h} torch {torch.__version__} torchvision {torchvision.__version__}"


def make(models_dir, name):
    """NAME.pt, traced; scripted.NAME.pt: torch.jit.script of the model (control flow and all)."""
    pt = os.path.join(models_dir, name + ".pt")
    st = pt + ".stamp"
    if os.path.exists(pt) and os.path.exists(st) and open(st).read() == stamp():
        return pt
    scripted = name.startswith("scripted.")
    torch.manual_seed(0)
    m = getattr(torchvision.models, name.split(".")[-1])(weights=None).eval()
    with torch.no_grad():
        for p in m.parameters():
            if p.numel() and not p.abs().gt(0).any():
                p.normal_(0, 0.02)
        t = torch.jit.script(m) if scripted else torch.jit.trace(m, torch.randn(1, 3, 224, 224))
    torch.jit.save(t, pt)
    with open(st, "w") as f:
        f.write(stamp())
    return pt


class NoRules(torch.nn.Module):
    """Ops that the table has no rule for (ONNX 13 has no such op): lgamma twice, erfinv once."""

    def forward(self, x):
        return torch.erfinv(torch.lgamma(torch.lgamma(x.abs() + 1.0)) * 0.01)


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
        for op, n in (("aten::lgamma", 2), ("aten::erfinv", 1)):
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


def seed_example(amanda):
    """The seed's example, Sequential(Linear(784, 100, bias=False), ReLU()) traced, imported by each
    reader into amanda/pytorch/1.13 (YAML): aten::linear then aten::relu, the weight an initializer
    of shape [100, 784], the bias unconnected, typed and shaped values."""
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        pt = os.path.join(tmp, "seed.pt")
        m = torch.nn.Sequential(torch.nn.Linear(784, 100, bias=False), torch.nn.ReLU()).eval()
        torch.jit.save(torch.jit.trace(m, torch.randn(1, 784)), pt)
        for reader in READERS:
            out = os.path.join(tmp, f"seed.{reader}.yaml")
            r = subprocess.run([amanda, "convert", pt, "--input-shape", "1,784", "--reader", reader,
                                "--to", "amanda/pytorch/1.13", "-o", out], capture_output=True, text=True)
            if r.returncode != 0:
                failures.append(f"seed example ({reader}): exit {r.returncode}: {r.stderr[-400:]}")
                continue
            g = yaml.safe_load(open(out).read().replace("!tensor", ""))["graph"]
            types = [op["type"] for op in g["ops"]]
            inits = [p for p in g["input_ports"] if p["attrs"].get("graph_input") is False]
            linear = next((op for op in g["ops"] if op["type"] == "aten::linear"), None)
            bias_fed = any(e["input_port"]["port"] == "bias" for e in g["edges"])
            ok = (types == ["aten::linear", "aten::relu"] and len(inits) == 1 and
                  inits[0]["attrs"]["initializer"]["shape"] == [100, 784] and linear is not None and
                  [p["name"] for p in linear["input_ports"]] == ["input", "weight", "bias"] and not bias_fed and
                  g["output_ports"][0]["attrs"]["shape"] == [1, 100])
            if not ok:
                failures.append(f"seed example ({reader}): unexpected structure: ops {types}, initializers {inits}")
            else:
                print(f"seed example ({reader}): aten::linear (bias unconnected) -> aten::relu, weight [100, 784]")
    return failures


class ShapeFlow(torch.nn.Module):
    """Scripted: control flow on shapes (the libtorch-free reader runs it), a loop, two outputs."""

    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(6, 4)

    def forward(self, x):
        if x.size(1) > 2:
            x = torch.relu(x)
        else:
            x = torch.sigmoid(x)
        for _ in range(3):
            x = x + x
        y = self.fc(torch.flatten(x, 1))
        return y, torch.sigmoid(y)


class DataFlow(torch.nn.Module):
    """Scripted: control flow on the input's values: an ONNX If through both readers
    (numbers in tests/pytorch/control_flow_test.py)."""

    def forward(self, x):
        if bool(x.sum() > 0):
            return torch.relu(x)
        return torch.sigmoid(x)


class ViewInPlace(torch.nn.Module):
    """Traced: an in-place op on a view, then a read of the viewed tensor (which it changed)."""

    def forward(self, x):
        y = x[:, :2]
        y.relu_()
        return x * 2


def small_modules(amanda, node_dir):
    """Scripted modules through the libtorch-free reader: ShapeFlow converts and matches torch in
    onnxruntime (both outputs); DataFlow is refused by --reader script with the reason and the
    place in the model's code, and --reader auto hands it to libtorch (whose graph has a prim::If
    the table has no rule for: the report names it)."""
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        torch.manual_seed(0)
        m = torch.jit.script(ShapeFlow().eval())
        pt = os.path.join(tmp, "shapeflow.pt")
        torch.jit.save(m, pt)
        x = torch.randn(2, 3, 2)
        with torch.no_grad():
            refs = [t.numpy() for t in m(x)]
        out = os.path.join(tmp, "shapeflow.onnx")
        r = subprocess.run([amanda, "convert", pt, "--input-shape", "2,3,2", "--reader", "script", "-o", out],
                           capture_output=True, text=True)
        if r.returncode != 0:
            failures.append(f"shapeflow: exit {r.returncode}: {r.stdout[-600:]}{r.stderr[-600:]}")
        else:
            onnx.checker.check_model(onnx.load(out), full_check=True)  # a path would be rewritten with inferred shapes
            xin = os.path.join(tmp, "x.bin")
            x.numpy().astype("<f4").tofile(xin)
            g = onnx.load(out).graph
            name = [i.name for i in g.input if i.name not in {t.name for t in g.initializer}][0]
            jf = os.path.join(tmp, "jobs.json")
            json.dump([{"model": out, "inputs": {name: {"file": xin, "shape": [2, 3, 2]}}, "out": os.path.join(tmp, "sf")}], open(jf, "w"))
            rr = subprocess.run(["node", os.path.join(node_dir, "ort_run.js"), jf], capture_output=True, text=True)
            res = json.load(open(os.path.join(tmp, "sf.json"))) if rr.returncode == 0 else {"error": rr.stderr[-400:]}
            if "error" in res:
                failures.append(f"shapeflow: onnxruntime: {res['error'][:400]}")
            elif len(res["outputs"]) != 2:
                failures.append(f"shapeflow: {len(res['outputs'])} outputs, torch gives 2")
            else:
                for k, ref in enumerate(refs):
                    got = np.fromfile(os.path.join(tmp, f"sf.{k}.bin"), dtype="<f4").reshape(res["outputs"][k]["shape"])
                    diff = float(np.max(np.abs(got - ref))) if got.shape == ref.shape else float("inf")
                    if not diff <= TOL or float(np.std(ref)) == 0:
                        failures.append(f"shapeflow output {k}: max abs difference {diff:.3g} (shape {got.shape} vs {ref.shape})")
                    else:
                        print(f"shapeflow (scripted, if on a shape, loop, 2 outputs) output {k}: max abs diff {diff:.3g}")
        d = os.path.join(tmp, "dataflow.pt")
        torch.jit.save(torch.jit.script(DataFlow().eval()), d)
        out = os.path.join(tmp, "dataflow.onnx")
        r = subprocess.run([amanda, "convert", d, "--input-shape", "2,3", "--reader", "script", "-o", out], capture_output=True, text=True)
        if r.returncode != 0 or "If" not in {n.op_type for n in onnx.load(out).graph.node}:
            failures.append(f"dataflow --reader script: expected an ONNX If, got exit {r.returncode}: {r.stderr[-400:]}")
        else:
            print("dataflow --reader script: converted to an ONNX If")
        if os.path.exists(out):
            os.remove(out)
        v = os.path.join(tmp, "viewinplace.pt")
        torch.jit.save(torch.jit.trace(ViewInPlace(), torch.randn(2, 3)), v)
        r = subprocess.run([amanda, "convert", v, "--input-shape", "2,3", "--reader", "script", "-o", out], capture_output=True, text=True)
        if r.returncode != 1 or os.path.exists(out) or "shares memory" not in r.stderr:
            failures.append(f"viewinplace --reader script: expected a refusal (a silent wrong result otherwise), got exit {r.returncode}: {r.stderr[-400:]}")
        else:
            print("viewinplace --reader script: refused (in-place write through a view)")
        if "libtorch" in READERS:
            r = subprocess.run([amanda, "convert", d, "--input-shape", "2,3", "--reader", "libtorch", "-o", out], capture_output=True, text=True)
            if r.returncode != 0 or "If" not in {n.op_type for n in onnx.load(out).graph.node}:
                failures.append(f"dataflow --reader libtorch: expected an ONNX If, got exit {r.returncode}: {r.stdout[-400:]}{r.stderr[-300:]}")
            else:
                print("dataflow --reader libtorch: converted to an ONNX If")
    return failures


def main():
    global READERS
    amanda, models_dir = sys.argv[1], sys.argv[2]
    rest = sys.argv[3:]
    if rest[:1] == ["--readers"]:
        READERS = rest[1].split(",")
        rest = rest[2:]
    names = rest or MODELS + EXTRA
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
            for reader in (READERS if name in MODELS else [r for r in READERS if r == "script"]):
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
                    onnx.checker.check_model(onnx.load(out), full_check=True)  # a path would be rewritten with inferred shapes
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
    failures += seed_example(amanda)
    failures += small_modules(amanda, node_dir)
    for f in failures:
        print("FAIL " + f)
    print(f"{len(names)} models, {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
