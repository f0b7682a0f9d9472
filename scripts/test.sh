#!/usr/bin/env bash
# Installs missing dependencies, builds, and runs every test twice: once in the Release build and
# once under AddressSanitizer + UndefinedBehaviorSanitizer (build-fuzz/, clang); then runs each
# libFuzzer target of that build for AMANDA_FUZZ_SECONDS (default 30) seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
jobs=$(nproc)

echo "== Release build and tests"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DAMANDA_BUILD_TESTS=ON -DAMANDA_BUILD_BENCH=ON >/dev/null
cmake --build build -j"$jobs"
ctest --test-dir build -j"$jobs" --output-on-failure

echo "== Sanitizer build (clang: AddressSanitizer + UndefinedBehaviorSanitizer): its tests, then the libFuzzer targets"
# One clang build serves both: the tests run under the sanitizers, and the same libraries, with
# libFuzzer's coverage instrumentation where fuzz/CMakeLists.txt asks for it, link the fuzz targets
# (two separate builds, gcc -O0 for the tests and clang for the fuzzers, cost CI about 15 minutes
# more), and -O2 runs the tests several times faster than the old build's -O0.
# The torchvision models the Release tests made (build/models) are reused, not made again. This
# build leaves out the PyTorch plugin (libtorch under the sanitizers is slow to build and not ours):
# it also shows that everything else builds and passes without libtorch.
CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DAMANDA_SANITIZE=ON -DAMANDA_BUILD_FUZZ=ON -DAMANDA_BUILD_TESTS=ON -DAMANDA_BUILD_BENCH=OFF -DAMANDA_WITH_TORCH=OFF \
  -DAMANDA_MODELS_DIR="$PWD/build/models" -DAMANDA_MODELS_PT_DIR="$PWD/build/models_pt" >/dev/null
cmake --build build-fuzz -j"$jobs"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-fuzz -j"$jobs" --output-on-failure

fuzz_seconds=${AMANDA_FUZZ_SECONDS:-30}
# A fixed seed makes CI's short runs repeat the same mutations, so CI passes or fails on the code,
# not on luck; the long runs that look for new findings are run by hand (SECURITY.md says how).
fuzz_seed=${AMANDA_FUZZ_SEED:-1}
echo "== libFuzzer targets, ${fuzz_seconds} s each, ${jobs} at a time (a crash fails the run; its input is kept in build-fuzz/artifacts/)"
mkdir -p build-fuzz/artifacts
fuzz_one() {
  local target=$1 scratch status=0
  local dict=()
  # New inputs go to a scratch folder, never into the committed seed corpus (fuzz/corpus/*).
  scratch=$(mktemp -d)
  if [ -f "fuzz/$target.dict" ]; then dict=(-dict="fuzz/$target.dict"); fi
  build-fuzz/fuzz/${target}_fuzz "${dict[@]}" -seed="$fuzz_seed" -max_total_time="$fuzz_seconds" -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix=build-fuzz/artifacts/"$target"- "$scratch" "fuzz/corpus/$target" 2>build-fuzz/"$target"-fuzz.log || status=$?
  rm -rf "$scratch"
  echo "${target}_fuzz: $(grep -E "^stat::(number_of_executed_units|peak_rss_mb)" build-fuzz/"$target"-fuzz.log | tr '\n' ' ')"
  if [ "$status" != 0 ]; then
    tail -n 60 build-fuzz/"$target"-fuzz.log
    echo "${target}_fuzz failed (exit $status); the input is in build-fuzz/artifacts/"
    return 1
  fi
}
export -f fuzz_one
export fuzz_seed fuzz_seconds
# Each target is one single-threaded process: the cores run them side by side.
printf '%s\n' yaml json onnx torchscript tensorflow torchscript_interp table savedmodel tfjs npy run writers nd4j caffe2 |
  xargs -P "$jobs" -I{} bash -c 'fuzz_one {}'
