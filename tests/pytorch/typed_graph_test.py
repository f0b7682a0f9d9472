#!/usr/bin/env python3
"""Both TorchScript readers give typed graphs: every op's output types against torch's own run.

    typed_graph_test.py AMANDA MODELS_PT_DIR [--readers script,libtorch] [model ...]

For each of the eight torchvision models (traced, random weights; the .pt files of
torchvision_convert_test.py, made the same way), read with each reader:

    amanda convert NAME.pt --reader R --input-shape 1,3,224,224 --to pytorch/1.13 -o NAME.R.json

which writes the graph in the PyTorch namespace with every op output's element type and shape
(`@type`, `@shape`), and `amanda infer NAME.R.json` (the PyTorch namespace's graph-level inference,
the libtorch-free reader's shape rules run over the IR) must give the same types again from the
graph alone. torch's own run: the torchvision model traced once more on a 1x3x224x224 input (tracing runs
every op and records the sizes it saw), and the (kind, dtype, shape) of every aten op's tensor
outputs in its inlined graph (overload names dropped, in-place `relu_` as `relu`). Every typed op
output of ours must be one of those, counted with multiplicity: the readers fold, fuse and order
some ops differently (the libtorch reader folds batch norms into convolutions, the script reader
folds what only parameters compute, such as swin's relative position bias), so the check is
order-free and ours may have fewer. Fails on any output not found, and on an output that some op
reads left untyped. Prints the counts.
"""
import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile

import shutil

import torch
import torchvision

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import torchvision_convert_test as tvc  # noqa: E402  (the .pt files, made once)

DTYPES = {torch.float32: "float32", torch.float64: "float64", torch.int64: "int64", torch.int32: "int32",
          torch.bool: "bool", torch.float16: "float16", torch.uint8: "uint8", torch.int8: "int8"}


def kind(k):
    k = k.split(".")[0]
    return k[:-1] if k.endswith("_") and not k.endswith("__") else k


def torch_run(name):
    m = getattr(torchvision.models, name)(weights=None).eval()
    with torch.no_grad():
        tr = torch.jit.trace(m, torch.randn(1, 3, 224, 224), check_trace=False)
    seq = []
    for n in tr.inlined_graph.nodes():
        if not n.kind().startswith("aten::"):
            continue
        for o in n.outputs():
            t = o.type()
            if isinstance(t, torch._C.TensorType) and t.sizes() is not None:
                seq.append((kind(n.kind()), DTYPES.get(t.dtype(), str(t.dtype())), list(t.sizes())))
    return seq


def ours(path):
    g = json.load(open(path))["graph"]
    read = {(e["output_port"]["op"], e["output_port"]["port"]) for e in g.get("edges", [])}
    seq, untyped = [], []
    for op in g.get("ops", []):
        if not op["type"].startswith("aten::"):
            continue
        for p in op.get("output_ports", []):
            a = p.get("attrs") or {}
            if "@type" not in a or "@shape" not in a:
                # An output nothing reads may be an undefined tensor (the attention weights of
                # _native_multi_head_attention with need_weights=False): not a value of the model.
                if (op.get("name"), p["name"]) in read:
                    untyped.append(f"{op['type']} {op.get('name', '')}:{p['name']}")
                continue
            seq.append((kind(op["type"]), a["@type"], a["@shape"]))
    return seq, untyped


def compare(mine, theirs):
    """Every typed output of ours is one torch's run also produced: (kind, dtype, shape) counted
    with multiplicity (order-free: the readers fold, fuse and order some ops differently). Returns
    how many of ours are found, and the others with the shapes torch gave that kind."""
    have = collections.Counter((k, d, tuple(s)) for k, d, s in theirs)
    found, bad = 0, []
    for i, (k, d, s) in enumerate(mine):
        key = (k, d, tuple(s))
        if have[key] > 0:
            have[key] -= 1
            found += 1
        else:
            seen = sorted({f"{dd}{list(ss)}" for kk, dd, ss in theirs if kk == k})[:4]
            bad.append(f"{k} #{i}: ours {d}{s}; torch's run has no more of it (its {k} outputs: {', '.join(seen) or 'none'})")
    return found, bad


UNTYPED = {"graph": {"name": "mini", "namespace": "amanda/pytorch/1.13",
                     "input_ports": [{"name": "x", "attrs": {"graph_input": True, "type": "float32", "shape": [2, 3]}}],
                     "output_ports": [{"name": "y"}],
                     "ops": [{"type": "aten::abs", "name": "a", "input_ports": [{"name": "self"}], "output_ports": [{"name": "result", "attrs": {"@value": "ax"}}]},
                             {"type": "aten::relu6", "name": "r", "input_ports": [{"name": "self"}], "output_ports": [{"name": "result", "attrs": {"@value": "y"}}]}],
                     "edges": [{"output_port": {"op": "mini", "port": "x"}, "input_port": {"op": "a", "port": "self"}},
                               {"output_port": {"op": "a", "port": "result"}, "input_port": {"op": "r", "port": "self"}},
                               {"output_port": {"op": "r", "port": "result"}, "input_port": {"op": "mini", "port": "y"}}]}}


def untyped_graph_converts(amanda):
    """The mapping engine uses the namespace's inference: a PyTorch graph from a text file whose op
    outputs carry no types (aten::abs -> aten::relu6, whose rule needs its input's element type)
    converts to ONNX, and onnxruntime gives torch's relu6(abs(x))."""
    with tempfile.TemporaryDirectory() as tmp:
        src, out = os.path.join(tmp, "mini.json"), os.path.join(tmp, "mini.onnx")
        json.dump(UNTYPED, open(src, "w"))
        r = subprocess.run([amanda, "convert", src, "--to", "onnx/13", "-o", out], capture_output=True, text=True)
        if r.returncode != 0:
            return [f"an untyped PyTorch graph does not convert: {r.stderr[-300:]}"]
        x = (torch.arange(6, dtype=torch.float32).reshape(2, 3) - 2.5) * 3
        x.numpy().tofile(os.path.join(tmp, "x.bin"))
        jobs = os.path.join(tmp, "jobs.json")
        json.dump([{"model": out, "inputs": {"x": {"file": os.path.join(tmp, "x.bin"), "shape": [2, 3]}},
                    "out": os.path.join(tmp, "res")}], open(jobs, "w"))
        ROOT = os.path.dirname(os.path.dirname(HERE))
        r = subprocess.run(["node", os.path.join(ROOT, "tests", "js", "ort_run_typed.js"), jobs], capture_output=True, text=True)
        import numpy as np
        try:
            got = np.fromfile(os.path.join(tmp, "res.0.bin"), dtype=np.float32).reshape(2, 3)
        except Exception as e:  # noqa: BLE001
            return [f"onnxruntime did not run the converted untyped graph: {r.stderr[-300:]} {e}"]
        want = torch.nn.functional.relu6(x.abs()).numpy()
        if not np.allclose(got, want, atol=1e-6) or not want.any():
            return [f"the converted untyped graph computes {got.tolist()}, torch {want.tolist()}"]
        print("untyped PyTorch graph: converts through the namespace's inference, onnxruntime matches torch")
        return []


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("amanda")
    ap.add_argument("models_dir")
    ap.add_argument("--readers", default="script,libtorch")
    ap.add_argument("models", nargs="*")
    a = ap.parse_args()
    # The comparison can fail: a planted wrong shape, a wrong dtype and one output too many are found.
    assert compare([("conv", "float32", [1, 64, 112, 112])], [("conv", "float32", [1, 64, 56, 56])])[1]
    assert compare([("conv", "float64", [1])], [("conv", "float32", [1])])[1]
    assert compare([("relu", "float32", [2]), ("relu", "float32", [2])], [("relu", "float32", [2])])[1]
    os.makedirs(a.models_dir, exist_ok=True)
    failures = []
    totals = [0, 0]
    with tempfile.TemporaryDirectory() as tmp:
        for name in a.models or tvc.MODELS:
            pt = tvc.make(a.models_dir, name)
            theirs = torch_run(name)
            for reader in a.readers.split(","):
                out = os.path.join(tmp, f"{name}.{reader}.json")
                r = subprocess.run([a.amanda, "convert", pt, "--reader", reader, "--input-shape", "1,3,224,224",
                                    "--to", "pytorch/1.13", "-o", out], capture_output=True, text=True)
                if r.returncode != 0:
                    failures.append(f"{name} ({reader}): convert exit {r.returncode}: {r.stderr[-400:]}")
                    continue
                mine, untyped = ours(out)
                # The graph alone (no reader): the namespace's inference gives the same types again.
                stripped = os.path.join(tmp, f"{name}.{reader}.stripped.json")
                doc = json.load(open(out))
                for op in doc["graph"].get("ops", []):
                    for p in op.get("output_ports", []):
                        for k in ("@type", "@shape"):
                            (p.get("attrs") or {}).pop(k, None)
                json.dump(doc, open(stripped, "w"))
                data = out + ".data"
                if os.path.exists(data):
                    shutil.copy(data, stripped + ".data")
                    doc_text = open(stripped).read().replace(os.path.basename(data), os.path.basename(stripped) + ".data")
                    open(stripped, "w").write(doc_text)
                inferred = os.path.join(tmp, f"{name}.{reader}.inferred.json")
                r = subprocess.run([a.amanda, "infer", stripped, "-o", inferred], capture_output=True, text=True)
                again = None
                if r.returncode != 0:
                    failures.append(f"{name} ({reader}): amanda infer exit {r.returncode}: {r.stderr[-400:]}")
                else:
                    again, untyped_again = ours(inferred)
                    if again != mine:
                        diff = [f"{x} vs {y}" for x, y in zip(mine, again) if x != y][:3]
                        failures.append(f"{name} ({reader}): amanda infer gives other types than the reader "
                                        f"({len(again)} typed, {len(untyped_again)} untyped; {diff})")
                found, bad = compare(mine, theirs)
                totals[0] += found
                totals[1] += len(mine)
                print(f"{name} ({reader}): {len(mine)} typed aten outputs, {len(untyped)} untyped; torch's run "
                      f"{len(theirs)}; {found} found in torch's run, {len(bad)} not; "
                      f"amanda infer {'agrees' if again == mine else 'DIFFERS'}")
                if untyped:
                    failures.append(f"{name} ({reader}): untyped outputs: {untyped[:5]}")
                if bad:
                    failures.append(f"{name} ({reader}): {len(bad)} types differ from torch's: {bad[:5]}")
    failures += untyped_graph_converts(a.amanda)
    print(f"total: {totals[0]} of {totals[1]} typed op outputs found in torch's run")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
