#!/usr/bin/python3
"""Which torchvision classification models convert: trace, convert, compare with torch.

    /usr/bin/python3 scripts/torch_models_sweep.py build/amanda [MODEL ...] [--all] [--grad] [--reader script]

Models: torchvision.models.list_models(module=torchvision.models) (torchvision 0.14 has it; the 80
classification models), random weights, a seeded 1x3x224x224 input (299x299 for inception_v3).
Each is traced under torch.no_grad() (with --grad: without it, as a user who forgets it does),
saved, converted by `amanda convert --input-shape ... --reader READER`, run in onnxruntime-node,
and compared with torch's output (max abs difference within 1e-4, torch's output not all zero).
Without model names and --all: one small model per family. Prints one line per model and a
summary; exit 1 when a model fails.

With --speed, each model is also exported by torch.onnx.export (opset 13) in a new Python process
(`/usr/bin/python3 -c 'import torch; torch.onnx.export(torch.jit.load(PT), ...)'`, the saved
module that amanda converts; where torch cannot export it, the eager module rebuilt the same way),
timed as a whole beside the whole `amanda convert` command (one run each, same go), and the ratio
torch / amanda is printed; the summary gives the smallest ratio (issue 14: at least 10x).
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch
import torchvision

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SMALL = ["alexnet", "convnext_tiny", "densenet121", "efficientnet_b0", "efficientnet_v2_s", "googlenet", "inception_v3",
         "maxvit_t", "mnasnet0_5", "mobilenet_v2", "mobilenet_v3_large", "regnet_x_400mf", "regnet_y_400mf", "resnet18",
         "resnext50_32x4d", "shufflenet_v2_x0_5", "squeezenet1_1", "swin_t", "swin_v2_t", "vgg11", "vit_b_32",
         "wide_resnet50_2"]
TOL = 1e-4


def sane_batch_norm(m, x):
    """Random weights without trained BatchNorm statistics can blow activations up layer after
    layer (inception_v3: outputs near 1e12, where float32 rounding alone differs by far more than
    1e-4). When torch's output exceeds 100, the BatchNorm running statistics are set as training
    would set them: a cumulative average (momentum None) over one training-mode pass on 8 random
    inputs, then eval() again; and the Linear layers get torch.nn.Linear's own default
    initialisation (std about 1/sqrt(3 * fan_in)) instead of the model's std-0.1 init, which for
    inception_v3's 2048-input classifier makes logits near 6 whose float32 rounding alone is
    2e-4 (torch float32 vs float64: 2.1e-4; torch.onnx.export's own model vs torch: 2.9e-4). The
    model's ops and the tolerance stay the same; returns True when it did so."""
    with torch.no_grad():
        if float(m(x).abs().max()) <= 1e2:
            return False
        bns = [b for b in m.modules() if isinstance(b, torch.nn.modules.batchnorm._BatchNorm)]
        if not bns:
            return False
        for b in bns:
            b.reset_running_stats()
            b.momentum = None
        for lin in m.modules():
            if isinstance(lin, torch.nn.Linear):
                lin.reset_parameters()
        m.train()
        m(torch.randn(8, *x.shape[1:], generator=torch.Generator().manual_seed(2)))
        m.eval()
    return True


def small_residual_gammas(m):
    """The last BatchNorm of each residual block (ResNet's Bottleneck.bn3 / BasicBlock.bn2) gets
    gammas drawn from U(0, 0.5), as trained ResNets have them small (the reason torchvision offers
    `zero_init_residual`; zero itself would make every branch vanish). With gamma 1 the residual sums
    of 33-50 random blocks make resnet101/152 so ill-conditioned that torch's own float32 output is
    2.3e-4 / 7.5e-4 from its float64 output, more than the 1e-4 bound, even with calibrated
    BatchNorm statistics; with these gammas it is 2.2e-7 / 8.8e-7 (outputs near 0.85 / 2.9). The
    ops and the bound stay the same; returns the number of blocks changed."""
    from torchvision.models.resnet import BasicBlock, Bottleneck
    n = 0
    with torch.no_grad():
        for mod in m.modules():
            bn = mod.bn3 if isinstance(mod, Bottleneck) else mod.bn2 if isinstance(mod, BasicBlock) else None
            if bn is not None:
                bn.weight.uniform_(0.0, 0.5, generator=torch.Generator().manual_seed(3 + n))
                n += 1
    return n


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("amanda")
    ap.add_argument("models", nargs="*")
    ap.add_argument("--all", action="store_true", help="every classification model of torchvision")
    ap.add_argument("--grad", action="store_true", help="trace without torch.no_grad()")
    ap.add_argument("--reader", default="script")
    ap.add_argument("--speed", action="store_true", help="also time torch.onnx.export in a new process")
    a = ap.parse_args()
    ratios = []
    names = a.models or (torchvision.models.list_models(module=torchvision.models) if a.all else SMALL)
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            size = 299 if name == "inception_v3" else 224
            torch.manual_seed(0)
            kwargs = {"aux_logits": False, "init_weights": True} if name in ("inception_v3", "googlenet") else {}
            m = torchvision.models.get_model(name, weights=None, **kwargs).eval()
            with torch.no_grad():
                for p in m.parameters():
                    if p.dim() >= 1 and float(p.abs().max()) == 0:
                        p.normal_(0, 0.02)  # heads that start at zero would make the output trivially zero
            x = torch.randn(1, 3, size, size, generator=torch.Generator().manual_seed(1))
            small_residual_gammas(m)
            calibrated = sane_batch_norm(m, x)
            pt = os.path.join(tmp, name + ".pt")
            t0 = time.time()
            if a.grad:
                tm = torch.jit.trace(m, x, check_trace=False)
            else:
                with torch.no_grad():
                    tm = torch.jit.trace(m, x, check_trace=False)
            torch.jit.save(tm, pt)
            with torch.no_grad():
                ref = m(x).numpy()
            out = os.path.join(tmp, name + ".onnx")
            t1 = time.time()
            big = sum(p.numel() * p.element_size() for p in m.parameters()) > 1.5 * 2**30  # regnet_y_128gf: over protobuf's 2 GiB
            r = subprocess.run([a.amanda, "convert", pt, "--input-shape", f"1,3,{size},{size}", "--reader", a.reader, "-o", out]
                               + (["--external-data"] if big else []),
                               capture_output=True, text=True)
            t2 = time.time()
            speed = ""
            if a.speed and r.returncode == 0:
                speed = torch_export_speed(name, pt, size, tmp, t2 - t1, a.grad, ratios)
            if r.returncode != 0:
                lines = [l for l in (r.stdout + r.stderr).splitlines() if "x" in l and "::" in l][:4]
                results.append((name, "convert_failed", " | ".join(l.strip() for l in lines) or (r.stdout + r.stderr)[-300:]))
                print(f"{name:<22} convert failed ({t2 - t1:.1f} s): {results[-1][2][:300]}", flush=True)
                continue
            xin = os.path.join(tmp, "x.bin")
            x.numpy().astype("<f4").tofile(xin)
            import onnx
            g = onnx.load(out, load_external_data=False).graph
            inp = [i.name for i in g.input if i.name not in {t.name for t in g.initializer}][0]
            jf = os.path.join(tmp, "jobs.json")
            json.dump([{"model": out, "inputs": {inp: {"file": xin, "shape": list(x.shape)}}, "out": os.path.join(tmp, "o")}], open(jf, "w"))
            subprocess.run(["node", os.path.join(ROOT, "tests", "js", "ort_run_typed.js"), jf], capture_output=True, text=True)
            res = json.load(open(os.path.join(tmp, "o.json")))
            if "error" in res:
                results.append((name, "ort_failed", res["error"][:300]))
                print(f"{name:<22} onnxruntime failed: {res['error'][:300]}", flush=True)
                continue
            got = np.fromfile(os.path.join(tmp, "o.0.bin"), dtype="<f4").reshape(res["outputs"][0]["shape"])
            diff = float(np.max(np.abs(got - ref))) if got.shape == ref.shape else float("inf")
            ok = diff <= TOL and float(np.abs(ref).max()) > 0
            noise = ""
            if not ok:  # how far torch's own float32 output is from float64: the model's conditioning
                import copy
                with torch.no_grad():
                    ref64 = copy.deepcopy(m).double()(x.double()).numpy()
                noise = f"; torch float32 vs float64 {float(np.max(np.abs(ref - ref64))):.3g}, ours vs float64 {float(np.max(np.abs(got - ref64))):.3g}"
            results.append((name, "passed" if ok else "mismatch", f"{diff:.3g}"))
            print(f"{name:<22} {'ok' if ok else 'MISMATCH'}: max abs diff {diff:.3g} (max abs {float(np.abs(ref).max()):.3g}"
                  f"{', BatchNorm statistics calibrated' if calibrated else ''}); "
                  f"trace {t1 - t0:.1f} s, convert {t2 - t1:.2f} s{speed}{noise}", flush=True)
    n = sum(s == "passed" for _, s, _ in results)
    print(f"{n}/{len(results)} models convert and match torch ({'without' if a.grad else 'under'} torch.no_grad(), reader {a.reader})")
    if ratios:
        done = [r for r in ratios if r[1] is not None]
        low = min(done, key=lambda r: r[1]) if done else None
        print(f"speed: torch.onnx.export (new process) / amanda convert over {len(done)} models: "
              + (f"smallest {low[1]:.1f}x ({low[0]}), median {sorted(r[1] for r in done)[len(done) // 2]:.1f}x" if low else "none")
              + (f"; torch.onnx.export fails on {', '.join(r[0] for r in ratios if r[1] is None)}" if len(done) < len(ratios) else ""))
    return 0 if n == len(results) else 1


def torch_export_speed(name, pt, size, tmp, t_amanda, grad, ratios):
    """torch.onnx.export in a new Python process, the whole process timed; falls back to the
    eager module (rebuilt as main() builds it, exported with grad enabled as users call it, which
    avoids torch's fused attention that torch.onnx.export cannot export) where torch cannot export
    the saved one."""
    sub = os.path.join(tmp, "torch_export")  # torch's output (and its external data over 2 GiB)
    out = os.path.join(sub, name + ".onnx")
    x = f"torch.randn(1, 3, {size}, {size})"
    ctx = "contextlib.nullcontext()" if grad else "torch.no_grad()"
    codes = [f"import contextlib, torch\nm = torch.jit.load({pt!r}).eval()\nwith {ctx}: torch.onnx.export(m, ({x},), {out!r}, opset_version=13)",
             f"import contextlib, torch, torchvision\ntorch.manual_seed(0)\n"
             f"m = torchvision.models.get_model({name!r}, weights=None"
             + (", aux_logits=False, init_weights=True" if name in ("inception_v3", "googlenet") else "") + ").eval()\n"
             f"torch.onnx.export(m, ({x},), {out!r}, opset_version=13)"]  # grad on, as users call it: no fused attention
    err = ""
    for which, code in zip(("saved module", "eager module"), codes):
        os.makedirs(sub, exist_ok=True)
        t0 = time.time()
        r = subprocess.run(["/usr/bin/python3", "-c", code], capture_output=True, text=True)
        t = time.time() - t0
        shutil.rmtree(sub, ignore_errors=True)
        if r.returncode == 0:
            ratios.append((name, t / t_amanda))
            return f"; torch.onnx.export ({which}, new process) {t:.2f} s: {t / t_amanda:.1f}x"
        err = (r.stderr.strip().splitlines() or ["?"])[-1][:160]
    ratios.append((name, None))
    return f"; torch.onnx.export fails: {err}"


if __name__ == "__main__":
    sys.exit(main())
