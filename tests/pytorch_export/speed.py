#!/usr/bin/python3
"""Whole-process times, same run: `amanda convert M.onnx -o M.pt` against `python3 -c
'torch.jit.load(M.pt)'` (issue 29's speed point; docs/performance.md). Best of N runs each.

    speed.py AMANDA MODELS_DIR [--models resnet50,vit_b_16] [--runs 3]

A model missing from MODELS_DIR is exported there first (torchvision, random weights, opset 13).
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time


def best(cmd, runs):
    t = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True)
        t.append(time.perf_counter() - t0)
    return min(t)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("amanda")
    ap.add_argument("models_dir")
    ap.add_argument("--models", default="resnet50,vit_b_16")
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as work:
        for name in a.models.split(","):
            src = os.path.join(a.models_dir, name + ".onnx")
            if not os.path.exists(src):
                import torch
                import torchvision
                m = getattr(torchvision.models, name)(weights=None).eval()
                torch.onnx.export(m, torch.randn(1, 3, 224, 224), src, opset_version=13)
            pt = os.path.join(work, name + ".pt")
            conv = best([a.amanda, "convert", src, "-o", pt], a.runs)
            load = best([sys.executable, "-c", f"import torch; torch.jit.load({pt!r})"], a.runs)
            base = best([sys.executable, "-c", "import torch"], a.runs)
            print(f"{name}: convert {conv:.2f} s, torch.jit.load process {load:.2f} s (of which `import torch` {base:.2f} s), "
                  f"ratio convert/load {conv / load:.2f}")


if __name__ == "__main__":
    main()
