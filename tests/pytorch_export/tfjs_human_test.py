#!/usr/bin/python3
"""TF.js graph models (@vladmandic/human's) -> PyTorch through the planner's chain (TF -> ONNX ->
PyTorch, issue 29): `amanda convert model.json -o model.pt`; torch.jit.load runs it on the inputs
TF.js itself runs (tests/tensorflow/js/tfjs_run.js: deterministic mulberry32 values in [0, 1), -1
dimensions as 1) and the outputs are compared, in order, within 1e-4 relative to max(1, |x|).

    tfjs_human_test.py AMANDA [--models a,b] [--min-match K]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
JS = os.path.join(HERE, "..", "tensorflow", "js")
HUMAN = os.path.join(JS, "node_modules", "@vladmandic", "human", "models")
TOL = 1e-4


def mulberry32(seed):
    a = seed & 0xFFFFFFFF

    def imul(x, y):
        return (x * y) & 0xFFFFFFFF

    def nxt():
        nonlocal a
        a = (a + 0x6D2B79F5) & 0xFFFFFFFF
        t = a
        t = imul(t ^ (t >> 15), t | 1)
        t ^= (t + imul(t ^ (t >> 7), t | 61)) & 0xFFFFFFFF
        return ((t ^ (t >> 14)) & 0xFFFFFFFF) / 4294967296
    return nxt


def inputs_of(model_json):
    j = json.load(open(model_json))
    sig = (j.get("signature") or (j.get("userDefinedMetadata") or {}).get("signature") or {}).get("inputs")
    out = []
    for key, info in sig.items():
        shape = [max(1, int(d.get("size", 1))) for d in info.get("tensorShape", {}).get("dim", [])]
        out.append((info.get("name", key), shape, info.get("dtype", "DT_FLOAT")))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("amanda")
    ap.add_argument("--models", default="")
    ap.add_argument("--min-match", type=int, default=0)
    a = ap.parse_args()
    names = [m for m in a.models.split(",") if m] or sorted(f[:-5] for f in os.listdir(HUMAN) if f.endswith(".json") and f != "models.json")
    matched = 0
    with tempfile.TemporaryDirectory() as work:
        for n in names:
            src = os.path.join(HUMAN, n + ".json")
            pt = os.path.join(work, n + ".pt")
            r = subprocess.run([a.amanda, "convert", src, "-o", pt], capture_output=True, text=True)
            if r.returncode != 0:
                why = [l.strip() for l in (r.stdout + r.stderr).splitlines() if l.strip().startswith(("error", "unmapped")) or l.startswith("  ") and not l.startswith("    ")]
                print(f"{n:20s} refused   {' | '.join(why[:3])[:200]}")
                continue
            ins = inputs_of(src)
            if any(dt not in ("DT_FLOAT", "DT_INT32", "DT_UINT8") for _, _, dt in ins):
                print(f"{n:20s} skipped   inputs of another type")
                continue
            rnd = mulberry32(1)
            feeds = []
            for _, shape, dt in ins:  # as tfjs_run.js makes them: integers floor(r * 256)
                cnt = int(np.prod(shape))
                v = np.array([rnd() for _ in range(cnt)], dtype=np.float64).reshape(shape)
                feeds.append(torch.tensor(v.astype(np.float32) if dt == "DT_FLOAT" else np.floor(v * 256).astype(np.int32 if dt == "DT_INT32" else np.uint8)))
            ref = json.loads(subprocess.run(["node", os.path.join(JS, "tfjs_run.js"), "run", src, "1"], capture_output=True, text=True, check=True, cwd=JS).stdout)
            try:
                m = torch.jit.load(pt)
                with torch.no_grad():
                    y = m(*feeds)
            except Exception as e:  # noqa: BLE001
                print(f"{n:20s} torch failed  {str(e).strip().splitlines()[-1][:200]}")
                continue
            ys = list(y) if isinstance(y, (tuple, list)) else [y]
            refs = list(ref.values())
            if len(ys) != len(refs):
                print(f"{n:20s} differs   {len(ys)} outputs, TF.js {len(refs)}")
                continue
            worst = 0.0
            bad = None
            for u, v in zip(ys, refs):
                want = np.array(v["data"], dtype=np.float64).reshape(v["shape"])
                got = u.numpy().astype(np.float64)
                if got.shape != want.shape:
                    bad = f"shape {list(got.shape)} vs TF.js {list(want.shape)}"
                    break
                worst = max(worst, float(np.max(np.abs(got - want) / np.maximum(1.0, np.abs(want)))) if want.size else 0.0)
            assert any(np.any(np.array(v["data"]) != 0) for v in refs), n + ": TF.js's outputs are all zero"
            ok = bad is None and worst <= TOL
            matched += ok
            print(f"{n:20s} {'match' if ok else 'differs':9s} {bad or f'{worst:.2e}'}")
    print(f"summary: {matched}/{len(names)} TF.js models match in torch within {TOL}")
    return 0 if matched >= a.min_match else 1


if __name__ == "__main__":
    sys.exit(main())
