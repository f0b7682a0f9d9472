#!/bin/sh
# A TF.js graph model read and written by Amanda runs in TF.js (pure-JS CPU backend) exactly as the
# original does: same outputs, bit for bit, on deterministic random inputs of its signature.
#   tfjs_runs_same.sh AMANDA MODEL.json WORKDIR
set -e
amanda=$1 model=$2 work=$3
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work" && mkdir -p "$work"
"$amanda" fmt "$model" -o "$work/model.json"
node "$here/js/tfjs_run.js" same "$model" "$work/model.json" 2>"$work/node.err" || { cat "$work/node.err" >&2; exit 1; }
rm -rf "$work"
