#!/usr/bin/python3
"""torchvision's classification (segmentation, video) models -> ONNX -> TorchScript (.pt) -> torch.jit.load (issue 29).

Every model `torchvision.models.list_models(module=torchvision.models)` names (torchvision 0.14:
80) is made here with random weights as a trained model would hold them, not tuned to a test: seeded
by its name; every parameter or buffer that torchvision initialises to all zeros (biases, the ViTs'
head) gets values of the size its module's default initialisation gives, so that no term vanishes;
every BatchNorm's running statistics are calibrated on random batches in train mode, as training
sets them (calibrate_batchnorm). Then it is exported by torch.onnx at opset 13, converted with
`amanda convert M.onnx -o M.pt`, run by torch.jit.load and compared with onnxruntime
(tests/js/ort_run.js) on the same random input within 1e-5 relative to max(1, |x|).

A model whose .pt differs by more than 1e-5 is reported as "differs" with, beside it, how far torch's
own eager model is from onnxruntime on the same input (`eager-vs-ort`) and from itself on the input
changed by one ulp per element (`eager-vs-eager(input + 1 ulp)`): when those miss 1e-5 too, float32
rounding alone moves the model's output that far, whichever library computes it (see
docs/pytorch-export.md); it still counts as not matched. Beside it the float64 proof
(float64_proof: the model in float64 -> a DOUBLE ONNX graph -> .pt, against torch's float64 eager
model within 1e-9; onnxruntime runs no float64 Conv) shows whether the conversion itself is exact;
a proof that fails fails the run. --float64 misses (default) | all | none.

    torchvision_sweep.py AMANDA [--family classification|segmentation|video] [--every K] [--offset J] [--models a,b] [--min-match M] [--json OUT] [--float64 misses|all|none]

CI runs a deterministic sample (every K-th model of the sorted list, starting at J);
AMANDA_TORCHVISION_SWEEP_ALL=1 runs all 80. One model at a time: its files are deleted before the
next, so the largest (vit_h_14: 2.5 GB) bounds the disk and memory used.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch
import torchvision

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from torchvision_export_test import ort_run, worst  # noqa: E402  (the same runner and measure)

TOL = 1e-5
F64_TOL = 1e-9  # the float64 proof: float64 rounding through a deep network stays far below
INPUT_SIZE = {"inception_v3": (299, 299), "s3d": (16, 224, 224), "mvit_v1_b": (16, 224, 224), "mvit_v2_s": (16, 224, 224)}
FAMILIES = {  # --family: the torchvision module listing the models, and the input's shape after N, C
    "classification": (torchvision.models, (224, 224)),
    "segmentation": (torchvision.models.segmentation, (224, 224)),
    "video": (torchvision.models.video, (8, 112, 112)),  # 8 frames (the models take any count; 16 is only slower)
}


class Outputs(torch.nn.Module):
    """A segmentation model's dict of outputs as a tuple (torch.onnx exports tuples)."""

    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, x):
        y = self.m(x)
        return tuple(y[k] for k in sorted(y)) if isinstance(y, dict) else y


CALIBRATION_BATCHES = 3  # random batches of 2 whose statistics BatchNorm's running mean and variance take


def fill_zero_initialised(m, g):
    """Give every parameter or buffer torchvision initialises to all zeros values of the size its
    module's default initialisation gives (so that no term of the computation vanishes, and no
    layer is scaled as no trained model is): a zero weight of a Linear or convolution (the ViTs'
    head, zero-initialised for fine-tuning) gets torch's default init, U(-1/sqrt(fan_in),
    1/sqrt(fan_in)) (kaiming_uniform with a = sqrt(5)); a zero bias the same bound from its module's
    fan-in; anything else (BatchNorm's beta, class tokens) N(0, 0.1). BatchNorm's running
    statistics are set by calibrate_batchnorm afterwards."""
    for mod in m.modules():
        w = getattr(mod, "weight", None)
        fan_in = w[0].numel() if isinstance(w, torch.Tensor) and w.dim() >= 2 else 0
        for pname, t in list(mod.named_parameters(recurse=False)) + list(mod.named_buffers(recurse=False)):
            if not t.is_floating_point() or not t.numel() or t.any():
                continue
            if fan_in and pname in ("weight", "bias"):
                b = 1.0 / fan_in ** 0.5
                t.copy_((torch.rand(t.shape, generator=g) * 2 - 1) * b)
            else:
                t.copy_(torch.randn(t.shape, generator=g) * 0.1)


def calibrate_batchnorm(m, input_shape, g):
    """Set every BatchNorm's running mean and variance as training would: the model in train mode
    (momentum None: the cumulative average over the batches) on a few random batches of the
    distribution the sweep's inputs come from, under no_grad, then eval(). With torchvision's
    defaults (mean 0, variance 1) a random-weight network's activations grow layer by layer (outputs
    up to 3e4), amplifying float32 rounding; a trained model's statistics normalise them."""
    bns = [mod for mod in m.modules() if isinstance(mod, torch.nn.modules.batchnorm._BatchNorm)]
    if not bns:
        return
    for bn in bns:
        bn.reset_running_stats()
        bn.momentum = None
    m.train()
    with torch.no_grad():
        for _ in range(CALIBRATION_BATCHES):
            m(torch.randn((2,) + input_shape, generator=g))
    m.eval()


def make_model(name, family):
    torch.manual_seed(sum(map(ord, name)))
    kw = {"weights_backbone": None} if family == "segmentation" else {}
    m = Outputs(getattr(FAMILIES[family][0], name)(weights=None, **kw)).eval()
    g = torch.Generator().manual_seed(29)
    with torch.no_grad():
        fill_zero_initialised(m, g)
    calibrate_batchnorm(m, (3,) + (INPUT_SIZE.get(name) or FAMILIES[family][1]), g)
    return m


# the float32 outputs of the model run_one ran last (the .pt's, onnxruntime's, torch eager's): the
# float64 proof measures each one's distance from the float64 result
FLOAT32_OUTPUTS = {}


def run_one(name, family, amanda, work, x):
    m = make_model(name, family)
    src = os.path.join(work, name + ".onnx")
    pt = os.path.join(work, name + ".pt")
    try:
        with torch.no_grad():
            e = m(torch.from_numpy(x))
            eager = [t.numpy() for t in (e if isinstance(e, tuple) else (e,))]
            # how far float32 rounding alone moves this model: every input element one ulp larger
            e1 = m(torch.from_numpy(np.nextafter(x, np.float32(np.inf)).astype(np.float32)))
            eager_ulp = [t.numpy() for t in (e1 if isinstance(e1, tuple) else (e1,))]
        # (outside no_grad: there torch's attention takes its fused path, which torch.onnx cannot export)
        torch.onnx.export(m, torch.from_numpy(x), src, opset_version=13, input_names=["input"])
    except Exception as e:  # noqa: BLE001 - a model torch cannot export is reported, not ours to fix
        return ("export failed", str(e).strip().splitlines()[-1][:160])
    del m
    t0 = time.time()
    r = subprocess.run([amanda, "convert", src, "-o", pt], capture_output=True, text=True)
    conv_s = time.time() - t0
    if r.returncode != 0:
        why = [l.strip() for l in (r.stdout + r.stderr).splitlines() if l.strip().startswith(("error", "unmapped", "note: refused")) or l.startswith("  ") and not l.startswith("    ")]
        return ("refused", " | ".join(why[:4] or r.stderr.strip().splitlines()[-2:])[:400])
    xf = os.path.join(work, name + ".x.bin")
    x.tofile(xf)
    ref = ort_run([{"model": src, "inputs": {"input": {"file": xf, "shape": list(x.shape)}}, "out": os.path.join(work, name + ".ort")}], work)[0]
    if isinstance(ref, str):
        return ("ort failed", ref[:200])
    assert all(np.abs(r).max() > 0 for r in ref), name + ": an onnxruntime output is all zero"
    try:
        with torch.no_grad():
            y = torch.jit.load(pt)(torch.from_numpy(x))
        ys = [t.numpy() for t in (y if isinstance(y, (tuple, list)) else (y,))]
    except Exception as e:  # noqa: BLE001 - reported per model
        return ("torch failed", str(e).strip().splitlines()[-1][:200])
    if len(ys) != len(ref):
        return ("differs", f"{len(ys)} outputs, onnxruntime has {len(ref)}")
    w = max(worst(u, v) for u, v in zip(ys, ref))
    info = f"{w:.2e} (convert {conv_s:.2f} s)"
    FLOAT32_OUTPUTS.update(pt=ys, ort=ref, eager=eager)
    if w <= TOL:
        return ("match", info)
    base = max(worst(u, v) for u, v in zip(eager, ref))
    # (a random-weight network amplifies a one-ulp change of its input layer by layer)
    ulp = max(worst(u, v) for u, v in zip(eager_ulp, eager))
    return ("differs", info + f"; eager-vs-ort {base:.2e}, .pt-vs-ort/eager-vs-ort {w / base:.2f}, .pt-vs-eager {max(worst(u, v) for u, v in zip(ys, eager)):.2e}, "
            f"eager-vs-eager(input + 1 ulp) {ulp:.2e}, max|out| {max(float(np.abs(v).max()) for v in ref):.3g}")


def float64_proof(name, family, amanda, work, x):
    """The conversion checked without float32 rounding: the same model (make_model is deterministic)
    in float64 (`.double()`) exported by torch.onnx on the float64 input (a DOUBLE graph: its
    initializers, Constants, Cast targets and graph types float64, constants folded in float64),
    converted by `amanda convert`, run by torch.jit.load in float64 and compared with the float64
    eager model on the same input, within F64_TOL relative to max(1, |x|). Torch's eager model is the
    reference: onnxruntime has no float64 Conv. A float32 export rewritten to DOUBLE would not do:
    torch.onnx folds BatchNorm into the convolutions' weights in float32, a rounding the network
    amplifies to 8e-6 (docs/pytorch-export.md). Returns (worst difference, None, the float32
    outputs' distances from the float64 result) or (None, why, {})."""
    m = make_model(name, family).double()
    xd = torch.from_numpy(x.astype(np.float64))
    src = os.path.join(work, name + ".f64.onnx")
    pt = os.path.join(work, name + ".f64.pt")
    try:
        with torch.no_grad():
            e = m(xd)
        eager = [t.numpy() for t in (e if isinstance(e, tuple) else (e,))]
        torch.onnx.export(m, xd, src, opset_version=13, input_names=["input"])
    except Exception as e:  # noqa: BLE001 - torch's limit, reported
        return None, "float64 export failed: " + str(e).strip().splitlines()[-1][:160], {}
    del m
    r = subprocess.run([amanda, "convert", src, "-o", pt], capture_output=True, text=True)
    os.remove(src)
    if r.returncode != 0:
        return None, "float64 refused: " + " | ".join((r.stdout + r.stderr).strip().splitlines()[:4])[:400], {}
    with torch.no_grad():
        y = torch.jit.load(pt)(xd)
    ys = [t.numpy() for t in (y if isinstance(y, (tuple, list)) else (y,))]
    if any(t.dtype != np.float64 for t in ys) or len(ys) != len(eager):
        return None, "float64 .pt gives " + ", ".join(str(t.dtype) for t in ys), {}
    assert all(np.abs(v).max() > 0 for v in eager), name + ": a float64 eager output is all zero"
    # each float32 result's distance from the float64 one: the conversion adds nothing beyond the
    # float32 floor when the .pt is as near to it as onnxruntime and torch's eager model are
    far = {k: max(worst(u, v) for u, v in zip(FLOAT32_OUTPUTS[k], eager)) for k in ("pt", "ort", "eager") if k in FLOAT32_OUTPUTS}
    return max(worst(u, v) for u, v in zip(ys, eager)), None, far


def with_float64(name, family, amanda, work, x, result, when):
    """The float64 proof added to a model's result: for every model (when == "all") or those that
    differ in float32 ("misses"). Its verdict is reported beside the float32 one, never instead."""
    if when == "none" or result[0] not in ("match", "differs") or (when == "misses" and result[0] == "match"):
        return result, None
    w, why, far = float64_proof(name, family, amanda, work, x)
    if w is None:
        return (result[0], result[1] + "; " + why), False
    ok = w <= F64_TOL
    vs = ", ".join(f"{k}-vs-float64 {v:.2e}" for k, v in far.items())
    return (result[0], result[1] + f"; float64 .pt-vs-eager {w:.2e} ({'exact' if ok else 'NOT within ' + str(F64_TOL)}); float32 {vs}"), ok


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("amanda")
    ap.add_argument("--family", choices=sorted(FAMILIES), default="classification")
    ap.add_argument("--every", type=int, default=1)
    ap.add_argument("--offset", type=int, default=0)
    ap.add_argument("--models", default="")
    ap.add_argument("--min-match", type=int, default=None)
    ap.add_argument("--json", default="")
    ap.add_argument("--float64", choices=("misses", "all", "none"), default="misses",
                    help="run the float64 proof (float64_proof) for the models that differ (default), every model, or none")
    a = ap.parse_args()
    names = sorted(torchvision.models.list_models(module=FAMILIES[a.family][0]))
    if os.environ.get("AMANDA_TORCHVISION_SWEEP_ALL"):  # CI runs a sample; this runs the whole family
        pass
    elif a.models:
        names = a.models.split(",")
    else:
        names = names[a.offset::a.every]
    rng = np.random.default_rng(29)
    results = {}
    proofs = {}
    for n in names:
        FLOAT32_OUTPUTS.clear()
        with tempfile.TemporaryDirectory() as work:
            t0 = time.time()
            s = INPUT_SIZE.get(n)
            x = rng.standard_normal((1, 3) + (s or FAMILIES[a.family][1]), dtype=np.float32)
            results[n], proofs[n] = with_float64(n, a.family, a.amanda, work, x, run_one(n, a.family, a.amanda, work, x), a.float64)
        print(f"{n:22s} {results[n][0]:13s} {results[n][1]}  [{time.time() - t0:.0f} s]", flush=True)
    counts = {}
    for st, _ in results.values():
        counts[st] = counts.get(st, 0) + 1
    matched = counts.get("match", 0)
    print(f"summary: {len(results)} models: " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items())) + f" (within {TOL} relative to max(1, |x|))")
    ran = [n for n, p in proofs.items() if p is not None]
    if ran:
        exact = sum(1 for n in ran if proofs[n])
        print(f"float64 proof: {exact} of {len(ran)} exact within {F64_TOL} (.pt vs torch eager, both float64)"
              + "".join(f"; {n} not" for n in ran if not proofs[n]))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)
    need = len(results) if a.min_match is None else a.min_match
    if matched < need:
        print(f"FAIL: {matched} matched, need {need}")
        return 1
    if any(p is False for p in proofs.values()):
        print("FAIL: a float64 proof failed")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
