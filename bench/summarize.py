#!/usr/bin/env python3
"""Summarises Google Benchmark JSON results (run with --benchmark_repetitions=N) against the
performance targets of docs/performance.md: medians of wall ("real") and CPU time, MB/s of the
text readers and writers, and ratios against the floors (libyaml, RapidJSON).

On a loaded machine wall time overstates what an idle machine would take; CPU time (of the
benchmark thread, user + system) is the better guide, so a target is judged on CPU time and
the wall figure is shown beside it.

usage: summarize.py RESULT.json...
"""
import json
import sys

UNIT = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}


def load(paths):
    rows = {}
    context = None
    for path in paths:
        with open(path) as f:
            data = json.load(f)
        context = context or data.get("context", {})
        load = data.get("context", {}).get("load_avg", [])
        print(f"{path}: load average at start {', '.join(f'{x:.2f}' for x in load)}")
        for b in data["benchmarks"]:
            if b.get("error_occurred"):
                rows[b.get("run_name", b["name"])] = {"error": b.get("error_message", "error")}
                continue
            agg = b.get("aggregate_name")
            if agg not in (None, "median"):
                continue
            name = b.get("run_name", b["name"])
            # Without repetitions there is no median row: keep the single run.
            if agg == "median" or name not in rows:
                rows[name] = b
    return rows, context


def seconds(row, which):
    return row[which + "_time"] * UNIT[row["time_unit"]]


def fmt_time(s):
    return f"{s * 1e3:9.1f} ms" if s >= 1e-3 else f"{s * 1e9:9.0f} ns"


def main(paths):
    rows, ctx = load(paths)
    if ctx:
        print(f"host: {ctx.get('host_name')}  cpus: {ctx.get('num_cpus')}  "
              f"benchmark library build: {ctx.get('library_build_type')} (Debian's package says debug; "
              f"that concerns libbenchmark, not Amanda)")
    print("\n== medians of every benchmark (wall = real time, cpu = thread CPU time)")
    for name, r in rows.items():
        if "error" in r:
            print(f"{name:55s} ERROR {r['error']}")
            continue
        extra = {k: v for k, v in r.items() if k not in {
            "name", "family_index", "per_family_instance_index", "run_name", "run_type", "repetitions",
            "threads", "aggregate_name", "aggregate_unit", "iterations", "real_time", "cpu_time", "time_unit",
            "repetition_index"}}
        counters = "  ".join(f"{k}={v:.4g}" for k, v in extra.items() if isinstance(v, (int, float)))
        print(f"{name:55s} wall {fmt_time(seconds(r, 'real'))}  cpu {fmt_time(seconds(r, 'cpu'))}  {counters}")

    results = []

    def target(what, value, wall_value, ok, goal):
        results.append((what, value, wall_value, ok, goal))

    def get(name):
        r = rows.get(name)
        return None if r is None or "error" in r else r

    for reserve in (0, 1):
        r = get(f"BM_DagBuildAndTopo/reserve:{reserve}")
        if r:
            target(f"build+topo {r['ops']:.0f} ops/{r['edges']:.0f} edges, reserve={reserve}", f"{seconds(r, 'cpu') * 1e3:.0f} ms",
                   f"{seconds(r, 'real') * 1e3:.0f} ms", seconds(r, "cpu") < 1.0, "< 1000 ms")
    for reserve in (0, 1):
        r = get(f"BM_DagMemory/reserve:{reserve}/iterations:1")
        if r:
            target(f"memory per op ({r['ops']:.0f} ops, mallinfo2), reserve={reserve}", f"{r['malloc_B/op']:.0f} B/op",
                   f"memory_bytes() {r['memory_bytes_B/op']:.0f} B/op", r["malloc_B/op"] < 250, "< 250 B/op")

    def mbps(name):
        r = get(name)
        if not r:
            return None
        return r["text_MB"] / seconds(r, "cpu"), r["text_MB"] / seconds(r, "real")

    goals = {("Read", "yaml"): 40, ("Write", "yaml"): 80}
    rates = {}
    ops = (get("BM_Read/yaml") or get("BM_Write/yaml") or {}).get("ops", 0)
    for op in ("Read", "Write"):
        for fmt in ("yaml", "json"):
            m = mbps(f"BM_{op}/{fmt}")
            if m:
                rates[(op, fmt)] = m
    for op in ("Read", "Write"):
        y = rates.get((op, "yaml"))
        if y:
            target(f"YAML {op.lower()} {ops:.0f}-op TF graph", f"{y[0]:.1f} MB/s", f"{y[1]:.1f} MB/s",
                   y[0] >= goals[(op, 'yaml')], f">= {goals[(op, 'yaml')]} MB/s")
        j = rates.get((op, "json"))
        if j:
            need = max(goals[(op, "yaml")], y[0] if y else 0)
            target(f"JSON {op.lower()} {ops:.0f}-op TF graph", f"{j[0]:.1f} MB/s", f"{j[1]:.1f} MB/s", j[0] >= need,
                   f">= {need:.1f} MB/s (YAML's)")

    print("\n== targets (judged on CPU time; wall time or the second measure beside it)")
    for what, value, wall_value, ok, goal in results:
        print(f"  {'PASS' if ok else 'FAIL'}  {what:45s} {value:>14s}  ({wall_value})  target {goal}")

    print("\n== ratios against the raw parsers (CPU time; > 1 means slower than the floor)")
    for ours, floor, label in (("BM_Read/yaml", "BM_FloorLibyamlEvents", "text::parse YAML / libyaml events"),
                               ("BM_Events/yaml", "BM_FloorLibyamlEvents", "Amanda YAML events / libyaml events"),
                               ("BM_Read/json", "BM_FloorRapidjsonSax", "text::parse JSON / RapidJSON SAX"),
                               ("BM_Events/json", "BM_FloorRapidjsonSax", "Amanda JSON events / RapidJSON SAX")):
        a, b = get(ours), get(floor)
        if a and b:
            print(f"  {label:40s} {seconds(a, 'cpu') / seconds(b, 'cpu'):6.2f}x   "
                  f"(floor {b['text_MB'] / seconds(b, 'cpu'):.1f} MB/s)")
    return 0 if all(ok for *_, ok, _ in results) else 1


if __name__ == "__main__":
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1:]))
