#!/usr/bin/env python3
"""amanda convert of a saved TorchScript module vs torch.onnx.export of the same module, one go.

    /usr/bin/python3 scripts/torch_convert_speed.py AMANDA MODELS_DIR [model ...]

For each torchvision model (made as tests/pytorch/torchvision_convert_test.py makes it: random
weights, traced, torch.jit.save'd to MODELS_DIR/NAME.pt): the wall time of the whole command
`amanda convert NAME.pt --input-shape 1,3,224,224 -o OUT.onnx` (process start, import with the
reader --reader picks: the libtorch-free one by default, conversion, writing the file), best of
--reps, against torch.onnx.export(module, x,
OUT.onnx, opset_version=13) on the same loaded module in this process, best of --reps, and of
the eager torchvision module the .pt was traced from, and as a user waits for it: a new
`python3 -c 'import torch; torch.onnx.export(torch.jit.load(PT), ...)'` process (cold, like
amanda's; where torch cannot export the saved module, the eager module in the new process).
Prints the times and the ratios torch.onnx.export / amanda ("fails" where torch.onnx.export
cannot export the module).

Names of tests/pytorch/more_models_test.py (lraspp_mobilenet_v3_large, lstm, gru,
transformer_encoder, fcn_resnet50, deeplabv3_mobilenet_v3_large, r3d_18; `--more` for all of
them) are traced as that test traces them (under torch.no_grad(), strict=False) with its inputs,
and timed the same way against a new process's torch.onnx.export of the saved module.
scripts/torch_models_sweep.py --speed does the same for every classification model.
"""
import argparse
import contextlib
import os
import subprocess
import sys
import tempfile
import time

import torch
import torchvision

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "pytorch"))
import torchvision_convert_test as tv  # noqa: E402
import more_models_test as mm  # noqa: E402


def best(fn, reps):
    t = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        try:
            fn()
        except Exception as e:  # noqa: BLE001 - torch.onnx's error types vary
            return "fails: " + str(e).splitlines()[0][:90]
        t = min(t, time.perf_counter() - t0)
    return t


def cell(t, ta):
    if isinstance(t, str):
        return f"{'fails':>10} {'':>7}"
    return f"{t:9.2f}s {t / ta:6.1f}x"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("amanda")
    ap.add_argument("models_dir")
    ap.add_argument("models", nargs="*", default=tv.MODELS)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--reader", default="auto", choices=["auto", "script", "libtorch"])
    ap.add_argument("--more", action="store_true", help="the models of tests/pytorch/more_models_test.py")
    a = ap.parse_args()
    if a.more or any(n in mm.MODELS for n in a.models):
        return more_models(a, list(mm.MODELS) if a.more else a.models)
    os.makedirs(a.models_dir, exist_ok=True)
    print(f"amanda convert --reader {a.reader}; ratios are torch.onnx.export's time / amanda's")
    print(f"{'model':16} {'amanda convert':>15}  {'export(saved .pt)':>18}  {'export(eager module)':>18}  {'new python process':>18}")
    with tempfile.TemporaryDirectory() as tmp:
        for name in a.models:
            pt = tv.make(a.models_dir, name)
            out = os.path.join(tmp, name + ".onnx")

            def amanda():
                subprocess.run([a.amanda, "convert", pt, "--input-shape", "1,3,224,224", "--reader", a.reader, "-o", out, "-q"],
                               check=True)

            m = torch.jit.load(pt).eval()
            x = torch.randn(1, 3, 224, 224)

            def export():
                with torch.no_grad():
                    torch.onnx.export(m, (x,), out, opset_version=13)

            torch.manual_seed(0)
            eager = getattr(torchvision.models, name)(weights=None).eval()

            def export_eager():  # as users call it (grad enabled: no fused attention fast path)
                torch.onnx.export(eager, (x,), out, opset_version=13)

            code = ("import torch; m = torch.jit.load(%r).eval(); "
                    "torch.onnx.export(m, (torch.randn(1, 3, 224, 224),), %r, opset_version=13)" % (pt, out))

            def cold():
                subprocess.run(["/usr/bin/python3", "-c", code], check=True, capture_output=True)

            # Where torch.onnx.export cannot export the saved module (vit_b_16's fused attention),
            # what a user would do instead: export the eager module, in a new process too.
            code_eager = ("import torch, torchvision; torch.manual_seed(0); "
                          "m = torchvision.models.%s(weights=None).eval(); "
                          "torch.onnx.export(m, (torch.randn(1, 3, 224, 224),), %r, opset_version=13)" % (name, out))

            def cold_eager():
                subprocess.run(["/usr/bin/python3", "-c", code_eager], check=True, capture_output=True)

            ta = best(amanda, a.reps)
            te = best(export, a.reps)
            tg = best(export_eager, a.reps)
            tc = best(cold, a.reps)
            note = ""
            if isinstance(tc, str):
                print(f"    new process, saved module: {tc}")
                tc = best(cold_eager, a.reps)
                note = "  (new process: the eager module)"
            print(f"{name:16} {ta:14.2f}s  {cell(te, ta)}  {cell(tg, ta)}  {cell(tc, ta)}{note}", flush=True)
            for t in (te, tg, tc):
                if isinstance(t, str):
                    print(f"    {t}")


def more_models(a, names):
    """Segmentation, video, recurrent and encoder models: amanda convert (the whole command) against
    torch.onnx.export of the same saved module in a new Python process, best of --reps each."""
    print(f"amanda convert --reader script; torch.onnx.export in a new process; ratio = torch / amanda (best of {a.reps})")
    print(f"{'model':30} {'amanda convert':>15}  {'torch.onnx.export':>18}")
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            make, inputs, modes, _ = mm.MODELS[name]
            torch.manual_seed(0)
            m = make().eval()
            xs = inputs()
            grad = "no_grad" not in modes  # as the test traces it (the encoder: with grad only)
            with torch.no_grad() if not grad else contextlib.nullcontext():
                tm = torch.jit.trace(m, xs, check_trace=False, strict=False)
            pt = os.path.join(tmp, name + ".pt")
            tm.save(pt)
            xin = os.path.join(tmp, name + ".inputs.pt")
            torch.save(xs, xin)
            out = os.path.join(tmp, name + ".onnx")
            cmd = [a.amanda, "convert", pt, "--reader", "script", "-o", out, "-q"]
            for x in xs:
                cmd += ["--input-shape", ",".join(map(str, x.shape)), "--input-type", mm.TYPES[x.dtype]]
            ctx = "contextlib.nullcontext()" if grad else "torch.no_grad()"
            code = ("import contextlib, torch; m = torch.jit.load(%r).eval(); xs = torch.load(%r)\n"
                    "with %s: torch.onnx.export(m, tuple(xs), %r, opset_version=13)" % (pt, xin, ctx, out + ".torch.onnx"))
            # torch.onnx.export cannot export a saved module with dict outputs (prim::DictConstruct):
            # then the eager module, rebuilt as the test builds it, with grad on as users call it.
            code_eager = ("import sys, torch; sys.path.insert(0, %r); import more_models_test as mm\n"
                          "torch.manual_seed(0); m = mm.MODELS[%r][0]().eval(); xs = torch.load(%r)\n"
                          "torch.onnx.export(m, tuple(xs), %r, opset_version=13)"
                          % (os.path.join(ROOT, "tests", "pytorch"), name, xin, out + ".torch.onnx"))
            ta = best(lambda: subprocess.run(cmd, check=True, capture_output=True), a.reps)
            tc = best(lambda: subprocess.run(["/usr/bin/python3", "-c", code], check=True, capture_output=True), a.reps)
            which = "saved module"
            if isinstance(tc, str):
                tc = best(lambda: subprocess.run(["/usr/bin/python3", "-c", code_eager], check=True, capture_output=True), a.reps)
                which = "eager module"
            if isinstance(ta, str):
                print(f"{name:30} amanda {ta}")
                continue
            print(f"{name:30} {ta:14.2f}s  {cell(tc, ta)}  ({which})", flush=True)


if __name__ == "__main__":
    main()
