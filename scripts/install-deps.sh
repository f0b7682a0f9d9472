#!/usr/bin/env bash
# Installs what Amanda needs from Debian's packages, skipping what is already there.
set -euo pipefail
packages=(
  cmake g++ ninja-build pkg-config
  libyaml-dev rapidjson-dev libcli11-dev libfmt-dev libabsl-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libonnx-dev libprotobuf-dev protobuf-compiler libonnx-testdata
  python3 python3-numpy python3-onnx python3-torch python3-torchvision
  clang libclang-rt-14-dev
)
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
