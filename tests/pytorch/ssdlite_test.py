#!/usr/bin/python3
"""ssdlite320_mobilenet_v3_large, scripted, through the libtorch-free reader, against torch.

  ssdlite_test.py AMANDA

torchvision's ssdlite320_mobilenet_v3_large(weights=None, weights_backbone=None) in eval mode,
with its classification head's weights and biases drawn again (normal, std 0.3; seed 0) so that
the class scores differ (as initialised they are all 1/91, and the order of equal scores after
topk and NMS is arbitrary), is torch.jit.script'ed and saved, converted by

  amanda convert ssd.pt --input-shape 3,320,320 --reader script -o ssd.onnx

(forward takes `images: List[Tensor]`), checked with onnx.checker and run in onnxruntime-node on
two random images. The outputs are the detections' boxes, scores and labels (the losses dict is
empty in eval mode); torch's scripted module on the same image must give the same number of
detections (> 0), labels equal, scores and boxes within 1e-4 relative to max(1, |x|).

Runs in CI (the model is 14 MB; script, convert and two runs take about 10-15 s);
tests/pytorch/run_time_sizes_test.py covers the same constructs on small modules.
"""
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

HERE = os.path.dirname(os.path.abspath(__file__))
ORT_RUN = os.path.join(HERE, "..", "js", "ort_run_typed.js")


def main():
    amanda = sys.argv[1]
    torch.manual_seed(0)
    m = torchvision.models.detection.ssdlite320_mobilenet_v3_large(weights=None, weights_backbone=None).eval()
    g = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for p in m.head.classification_head.parameters():
            p.normal_(0.0, 0.3, generator=g)
        for mod in m.modules():  # batch norms with statistics that keep the features apart
            if isinstance(mod, torch.nn.BatchNorm2d):
                mod.weight.uniform_(0.5, 1.5, generator=g)
                mod.bias.normal_(0.0, 0.2, generator=g)
                mod.running_mean.normal_(0.0, 0.1, generator=g)
                mod.running_var.uniform_(0.05, 0.3, generator=g)
    failures = []
    with tempfile.TemporaryDirectory() as d:
        pt, out = os.path.join(d, "ssd.pt"), os.path.join(d, "ssd.onnx")
        s = torch.jit.script(m)
        s.save(pt)
        t = time.time()
        p = subprocess.run([amanda, "convert", pt, "--input-shape", "3,320,320", "--reader", "script", "-o", out],
                           capture_output=True, text=True)
        print(f"conversion: exit {p.returncode}, {time.time() - t:.1f} s")
        if p.returncode != 0:
            print("FAIL: conversion:", p.stderr.strip()[-1500:])
            return 1
        model = onnx.load(out)
        onnx.checker.check_model(model, full_check=True)
        name = model.graph.input[0].name
        images = [np.random.default_rng(seed).uniform(0, 1, (3, 320, 320)).astype(np.float32) for seed in (1, 2)]
        jobs = []
        for k, x in enumerate(images):
            f = os.path.join(d, f"x{k}.bin")
            x.tofile(f)
            jobs.append({"model": out, "inputs": {name: {"file": f, "shape": [3, 320, 320]}}, "out": os.path.join(d, f"o{k}")})
        jf = os.path.join(d, "jobs.json")
        with open(jf, "w") as fh:
            json.dump(jobs, fh)
        t = time.time()
        subprocess.run(["node", ORT_RUN, jf], check=True)
        print(f"onnxruntime: {time.time() - t:.1f} s for {len(images)} images")
        for k, x in enumerate(images):
            with open(os.path.join(d, f"o{k}.json")) as fh:
                res = json.load(fh)
            if "error" in res:
                failures.append(f"image {k}: onnxruntime: {res['error']}")
                continue
            with torch.no_grad():
                _, det = s([torch.from_numpy(x)])
            ref = [det[0]["boxes"].numpy(), det[0]["scores"].numpy(), det[0]["labels"].numpy()]
            got = [np.fromfile(os.path.join(d, f"o{k}.{j}.bin"), dtype=r.dtype).reshape(o["shape"])
                   for j, (o, r) in enumerate(zip(res["outputs"], ref))]
            n = len(ref[1])
            if n == 0:
                failures.append(f"image {k}: torch gives no detection (the test would not test anything)")
            shapes = [g.shape for g in got]
            if shapes != [r.shape for r in ref]:
                failures.append(f"image {k}: shapes {shapes}, torch {[r.shape for r in ref]}")
                continue
            # Anchors whose features barely differ get scores ~1e-7 apart, which onnxruntime's float
            # rounding may order otherwise; NMS then keeps the other of two overlapping boxes and
            # everything after differs. So: detections equal (labels exactly, boxes and scores within
            # 1e-4 relative to max(1, |x|)) up to the first near-tie of torch's scores (a gap under
            # 1e-5 between consecutive scores), and that prefix at least 10 long.
            gaps = np.abs(np.diff(ref[1]))
            near = np.nonzero(gaps < 1e-5)[0]
            upto = int(near[0]) if near.size else n  # near[0] and near[0] + 1 are the first near-tied pair
            ok = 0
            while ok < n and got[2][ok] == ref[2][ok] and all(
                    float((np.abs(g[ok] - r[ok]) / np.maximum(1.0, np.abs(r[ok]))).max()) <= 1e-4 for g, r in zip(got[:2], ref[:2])):
                ok += 1
            rel = [float((np.abs(g[:ok] - r[:ok]) / np.maximum(1.0, np.abs(r[:ok]))).max()) if ok else 0.0 for g, r in zip(got[:2], ref[:2])]
            print(f"image {k}: {n} detections on both sides, {len(np.unique(ref[1]))} distinct scores; the first near-tie at "
                  f"{upto}; equal up to detection {ok} (labels of {len(np.unique(ref[2][:ok]))} classes; max difference relative "
                  f"to max(1, |x|): boxes {rel[0]:.2g}, scores {rel[1]:.2g})")
            if ok < upto or ok < 10:
                failures.append(f"image {k}: detections differ at {ok}, before the first near-tie of scores at {upto}")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
