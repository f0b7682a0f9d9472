#!/usr/bin/env bash
# Builds Release into build-bench/ and runs every benchmark (bench/*_bench.cpp) with repetitions,
# then prints the medians and the figures against the targets of docs/performance.md.
#
#   scripts/bench.sh                          # everything, 3 repetitions
#   scripts/bench.sh --benchmark_filter=Dag   # extra arguments go to every benchmark binary
#   AMANDA_BENCH_REPS=5 AMANDA_BENCH_BUILD=/tmp/b scripts/bench.sh
#
# The exit status is 1 when a target is missed. Benchmarks are not timed tests: run this on a
# quiet machine, and read wall and CPU time together (the summary explains which it judges by).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${AMANDA_BENCH_BUILD:-build-bench}
reps=${AMANDA_BENCH_REPS:-3}

cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DAMANDA_BUILD_TESTS=OFF >/dev/null
cmake --build "$build" -j"$(nproc)"

out="$build/bench-results"
mkdir -p "$out"
rm -f "$out"/*.json
for exe in "$build"/bench/*_bench; do
  name=$(basename "$exe")
  echo "== $name"
  "$exe" --benchmark_repetitions="$reps" --benchmark_report_aggregates_only=true \
    --benchmark_out="$out/$name.json" --benchmark_out_format=json "$@"
done
python3 bench/summarize.py "$out"/*.json
