#!/usr/bin/python3
"""`amanda optimize` against onnxruntime's basic-level optimizer (the peer, docs/optimize.md).

    /usr/bin/python3 tests/passes/peer.py AMANDA MODELS_DIR WORK_DIR [model ...] [--table] [--strict]

For each model (made by make_models.py): `amanda optimize` (wall time, whole process) and
onnxruntime-node's session creation at level 'basic' with optimizedModelFilePath (tests/js/
ort_basic_optimize.js; wall time of the creation alone), op counts (Constant nodes not counted on
any side: onnxruntime turns them into initializers), and the outputs of the original, Amanda's and
onnxruntime's graphs run in onnxruntime (level 'disabled') on the model's reference input: the
largest |x - y| / max(1, |x|). --strict exits 1 when Amanda leaves more ops than onnxruntime, when
an output differs by more than 1e-5, or when an output is all zero.
"""
import collections
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
JS = os.path.join(HERE, "..", "js")


def count_ops(path):
    import onnx
    m = onnx.load(path, load_external_data=False)
    n = 0

    def walk(g):
        nonlocal n
        for node in g.node:
            if node.op_type != "Constant":
                n += 1
            for a in node.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    walk(a.g)
                for sg in a.graphs:
                    walk(sg)
    walk(m.graph)
    return n, collections.Counter(x.op_type for x in m.graph.node if x.op_type != "Constant")


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    strict = "--strict" in sys.argv
    amanda, models_dir, work = args[0], args[1], args[2]
    names = args[3:] or sorted(f[:-5] for f in os.listdir(models_dir) if f.endswith(".onnx"))
    os.makedirs(work, exist_ok=True)
    rows, jobs = [], []
    ort_args = []
    for n in names:
        src = os.path.join(models_dir, n + ".onnx")
        ours = os.path.join(work, n + ".amanda.onnx")
        t = time.monotonic()
        r = subprocess.run([amanda, "optimize", src, "-o", ours, "--report", "json"], capture_output=True, text=True)
        wall = time.monotonic() - t
        if r.returncode != 0:
            print(f"{n}: amanda optimize failed: {r.stderr.strip()}")
            rows.append({"name": n, "error": r.stderr.strip()})
            continue
        rep = json.loads(r.stdout)
        rows.append({"name": n, "src": src, "ours": ours, "ort": os.path.join(work, n + ".ort.onnx"), "amanda_s": wall,
                     "report": rep})
        ort_args += [src, rows[-1]["ort"]]
    out = subprocess.run(["node", os.path.join(JS, "ort_basic_optimize.js")] + ort_args, capture_output=True, text=True)
    ort = {x["model"]: x for x in json.loads(out.stdout)}
    for row in rows:
        if "error" in row:
            continue
        o = ort.get(row["src"], {})
        row["ort_s"] = o.get("seconds")
        row["ort_error"] = o.get("error")
        spec = json.load(open(os.path.join(models_dir, row["name"] + ".json")))
        cands = [row["ours"]] + ([row["ort"]] if not row["ort_error"] else [])
        jobs.append({"id": row["name"], "reference": row["src"], "candidates": cands,
                     "inputs": {spec["input"]: {"type": "float32", "dims": spec["shape"],
                                                "file": os.path.join(models_dir, row["name"] + ".input.bin")}}})
    with open(os.path.join(work, "jobs.json"), "w") as f:
        json.dump(jobs, f)
    cmp = subprocess.run(["node", os.path.join(JS, "ort_compare.js"), "--jobs", os.path.join(work, "jobs.json")],
                         capture_output=True, text=True)
    res = {x["id"]: x for x in json.loads(cmp.stdout)}
    bad = 0
    print("| model | ops before | onnxruntime basic | amanda optimize | amanda max rel diff | onnxruntime max rel diff | "
          "amanda optimize s | onnxruntime session s | ratio |")
    print("|---|---|---|---|---|---|---|---|---|")
    for row in rows:
        if "error" in row:
            bad += 1
            continue
        before, _ = count_ops(row["src"])
        ours, ours_c = count_ops(row["ours"])
        theirs = count_ops(row["ort"])[0] if not row["ort_error"] else None
        r = res.get(row["name"], {})
        results = r.get("results", [])
        d_ours = results[0].get("max_rel_diff", results[0].get("error")) if results else r
        d_ort = results[1].get("max_rel_diff", results[1].get("error")) if len(results) > 1 else row["ort_error"]
        ratio = row["ort_s"] / row["amanda_s"] if row["ort_s"] else None
        print(f"| {row['name']} | {before} | {theirs} | {ours} | {d_ours if isinstance(d_ours, str) else f'{d_ours:.2g}'} | "
              f"{d_ort if isinstance(d_ort, str) or d_ort is None else f'{d_ort:.2g}'} | {row['amanda_s']:.3f} | "
              f"{row['ort_s'] if row['ort_s'] is None else round(row['ort_s'], 3)} | "
              f"{'' if ratio is None else f'{ratio:.2f}x'} |")
        ok = isinstance(d_ours, (int, float)) and d_ours <= 1e-5 and r.get("max_abs_reference", 0) > 0
        ok = ok and (theirs is None or ours <= theirs)
        if not ok:
            bad += 1
            print(f"  {row['name']}: NOT OK (amanda {ours} ops {dict(ours_c)}; diff {d_ours})")
    if strict and bad:
        sys.exit(1)


if __name__ == "__main__":
    main()
