#!/usr/bin/env bash
# Installs what Amanda needs from Debian's packages, skipping what is already there.
#   install-deps.sh               everything: building, tests, benchmarks, fuzzing (scripts/test.sh)
#   install-deps.sh --build-only  what building the tool, the PyTorch plugin and the Python module
#                                 needs (scripts/build.sh --all)
#   install-deps.sh --tool-only   what building the tool alone needs (scripts/build.sh, README
#                                 command 1): no libtorch (the plugin is optional) and no Python
set -euo pipefail
build_only=false
tool_only=false
if [ "${1:-}" = "--build-only" ]; then build_only=true; fi
if [ "${1:-}" = "--tool-only" ]; then build_only=true; tool_only=true; fi
packages=(
  cmake g++ ninja-build pkg-config
  libyaml-dev rapidjson-dev libcli11-dev libfmt-dev libabsl-dev
  libonnx-dev libprotobuf-dev protobuf-compiler zlib1g-dev
  flatbuffers-compiler libflatbuffers-dev
  libopenblas-dev libdnnl-dev ocl-icd-opencl-dev opencl-headers
)
if ! $tool_only; then
  # python3-onnx: also libonnx's sources, which the executables are linked from (cmake/StaticOnnx.cmake)
  packages+=(libtorch-dev python3 python3-dev python3-numpy python3-pybind11 python3-onnx)
fi
if ! $build_only; then
  packages+=(
    libgtest-dev libgmock-dev libbenchmark-dev libonnx-testdata
    python3-onnx python3-yaml python3-torch python3-torchvision python3-pytest
    clang libclang-rt-14-dev
    graphviz chromium
  )
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
if $build_only; then exit 0; fi
# onnxruntime for Node.js (CPU), for the numeric comparisons of converted models. --ignore-scripts
# skips its post-install download; the CPU library ships in the package.
# Node.js and npm come with the machine (Debian's own nodejs/npm packages conflict with that one);
# they are installed from Debian only when missing.
if ! command -v npm >/dev/null; then
  SUDO=""
  if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
  $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null
fi
if [ ! -d "$(dirname "$0")/../tests/js/node_modules/onnxruntime-node" ]; then
  (cd "$(dirname "$0")/../tests/js" && npm install --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null)
fi
# TF.js test tooling (tests/tensorflow/js): real TF.js graph models (@vladmandic/human's models/),
# TF.js's pure-JavaScript CPU backend, and tfjs-converter's op lists (scripts/gen_tf_namespaces.py).
if [ ! -d "$(dirname "$0")/../tests/tensorflow/js/node_modules/@vladmandic/human" ]; then
  (cd "$(dirname "$0")/../tests/tensorflow/js" && npm install --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null)
fi
# PyTorch 1.13.1's own ONNX exporter tests (tests/pytorch/peer_suite, ctest pytorch.peer_suite):
# test/onnx/ of Debian's pytorch source package (a deb-src entry, then `apt-get source
# --download-only pytorch`, 18 MB), extracted into build-cache/ and never committed.
if [ "$(id -u)" = 0 ] || command -v sudo >/dev/null; then
  SUDO=""
  if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
  $SUDO sh "$(dirname "$0")/../tests/pytorch/peer_suite/fetch_suite.sh" >/dev/null || echo "install-deps: the PyTorch exporter suite was not fetched (pytorch.peer_suite will be skipped)"
fi
