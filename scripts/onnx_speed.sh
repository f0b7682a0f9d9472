#!/usr/bin/env bash
# ONNX import + export speed, in one go, against the floor (protobuf's own parse + serialize, in
# C++) and the peer (Python's onnx.load + onnx.save, Debian's python3-onnx). Prints each time and
# the ratios. Models: a synthetic 100,000-node model, plus any .onnx files given as arguments
# (e.g. torchvision exports made by scripts/make_torchvision_onnx.py).
#   scripts/onnx_speed.sh [model.onnx ...]
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build-bench -G Ninja -DCMAKE_BUILD_TYPE=Release -DAMANDA_BUILD_TESTS=OFF >/dev/null
cmake --build build-bench --target onnx_bench >/dev/null
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
synthetic="$out/synthetic_100000.onnx"
models=("$@")
list=$(IFS=:; echo "${models[*]:-}")
AMANDA_BENCH_ONNX="$list" build-bench/bench/onnx_bench --benchmark_format=json --benchmark_min_time=0.5 \
  --benchmark_repetitions="${AMANDA_BENCH_REPS:-3}" \
  --benchmark_out="$out/cpp.json" --benchmark_out_format=json >/dev/null
# The same synthetic model for Python: write it once through the importer/exporter path's input.
AMANDA_BENCH_ONNX_WRITE="$synthetic" /usr/bin/python3 - "$out/cpp.json" "${models[@]}" <<'PY'
import json, os, sys, time, tempfile
import onnx
from onnx import helper, TensorProto, numpy_helper
import numpy as np

cpp = json.load(open(sys.argv[1]))
times = {}
for b in cpp["benchmarks"]:
    if b.get("run_type", "iteration") != "iteration":
        continue
    kind, name = b["name"].split("/", 1)
    t = times.setdefault(name, {})
    t[kind] = min(t.get(kind, float("inf")), b["real_time"] / 1000.0)  # ms -> s; the best repetition

def synthetic(n):
    nodes, inits, prev = [], [], "x"
    for i in range(n):
        out = f"v{i}"
        if i % 3 == 0:
            w = f"w{i}"; inits.append(numpy_helper.from_array(np.full((8, 8, 1, 1), 1.0, np.float32), w))
            nodes.append(helper.make_node("Conv", [prev, w], [out], name=f"n{i}", kernel_shape=[1, 1]))
        elif i % 3 == 1:
            b = f"b{i}"; inits.append(numpy_helper.from_array(np.full((8, 1, 1), 2.0, np.float32), b))
            nodes.append(helper.make_node("Add", [prev, b], [out], name=f"n{i}"))
        else:
            nodes.append(helper.make_node("Relu", [prev], [out], name=f"n{i}"))
        prev = out
    g = helper.make_graph(nodes, "synthetic", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 32, 32])],
                          [helper.make_tensor_value_info(prev, TensorProto.FLOAT, None)], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])

def py_time(model_path, reps=int(os.environ.get("AMANDA_BENCH_REPS", "3"))):
    best = float("inf")
    with tempfile.TemporaryDirectory() as d:
        for _ in range(reps):
            t = time.perf_counter()
            m = onnx.load(model_path)
            onnx.save(m, os.path.join(d, "out.onnx"))
            best = min(best, time.perf_counter() - t)
    return best

paths = {}
with tempfile.TemporaryDirectory() as d:
    p = os.path.join(d, "synthetic_100000.onnx")
    onnx.save(synthetic(100000), p)
    paths["synthetic_100000"] = p
    for m in sys.argv[2:]:
        paths[os.path.splitext(os.path.basename(m))[0]] = m
    print(f"{'model':28} {'protobuf s':>11} {'amanda s':>9} {'import s':>9} {'copying s':>10} {'onnx py s':>10} {'amanda/protobuf':>16} {'onnx py/amanda':>15}")
    for name, path in paths.items():
        t = times.get(name, {})
        py = py_time(path)
        pb, am, imp, cp = t.get("protobuf"), t.get("amanda"), t.get("amanda_import"), t.get("amanda_copy", float("nan"))
        if pb is None or am is None:
            print(f"{name:28} (not timed in C++)"); continue
        print(f"{name:28} {pb:11.4f} {am:9.4f} {imp:9.4f} {cp:10.4f} {py:10.4f} {am/pb:15.2f}x {py/am:14.2f}x")
print("amanda = import_model_buffer + export_model_bytes (the tool's path: tensors borrow the mapped input);")
print("copying = import_model_bytes (copies the input once) + export; best of the repetitions throughout")
print("targets: amanda/protobuf <= 1.5x; onnx py/amanda > 1x; synthetic 100,000-node import < 0.3 s")
PY
