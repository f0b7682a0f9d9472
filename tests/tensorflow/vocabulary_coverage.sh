#!/bin/sh
# TF -> ONNX coverage against TF.js's graph-executor vocabulary and tf2onnx's list
# (docs/tensorflow.md, "Vocabulary"): the counts may not fall below those measured with issue 28,
# and no refusal may say "not written yet".
#   vocabulary_coverage.sh AMANDA
set -eu
amanda=$1
here=$(cd "$(dirname "$0")" && pwd)
voc=$here/../../namespaces/tensorflow/vocabulary
out=$("$amanda" table coverage --from tensorflow/2.2 --to onnx/13 --vocabulary "$voc/tfjs-4.22.0-graph-ops.txt" \
      --vocabulary "$voc/tf2onnx-support-status.txt" || true)
echo "$out" | grep ' ops: '
if echo "$out" | grep -qi 'not written yet\|yet)'; then echo "a refusal says 'not written yet'"; exit 1; fi
check() {  # FILE MIN_HANDLED: covered + conditional + refused-with-a-reason
  line=$(echo "$out" | grep "$1: .* ops:")
  handled=$(echo "$line" | sed -E 's/.*ops: ([0-9]+) covered, ([0-9]+) covered with conditions.*, ([0-9]+) refused with a reason.*/\1 \2 \3/' | awk '{print $1 + $2 + $3}')
  [ "$handled" -ge "$2" ] || { echo "$1: $handled handled, fewer than $2"; exit 1; }
}
check tfjs-4.22.0-graph-ops.txt 248
check tf2onnx-support-status.txt 182
echo ok
