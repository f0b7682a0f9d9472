#!/usr/bin/python3
"""ONNX backend node tests (Debian's libonnx-testdata) through `amanda run`, and the same tests
through onnxruntime-node, in one run.

Every test_data_set_* of every model under node/ is run; each expected output_k.pb is compared
the way onnx's backend test runner does (same dtype; strings equal; numbers np.allclose with
rtol=1e-3, atol=1e-7; sequences element by element). Prints both pass counts and lists our
failures with the reason.

  node_tests.py --amanda build/amanda [--sample N | --all] [--no-ort] [--min-rate 0.97] [--failures FILE]

Without --all (and without AMANDA_NODE_TESTS_ALL=1) a deterministic sample of N tests (every k-th
name in sorted order) is run: that is what CI does.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

DATA = "/usr/share/libonnx-testdata/data/node"
HERE = os.path.dirname(os.path.abspath(__file__))


def value_type(t):
    if t.HasField("tensor_type"):
        return "tensor"
    if t.HasField("sequence_type"):
        return "seq"
    if t.HasField("optional_type"):
        return "optional"
    return "other"


def load_value(path, kind):
    data = open(path, "rb").read()
    if kind == "seq":
        s = onnx.SequenceProto()
        s.ParseFromString(data)
        return [numpy_helper.to_array(t) for t in s.tensor_values]
    if kind == "optional":
        o = onnx.OptionalProto()
        o.ParseFromString(data)
        if o.HasField("tensor_value"):
            return numpy_helper.to_array(o.tensor_value)
        if o.HasField("sequence_value"):
            return [numpy_helper.to_array(t) for t in o.sequence_value.tensor_values]
        return None
    t = onnx.TensorProto()
    t.ParseFromString(data)
    return numpy_helper.to_array(t)


def similar(ref, out, rtol=1e-3, atol=1e-7):
    """onnx.backend.test.runner's assert_similar_outputs, as a reason string or None."""
    if ref is None or out is None:
        return None if ref is None and out is None else "optional: one side empty"
    if isinstance(ref, list):
        if not isinstance(out, list) or len(ref) != len(out):
            return "sequence length differs"
        for a, b in zip(ref, out):
            r = similar(a, b, rtol, atol)
            if r:
                return r
        return None
    if isinstance(out, list):
        return "got a sequence, expected a tensor"
    ref, out = np.asarray(ref), np.asarray(out)
    if ref.dtype == object or ref.dtype.kind == "U":
        if out.dtype.kind not in "UO":
            return f"dtype {out.dtype}, expected strings"
        if ref.shape != out.shape or not all(str(a) == str(b) for a, b in zip(ref.flat, out.flat)):
            return "strings differ"
        return None
    if out.dtype != ref.dtype:
        return f"dtype {out.dtype}, expected {ref.dtype}"
    if out.shape != ref.shape:
        return f"shape {out.shape}, expected {ref.shape}"
    try:
        np.testing.assert_allclose(out, ref, rtol=rtol, atol=atol)
    except AssertionError:
        a, b = out.astype(np.float64), ref.astype(np.float64)
        bad = ~np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=True)
        return f"values differ at {int(bad.sum())} of {ref.size} elements (max abs diff {np.nanmax(np.abs(a - b)):.3g})"
    return None


def test_cases(names):
    for name in names:
        d = os.path.join(DATA, name)
        sets = sorted(x for x in os.listdir(d) if x.startswith("test_data_set_"))
        for s in sets:
            yield name, os.path.join(d, "model.onnx"), os.path.join(d, s)


def io_of(model_path):
    m = onnx.load(model_path)
    inits = {t.name for t in m.graph.initializer}
    ins = [(i.name, value_type(i.type)) for i in m.graph.input if i.name not in inits]
    outs = [(o.name, value_type(o.type)) for o in m.graph.output]
    return ins, outs


def files(ds, prefix):
    return sorted((f for f in os.listdir(ds) if f.startswith(prefix) and f.endswith(".pb")),
                  key=lambda f: int(f[len(prefix):-3]))


def run_ours(amanda, model, ds, ins, outs, tmp):
    args = [amanda, "run", model, "-q", "-o", tmp]
    for (name, kind), f in zip(ins, files(ds, "input_")):
        args += ["--input", f"{name}={os.path.join(ds, f)}"]
    p = subprocess.run(args, capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        msg = (p.stderr.strip().splitlines() or ["exit %d" % p.returncode])
        return "error: " + " / ".join(msg[-2:])[:300]
    manifest = json.load(open(os.path.join(tmp, "outputs.json")))
    got = []
    for o in manifest["outputs"]:
        arrs = [np.load(os.path.join(tmp, f), allow_pickle=False) for f in o["files"]]
        got.append(None if o["kind"] == "none" else (arrs if o["kind"] == "sequence" else arrs[0]))
    return got


NP_OF_ORT = {"float32": np.float32, "float64": np.float64, "int8": np.int8, "uint8": np.uint8, "int16": np.int16,
             "uint16": np.uint16, "int32": np.int32, "uint32": np.uint32, "int64": np.int64, "uint64": np.uint64,
             "bool": np.bool_, "float16": np.float16}


def ort_jobs(cases, work):
    jobs = []
    for k, (name, model, ds, ins, outs) in enumerate(cases):
        job = {"model": model, "inputs": [], "out": os.path.join(work, f"ort{k}")}
        ok = True
        for (iname, kind), f in zip(ins, files(ds, "input_")):
            if kind != "tensor":
                ok = False
                break
            a = load_value(os.path.join(ds, f), kind)
            path = os.path.join(work, f"ort{k}.in.{len(job['inputs'])}")
            if a.dtype == object or a.dtype.kind == "U":
                json.dump([str(x) for x in a.flat], open(path, "w"))
                dt = "string"
            else:
                dt = "bool" if a.dtype == np.bool_ else str(a.dtype)
                open(path, "wb").write(np.ascontiguousarray(a).tobytes())
            job["inputs"].append({"name": iname, "dtype": dt, "shape": list(a.shape), "file": path})
        if not ok:
            job["skip"] = "sequence/optional inputs: onnxruntime-node takes tensors only"
        jobs.append(job)
    return jobs


def ort_results(jobs):
    res = []
    for job in jobs:
        if "skip" in job:
            res.append("error: " + job["skip"])
            continue
        meta = json.load(open(job["out"] + ".json"))
        if "error" in meta:
            res.append("error: " + meta["error"][:200])
            continue
        got = []
        for k, o in enumerate(meta["outputs"]):
            raw = open(f"{job['out']}.{k}.bin", "rb").read()
            if o["type"] == "string":
                got.append(np.array(json.loads(raw), dtype=object).reshape(o["dims"]))
            else:
                got.append(np.frombuffer(raw, dtype=NP_OF_ORT[o["type"]]).reshape(o["dims"]))
        res.append(got)
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--amanda", required=True)
    ap.add_argument("--all", action="store_true")
    ap.add_argument("--sample", type=int, default=120)
    ap.add_argument("--no-ort", action="store_true")
    ap.add_argument("--min-rate", type=float, default=0.0)
    ap.add_argument("--failures", help="write our failures (name: reason) to this file")
    ap.add_argument("--only", nargs="*", help="only these test names")
    a = ap.parse_args()
    names = sorted(os.listdir(DATA))
    if a.only:
        names = [n for n in names if n in a.only]
    elif not (a.all or os.environ.get("AMANDA_NODE_TESTS_ALL") == "1"):
        step = max(1, len(names) // a.sample)
        names = names[::step]
    cases = []
    for name, model, ds in test_cases(names):
        ins, outs = io_of(model)
        cases.append((name, model, ds, ins, outs))
    work = tempfile.mkdtemp(prefix="amanda-node-tests-")
    try:
        ours_pass, failures = 0, []
        for k, (name, model, ds, ins, outs) in enumerate(cases):
            tmp = os.path.join(work, f"ours{k}")
            os.makedirs(tmp)
            got = run_ours(a.amanda, model, ds, ins, outs, tmp)
            reason = None
            if isinstance(got, str):
                reason = got
            else:
                exp = [load_value(os.path.join(ds, f), kind) for (n, kind), f in zip(outs, files(ds, "output_"))]
                if len(got) != len(exp):
                    reason = f"{len(got)} outputs, expected {len(exp)}"
                for i, (e, g) in enumerate(zip(exp, got)):
                    r = similar(e, g)
                    if r and not reason:
                        reason = f"output {outs[i][0]}: {r}"
            label = name + ("" if ds.endswith("test_data_set_0") else "/" + os.path.basename(ds))
            if reason:
                failures.append((label, reason))
            else:
                ours_pass += 1
        ort_pass = None
        if not a.no_ort:
            jobs = ort_jobs(cases, work)
            jp = os.path.join(work, "jobs.json")
            json.dump([j for j in jobs if "skip" not in j], open(jp, "w"))
            subprocess.run(["node", os.path.join(HERE, "ort_node_tests.js"), jp], check=True, timeout=3600)
            ort_pass = 0
            for (name, model, ds, ins, outs), got in zip(cases, ort_results(jobs)):
                if isinstance(got, str):
                    continue
                exp = [load_value(os.path.join(ds, f), kind) for (n, kind), f in zip(outs, files(ds, "output_"))]
                if len(got) == len(exp) and all(similar(e, g) is None for e, g in zip(exp, got)):
                    ort_pass += 1
        total = len(cases)
        print(f"amanda interpreter: {ours_pass}/{total} node tests pass ({100.0 * ours_pass / max(total, 1):.1f}%)")
        if ort_pass is not None:
            print(f"onnxruntime-node:   {ort_pass}/{total} node tests pass ({100.0 * ort_pass / max(total, 1):.1f}%)")
        for label, reason in failures:
            print(f"FAIL {label}: {reason}")
        if a.failures:
            with open(a.failures, "w") as f:
                for label, reason in failures:
                    f.write(f"{label}: {reason}\n")
        rate = ours_pass / max(total, 1)
        if rate < a.min_rate:
            print(f"pass rate {rate:.3f} is below {a.min_rate}", file=sys.stderr)
            return 1
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
