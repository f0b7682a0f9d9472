#!/usr/bin/env python3
"""Models beyond classification: segmentation (dict outputs), video, recurrent, transformer encoder.

    more_models_test.py AMANDA [model ...]

Each model (random weights, seeded inputs) is traced (strict=False: dict outputs), converted by
`amanda convert --reader script`, checked by onnx.checker, run in onnxruntime-node
(tests/js/ort_run_typed.js), and every output compared with torch's (max abs difference within
1e-4, torch's output not constant; torch's outputs are the traced module's):

- lraspp_mobilenet_v3_large (dict output {"out"}), a 2-layer bidirectional torch.nn.LSTM and
  torch.nn.GRU (output sequence and final hidden state), a torch.nn.TransformerEncoder (2 layers)
  over an nn.Embedding with a src_key_padding_mask (int64 tokens and a bool mask as inputs):
  always. The recurrent models and the segmentation model are traced both under torch.no_grad()
  and without it; the encoder without it (under no_grad torch 1.13 takes the nested-tensor fast
  path, _nested_tensor_from_mask / to_padded_tensor, which the table has no rules for).
- fcn_resnet50, deeplabv3_mobilenet_v3_large, r3d_18 (video, 1x3x8x112x112): only with
  AMANDA_TEST_BIG_MODELS=1 (they take about a minute together in CI).
Exit 1 on any failure.
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
TOL = 1e-4


class Rnn(torch.nn.Module):
    def __init__(self, kind):
        super().__init__()
        self.r = getattr(torch.nn, kind)(8, 16, num_layers=2, bidirectional=True, batch_first=True)

    def forward(self, x):
        y, h = self.r(x)
        return y, (h[0] if isinstance(h, tuple) else h)


class Enc(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(100, 32)
        self.enc = torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(32, 4, 64, batch_first=True), 2)

    def forward(self, tok, mask):
        return self.enc(self.emb(tok), src_key_padding_mask=mask)


def seg(fn):
    return lambda: fn(weights=None, weights_backbone=None)


def img(*shape):
    return lambda: (torch.randn(*shape, generator=torch.Generator().manual_seed(1)),)


MODELS = {  # name: (make module, make inputs, trace modes, big)
    "lraspp_mobilenet_v3_large": (seg(torchvision.models.segmentation.lraspp_mobilenet_v3_large), img(1, 3, 224, 224), ("no_grad", "grad"), False),
    "lstm": (lambda: Rnn("LSTM"), img(2, 5, 8), ("no_grad", "grad"), False),
    "gru": (lambda: Rnn("GRU"), img(2, 5, 8), ("no_grad", "grad"), False),
    "transformer_encoder": (Enc, lambda: (torch.randint(0, 100, (2, 7), generator=torch.Generator().manual_seed(1)),
                                          torch.tensor([[False] * 7, [False] * 4 + [True] * 3])), ("grad",), False),
    "fcn_resnet50": (lambda: torchvision.models.segmentation.fcn_resnet50(weights=None, weights_backbone=None, aux_loss=False),
                     img(1, 3, 224, 224), ("no_grad", "grad"), True),
    "deeplabv3_mobilenet_v3_large": (seg(torchvision.models.segmentation.deeplabv3_mobilenet_v3_large), img(1, 3, 224, 224), ("no_grad", "grad"), True),
    "r3d_18": (lambda: torchvision.models.video.r3d_18(weights=None), img(1, 3, 8, 112, 112), ("no_grad", "grad"), True),
}
TYPES = {torch.float32: "float32", torch.int64: "int64", torch.bool: "bool"}
NP = {"float32": np.float32, "int64": np.int64, "bool": np.bool_}


def flat(o):
    if isinstance(o, dict):
        return [t for v in o.values() for t in flat(v)]
    if isinstance(o, (tuple, list)):
        return [t for v in o for t in flat(v)]
    return [o]


def main():
    amanda = sys.argv[1]
    big = os.environ.get("AMANDA_TEST_BIG_MODELS") == "1"
    names = sys.argv[2:] or [n for n, v in MODELS.items() if big or not v[3]]
    failures, checked = [], 0
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            make, inputs, modes, _ = MODELS[name]
            for mode in modes:
                key = f"{name}[{mode}]"
                torch.manual_seed(0)
                m = make().eval()
                xs = inputs()
                if mode == "no_grad":
                    with torch.no_grad():
                        tm = torch.jit.trace(m, xs, check_trace=False, strict=False)
                else:
                    tm = torch.jit.trace(m, xs, check_trace=False, strict=False)
                # the traced module's outputs (the eager encoder under no_grad takes the nested-tensor
                # fast path, which writes zeros at padded positions where the traced graph computes values)
                with torch.no_grad():
                    refs = [t.numpy() for t in flat(tm(*xs))]
                pt = os.path.join(tmp, f"{name}.{mode}.pt")
                tm.save(pt)
                out = os.path.join(tmp, f"{name}.{mode}.onnx")
                cmd = [amanda, "convert", pt, "--reader", "script", "-o", out]
                for x in xs:
                    cmd += ["--input-shape", ",".join(map(str, x.shape)), "--input-type", TYPES[x.dtype]]
                r = subprocess.run(cmd, capture_output=True, text=True)
                if r.returncode != 0:
                    failures.append(f"{key}: amanda convert failed (exit {r.returncode}): {r.stdout[-1200:]}{r.stderr[-600:]}")
                    continue
                try:
                    onnx.checker.check_model(out, full_check=True)
                except Exception as e:  # noqa: BLE001
                    failures.append(f"{key}: onnx.checker: {str(e).splitlines()[0]}")
                g = onnx.load(out, load_external_data=False).graph
                init = {t.name for t in g.initializer}
                ins = [i.name for i in g.input if i.name not in init]
                feeds = {}
                for k, (n, x) in enumerate(zip(ins, xs)):
                    f = os.path.join(tmp, f"{name}.{mode}.in{k}.bin")
                    x.numpy().tofile(f)
                    feeds[n] = {"file": f, "shape": list(x.shape), "type": TYPES[x.dtype]}
                jf = os.path.join(tmp, "jobs.json")
                prefix = os.path.join(tmp, f"{name}.{mode}.out")
                json.dump([{"model": out, "inputs": feeds, "out": prefix}], open(jf, "w"))
                rr = subprocess.run(["node", os.path.join(ROOT, "tests", "js", "ort_run_typed.js"), jf], capture_output=True, text=True)
                res = json.load(open(prefix + ".json")) if os.path.exists(prefix + ".json") else {"error": rr.stderr[-400:]}
                if "error" in res:
                    failures.append(f"{key}: onnxruntime: {res['error'][:400]}")
                    continue
                if len(res["outputs"]) != len(refs):
                    failures.append(f"{key}: {len(res['outputs'])} outputs, torch gives {len(refs)}")
                    continue
                worst = 0.0
                for k, ref in enumerate(refs):
                    o = res["outputs"][k]
                    got = np.fromfile(f"{prefix}.{k}.bin", dtype=NP.get(o["type"], np.float32)).reshape(o["shape"])
                    diff = float(np.max(np.abs(got - ref))) if got.shape == ref.shape else float("inf")
                    worst = max(worst, diff)
                    if not diff <= TOL or float(np.std(ref)) == 0:
                        failures.append(f"{key} output {k}: max abs difference {diff:.3g} (shape {got.shape} vs {ref.shape})")
                checked += 1
                print(f"{key}: {len(refs)} outputs, max abs difference {worst:.3g}", flush=True)
    for f in failures:
        print("FAIL", f)
    print(f"{checked} model variants run; {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
