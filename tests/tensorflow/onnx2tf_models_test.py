#!/usr/bin/python3
"""ONNX -> TF.js on torchvision's ONNX exports (tests/onnx/torchvision_models.py, random weights):
`amanda convert M.onnx -o DIR/model.json` must write a TF.js graph model that TF.js
(@tensorflow/tfjs 4.22, pure-JS CPU backend) loads and runs, with outputs within 1e-4 of
onnxruntime-node's for the original (relative to max(1, |x|)) on a random input, not all zero; and
`-o model.pb` must write a GraphDef that reads back (amanda inspect); and the TF.js model converted
back to ONNX (`amanda convert DIR/model.json -o back.onnx`, the TF -> ONNX tables) must give
onnxruntime's outputs of the original again (within 1e-4 relative, inputs fed in order: the round
trip names them `input:0`, ...).

  onnx2tf_models_test.py AMANDA MODELS_DIR OUT_DIR [MODEL ...]

Without MODEL names: the six small models and resnet18 and mobilenet_v2 with a symbolic batch
("dynamic/NAME": the export's batch made the dim_param N, its inner shapes dropped; the Placeholder
gets -1, run with batch 2), plus vit_b_16 and swin_t when AMANDA_TEST_BIG_MODELS=1 (TF.js's CPU
backend takes minutes on them)."""
import os
import shutil
import subprocess
import sys
import time

import json

import numpy as np
import onnx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import onnx2tf_common as common  # noqa: E402

SMALL = ["resnet18", "mobilenet_v2", "squeezenet1_0", "efficientnet_b0", "densenet121", "convnext_tiny",
         "dynamic/resnet18", "dynamic/mobilenet_v2"]
BIG = ["vit_b_16", "swin_t"]
TOL = 1e-4


def round_trip(back_jobs):
    """onnxruntime on the original and on the model that went ONNX -> TF.js -> ONNX, same inputs."""
    if not back_jobs:
        return []
    ort_jobs = []
    for name, src, back, inputs, folder in back_jobs:
        names = [i.name for i in onnx.load(back, load_external_data=False).graph.input
                 if i.name not in {t.name for t in onnx.load(back, load_external_data=False).graph.initializer}]
        if len(names) != len(inputs):
            return [f"{name}: the round trip has {len(names)} inputs, the original {len(inputs)}"]
        ort_jobs.append({"model": src, "inputs": {i["name"]: {"file": i["file"], "shape": i["shape"], "type": i["dtype"]} for i in inputs},
                         "out": os.path.join(folder, "orig")})
        ort_jobs.append({"model": back, "inputs": {n: {"file": i["file"], "shape": i["shape"], "type": i["dtype"]} for n, i in zip(names, inputs)},
                         "out": os.path.join(folder, "back")})
    path = os.path.join(back_jobs[0][4], "..", "roundtrip_jobs.json")
    with open(path, "w") as f:
        json.dump(ort_jobs, f)
    here = os.path.dirname(os.path.abspath(__file__))
    subprocess.run(["node", os.path.join(here, "..", "js", "ort_run_typed.js"), path], capture_output=True, text=True)
    failures = []
    for name, src, back, inputs, folder in back_jobs:
        try:
            meta = [json.load(open(os.path.join(folder, p + ".json"))) for p in ("orig", "back")]
            if any("error" in x for x in meta):
                failures.append(f"{name}: round trip: onnxruntime: {[x.get('error') for x in meta]}")
                continue
            worst, ref_max = 0.0, 0.0
            for k, o in enumerate(meta[0]["outputs"]):
                dt = {"float32": np.float32, "int64": np.int64, "int32": np.int32}.get(o.get("type", "float32"), np.float32)
                a = np.fromfile(os.path.join(folder, f"orig.{k}.bin"), dt).astype(np.float64)
                b = np.fromfile(os.path.join(folder, f"back.{k}.bin"),
                                {"float32": np.float32, "int64": np.int64, "int32": np.int32}.get(meta[1]["outputs"][k].get("type", "float32"), np.float32)).astype(np.float64)
                if a.shape != b.shape:
                    failures.append(f"{name}: round trip: output {k} has {b.size} elements, the original {a.size}")
                    continue
                worst = max(worst, float((np.abs(a - b) / np.maximum(1, np.abs(a))).max()) if a.size else 0.0)
                ref_max = max(ref_max, float(np.abs(a).max()) if a.size else 0.0)
        except (OSError, ValueError, KeyError) as e:
            failures.append(f"{name}: round trip: no outputs ({e})")
            continue
        print(f"{name}: ONNX -> TF.js -> ONNX: max rel diff {worst:.3g} against the original in onnxruntime (max |output| {ref_max:.3g})",
              flush=True)
        if not worst <= TOL:
            failures.append(f"{name}: round trip: outputs differ from the original's by {worst:.3g} (relative), more than {TOL}")
        if ref_max == 0:
            failures.append(f"{name}: round trip: every output is zero")
    return failures


def main():
    amanda, models, out = sys.argv[1:4]
    names = sys.argv[4:] or (SMALL + (BIG if os.environ.get("AMANDA_TEST_BIG_MODELS") == "1" else []))
    os.makedirs(out, exist_ok=True)
    jobs, failures, back_jobs = [], [], []
    for name in names:
        src = os.path.join(models, name.replace("dynamic/", "") + ".onnx")
        folder = os.path.join(out, name.replace("/", "_"))
        shutil.rmtree(folder, ignore_errors=True)
        os.makedirs(folder)
        if name.startswith("dynamic/"):  # the export with its batch made a dim_param, the shapes inside forgotten
            dm = onnx.load(src)
            dm.graph.input[0].type.tensor_type.shape.dim[0].dim_param = "N"
            for o in dm.graph.output:
                o.type.tensor_type.shape.dim[0].dim_param = "N"
            del dm.graph.value_info[:]
            src = os.path.join(folder, "dynamic.onnx")
            onnx.save(dm, src)
        t0 = time.time()
        rc, log = common.convert(amanda, src, os.path.join(folder, "tfjs", "model.json"))
        if rc != 0:
            failures.append(f"{name}: convert failed: {log[-1500:]}")
            continue
        conv = time.time() - t0
        pb = os.path.join(folder, "model.pb")
        rc, log = common.convert(amanda, src, pb)
        if rc != 0:
            failures.append(f"{name}: convert to .pb failed: {log[-1500:]}")
            continue
        r = subprocess.run([amanda, "inspect", pb], capture_output=True, text=True)
        if r.returncode != 0 or "Placeholder" not in r.stdout + r.stderr:
            failures.append(f"{name}: model.pb does not read back: {r.stdout[-500:]}{r.stderr[-500:]}")
        m = onnx.load(src, load_external_data=False)
        inputs = common.make_inputs(m, folder, 7, symbolic=2)
        jobs.append({"id": name, "onnx": src, "tfjs": os.path.join(folder, "tfjs", "model.json"), "inputs": inputs})
        back = os.path.join(folder, "back.onnx")
        rc, log = common.convert(amanda, os.path.join(folder, "tfjs", "model.json"), back)
        if rc != 0:
            failures.append(f"{name}: the TF.js model does not convert back to ONNX: {log[-1500:]}")
        else:
            back_jobs.append((name, src, back, inputs, folder))
        print(f"{name}: converted in {conv:.2f} s", flush=True)
    results = common.compare(jobs, out) if jobs else {}
    for name, r in results.items():
        if "error" in r:
            failures.append(f"{name}: {r['error']}")
            continue
        print(f"{name}: max abs diff {r['max_abs']:.3g}, max rel diff {r['max_rel']:.3g}, max |output| {r['max_ref']:.3g}, "
              f"{r['nonzero']} nonzero, TF.js execute {r['tfjs_ms'] / 1000:.2f} s CPU", flush=True)
        if not r["max_rel"] <= TOL:
            failures.append(f"{name}: outputs differ from onnxruntime's by {r['max_rel']:.3g} (relative), more than {TOL}")
        if r["nonzero"] == 0:
            failures.append(f"{name}: every output is zero: the comparison would prove nothing")
    failures += round_trip(back_jobs)
    for f in failures:
        print("FAIL", f)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
