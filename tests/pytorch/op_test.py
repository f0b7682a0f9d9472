#!/usr/bin/python3
"""Per-op tests of PyTorch -> ONNX, in the style of PyTorch's exporter tests.

    op_test.py AMANDA [--all] [--only REGEX] [--results FILE] [--keep DIR] [--jobs N] [-v]

For each case of tests/pytorch/op_cases.py (a small module using one aten op, several attribute
variants per op, seeded random inputs): the module is traced (torch.jit.trace) and, where the case
is valid TorchScript, scripted (torch.jit.script), saved with torch.jit.save, converted by

    amanda convert CASE.pt --input-shape S1 --input-shape S2 ... --input-type T1 ... -o CASE.onnx

and run in onnxruntime-node (tests/js/ort_run_typed.js: one Node.js process for all the cases)
on the same inputs as torch; every output must match torch's (rtol 1e-3, atol 1e-5, same shape,
integers and bools exactly). All cases are made in one Python process, the conversions run
--jobs at a time.

CI (ctest pytorch.op_tests) runs a deterministic sample: the first case of each op, traced and
scripted. `--all` or AMANDA_TORCH_OP_TESTS=all runs every case both ways.

`--opset N` converts with `amanda convert --opset N` (a later opset's ops, docs/pytorch.md "Opsets
after 13"): every written model must declare opset N and pass onnx.checker's full check, and each
op OPSET_OPS (op_cases.py) lists for an opset up to N must use the ONNX op listed there in its
passing cases; cases with min_opset above N are left out. CI (pytorch.op_tests_opset14/17) runs
the cases of those ops at 14 and 17.

The ops that do not convert yet are listed, each with the reason, in
tests/pytorch/op_known_failures.txt: a case of a listed op may fail; a case of any other op
must pass, else the test fails. A listed op all of whose cases pass is reported (the list should
shrink). --results FILE writes every case's outcome as JSON, for scripts/torch_coverage.py.
"""
import argparse
import concurrent.futures
import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import zlib

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from op_cases import CASES, OPSET_OPS  # noqa: E402

RTOL, ATOL = 1e-3, 1e-5
NAMES = ["x", "y", "z", "w"]
DTYPES = {"f": ("float32", torch.float32), "p": ("float32", torch.float32), "u": ("float32", torch.float32),
          "d": ("float64", torch.float64), "i": ("int64", torch.int64), "U": ("uint8", torch.uint8), "b": ("bool", torch.bool), "s": ("float32", torch.float32)}


def make_input(spec, gen):
    """A tensor from a spec (op_cases.py): kind letter, shape, for ints the range."""
    kind, rest = spec[0], spec[1:]
    if kind == "s":
        return torch.tensor(float(gen.standard_normal()), dtype=torch.float32)
    parts = rest.split(":")
    shape = [int(d) for d in parts[0].split(",")] if parts[0] else []
    if kind == "f":
        a = gen.standard_normal(shape).astype(np.float32)
    elif kind == "p":
        a = (gen.random(shape) * 2 + 0.1).astype(np.float32)
    elif kind == "u":
        a = ((gen.random(shape) * 2 - 1) * 0.9).astype(np.float32)
    elif kind == "d":
        a = gen.standard_normal(shape)
    elif kind == "i":
        lo, hi = (int(parts[1]), int(parts[2])) if len(parts) == 3 else (0, 10)
        a = gen.integers(lo, hi, shape).astype(np.int64)
    elif kind == "U":
        lo, hi = (int(parts[1]), int(parts[2])) if len(parts) == 3 else (0, 256)
        a = gen.integers(lo, hi, shape).astype(np.uint8)
    elif kind == "b":
        a = gen.random(shape) > 0.5
    else:
        raise ValueError(f"input spec {spec!r}")
    return torch.from_numpy(np.ascontiguousarray(a))


def module_source(cases):
    lines = ["import torch", ""]
    for i, c in enumerate(cases):
        args = ", ".join(NAMES[: len(c["inputs"])])
        lines += [f"class M{i}(torch.nn.Module):", "    def __init__(self):", "        super().__init__()"]
        if c["init"]:
            lines.append(f"        self.m = {c['init']}")
        body = c["expr"].split("\n")  # statements, then the returned expression
        lines += [f"    def forward(self, {args}):"] + [f"        {l}" for l in body[:-1]] + [f"        return {body[-1]}", ""]
    return "\n".join(lines)


def flatten(out):
    if isinstance(out, (tuple, list)):
        r = []
        for o in out:
            r += flatten(o)
        return r
    if isinstance(out, torch.Tensor):
        return [out]
    return [torch.tensor(out)]


def case_ids(cases):
    """OP#K: the K-th case of OP (stable as long as cases are appended per op)."""
    seen = {}
    ids = []
    for c in cases:
        k = seen.get(c["op"], 0)
        seen[c["op"]] = k + 1
        ids.append(f"{c['op']}#{k}")
    return ids


def load_known_failures():
    known = {}
    path = os.path.join(HERE, "op_known_failures.txt")
    if os.path.exists(path):
        for line in open(path):
            line = line.strip()
            if line and not line.startswith("#"):
                op, _, why = line.partition(" ")
                known[op] = why.strip()
    return known


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("amanda")
    ap.add_argument("--all", action="store_true", help="every case (default: the first case of each op)")
    ap.add_argument("--only", help="cases whose OP#K id matches this regex")
    ap.add_argument("--results", help="write every case's outcome here (JSON)")
    ap.add_argument("--keep", help="keep the .pt/.onnx files here")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--reader", default="script")
    ap.add_argument("--opset", type=int, help="convert with --opset N; every model must declare opset N and pass onnx.checker's "
                    "full check, and the ops of OPSET_OPS (op_cases.py) for opsets up to N must use the ONNX op listed there")
    ap.add_argument("--write-known-failures", action="store_true",
                    help="rewrite op_known_failures.txt: every op with a failing case, with its first failure")
    ap.add_argument("-v", action="store_true")
    a = ap.parse_args()
    run_all = a.all or os.environ.get("AMANDA_TORCH_OP_TESTS") == "all"
    t0 = time.time()

    ids = case_ids(CASES)
    picked = []
    for cid, c in zip(ids, CASES):
        if a.only and not re.search(a.only, cid):
            continue
        if not run_all and not a.only and not cid.endswith("#0"):
            continue
        if c["min_opset"] and c["min_opset"] > (a.opset or 13):
            continue
        picked.append((cid, c))

    tmp_ctx = tempfile.TemporaryDirectory()
    tmp = a.keep or tmp_ctx.name
    os.makedirs(tmp, exist_ok=True)
    src = os.path.join(tmp, "op_modules.py")
    with open(src, "w") as f:
        f.write(module_source([c for _, c in picked]))
    spec = importlib.util.spec_from_file_location("op_modules", src)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)

    # 1. make every case: module, inputs, torch's outputs, the saved .pt
    jobs = []  # (case record, pt path, inputs meta)
    results = []
    torch.set_grad_enabled(False)
    for i, (cid, c) in enumerate(picked):
        for mode in ("trace", "script"):
            if mode == "script" and not c["script"]:
                continue
            rec = {"id": cid, "op": c["op"], "mode": mode, "expr": c["expr"], "inputs": c["inputs"], "rtol": c["rtol"] or RTOL}
            results.append(rec)
            seed = zlib.crc32(cid.encode())
            torch.manual_seed(seed)
            gen = np.random.default_rng(seed)
            try:
                m = getattr(mod, f"M{i}")().eval()
                xs = [make_input(s, gen) for s in c["inputs"]]
                if mode == "trace":
                    sm = torch.jit.trace(m, tuple(x.clone() for x in xs), check_trace=False)
                else:
                    sm = torch.jit.script(m)
                refs = [t.detach().clone() for t in flatten(sm(*[x.clone() for x in xs]))]
            except Exception as e:  # the case itself is wrong for this torch: not a converter failure
                rec["status"] = "torch_error"
                rec["detail"] = f"{type(e).__name__}: {str(e).splitlines()[0][:300] if str(e) else ''}"
                continue
            base = os.path.join(tmp, f"{cid.replace('#', '_')}.{mode}")
            pt = base + ".pt"
            torch.jit.save(sm, pt)
            ins = []
            for k, x in enumerate(xs):
                f = f"{base}.in{k}.bin"
                x.numpy().tofile(f)
                ins.append({"file": f, "shape": list(x.shape), "type": DTYPES[c["inputs"][k][0]][0]})
            rec["_refs"] = refs
            jobs.append((rec, pt, ins, base))
    t1 = time.time()

    # 2. convert (a process per case, --jobs at a time)
    def convert(job):
        rec, pt, ins, base = job
        cmd = [a.amanda, "convert", pt, "--reader", a.reader, "-o", base + ".onnx"] + (["--opset", str(a.opset)] if a.opset else [])
        for x in ins:
            cmd += ["--input-shape", ",".join(map(str, x["shape"])) if x["shape"] else ""]
        types = {x["type"] for x in ins}
        if types and types != {"float32"}:
            for x in ins:
                cmd += ["--input-type", x["type"]]
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        except subprocess.TimeoutExpired:
            return rec, "convert_timeout", ""
        if r.returncode != 0:
            return rec, "convert_failed", (r.stdout + r.stderr).strip()[-800:]
        return rec, "converted", ""

    converted = []
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as ex:
        for rec, status, detail in ex.map(convert, jobs):
            rec["status"] = status
            if detail:
                rec["detail"] = detail
    for rec, pt, ins, base in jobs:
        if rec["status"] == "converted":
            converted.append((rec, ins, base))
    t2 = time.time()

    # 3. run every converted model in one onnxruntime-node process
    if converted:
        import onnx
        ort_jobs = []
        for rec, ins, base in converted:
            model = onnx.load(base + ".onnx")
            g = model.graph
            if a.opset:
                declared = [o.version for o in model.opset_import if o.domain in ("", "ai.onnx")]
                try:
                    onnx.checker.check_model(model, full_check=True)
                except Exception as e:
                    rec["status"], rec["detail"] = "failed", f"onnx.checker: {str(e).splitlines()[0][:300]}"
                    continue
                if declared != [a.opset]:
                    rec["status"], rec["detail"] = "failed", f"opset_import {declared}, asked for {a.opset}"
                    continue
                rec["onnx_ops"] = sorted({n.op_type for n in g.node})
            inits = {t.name for t in g.initializer}
            names = [v.name for v in g.input if v.name not in inits]
            if len(names) != len(ins):
                rec["status"] = "failed"
                rec["detail"] = f"{len(names)} graph inputs, torch's forward takes {len(ins)}"
                continue
            ort_jobs.append({"model": base + ".onnx", "inputs": dict(zip(names, ins)), "out": base + ".ort"})
        jf = os.path.join(tmp, "ort_jobs.json")
        with open(jf, "w") as f:
            json.dump(ort_jobs, f)
        r = subprocess.run(["node", os.path.join(ROOT, "tests", "js", "ort_run_typed.js"), jf], capture_output=True, text=True)
        if r.returncode != 0:
            print(r.stderr[-2000:])
            return 2
    t3 = time.time()

    # 4. compare
    np_types = {"float32": np.float32, "float64": np.float64, "int64": np.int64, "int32": np.int32, "bool": np.bool_,
                "int8": np.int8, "uint8": np.uint8, "int16": np.int16}
    for rec, ins, base in converted:
        if rec["status"] != "converted":
            continue
        refs = rec["_refs"]
        res = json.load(open(base + ".ort.json"))
        if "error" in res:
            rec["status"], rec["detail"] = "ort_failed", res["error"][:500]
            continue
        outs = res["outputs"]
        if len(outs) != len(refs):
            rec["status"], rec["detail"] = "failed", f"{len(outs)} outputs, torch gives {len(refs)}"
            continue
        bad = []
        for k, (o, ref) in enumerate(zip(outs, refs)):
            got = np.fromfile(f"{base}.ort.{k}.bin", dtype=np_types.get(o["type"], np.float32)).reshape(o["shape"])
            want = ref.numpy()
            if tuple(got.shape) != tuple(want.shape):
                bad.append(f"output {k}: shape {list(got.shape)}, torch {list(want.shape)}")
            elif want.dtype.kind == "f":
                if got.dtype.kind != "f":
                    bad.append(f"output {k}: type {o['type']}, torch {want.dtype}")
                elif not np.allclose(got, want, rtol=rtol_of(rec), atol=ATOL, equal_nan=True):
                    bad.append(f"output {k}: max abs diff {float(np.nanmax(np.abs(got.astype(np.float64) - want))):.3g}")
            else:
                if got.dtype.kind == "f" or (want.dtype == np.bool_) != (got.dtype == np.bool_):
                    bad.append(f"output {k}: type {o['type']}, torch {want.dtype}")
                elif not np.array_equal(got, want):
                    bad.append(f"output {k}: {int(np.sum(got != want))} elements differ")
        if bad:
            rec["status"], rec["detail"] = "failed", "; ".join(bad)
        elif all(r.numel() > 0 and not bool(torch.any(r != 0)) for r in refs):
            rec["status"], rec["detail"] = "trivial", "torch's outputs are all zero: the case checks nothing"
        else:
            rec["status"] = "passed"
    t4 = time.time()

    for rec in results:
        rec.pop("_refs", None)
    if a.results:
        with open(a.results, "w") as f:
            json.dump({"torch": torch.__version__, "all": run_all, "cases": results}, f, indent=1)

    # 5. verdict
    known = load_known_failures()
    if a.write_known_failures:
        write_known_failures(results, known)
        known = load_known_failures()
    by_op = {}
    for rec in results:
        by_op.setdefault(rec["op"], []).append(rec)
    unexpected, now_pass = [], []
    # --opset N: an op a later opset offers must use it (in one of its passing cases at least)
    for v, ops in sorted(OPSET_OPS.items()):
        if not a.opset or v > a.opset:
            continue
        for op, want in ops.items():
            recs = [r for r in by_op.get(op, []) if r["status"] == "passed"]
            if recs and not any(want in r.get("onnx_ops", []) for r in recs):
                for r in recs:
                    r["status"], r["detail"] = "failed", f"opset {a.opset}: no {want} among {r.get('onnx_ops')}"
    for op, recs in sorted(by_op.items()):
        ok = [r for r in recs if r["status"] == "passed"]
        if a.v or len(ok) != len(recs):
            for r in recs:
                if r["status"] != "passed" or a.v:
                    print(f"  {r['id']:<28} {r['mode']:<6} {r['status']:<15} {r.get('detail', '')[:300]}")
        if op in known:
            if len(ok) == len(recs) and all(r["status"] != "torch_error" for r in recs):
                now_pass.append(op)
        else:
            unexpected += [r for r in recs if r["status"] != "passed"]
    n_ok = sum(r["status"] == "passed" for r in results)
    ops_ok = sum(all(r["status"] == "passed" for r in recs) for recs in by_op.values())
    print(f"op tests: {n_ok}/{len(results)} cases passed ({ops_ok}/{len(by_op)} ops with every case passing); "
          f"make {t1 - t0:.1f} s, convert {t2 - t1:.1f} s, onnxruntime {t3 - t2:.1f} s, compare {t4 - t3:.1f} s"
          f"{'' if run_all else ' (sample: first case per op; --all or AMANDA_TORCH_OP_TESTS=all for all)'}")
    if now_pass:
        print(f"listed in op_known_failures.txt but passing now (remove them): {' '.join(now_pass)}")
    if unexpected:
        print(f"FAILED: {len(unexpected)} cases of ops not listed in op_known_failures.txt:")
        for r in unexpected:
            print(f"  {r['id']} {r['mode']}: {r['status']}: {r.get('detail', '')[:400]}")
        return 1
    return 0


def write_known_failures(results, old):
    """Every op with a failing case, and why (the first failure; a reason written by hand is kept)."""
    lines = [l for l in open(os.path.join(HERE, "op_known_failures.txt")).read().splitlines() if l.startswith("#")] \
        if os.path.exists(os.path.join(HERE, "op_known_failures.txt")) else []
    failing = {}
    for r in results:
        if r["status"] != "passed" and r["op"] not in failing:
            d = " ".join(r.get("detail", "").split())
            m = re.search(r"(aten::\S+|prim::\S+)\s+x\d+", d)
            why = f"no rule for {m.group(1)}" if r["status"] == "convert_failed" and m else f"{r['status']}: {d[:160]}"
            failing[r["op"]] = why
    ops_run = {r["op"] for r in results}
    for op, why in old.items():  # ops not run this time keep their entry
        if op not in ops_run:
            failing[op] = why
    with open(os.path.join(HERE, "op_known_failures.txt"), "w") as f:
        f.write("\n".join(lines + [f"{op} {why}" for op, why in sorted(failing.items())]) + "\n")


def rtol_of(rec):
    return rec["rtol"]


if __name__ == "__main__":
    sys.exit(main())
