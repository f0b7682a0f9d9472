#!/usr/bin/python3
"""`amanda optimize` against onnxruntime's basic-level optimizer (the peer, docs/optimize.md).

    /usr/bin/python3 tests/passes/peer.py AMANDA MODELS_DIR WORK_DIR [model ...] [--strict] [--repeat=N]
                                          [--warm=BUILD/python]

For each model (made by make_models.py): `amanda optimize` (wall and CPU time of the whole process)
and onnxruntime-node's session creation at level 'basic' with optimizedModelFilePath (tests/js/
ort_basic_optimize.js; wall and CPU time of the creation alone, in a warm process). With
--repeat=N both are timed N times, interleaved (each round: every model through amanda, then
every model through one node process), and the medians are reported: on a shared machine single
runs move by tens of percent. With --warm=DIR (the folder of the built Python module), each round
also times every model through one warm Python process (warm_optimize.py: amanda.load + optimize +
save after a warm-up, as onnxruntime is timed after its warm-up), in a second table; --strict then
also needs the warm process's graph to have as many ops as the tool's. Op counts (Constant nodes not counted on
any side: onnxruntime turns them into initializers), and the outputs of the original, Amanda's and
onnxruntime's graphs run in onnxruntime (level 'disabled') on the model's reference input: the
largest |x - y| / max(1, |x|). --strict exits 1 when Amanda leaves more ops than onnxruntime, when
an output differs by more than 1e-5 (or the model's
"tolerance" in NAME.json, with its reason), or when an output is all zero.
"""
import collections
import json
import os
import resource
import statistics
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


def run_amanda(amanda, src, out):
    """(completed process, wall seconds, CPU seconds of the child: user + system)."""
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.monotonic()
    r = subprocess.run([amanda, "optimize", src, "-o", out, "--report", "json"], capture_output=True, text=True)
    wall = time.monotonic() - t
    ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r, wall, (ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime)


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    strict = "--strict" in sys.argv
    warm = next((a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--warm=")), None)
    repeat = max([1] + [int(a.split("=", 1)[1]) for a in sys.argv[1:] if a.startswith("--repeat=")])
    amanda, models_dir, work = args[0], args[1], args[2]
    names = args[3:] or sorted(f[:-5] for f in os.listdir(models_dir) if f.endswith(".onnx"))
    os.makedirs(work, exist_ok=True)
    rows, jobs = [], []
    for n in names:
        src = os.path.join(models_dir, n + ".onnx")
        rows.append({"name": n, "src": src, "ours": os.path.join(work, n + ".amanda.onnx"),
                     "ort": os.path.join(work, n + ".ort.onnx"), "amanda_t": [], "amanda_c": [], "ort_t": [], "ort_c": [],
                     "warm": os.path.join(work, n + ".warm.onnx"), "warm_t": [], "warm_c": []})
    for _ in range(repeat):
        for row in rows:
            if "error" in row:
                continue
            r, wall, cpu = run_amanda(amanda, row["src"], row["ours"])
            if r.returncode != 0:
                print(f"{row['name']}: amanda optimize failed: {r.stderr.strip()}")
                row["error"] = r.stderr.strip()
                continue
            row["report"] = json.loads(r.stdout)
            row["amanda_t"].append(wall)
            row["amanda_c"].append(cpu)
        if warm:
            warm_args = [x for row in rows if "error" not in row for x in (row["src"], row["warm"])]
            env = dict(os.environ, PYTHONPATH=warm, PYTHONDONTWRITEBYTECODE="1")
            out = subprocess.run([sys.executable, os.path.join(HERE, "warm_optimize.py")] + warm_args,
                                 capture_output=True, text=True, env=env)
            got = {x["model"]: x for x in json.loads(out.stdout)} if out.returncode == 0 else {}
            for row in rows:
                w = got.get(row["src"], {"error": out.stderr.strip() or "no result"})
                if "error" in w:
                    row["warm_error"] = w["error"]
                elif "error" not in row:
                    row["warm_t"].append(w["seconds"])
                    row["warm_c"].append(w["cpu_seconds"])
        ort_args = [x for row in rows if "error" not in row for x in (row["src"], row["ort"])]
        out = subprocess.run(["node", os.path.join(JS, "ort_basic_optimize.js")] + ort_args, capture_output=True, text=True)
        ort = {x["model"]: x for x in json.loads(out.stdout)}
        for row in rows:
            o = ort.get(row["src"], {})
            row["ort_error"] = o.get("error")
            if o.get("seconds") is not None:
                row["ort_t"].append(o["seconds"])
                row["ort_c"].append(o["cpu_seconds"])
    for row in rows:
        if "error" in row:
            continue
        row["amanda_s"] = statistics.median(row["amanda_t"])
        row["amanda_cpu"] = statistics.median(row["amanda_c"])
        row["ort_s"] = statistics.median(row["ort_t"]) if row["ort_t"] else None
        row["ort_cpu"] = statistics.median(row["ort_c"]) if row["ort_c"] else None
        spec = json.load(open(os.path.join(models_dir, row["name"] + ".json")))
        cands = [row["ours"]] + ([row["ort"]] if not row["ort_error"] else [])
        jobs.append({"id": row["name"], "reference": row["src"], "candidates": cands,
                     "inputs": {spec["input"]: {"type": spec.get("type", "float32"), "dims": spec["shape"],
                                                "file": os.path.join(models_dir, row["name"] + ".input.bin")}}})
    with open(os.path.join(work, "jobs.json"), "w") as f:
        json.dump(jobs, f)
    cmp = subprocess.run(["node", os.path.join(JS, "ort_compare.js"), "--jobs", os.path.join(work, "jobs.json")],
                         capture_output=True, text=True)
    res = {x["id"]: x for x in json.loads(cmp.stdout)}
    bad = 0
    print("| model | ops before | onnxruntime basic | amanda optimize | amanda max rel diff | onnxruntime max rel diff | "
          "amanda optimize s (CPU s) | onnxruntime session s (CPU s) | wall ratio | CPU ratio |")
    print("|---|---|---|---|---|---|---|---|---|---|")
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
        cratio = row["ort_cpu"] / row["amanda_cpu"] if row["ort_cpu"] and row["amanda_cpu"] else None
        ort_time = "" if row["ort_s"] is None else f"{row['ort_s']:.3f} ({row['ort_cpu']:.3f})"
        print(f"| {row['name']} | {before} | {theirs} | {ours} | {d_ours if isinstance(d_ours, str) else f'{d_ours:.2g}'} | "
              f"{d_ort if isinstance(d_ort, str) or d_ort is None else f'{d_ort:.2g}'} | "
              f"{row['amanda_s']:.3f} ({row['amanda_cpu']:.3f}) | "
              f"{ort_time} | "
              f"{'' if ratio is None else f'{ratio:.2f}x'} | {'' if cratio is None else f'{cratio:.2f}x'} |")
        spec = json.load(open(os.path.join(models_dir, row["name"] + ".json")))
        tol = spec.get("tolerance", 1e-5)
        if tol != 1e-5:
            print(f"  {row['name']}: tolerance {tol}: {spec.get('tolerance_reason')}")
        ok = isinstance(d_ours, (int, float)) and d_ours <= tol and r.get("max_abs_reference", 0) > 0
        ok = ok and (theirs is None or ours <= theirs)
        if not ok:
            bad += 1
            print(f"  {row['name']}: NOT OK (amanda {ours} ops {dict(ours_c)}; diff {d_ours})")
    if warm:
        print()
        print("| model | amanda optimize process s (CPU s) | amanda warm process s (CPU s) | onnxruntime session s (CPU s) "
              "| warm wall ratio | warm CPU ratio |")
        print("|---|---|---|---|---|---|")
        for row in rows:
            if "error" in row:
                continue
            if row.get("warm_error") or not row["warm_t"]:
                bad += 1
                print(f"| {row['name']} | | error: {row.get('warm_error')} | | | |")
                continue
            ws, wc = statistics.median(row["warm_t"]), statistics.median(row["warm_c"])
            same = count_ops(row["warm"])[0] == count_ops(row["ours"])[0]
            if not same:
                bad += 1
            ratio = f"{row['ort_s'] / ws:.2f}x" if row["ort_s"] else ""
            cratio = f"{row['ort_cpu'] / wc:.2f}x" if row["ort_cpu"] and wc else ""
            ort_time = "" if row["ort_s"] is None else f"{row['ort_s']:.3f} ({row['ort_cpu']:.3f})"
            print(f"| {row['name']} | {row['amanda_s']:.3f} ({row['amanda_cpu']:.3f}) | {ws:.3f} ({wc:.3f}) | {ort_time} | "
                  f"{ratio} | {cratio} |" + ("" if same else " NOT the tool's op count"))
    if strict and bad:
        sys.exit(1)


if __name__ == "__main__":
    main()
