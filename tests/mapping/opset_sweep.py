#!/usr/bin/python3
"""The ONNX opset conversion sweep: every backend node test to every other opset, run in onnxruntime.

    opset_sweep.py AMANDA [--all] [--sample N] [--only REGEX] [--keep DIR] [--json FILE] [-v] [-j JOBS]
                          [--strict]

Each node test of Debian's libonnx-testdata (/usr/share/libonnx-testdata/data/node/*/model.onnx,
with its test_data_set_0 inputs) at opset S is converted with `amanda convert --report json` to every
opset 7..17 other than S (a test at opset 1..6 is converted up to each of 7..17). Every conversion ends
in exactly one outcome, and the counts are printed:

  match         written, passes onnx.checker (full_check), onnxruntime gives the original's outputs
                (floating point within 1e-5 relative to max(1, |x|); integers, bools, strings exactly)
  mismatch      written, but the outputs differ (or onnxruntime runs the original, not the result)
  checker       written, but onnx.checker rejects it while it accepts the original
  unverified    written and checked, but onnxruntime cannot run the original (or its inputs are not
                tensors): nothing to compare with. (When onnxruntime cannot run the original, a
                conversion that matches the node test's expected outputs, test_data_set_0/output_*.pb
                from ONNX's reference implementation, is a match.)
  refused:CLASS exit 1, nothing written, every op named in the report; CLASS from the reasons:
                not-yet ("no rule ... yet"), no-rule (an op no rule maps), no-chain (no tables lead
                there), new-op ("does not exist before opset N"), type (an element type the target's
                op lacks), condition (any other stated impossibility)
  crash         anything else: another exit code, a rule error, a file written on refusal, no report

The CI test (ctest `mapping.opset_sweep`) runs a deterministic sample: every test whose name's CRC32
is 0 modulo --sample (default 8). AMANDA_OPSET_SWEEP=all (or --all) runs every node test.
With --strict the test fails on any crash, mismatch, checker failure or "not yet" refusal (the
issue-13 bar); without it, it fails only on crashes and mismatches (what the rules make wrong).
"""
import argparse
import collections
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zlib

import numpy as np
import onnx
from onnx import TensorProto, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
NODE_DIR = "/usr/share/libonnx-testdata/data/node"
TARGETS = range(7, 18)
TOL = 1e-5

NP_TO_ORT = {np.float32: "float32", np.float64: "float64", np.float16: "float16", np.int8: "int8", np.uint8: "uint8",
             np.int16: "int16", np.uint16: "uint16", np.int32: "int32", np.uint32: "uint32", np.int64: "int64",
             np.uint64: "uint64", np.bool_: "bool"}


def opset_of(m):
    v = [o.version for o in m.opset_import if o.domain in ("", "ai.onnx")]
    return v[0] if len(v) == 1 else None


def read_inputs(d, m):
    """{name: array} from test_data_set_0, or None when an input is not a plain tensor."""
    init = {i.name for i in m.graph.initializer}
    inputs = [v for v in m.graph.input if v.name not in init]
    if any(not v.type.HasField("tensor_type") for v in inputs):
        return None  # a sequence or an optional: ort_compare.js feeds tensors only
    feeds = {}
    for k, v in enumerate(inputs):
        pb = os.path.join(d, "test_data_set_0", f"input_{k}.pb")
        if not os.path.exists(pb):
            return None
        t = TensorProto()
        try:
            with open(pb, "rb") as f:
                t.ParseFromString(f.read())
            feeds[v.name] = numpy_helper.to_array(t)
        except Exception:  # noqa: BLE001 - not a readable tensor: not comparable
            return None
    return feeds


def write_inputs(feeds, prefix):
    spec = {}
    for k, (name, a) in enumerate(feeds.items()):
        a = np.asarray(a)
        if a.dtype.kind in "OUS":
            spec[name] = {"type": "string", "dims": list(a.shape),
                          "strings": [str(s.decode() if isinstance(s, bytes) else s) for s in a.ravel()]}
            continue
        t = NP_TO_ORT.get(a.dtype.type)
        if t is None:
            return None
        path = f"{prefix}_in{k}.bin"
        np.ascontiguousarray(a).astype(a.dtype.newbyteorder("<")).tofile(path)
        spec[name] = {"type": t, "dims": list(a.shape), "file": path}
    return spec


def ort_kernel_off(job_result, res):
    """onnxruntime's output of the original differs from the node test's expected outputs beyond
    the tolerance while the converted model's matches them (non-random models only)."""
    ref = job_result.get("reference_vs_expected")
    mine = res.get("vs_expected")
    if not ref or not mine or "error" in mine:
        return False
    return (ref["max_rel_diff"] > TOL or ref["mismatches"]) and mine["max_rel_diff"] <= TOL and not mine["mismatches"]


def expected_outputs(model_path, prefix):
    """The node test's expected outputs (test_data_set_0/output_*.pb) as ort_compare.js specs, in
    output order; None when one is missing or not a tensor onnxruntime takes."""
    d = os.path.join(os.path.dirname(model_path), "test_data_set_0")
    specs = []
    for k, _ in enumerate(onnx.load(model_path).graph.output):
        pb = os.path.join(d, f"output_{k}.pb")
        if not os.path.exists(pb):
            return None
        t = TensorProto()
        try:
            with open(pb, "rb") as f:
                t.ParseFromString(f.read())
            a = numpy_helper.to_array(t)
        except Exception:  # noqa: BLE001 - not a plain tensor
            return None
        one = write_inputs({f"out{k}": a}, f"{prefix}_out{k}")
        if one is None or "file" not in one[f"out{k}"]:
            return None
        specs.append(one[f"out{k}"])
    return specs


def node_tests(node_dir, sample, only):
    out = []
    for name in sorted(os.listdir(node_dir)):
        if only and not re.search(only, name):
            continue
        if sample > 1 and zlib.crc32(name.encode()) % sample:
            continue
        d = os.path.join(node_dir, name)
        path = os.path.join(d, "model.onnx")
        if not os.path.exists(path) or not os.path.isdir(os.path.join(d, "test_data_set_0")):
            continue
        m = onnx.load(path)
        opset = opset_of(m)
        if opset is None:
            continue  # no default-domain opset: nothing to convert between opsets
        out.append((name, path, opset, read_inputs(d, m)))
    return out


# Ops whose outputs are random: a conversion cannot give the same numbers (its shapes and types are
# still compared: "unverified" unless onnxruntime fails on it).
RANDOM_OPS = {"Bernoulli", "RandomNormal", "RandomNormalLike", "RandomUniform", "RandomUniformLike", "Multinomial"}


def refusal_class(reason):
    if re.search(r"\byet\b", reason):
        return "not-yet"
    if reason.startswith("no rule"):
        return "no-rule"
    if "does not exist" in reason or "is deprecated in" in reason:
        return "new-op"
    if "element type" in reason:
        return "type"
    return "condition"


def convert(amanda, name, src, opset, target, tmp, original_checks):
    out = os.path.join(tmp, f"{name}__{target}.onnx")
    r = subprocess.run([amanda, "convert", src, "--to", f"onnx/{target}", "-o", out, "--report", "json"],
                       capture_output=True, text=True)
    if r.returncode not in (0, 1):
        return {"outcome": "crash", "why": f"exit {r.returncode}: {r.stderr.strip()[-300:]}"}
    try:
        rep = json.loads(r.stdout)
    except ValueError:
        err = r.stderr.strip()
        if r.returncode == 1 and "no chain of mapping tables" in err:
            if os.path.exists(out):
                return {"outcome": "crash", "why": "refused but wrote the file"}
            return {"outcome": "refused:no-chain", "why": err.splitlines()[-1][:300]}
        return {"outcome": "crash", "why": f"exit {r.returncode}, no JSON report: {r.stdout.strip()[:200]} {err[:300]}"}
    if rep.get("errors"):
        return {"outcome": "crash", "why": f"rule errors: {rep['errors']}"}
    if r.returncode == 1:
        if os.path.exists(out):
            return {"outcome": "crash", "why": "refused but wrote the file"}
        # an unmapped op is a hole whatever its reason says (the engine names the schema change)
        items = [(u["type"], u.get("reason", "no rule")) for u in rep.get("unsupported", [])] + \
                [(u["type"], "no rule" + (": " + u["reason"] if u.get("reason") else "")) for u in rep.get("unmapped", [])]
        if not items:
            return {"outcome": "crash", "why": f"exit 1 without naming the ops: {r.stderr.strip()[:300]}"}
        classes = sorted({refusal_class(why) for _, why in items})
        # the worst class names the outcome: a "not yet" among others is still a hole
        order = ["not-yet", "no-rule", "condition", "type", "new-op"]
        cls = min(classes, key=order.index)
        return {"outcome": "refused:" + cls, "why": " | ".join(f"{t}: {w}" for t, w in items)}
    if not os.path.exists(out):
        return {"outcome": "crash", "why": "exit 0 but nothing written"}
    try:
        m = onnx.load(out)
    except Exception as e:  # noqa: BLE001
        return {"outcome": "crash", "why": f"the written model does not load: {e}"}
    if opset_of(m) != target:
        return {"outcome": "crash", "why": f"opset_import {[(o.domain, o.version) for o in m.opset_import]}"}
    if original_checks:
        try:
            onnx.checker.check_model(m, full_check=True)
        except Exception as e:  # noqa: BLE001
            return {"outcome": "checker", "why": str(e).splitlines()[0][:300], "path": out}
    return {"outcome": "written", "path": out}


def run_ort(jobs, tmp, workers):
    chunks = [jobs[i::workers] for i in range(workers)]
    procs = []
    for k, chunk in enumerate(chunks):
        if not chunk:
            continue
        path = os.path.join(tmp, f"jobs{k}.json")
        with open(path, "w") as f:
            json.dump(chunk, f)
        procs.append(subprocess.Popen(["node", os.path.join(ROOT, "tests", "js", "ort_compare.js"), "--jobs", path],
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    res = {}
    for p in procs:
        out, err = p.communicate()
        if p.returncode != 0:
            raise SystemExit(f"ort_compare.js failed (exit {p.returncode}): {err.strip()[:2000]}")
        for x in json.loads(out):
            res[x["id"]] = x
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("amanda")
    ap.add_argument("--node-dir", default=NODE_DIR)
    ap.add_argument("--all", action="store_true", help="every node test (also AMANDA_OPSET_SWEEP=all)")
    ap.add_argument("--sample", type=int, default=8, help="tests whose name's CRC32 is 0 modulo N")
    ap.add_argument("--only", help="regex on the node test's name")
    ap.add_argument("--keep", help="keep the converted models here")
    ap.add_argument("--json", help="write every conversion's outcome here")
    ap.add_argument("--strict", action="store_true", help="also fail on checker failures and 'not yet' refusals")
    ap.add_argument("-v", "--verbose", action="store_true", help="print every conversion that is not a match")
    ap.add_argument("-j", "--jobs", type=int, default=2)
    args = ap.parse_args()
    if not os.path.isdir(args.node_dir):
        print(f"skipped: no {args.node_dir} (Debian's libonnx-testdata)")
        return 77
    sample = 1 if args.all or os.environ.get("AMANDA_OPSET_SWEEP") == "all" else args.sample
    t0 = time.time()
    tmp = args.keep or tempfile.mkdtemp(prefix="opset_sweep_")
    os.makedirs(tmp, exist_ok=True)
    try:
        tests = node_tests(args.node_dir, sample, args.only)
        checks = {}
        for name, path, _, _ in tests:
            try:
                onnx.checker.check_model(onnx.load(path), full_check=True)  # a path would be rewritten in place
                checks[name] = True
            except Exception:  # noqa: BLE001 - the original fails: its conversions are not held to it
                checks[name] = False
        tasks = [(name, path, opset, t) for name, path, opset, _ in tests for t in TARGETS if t != opset]
        results = {}
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as ex:
            futs = {ex.submit(convert, args.amanda, name, path, opset, t, tmp, checks[name]): (name, t)
                    for name, path, opset, t in tasks}
            for f in concurrent.futures.as_completed(futs):
                results[futs[f]] = f.result()
        t_convert = time.time() - t0

        jobs = []
        for gi, (name, path, opset, feeds) in enumerate(tests):
            cands = [results[(name, t)]["path"] for t in TARGETS if t != opset and results[(name, t)]["outcome"] == "written"]
            if not cands:
                continue
            spec = write_inputs(feeds, os.path.join(tmp, name)) if feeds is not None else None
            if spec is None:
                for t in TARGETS:
                    if t != opset and results[(name, t)]["outcome"] == "written":
                        results[(name, t)].update(outcome="unverified", why="inputs are not tensors onnxruntime takes")
                continue
            job = {"id": gi, "reference": path, "candidates": cands, "inputs": spec}
            expected = expected_outputs(path, os.path.join(tmp, name))
            if expected:
                job["expected"] = expected  # compared with when onnxruntime cannot run the original
            jobs.append(job)
        ort = run_ort(jobs, tmp, args.jobs)
        by_path = {r["path"]: key for key, r in results.items() if "path" in r}
        worst = 0.0
        for job in jobs:
            x = ort[job["id"]]
            if "reference_error" in x:
                for c in job["candidates"]:
                    results[by_path[c]].update(outcome="unverified", why="onnxruntime cannot run the original: " + x["reference_error"][:200])
                continue
            random = bool(RANDOM_OPS & {n.op_type for n in onnx.load(job["reference"]).graph.node})
            for res in x["results"]:
                r = results[by_path[res["model"]]]
                if x.get("expected_used"):
                    # onnxruntime cannot run the original: a match with the node test's expected
                    # outputs (ONNX's reference implementation) counts; anything else stays unverified.
                    if not random and "error" not in res and res["max_rel_diff"] <= TOL and not res["mismatches"]:
                        r.update(outcome="match")
                        worst = max(worst, res["max_rel_diff"])
                    else:
                        why = ("onnxruntime cannot run the original or this: " + res["error"][:200] if "error" in res else
                               f"onnxruntime cannot run the original; the node test's expected outputs differ by {res['max_rel_diff']:.3g} "
                               f"(relative), {res['mismatches']} elements")
                        r.update(outcome="unverified", why=why)
                    continue
                if random and "error" not in res:
                    r.update(outcome="unverified", why="the model draws random numbers")
                elif "error" in res and "Could not find an implementation" in res["error"]:
                    r.update(outcome="unverified", why="onnxruntime has no kernel for it: " + res["error"][:200])
                elif "error" in res:
                    r.update(outcome="mismatch", why="onnxruntime runs the original, not this: " + res["error"][:300])
                elif (res["max_rel_diff"] > TOL or res["mismatches"]) and ort_kernel_off(x, res):
                    # onnxruntime's kernel for the original is the one off from ONNX's reference
                    # outputs; the conversion matches those.
                    r.update(outcome="match", via_expected=True,
                             why=f"matches the node test's expected outputs ({res['vs_expected']['max_rel_diff']:.3g}); onnxruntime's "
                                 f"original differs from them by {x['reference_vs_expected']['max_rel_diff']:.3g}")
                    worst = max(worst, res["vs_expected"]["max_rel_diff"])
                elif res["max_rel_diff"] > TOL or res["mismatches"]:
                    r.update(outcome="mismatch", why=f"max relative difference {res['max_rel_diff']:.3g}, {res['mismatches']} mismatched elements")
                else:
                    r.update(outcome="match")
                    worst = max(worst, res["max_rel_diff"])

        counts = collections.Counter(r["outcome"] for r in results.values())
        reasons = collections.Counter()
        for (name, t), r in sorted(results.items()):
            if r["outcome"] != "match" and args.verbose:
                opset = next(o for n, _, o, _ in tests if n == name)
                print(f"{name} ({opset} -> {t}): {r['outcome']}: {r.get('why', '')}")
            if r["outcome"].startswith("refused"):
                for part in r["why"].split(" | "):
                    reasons[(r["outcome"], re.sub(r"\d+", "N", part))] += 1
        total = len(results)
        written = sum(counts[k] for k in ("match", "mismatch", "checker", "unverified"))
        print(f"{len(tests)} node tests ({'all' if sample == 1 else f'1 in {sample}'}), {total} conversions, "
              f"{time.time() - t0:.0f} s ({t_convert:.0f} s converting); worst relative difference {worst:.3g}")
        for k in ["match", "mismatch", "checker", "unverified"] + sorted(k for k in counts if k.startswith("refused")) + ["crash"]:
            print(f"  {k:<20} {counts.get(k, 0):6d}")
        print(f"  {'converted':<20} {written:6d} ({100.0 * written / max(total, 1):.1f}%)")
        via = sorted((name, t, r["why"]) for (name, t), r in results.items() if r.get("via_expected"))
        if via:
            print(f"  of the matches, {len(via)} against the node tests' expected outputs, where onnxruntime's own kernel for the "
                  f"original is off:")
            for name, t, why in via:
                print(f"    {name} -> {t}: {why}")
        if args.verbose:
            print("refusal reasons (op: reason, digits as N):")
            for (cls, why), n in reasons.most_common():
                print(f"  {n:5d} {cls}: {why}")
        if args.json:
            with open(args.json, "w") as f:
                json.dump({f"{n} -> {t}": r for (n, t), r in sorted(results.items())}, f, indent=1)
        bad = ["crash", "mismatch"] + (["checker", "refused:not-yet"] if args.strict else [])
        failed = [(key, r) for key, r in sorted(results.items()) if r["outcome"] in bad]
        for (name, t), r in failed[:50]:
            print(f"FAIL: {name} -> opset {t}: {r['outcome']}: {r.get('why', '')}")
        if len(failed) > 50:
            print(f"FAIL: ... and {len(failed) - 50} more")
        return 1 if failed or total == 0 else 0
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
