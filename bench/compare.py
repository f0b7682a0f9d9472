#!/usr/bin/env python3
"""Before/after: runs the same benchmark binaries of two builds interleaved (before, after, before,
after, ...) so that both see the same machine load, and prints each benchmark's median CPU and wall
time in both builds and the ratio after / before (below 1: faster now).

usage: compare.py BEFORE_BUILD AFTER_BUILD [--rounds N] [--only NAME,NAME] [-- BENCHMARK ARGS...]

BEFORE_BUILD and AFTER_BUILD are build folders with bench/<name>_bench binaries (e.g. a worktree of
an older commit built with -DAMANDA_BUILD_BENCH=ON, and build/). Only benchmarks present in both
are compared. Exit status 1 when a benchmark's CPU time got more than 10% slower.

Build both the same way: a unity build (the default, AMANDA_UNITY_BUILD=ON) lays the code out
differently from a file-by-file one and moves the mapping benchmarks by 3-10% on its own
(docs/performance.md, "The layout it was"); configure both with -DAMANDA_UNITY_BUILD=OFF (commits
before the option existed are file by file).
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile

UNIT = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}


def run(exe, extra):
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        out = f.name
    try:
        r = subprocess.run([exe, f"--benchmark_out={out}", "--benchmark_out_format=json", *extra],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            with open(out) as f:
                data = json.load(f)
        except ValueError:
            data = None
        if r.returncode != 0 or data is None:
            return None, []  # not a Google Benchmark binary (convert_bench has its own script)
    finally:
        os.unlink(out)
    rows = {}
    for b in data["benchmarks"]:
        if b.get("error_occurred") or b.get("aggregate_name"):
            continue
        u = UNIT[b["time_unit"]]
        rows[b.get("run_name", b["name"])] = (b["cpu_time"] * u, b["real_time"] * u)
    return rows, data.get("context", {}).get("load_avg", [])


def main(argv):
    extra = []
    if "--" in argv:
        extra = argv[argv.index("--") + 1:]
        argv = argv[:argv.index("--")]
    rounds, only = 3, None
    args = []
    i = 0
    while i < len(argv):
        if argv[i] == "--rounds":
            rounds = int(argv[i + 1]); i += 2
        elif argv[i] == "--only":
            only = set(argv[i + 1].split(",")); i += 2
        else:
            args.append(argv[i]); i += 1
    if len(args) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    before, after = (os.path.join(a, "bench") for a in args)
    names = sorted(n for n in os.listdir(after) if n.endswith("_bench") and os.path.isfile(os.path.join(before, n)))
    if only:
        names = [n for n in names if n in only]
    worse = []
    print(f"{'benchmark':58s} {'cpu before':>11s} {'cpu after':>11s} {'ratio':>6s} {'wall ratio':>10s}")
    for name in names:
        samples = {"before": {}, "after": {}}
        loads = []
        for _ in range(rounds):
            for side, folder in (("before", before), ("after", after)):
                rows, load = run(os.path.join(folder, name), extra)
                if rows is None:
                    break
                loads.append(load[0] if load else float("nan"))
                for k, v in rows.items():
                    samples[side].setdefault(k, []).append(v)
            if rows is None:
                break
        if not samples["after"]:
            print(f"== {name}: skipped (no Google Benchmark results; see its own script)")
            continue
        print(f"== {name} (load average {min(loads):.1f}-{max(loads):.1f})")
        for k in samples["after"]:
            if k not in samples["before"]:
                continue
            cb = statistics.median(c for c, _ in samples["before"][k])
            ca = statistics.median(c for c, _ in samples["after"][k])
            wb = statistics.median(w for _, w in samples["before"][k])
            wa = statistics.median(w for _, w in samples["after"][k])
            r = ca / cb if cb else float("nan")
            print(f"{k[:58]:58s} {cb * 1e3:9.2f}ms {ca * 1e3:9.2f}ms {r:6.2f} {wa / wb if wb else float('nan'):10.2f}")
            if r > 1.10:
                worse.append((k, r))
        sys.stdout.flush()
    if worse:
        print("slower by more than 10% (CPU):", ", ".join(f"{k} {r:.2f}x" for k, r in worse))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
