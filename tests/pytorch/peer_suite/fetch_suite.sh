#!/bin/sh
# Fetches PyTorch 1.13.1's own ONNX exporter tests (test/onnx/ of Debian's pytorch source package)
# into a cache folder, for tests/pytorch/peer_suite/run_suite.py. Nothing of it is committed.
#
#   fetch_suite.sh [CACHE_DIR]        (default: build-cache/pytorch-src under the checkout)
#
# Prints the folder holding test_pytorch_onnx_onnxruntime.py. Adds a deb-src entry for bookworm's
# main component if apt has none (needs root; scripts/install-deps.sh calls this only when tests
# are wanted). `apt-get source --download-only` fetches the orig tarball (18.3 MB) and the .dsc; the
# Debian patch tarball may 404 on a mirror that has moved on: only the orig tarball is needed.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
CACHE=${1:-$ROOT/build-cache/pytorch-src}
SUITE=$CACHE/pytorch-1.13.1/test/onnx
if [ -f "$SUITE/test_pytorch_onnx_onnxruntime.py" ]; then
  echo "$SUITE"
  exit 0
fi
mkdir -p "$CACHE"
if ! grep -rqs "deb-src" /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null; then
  cat > /etc/apt/sources.list.d/debsrc.sources <<'EOF'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  apt-get update -qq >&2
fi
cd "$CACHE"
if ! ls pytorch_1.13.1*.orig.tar.xz >/dev/null 2>&1; then
  apt-get source --download-only pytorch >&2 || true   # the debian.tar.xz may 404; the orig is enough
fi
ORIG=$(ls pytorch_1.13.1*.orig.tar.xz 2>/dev/null | head -1)
if [ -z "$ORIG" ]; then
  echo "fetch_suite.sh: apt-get source pytorch gave no orig tarball in $CACHE" >&2
  exit 1
fi
tar xf "$ORIG" pytorch-1.13.1/test/onnx/
echo "$SUITE"
