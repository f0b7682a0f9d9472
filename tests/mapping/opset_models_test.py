#!/usr/bin/python3
"""ONNX opset conversion of torchvision models, checked against onnxruntime and onnx.checker.

    opset_models_test.py AMANDA MODELS_DIR [model ...]

For each of the eight torchvision models (exported at opset 13 by scripts/make_torchvision_onnx.py, made
here when missing): `amanda convert` to every opset 9..17, and each result back to 13. Every model that is
written must pass onnx.checker.check_model(full_check=True) and give the same outputs as the original
in onnxruntime (Node.js, tests/js/ort_compare.js) within 1e-5; a conversion that is refused must exit 1,
write nothing, and name in its JSON report each op it could not convert, with a reason.

By default (CI) each model goes to three of the eight target opsets, chosen so that every target is
used by three models (24 of the 64 conversions, each with its way back); AMANDA_OPSET_MODELS=all runs
every model to every target.
"""
import json
import os
import subprocess
import sys
import tempfile

import onnx

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
MODELS = ["resnet18", "mobilenet_v2", "squeezenet1_0", "efficientnet_b0", "densenet121", "convnext_tiny", "vit_b_16", "swin_t"]
TARGETS = [9, 10, 11, 12, 14, 15, 16, 17]
TOL = 1e-5


def targets_for(index):
    if os.environ.get("AMANDA_OPSET_MODELS") == "all":
        return TARGETS
    return [TARGETS[(index * 3 + k) % len(TARGETS)] for k in range(3)]


def main():
    amanda, models_dir = sys.argv[1], sys.argv[2]
    names = sys.argv[3:] or MODELS
    missing = [n for n in names if not os.path.exists(os.path.join(models_dir, n + ".onnx"))]
    if missing:
        subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "scripts", "make_torchvision_onnx.py"), models_dir] + missing, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    failures, converted, refused = [], 0, 0
    with tempfile.TemporaryDirectory() as tmp:
        for index, name in enumerate(names):
            src = os.path.join(models_dir, name + ".onnx")
            candidates = []
            for t in targets_for(MODELS.index(name) if name in MODELS else index):
                out = os.path.join(tmp, f"{name}_{t}.onnx")
                r = subprocess.run([amanda, "convert", src, "--to", f"onnx/{t}", "-o", out, "--report", "json"], capture_output=True, text=True)
                if r.returncode != 0:
                    if os.path.exists(out):
                        failures.append(f"{name} -> {t}: refused but wrote {out}")
                    try:
                        rep = json.loads(r.stdout)
                    except ValueError:
                        failures.append(f"{name} -> {t}: exit {r.returncode}, no JSON report: {r.stderr.strip()}")
                        continue
                    why = [f"{u['type']} x{u['count']}: {u.get('reason', 'no rule')}" for u in rep["unsupported"] + rep["unmapped"]]
                    if not why or rep["errors"]:
                        failures.append(f"{name} -> {t}: refused without naming the ops: {r.stdout.strip()} {r.stderr.strip()}")
                    refused += 1
                    print(f"{name} -> opset {t}: refused, as the report says: {'; '.join(why)}")
                    continue
                back = os.path.join(tmp, f"{name}_{t}_13.onnx")
                r2 = subprocess.run([amanda, "convert", out, "--to", "onnx/13", "-o", back, "-q"], capture_output=True, text=True)
                if r2.returncode != 0:
                    failures.append(f"{name} -> {t} -> 13: {r2.stdout.strip()} {r2.stderr.strip()}")
                for path, opset in [(out, t)] + ([(back, 13)] if r2.returncode == 0 else []):
                    try:
                        onnx.checker.check_model(onnx.load(path), full_check=True)  # a path would be rewritten in place
                        m = onnx.load(path, load_external_data=False)
                        got = [o.version for o in m.opset_import if o.domain in ("", "ai.onnx")]
                        if got != [opset]:
                            failures.append(f"{path}: opset_import {got}, expected {opset}")
                        candidates.append(path)
                        converted += 1
                    except Exception as e:  # noqa: BLE001 - report every checker failure
                        failures.append(f"{path}: onnx.checker: {str(e).splitlines()[0]}")
            if not candidates:
                continue
            r = subprocess.run(["node", os.path.join(ROOT, "tests", "js", "ort_compare.js"), src] + candidates, capture_output=True, text=True)
            if r.returncode != 0:
                failures.append(f"{name}: onnxruntime failed: {r.stderr.strip()[:500]}")
                continue
            res = json.loads(r.stdout)
            if res["max_abs_reference"] == 0:
                failures.append(f"{name}: the reference output is all zeros: the comparison would prove nothing")
            worst = 0.0
            for x in res["results"]:
                if "error" in x:
                    failures.append(f"{x['model']}: onnxruntime: {x['error'][:300]}")
                elif x["max_abs_diff"] > TOL:
                    failures.append(f"{x['model']}: max abs difference {x['max_abs_diff']} > {TOL}")
                else:
                    worst = max(worst, x["max_abs_diff"])
            print(f"{name}: {len(candidates)} converted models, max |output| {res['max_abs_reference']:.3g}, "
                  f"worst max abs difference {worst:.3g}")
    print(f"{converted} converted models checked, {refused} conversions refused with a report, {len(failures)} failures")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures or converted == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
