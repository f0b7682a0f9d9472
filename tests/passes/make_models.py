#!/usr/bin/python3
"""Makes the models the optimize comparisons use (random weights, no download).

    /usr/bin/python3 tests/passes/make_models.py OUT_DIR [name ...]

- torchvision classifiers exported with do_constant_folding=False (what a user gets when folding is
  left to an optimizer), the batch dimension symbolic (N) in the *_dyn variants;
- resnet18_train: BatchNormalization exported in training mode (training=TRAINING, training_mode=1:
  batch statistics, nothing to fuse);
- encoder: torch.nn.TransformerEncoder (2 layers, d_model 64, 4 heads), batch symbolic;
- gpt: a GPT-style block (a LayerNorm written out, causal self-attention with a tril mask, a GELU
  MLP) at opset 17, batch symbolic.
Each model's reference input is written beside it as NAME.input.bin (float32) with its shape in
NAME.json.
"""
import json
import math
import os
import sys

import torch
import torchvision

TV = ["resnet18", "mobilenet_v2", "squeezenet1_0", "efficientnet_b0", "densenet121", "convnext_tiny", "vit_b_16", "swin_t"]


def tv_model(name):
    torch.manual_seed(0)
    m = getattr(torchvision.models, name)(weights=None)
    with torch.no_grad():
        for p in m.parameters():
            if p.abs().sum() == 0:
                p.normal_(0, 0.02)
        # BatchNorm statistics that are not the identity, so that a wrong fusion shows
        for mod in m.modules():
            if isinstance(mod, torch.nn.BatchNorm2d):
                mod.running_mean.uniform_(-0.5, 0.5)
                mod.running_var.uniform_(0.5, 1.5)
                mod.weight.uniform_(0.5, 1.5)
                mod.bias.uniform_(-0.5, 0.5)
    return m.eval()


class LayerNormByHand(torch.nn.Module):
    def __init__(self, d, eps=1e-5):
        super().__init__()
        self.w = torch.nn.Parameter(torch.rand(d) + 0.5)
        self.b = torch.nn.Parameter(torch.rand(d) - 0.5)
        self.eps = eps

    def forward(self, x):
        mean = x.mean(-1, keepdim=True)
        d = x - mean
        var = d.pow(2).mean(-1, keepdim=True)
        return d / torch.sqrt(var + self.eps) * self.w + self.b


class GPTBlock(torch.nn.Module):
    def __init__(self, d=64, heads=4, ctx=16):
        super().__init__()
        self.ln1, self.ln2 = LayerNormByHand(d), LayerNormByHand(d)
        self.qkv = torch.nn.Linear(d, 3 * d)
        self.proj = torch.nn.Linear(d, d)
        self.fc = torch.nn.Linear(d, 4 * d)
        self.out = torch.nn.Linear(4 * d, d)
        self.heads = heads
        self.register_buffer("mask", torch.tril(torch.ones(ctx, ctx)).view(1, 1, ctx, ctx))

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.qkv(self.ln1(x)).split(C, dim=2)
        h = self.heads
        q = q.view(B, T, h, C // h).transpose(1, 2)
        k = k.view(B, T, h, C // h).transpose(1, 2)
        v = v.view(B, T, h, C // h).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.mask[:, :, :T, :T] == 0, float("-inf"))
        att = torch.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
        x = x + self.proj(y)
        return x + self.out(torch.nn.functional.gelu(self.fc(self.ln2(x))))


def export(model, x, path, opset, dynamic, training=torch.onnx.TrainingMode.EVAL):
    kw = {}
    if dynamic:
        kw["dynamic_axes"] = {"input": {0: "N"}, "output": {0: "N"}}
    torch.onnx.export(model, x, path + ".part", opset_version=opset, input_names=["input"], output_names=["output"],
                      do_constant_folding=False, training=training, **kw)
    os.replace(path + ".part", path)
    x.numpy().astype("float32").tofile(path[:-5] + ".input.bin")
    with open(path[:-5] + ".json", "w") as f:
        json.dump({"input": "input", "shape": list(x.shape)}, f)


def make(out, name):
    path = os.path.join(out, name + ".onnx")
    torch.manual_seed(1)
    base = name[:-4] if name.endswith("_dyn") else name
    dynamic = name.endswith("_dyn")
    if base in TV:
        x = torch.randn(1, 3, 224, 224)
        export(tv_model(base), x, path, 13, dynamic)
    elif base == "resnet18_train":
        m = tv_model("resnet18").train()
        export(m, torch.randn(2, 3, 224, 224), path, 14, False, torch.onnx.TrainingMode.TRAINING)
    elif base in ("encoder_static", "gpt_static"):
        torch.manual_seed(0)
        if base == "encoder_static":
            layer = torch.nn.TransformerEncoderLayer(d_model=64, nhead=4, dim_feedforward=128, batch_first=True, dropout=0.1)
            export(torch.nn.TransformerEncoder(layer, 2).eval(), torch.randn(2, 10, 64), path, 14, False)
        else:
            export(GPTBlock().eval(), torch.randn(2, 16, 64), path, 17, False)
    elif base == "encoder":
        torch.manual_seed(0)
        layer = torch.nn.TransformerEncoderLayer(d_model=64, nhead=4, dim_feedforward=128, batch_first=True, dropout=0.1)
        m = torch.nn.TransformerEncoder(layer, 2).eval()
        export(m, torch.randn(2, 10, 64), path, 14, True)
    elif base == "gpt":
        torch.manual_seed(0)
        m = GPTBlock().eval()
        export(m, torch.randn(2, 16, 64), path, 17, True)
    else:
        sys.exit(f"unknown model {name}")
    print(path, os.path.getsize(path), flush=True)


ALL = TV + ["resnet18_dyn", "vit_b_16_dyn", "resnet18_train", "encoder", "gpt", "encoder_static", "gpt_static"]

if __name__ == "__main__":
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for n in sys.argv[2:] or ALL:
        if not os.path.exists(os.path.join(out, n + ".onnx")):
            make(out, n)
