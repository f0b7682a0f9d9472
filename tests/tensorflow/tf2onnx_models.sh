#!/bin/sh
# A TF.js graph model converted to ONNX by amanda computes what TF.js computes
# (tests/tensorflow/js/tf2onnx_compare.js: two seeds of random inputs of the signature's shapes,
# every output within 1e-4 relative to max(1, |x|), not all zero), and passes onnx.checker. The same
# model through a frozen GraphDef (.pb, no signature: the outputs are the ops nobody reads) too.
#   tf2onnx_models.sh AMANDA MODEL.json WORKDIR [--pb-big]
# --pb-big (handtrack): the .pb route only with AMANDA_TEST_BIG_MODELS=1 (the CI budget), and without
# onnx.checker there: without the signature's output types, onnx 1.12's inference cannot give the
# ranks of outputs computed from a loop's result and run-time Slices, and the checker wants them.
set -e
amanda=$1 model=$2 work=$3 pb=${4:-}
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work" && mkdir -p "$work"
check() { /usr/bin/python3 -c "import onnx, sys; m = onnx.load(sys.argv[1]); onnx.checker.check_model(m, full_check=True); assert m.opset_import[0].version == 13" "$1"; }
"$amanda" convert -q "$model" -o "$work/model.onnx"
check "$work/model.onnx"
node "$here/js/tf2onnx_compare.js" model "$model" "$work/model.onnx" 2>"$work/node.err" || { cat "$work/node.err" >&2; exit 1; }
if [ "$pb" = --pb-big ] && [ "${AMANDA_TEST_BIG_MODELS:-0}" != 1 ]; then rm -rf "$work"; exit 0; fi
"$amanda" fmt "$model" -o "$work/model.pb" >/dev/null
"$amanda" convert -q "$work/model.pb" -o "$work/from_pb.onnx"
[ "$pb" = --pb-big ] || check "$work/from_pb.onnx"
node "$here/js/tf2onnx_compare.js" model "$model" "$work/from_pb.onnx" 2>"$work/node.err" || { cat "$work/node.err" >&2; exit 1; }
rm -rf "$work"
