#!/usr/bin/python3
"""Interleaved A/B of one Google Benchmark binary built at two commits.

    bench_ab.py OLD_BINARY NEW_BINARY FILTER [ROUNDS]

Runs OLD and NEW alternately ROUNDS times (default 5) with --benchmark_filter=FILTER and prints,
per benchmark, the median of each side's `cpu_ms` counter (the thread's CPU time of the timed
calls, which the mapping benchmarks report; `cpu_time` otherwise), the ratio new/old, and the
ratio of the best runs. Alternating keeps a busy machine's load out of the ratio as far as it can.
Build the old side in a worktree, e.g.:

    git worktree add --detach /tmp/base b4ee68c
    cmake -S /tmp/base -B /tmp/base/build -G Ninja -DCMAKE_BUILD_TYPE=Release
    cmake --build /tmp/base/build --target mapping_bench
    scripts/bench_ab.py /tmp/base/build/bench/mapping_bench build/bench/mapping_bench 'BM_ApplyOps/ops:10000/' 7
"""
import json
import statistics
import subprocess
import sys


def main():
    if len(sys.argv) < 4:
        print(__doc__)
        return 2
    old, new, filt = sys.argv[1:4]
    rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 5
    res = {"old": {}, "new": {}}
    for _ in range(rounds):
        for tag, exe in (("old", old), ("new", new)):
            out = subprocess.run([exe, f"--benchmark_filter={filt}", "--benchmark_format=json"], capture_output=True,
                                 text=True, check=True).stdout
            for b in json.loads(out)["benchmarks"]:
                res[tag].setdefault(b["name"], []).append(b.get("cpu_ms") or b.get("cpu_time"))
    for name, olds in res["old"].items():
        news = res["new"].get(name)
        if not news:
            continue
        o, n = statistics.median(olds), statistics.median(news)
        print(f"{name:55s} old {o:10.3f}  new {n:10.3f}  ratio {n / o:.3f}  (best/best {min(news) / min(olds):.3f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
