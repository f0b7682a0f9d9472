#!/usr/bin/python3
"""ONNX's backend node tests (Debian's libonnx-testdata) -> TorchScript (issue 29).

Each test model is converted with `amanda convert model.onnx -o model.pt`; a converted one is run by
torch.jit.load (no Amanda in the process) on the test's inputs and compared with the test's expected
outputs (ONNX's reference) within 1e-5 relative to max(1, |x|). Reports converted / refused (with
the reason's first line) / matched, and the refusals grouped by op.

    node_tests_sweep.py AMANDA [--every K] [--min-match N] [--report FILE] [--match REGEX]

CI runs every K-th test (default 10, a deterministic sample); AMANDA_NODE_SWEEP_ALL=1 runs all.
"""
import argparse
import collections
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import torch
from onnx import numpy_helper

DATA = "/usr/share/libonnx-testdata/data/node"
TOL = 1e-5


def load_pbs(folder, prefix, types, elems=()):
    """The test's values: tensors as arrays, sequences (ONNX's SequenceProto) as lists of arrays;
    `types` are the model's value types ('tensor_type', 'sequence_type', ...) in order."""
    out = []
    files = sorted(glob.glob(os.path.join(folder, prefix + "_*.pb")), key=lambda p: int(re.findall(r"_(\d+)\.pb$", p)[0]))
    for i, f in enumerate(files):
        with open(f, "rb") as fh:
            data = fh.read()
        if i < len(types) and types[i] == "sequence_type":
            q = onnx.SequenceProto()
            q.ParseFromString(data)
            out.append([np.asarray(x) for x in numpy_helper.to_list(q)])
        else:
            t = onnx.TensorProto()
            t.ParseFromString(data)
            a = numpy_helper.to_array(t)
            if t.data_type == onnx.TensorProto.BFLOAT16 or (i < len(elems) and elems[i] == onnx.TensorProto.BFLOAT16 and a.dtype == np.uint16):
                # numpy has no bfloat16: onnx gives the raw bits; torch takes them as a bfloat16 tensor
                a = torch.from_numpy(a.astype(np.uint16).view(np.int16).copy()).view(torch.bfloat16)
            out.append(a)
    return out


def to_numpy(u):
    """A result as numpy (bfloat16 as float32, which holds every bfloat16 exactly)."""
    if isinstance(u, torch.Tensor):
        return (u.float() if u.dtype == torch.bfloat16 else u).numpy()
    return u if isinstance(u, list) else np.asarray(u)


def to_torch(x):
    if isinstance(x, list):
        return [to_torch(e) for e in x]
    if isinstance(x, torch.Tensor):
        return x
    return torch.from_numpy(np.array(x))  # (a copy: writable, contiguous, and 0-d stays 0-d, which ascontiguousarray makes 1-d)


def compare(got, want):
    if isinstance(want, list):
        if not isinstance(got, (list, tuple)):
            return "a tensor where a sequence was expected"
        if len(got) != len(want):
            return f"a sequence of {len(got)}, expected {len(want)}"
        for u, w in zip(got, want):
            bad = compare(to_numpy(u), w)
            if bad:
                return "in a sequence: " + bad
        return None
    got = np.asarray(got)
    want = np.asarray(want)
    if got.shape != want.shape:
        return f"shape {list(got.shape)} != {list(want.shape)}"
    if want.dtype == bool or got.dtype == bool or want.dtype.kind in "iu":
        return None if np.array_equal(got.astype(want.dtype), want) else "values differ"
    g = got.astype(np.float64)
    w = want.astype(np.float64)
    if not np.array_equal(np.isnan(g), np.isnan(w)):
        return "NaN positions differ"
    m = ~np.isnan(w)
    with np.errstate(invalid="ignore"):  # equal infinities are equal
        err = np.where(g[m] == w[m], 0.0, np.abs(g[m] - w[m]) / np.maximum(1.0, np.abs(w[m]))) if m.any() else np.zeros(1)
    e = float(np.max(err)) if err.size else 0.0
    return None if e <= TOL else f"differs by {e:.2e}"


ORT_TYPES = {"float32", "float64", "int8", "uint8", "int16", "int32", "int64", "bool"}


def check_with_onnxruntime(work, recheck, lines, counts):
    """Tests whose .pt differs from the test's expected outputs: run the model in onnxruntime
    (tests/js/ort_run_typed.js, one process) on the same inputs and compare with it, since the issue
    measures against onnxruntime (the window functions' expected data were made with a rounded pi)."""
    if not recheck:
        return
    js = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "js")
    jobs = []
    for k, (t, src, ins, ys, bad, at) in enumerate(recheck):
        names = [i.name for i in onnx.load(src).graph.input if i.name not in {x.name for x in onnx.load(src).graph.initializer}]
        feeds = {}
        for j, (n, x) in enumerate(zip(names, ins)):
            f = os.path.join(work, f"ort{k}_{j}.bin")
            np.ascontiguousarray(x).tofile(f)
            feeds[n] = {"file": f, "shape": list(x.shape), "type": x.dtype.name}
        jobs.append({"model": src, "inputs": feeds, "out": os.path.join(work, f"ort{k}")})
    path = os.path.join(work, "ort_jobs.json")
    with open(path, "w") as f:
        json.dump(jobs, f)
    ok = subprocess.run(["node", os.path.join(js, "ort_run_typed.js"), path], cwd=js, capture_output=True).returncode == 0
    for k, (t, src, ins, ys, bad, at) in enumerate(recheck):
        verdict = "onnxruntime not run"
        meta_path = os.path.join(work, f"ort{k}.json")
        if ok and os.path.exists(meta_path):
            meta = json.load(open(meta_path))
            if "error" in meta:
                verdict = "onnxruntime: " + meta["error"][:120]
            else:
                ref = [np.fromfile(os.path.join(work, f"ort{k}.{j}.bin"), dtype=np.dtype(o["type"])).reshape(o["shape"])
                       for j, o in enumerate(meta["outputs"])]
                diff = next((d for d in (compare(u, w) for u, w in zip(ys, ref)) if d), None) if len(ref) == len(ys) else "output count"
                if diff is None:
                    counts["matched"] += 1
                    counts["matched_ort_only"] += 1
                    lines[at] = f"{t}: matched onnxruntime (the test's expected outputs: {bad})"
                    continue
                verdict = "onnxruntime: " + diff
        counts["differs"] += 1
        lines[at] = f"{t}: converted, {bad}; {verdict}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("amanda")
    ap.add_argument("--every", type=int, default=10)
    ap.add_argument("--min-match", type=int, default=0)
    ap.add_argument("--report", default=None)
    ap.add_argument("--match", default=None, help="only the tests whose name matches this regular expression (all of them)")
    a = ap.parse_args()
    tests = sorted(d for d in os.listdir(DATA) if os.path.isfile(os.path.join(DATA, d, "model.onnx")))
    if a.match:
        tests = [t for t in tests if re.search(a.match, t)]
    elif not os.environ.get("AMANDA_NODE_SWEEP_ALL"):
        tests = tests[:: a.every]
    counts = collections.Counter()
    refusals = collections.Counter()
    by_op = collections.Counter()
    by_op_reason = {}
    lines = []
    recheck = []
    with tempfile.TemporaryDirectory() as work:
        for t in tests:
            src = os.path.join(DATA, t, "model.onnx")
            pt = os.path.join(work, t + ".pt")
            model = onnx.load(src)
            ops = sorted({n.op_type for n in model.graph.node})
            init = {i.name for i in model.graph.initializer}
            in_types = [i.type.WhichOneof("value") for i in model.graph.input if i.name not in init]
            out_types = [o.type.WhichOneof("value") for o in model.graph.output]
            # the declared element types (the test data hold bfloat16 as uint16 bits)
            in_elems = [i.type.tensor_type.elem_type for i in model.graph.input if i.name not in init]
            out_elems = [o.type.tensor_type.elem_type for o in model.graph.output]
            r = subprocess.run([a.amanda, "convert", src, "-o", pt], capture_output=True, text=True)
            if r.returncode != 0:
                why = [l.strip() for l in (r.stderr + "\n" + r.stdout).splitlines() if l.strip() and "cpuinfo" not in l]
                # the first error, else the first op type the report lists under "unmapped:"
                reason = next((l for l in why if l.startswith("error") or "error:" in l), None)
                if reason is None:  # a rule's refusal (its reason), else the first op no rule maps
                    k = next((i for i, l in enumerate(why) if l.startswith("cannot be converted")), None)
                    if k is not None and k + 1 < len(why):
                        reason = "cannot be converted: " + " ".join(why[k + 1].split())
                if reason is None:
                    k = next((i for i, l in enumerate(why) if l.startswith("unmapped")), None)
                    reason = "no rule: " + why[k + 1] if k is not None and k + 1 < len(why) else (why[0] if why else "?")
                counts["refused"] += 1
                refusals[",".join(ops)] += 1
                # by the op the reason names (the first of the test's op types it mentions)
                named = next((o for o in sorted(ops, key=len, reverse=True) if re.search(r"\b" + o + r"\b", reason)), None)
                if named is None:  # an op the test's function bodies hold, or a type the writer refuses
                    hit = re.search(r"(?:cannot be converted|no rule): (\S+)", reason) or re.search(r"(element type \w+)", reason)
                    named = hit.group(1) if hit else "?"
                by_op[named] += 1
                by_op_reason.setdefault(named, reason[:160])
                lines.append(f"{t}: refused: {reason[:200]}")
                continue
            counts["converted"] += 1
            ds = os.path.join(DATA, t, "test_data_set_0")
            ins, outs = load_pbs(ds, "input", in_types, in_elems), load_pbs(ds, "output", out_types, out_elems)
            try:
                m = torch.jit.load(pt)
                with torch.no_grad():
                    y = m(*[to_torch(x) for x in ins])
                # several outputs are a tuple; one sequence output is a list
                ys = list(y) if isinstance(y, tuple) or (isinstance(y, list) and len(outs) > 1) else [y]
                bad = None
                if len(ys) != len(outs):
                    bad = f"{len(ys)} outputs, expected {len(outs)}"
                for u, w in zip(ys, outs):
                    bad = bad or compare(to_numpy(u), to_numpy(w))
            except Exception as e:  # noqa: BLE001 - reported per test
                bad = "torch: " + (str(e).strip().splitlines() or ["?"])[-1][:200]
            if bad and not bad.startswith("torch:") and all(it == "tensor_type" for it in in_types) and all(
                    isinstance(x, np.ndarray) and x.dtype.name in ORT_TYPES for x in ins):
                # not the test's expected data: checked against onnxruntime below (the measure)
                recheck.append((t, src, ins, [to_numpy(u) for u in ys], bad, len(lines)))
                lines.append(None)
            elif bad:
                counts["differs"] += 1
                lines.append(f"{t}: converted, {bad}")
            else:
                counts["matched"] += 1
                lines.append(f"{t}: matched")
        check_with_onnxruntime(work, recheck, lines, counts)
    text = "\n".join(lines)
    summary = (f"{len(tests)} node tests: {counts['converted']} converted, {counts['refused']} refused, "
               f"{counts['matched']} matched ({counts['matched_ort_only']} of them onnxruntime but not the test's expected data), "
               f"{counts['differs']} converted but not matching")
    top = "\n".join(f"  {n:4d}  {ops}" for ops, n in refusals.most_common(25))
    top += "\n\nrefused, by the op the reason names (count, op, one reason):\n" + "\n".join(
        f"  {n:4d}  {op}: {by_op_reason[op]}" for op, n in by_op.most_common())
    if a.report:
        with open(a.report, "w") as f:
            f.write(summary + "\n\nrefused, by the test's ops:\n" + top + "\n\n" + text + "\n")
    print(text)
    print("refused, by the test's ops (most common):\n" + top)
    print(summary)
    return 0 if counts["matched"] >= a.min_match else 1


if __name__ == "__main__":
    sys.exit(main())
