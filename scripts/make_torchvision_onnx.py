#!/usr/bin/python3
"""Exports torchvision classification models to ONNX with random weights (no download).

    /usr/bin/python3 scripts/make_torchvision_onnx.py OUT_DIR [model ...]

Zero-initialised parameters (ViT's classification head starts at zero, so its output would be all
zeros) are given random values first, so that numeric comparisons are not trivially equal.
Uses Debian's python3-torch and python3-torchvision; call it with /usr/bin/python3.
"""
import os
import sys
import time

import torch
import torchvision

MODELS = ["resnet18", "mobilenet_v2", "squeezenet1_0", "efficientnet_b0", "densenet121",
          "convnext_tiny", "vit_b_16", "swin_t"]


def build(name):
    torch.manual_seed(0)
    model = getattr(torchvision.models, name)(weights=None)
    with torch.no_grad():
        for p in model.parameters():
            if p.abs().sum() == 0:
                p.normal_(0, 0.02)
    return model.eval()


def main():
    out = sys.argv[1]
    names = sys.argv[2:] or MODELS
    os.makedirs(out, exist_ok=True)
    for name in names:
        path = os.path.join(out, name + ".onnx")
        start = time.monotonic()
        model = build(name)
        x = torch.randn(1, 3, 224, 224)
        with torch.no_grad():
            peak = model(x).abs().max().item()
        if not peak > 0:  # a head left at zero would make every numeric comparison trivially equal
            sys.exit(f"{name}: the output is all zero")
        # Written under a temporary name first, so an interrupted run leaves no partial model.
        torch.onnx.export(model, x, path + ".part", opset_version=13, input_names=["input"], output_names=["logits"])
        os.replace(path + ".part", path)
        print(path, os.path.getsize(path), "bytes, max |output|", f"{peak:.3g},", f"{time.monotonic() - start:.1f} s", flush=True)


if __name__ == "__main__":
    main()
