#!/usr/bin/python3
"""Control flow on data: scripted modules with `if` / `for` / `while` on the input's values
(prim::If / prim::Loop) converted to ONNX If / Loop with their bodies.

  control_flow_test.py AMANDA [--readers libtorch,auto,script]

Each case is scripted (torch.jit.script) and saved, converted with both readers (`script`, the
libtorch-free one, and `libtorch`; `auto` for two), checked with onnx.checker (full_check) and run
in onnxruntime-node on several inputs that take different branches and trip counts; every output
must match torch's (rtol 1e-3, atol 1e-5, same shapes) and the graph must hold an If or a Loop.
A loop appending to a list is refused by both (exit 1, nothing written; the libtorch-free
reader's message names the construct and the line). Without the plugin only `script` runs.
"""
import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile

from typing import List

import numpy as np
import onnx
import torch
from torch import Tensor

HERE = os.path.dirname(os.path.abspath(__file__))
ORT_RUN = os.path.join(HERE, "..", "js", "ort_run_typed.js")


class IfData(torch.nn.Module):  # if on a data value
    def forward(self, x):
        if bool(x.sum() > 0):
            y = x * 2.0
        else:
            y = x - 1.0
        return y


class ForData(torch.nn.Module):  # for loop over a data-dependent count
    def forward(self, x, n):
        y = x
        for i in range(int(n)):
            y = y * 0.5 + x
        return y


class While(torch.nn.Module):  # while loop on data, with a counter
    def forward(self, x):
        y = x
        i = 0
        while bool(y.abs().sum() < 100.0) and i < 20:
            y = y * 2.0
            i += 1
        return y


class WhileNe(torch.nn.Module):  # while on an int counter compared with a data count (aten::ne.int)
    def forward(self, x, n):
        y = x
        i = 0
        m = int(n)
        while i != m:
            y = y * 1.5 - x
            i = i + 1
        return y


class Carry2(torch.nn.Module):  # a loop carrying two tensors, two outputs
    def forward(self, x, n):
        a = x
        b = x + 1.0
        for i in range(int(n)):
            a, b = b, a + b
        return a, b


class NestedIf(torch.nn.Module):  # if on data inside a loop
    def forward(self, x, n):
        y = x
        for i in range(int(n)):
            if bool(y.sum() > 0):
                y = y - 1.0
            else:
                y = y + 2.0
        return y


class IfNoElse(torch.nn.Module):  # an if without else: the other branch passes the outer value on
    def forward(self, x):
        y = x
        if bool(x.max() > 1.0):
            y = torch.relu(x) - 1.0
        return y + x


class ListInput(torch.nn.Module):  # forward(images: List[Tensor]), as detection models take it
    def forward(self, images: List[Tensor]):
        x = images[0]
        if bool(x.mean() > 0):
            y = x * 2.0
        else:
            y = -x
        return y


class Append(torch.nn.Module):  # a loop appending to a list, then torch.stack: a Loop scan output
    def forward(self, x, n):
        l = []
        y = x
        for i in range(int(n)):
            y = y + 1.0
            l.append(y)
        return torch.stack(l)


class AppendCat(torch.nn.Module):  # the same with torch.cat, and a second list
    def forward(self, x, n):
        l = []
        m = []
        y = x
        for i in range(int(n)):
            y = y * 0.5
            l.append(y)
            m.append(y + x)
        return torch.cat(l), torch.stack(m)


class AppendIf(torch.nn.Module):  # appending under an if on data: refused
    def forward(self, x, n):
        l = [x]
        y = x
        for i in range(int(n)):
            y = y + 1.0
            if bool(y.sum() > 0):
                l.append(y)
        return torch.cat(l)


class Grow(torch.nn.Module):  # a carried tensor whose shape changes: refused by the libtorch-free reader
    def forward(self, x, n):
        y = x
        for i in range(int(n)):
            y = torch.cat([y, x])
        return y


class Break(torch.nn.Module):  # break on data (TorchScript makes it a while loop with a bool carried)
    def forward(self, x, n):
        y = x
        for i in range(int(n)):
            y = y + 1.0
            if bool(y.sum() > 10.0):
                break
        return y


def rnd(seed, shape, scale=1.0, shift=0.0):
    return (np.random.default_rng(seed).standard_normal(shape) * scale + shift).astype(np.float32)


X = (2, 3)
# case: (module, input shapes, input types, list of input sets)
CASES = {
    "if_data": (IfData, [X], ["float32"], [[rnd(1, X, 1, 2)], [rnd(2, X, 1, -2)]]),
    "for_data": (ForData, [X, ()], ["float32", "int64"],
                 [[rnd(3, X), np.array(0, np.int64)], [rnd(4, X), np.array(3, np.int64)]]),
    "while": (While, [X], ["float32"], [[rnd(5, X, 0.1)], [rnd(6, X, 30)]]),
    "while_ne": (WhileNe, [X, ()], ["float32", "int64"], [[rnd(17, X), np.array(3, np.int64)], [rnd(18, X), np.array(0, np.int64)]]),
    "carry_two": (Carry2, [X, ()], ["float32", "int64"], [[rnd(7, X), np.array(4, np.int64)], [rnd(8, X), np.array(1, np.int64)]]),
    "if_no_else": (IfNoElse, [X], ["float32"], [[rnd(11, X, 0.1)], [rnd(12, X, 1, 1)]]),
    "list_input": (ListInput, [(3, 4, 4)], ["float32"], [[rnd(13, (3, 4, 4), 1, 0.5)], [rnd(14, (3, 4, 4), 1, -0.5)]]),
    "break": (Break, [X, ()], ["float32", "int64"], [[rnd(15, X), np.array(9, np.int64)], [rnd(16, X), np.array(2, np.int64)]]),
    "append_stack": (Append, [X, ()], ["float32", "int64"], [[rnd(19, X), np.array(4, np.int64)], [rnd(20, X), np.array(1, np.int64)]]),
    "append_cat": (AppendCat, [X, ()], ["float32", "int64"], [[rnd(21, X), np.array(3, np.int64)], [rnd(22, X), np.array(2, np.int64)]]),
    "nested_if": (NestedIf, [X, ()], ["float32", "int64"],
                  [[rnd(9, X, 0.5, 0.3), np.array(5, np.int64)], [rnd(10, X, 0.5, -0.3), np.array(2, np.int64)]]),
}
# List[Tensor] inputs (one --input-shape: a list of one tensor): the libtorch-free reader only
SCRIPT_ONLY = ["list_input", "append_stack", "append_cat"]
# of those, the ones whose forward() takes a list
LIST_INPUT = ["list_input"]
# the cases the `auto` reader also converts (the libtorch-free reader's path, as `script`)
AUTO = ["if_data"]
# modules refused (exit 1, nothing written), the readers that refuse them, and what the
# libtorch-free reader's message must name
REFUSED = {
    "append": (Append, [X, ()], ["float32", "int64"], "", ["libtorch"]),
    "append_if": (AppendIf, [X, ()], ["float32", "int64"], "aten::append in a prim::If/prim::Loop body", ["script", "libtorch", "auto"]),
    "grow": (Grow, [X, ()], ["float32", "int64"], "a loop on the input's values changes y", ["script"]),
}


def main():
    amanda = sys.argv[1]
    readers = sys.argv[sys.argv.index("--readers") + 1].split(",") if "--readers" in sys.argv else ["script", "libtorch", "auto"]
    failures = []
    figures = []
    with tempfile.TemporaryDirectory() as d:
        # every conversion first, two at a time (the libtorch reader's child process takes ~1.5 s)
        commands, modules = {}, {}
        for name, (cls, shapes, types, *rest) in list(CASES.items()) + list(REFUSED.items()):
            pt = os.path.join(d, name + ".pt")
            modules[name] = torch.jit.script(cls().eval())
            modules[name].save(pt)
            args = []
            for s, t in zip(shapes, types):
                args += ["--input-shape", ",".join(map(str, s)), "--input-type", t]
            if name in CASES:
                runs = [r for r in readers if (r != "auto" or name in AUTO) and (r == "script" or name not in SCRIPT_ONLY)]
            else:
                runs = [r for r in readers if r in rest[1]]
            for reader in runs:
                commands[(name, reader)] = [amanda, "convert", pt, *args, "--reader", reader, "-o", os.path.join(d, f"{name}.{reader}.onnx")]
        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            done = dict(zip(commands, pool.map(lambda c: subprocess.run(c, capture_output=True, text=True), commands.values())))
        jobs, expect = [], []
        for name, (cls, shapes, types, sets) in CASES.items():
            m = modules[name]
            for reader in [r for (n, r) in commands if n == name]:
                out = os.path.join(d, f"{name}.{reader}.onnx")
                p = done[(name, reader)]
                if p.returncode != 0:
                    failures.append(f"{name} ({reader}): conversion failed: {p.stderr.strip()[-600:]}")
                    continue
                model = onnx.load(out)
                try:
                    onnx.checker.check_model(model, full_check=True)
                except Exception as e:  # noqa: BLE001
                    failures.append(f"{name} ({reader}): onnx.checker: {e}")
                    continue
                ops = {n.op_type for n in model.graph.node}
                if not ops & {"If", "Loop"}:
                    failures.append(f"{name} ({reader}): no If/Loop in the converted graph ({sorted(ops)})")
                names = [i.name for i in model.graph.input]
                for k, inputs in enumerate(sets):
                    feeds = {}
                    for j, (nm, a) in enumerate(zip(names, inputs)):
                        f = os.path.join(d, f"{name}.{reader}.{k}.in{j}.bin")
                        a.tofile(f)
                        feeds[nm] = {"file": f, "shape": list(a.shape), "type": types[j]}
                    with torch.no_grad():
                        ts = [torch.from_numpy(a) for a in inputs]
                        ref = m(ts) if name in LIST_INPUT else m(*ts)
                    ref = [r.numpy() for r in (ref if isinstance(ref, tuple) else (ref,))]
                    prefix = os.path.join(d, f"{name}.{reader}.{k}.out")
                    jobs.append({"model": out, "inputs": feeds, "out": prefix})
                    expect.append((f"{name} ({reader}) input set {k}", prefix, ref))
        for name, (cls, shapes, types, needle, refusers) in REFUSED.items():
            for reader in [r for (n, r) in commands if n == name]:
                out = os.path.join(d, f"{name}.{reader}.onnx")
                p = done[(name, reader)]
                bad = p.returncode != 1 or os.path.exists(out)
                if reader == "script" and (needle not in p.stderr or "__torch__.py:" not in p.stderr):
                    bad = True
                if bad:
                    failures.append(f"{name} ({reader}): expected a refusal (exit 1, no output"
                                    f"{', naming ' + needle if reader == 'script' else ''}), got exit {p.returncode}: {p.stderr.strip()[-300:]}")
        jf = os.path.join(d, "jobs.json")
        with open(jf, "w") as f:
            json.dump(jobs, f)
        subprocess.run(["node", ORT_RUN, jf], check=True)
        for label, prefix, ref in expect:
            with open(prefix + ".json") as f:
                res = json.load(f)
            if "error" in res:
                failures.append(f"{label}: onnxruntime: {res['error']}")
                continue
            if len(res["outputs"]) != len(ref):
                failures.append(f"{label}: {len(res['outputs'])} outputs, torch gives {len(ref)}")
                continue
            worst = 0.0
            for k, (o, r) in enumerate(zip(res["outputs"], ref)):
                got = np.fromfile(f"{prefix}.{k}.bin", dtype=np.float32).reshape(o["shape"])
                if got.shape != r.shape:
                    failures.append(f"{label}: output {k} has shape {got.shape}, torch {r.shape}")
                    continue
                if not np.allclose(got, r, rtol=1e-3, atol=1e-5):
                    failures.append(f"{label}: output {k} differs by {np.abs(got - r).max():.3g}")
                worst = max(worst, float(np.abs(got - r).max()))
            figures.append(f"{label}: max abs difference {worst:.2g} (torch's max abs {max(float(np.abs(r).max()) for r in ref):.3g})")
    for f in figures:
        print(f)
    for f in failures:
        print("FAIL:", f)
    print(f"{len(expect)} runs compared, {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
