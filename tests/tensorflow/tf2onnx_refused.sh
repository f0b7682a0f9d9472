#!/bin/sh
# A TF.js model with ops the TF -> ONNX tables do not convert (handtrack: a TF1 while loop, TensorList
# ops, NonMaxSuppressionV5) is refused: exit 1, no output file, and the report names each such op
# type with the reason.
#   tf2onnx_refused.sh AMANDA MODEL.json WORKDIR OP...
set -e
amanda=$1 model=$2 work=$3
shift 3
rm -rf "$work" && mkdir -p "$work"
if "$amanda" convert "$model" -o "$work/model.onnx" >"$work/report.txt" 2>&1; then echo "converted, but should be refused" >&2; exit 1; fi
[ ! -e "$work/model.onnx" ] || { echo "an output was written" >&2; exit 1; }
for op in "$@"; do
  grep -q "^  $op " "$work/report.txt" || { echo "the report does not name $op:" >&2; cat "$work/report.txt" >&2; exit 1; }
done
rm -rf "$work"
