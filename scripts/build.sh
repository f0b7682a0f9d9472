#!/usr/bin/env bash
# Installs what building needs and builds the tool, the PyTorch plugin and the Python module into
# build/ (Release): README command 1. The tests and benchmarks are scripts/test.sh's.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh --build-only
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DAMANDA_BUILD_TESTS=OFF -DAMANDA_BUILD_BENCH=OFF >/dev/null
cmake --build build -j"$(nproc)" --target tool
