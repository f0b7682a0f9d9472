#!/bin/sh
# TensorFlow speed (docs/performance.md, "TensorFlow"): for every TF.js graph model of
# @vladmandic/human (tests/tensorflow/js), Amanda's import + export of the model as a frozen .pb
# against protobuf's own parse + serialize of the same GraphDef, and Amanda's read of model.json +
# shards against TF.js's own loader in Node (read, JSON.parse, tf.loadGraphModel(fromMemory); best
# of 5). Both sides in CPU time (user + system), which a loaded machine distorts less than wall time. Needs a Release build in build/ (target tensorflow_bench) and scripts/install-deps.sh.
#   scripts/tf_speed.sh [BUILD_DIR]
set -e
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
models=$root/tests/tensorflow/js/node_modules/@vladmandic/human/models
out=$(mktemp -d)
# Model by model, the peers and Amanda interleaved (TF.js's loader, protobuf, Amanda), so that a
# change of the machine's load falls on both sides of a ratio.
for f in $(ls "$models"/*.json | grep -v '/models.json$'); do
  m=$(basename "$f" .json)
  # (the model twice: the first five loads warm the process's JIT, the second five are kept, as
  # warm as a model late in one process loading all of them)
  node "$root/tests/tensorflow/js/tfjs_run.js" load-time "$f" "$f" >"$out/tfjs.$m.json" 2>/dev/null
  "$build/bench/tensorflow_bench" --benchmark_filter="^(protobuf_parse_serialize|amanda_import_export_pb|amanda_read_tfjs)/$m\$" \
    --benchmark_min_time=0.5 --benchmark_format=json >"$out/bench.$m.json" 2>/dev/null
done
/usr/bin/python3 - "$out" <<'PY'
import glob, json, sys
runs = [b for f in sorted(glob.glob(sys.argv[1] + "/bench.*.json")) for b in json.load(open(f))["benchmarks"]]
bench = {b["name"]: b["cpu_time"] for b in runs}
size = {b["name"].split("/")[1]: b.get("bytes", 0) / 1e6 for b in runs if b["name"].startswith("protobuf_parse_serialize/")}
tfjs = {}
for f in glob.glob(sys.argv[1] + "/tfjs.*.json"):
    tfjs.update(json.load(open(f)))
print("| model | .pb MB | protobuf parse+serialize ms | amanda import+export ms | ratio | TF.js load ms | amanda read_tfjs ms | ratio |")
print("|---|---|---|---|---|---|---|---|")
for m in sorted(tfjs):
    p, a, r = bench["protobuf_parse_serialize/" + m], bench["amanda_import_export_pb/" + m], bench["amanda_read_tfjs/" + m]
    print("| %s | %.1f | %.2f | %.2f | %.2f | %.1f | %.1f | %.2f |" % (m, size.get(m, 0), p, a, a / p, tfjs[m], r, r / tfjs[m]))
PY
rm -rf "$out"
