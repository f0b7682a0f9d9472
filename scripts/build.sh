#!/usr/bin/env bash
# README command 1: installs what building needs and builds the tool into build/ (Release).
#   scripts/build.sh        the tool `build/amanda` alone (every framework it reads and writes
#                           natively; no libtorch, no Python needed)
#   scripts/build.sh --all  also the PyTorch plugin (libtorch's TorchScript reader and namespace,
#                           loaded on demand) and the Python module (build/python/amanda)
# The tests and benchmarks are scripts/test.sh's.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = "--all" ]; then
  ./scripts/install-deps.sh --build-only
  target=tool
elif [ -z "${1:-}" ]; then
  ./scripts/install-deps.sh --tool-only
  target=amanda
else
  echo "usage: scripts/build.sh [--all]" >&2
  exit 2
fi
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DAMANDA_BUILD_TESTS=OFF -DAMANDA_BUILD_BENCH=OFF >/dev/null
cmake --build build -j"$(nproc)" --target "$target"
