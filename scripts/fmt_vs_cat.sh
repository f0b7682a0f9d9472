#!/bin/bash
# The ONNX write path against the floor: `amanda fmt MODEL -o out.onnx` beside `cat MODEL > copy`,
# interleaved (caches cannot be dropped here, so each run sees the same warm page cache), RUNS
# rounds; prints each run and the medians of wall, user and system time, and the ratio amanda/cat.
#
#   scripts/fmt_vs_cat.sh AMANDA MODEL.onnx [RUNS=7] [OUT_DIR=$(dirname MODEL)]
#
# Make a big model with random weights (not committed; ~553 MB):
#   /usr/bin/python3 scripts/make_torchvision_onnx.py /tmp/big vgg16
set -euo pipefail
amanda=$1 model=$2 runs=${3:-7} out=${4:-$(dirname "$2")}
t() { /usr/bin/time -f "%e %U %S" "$@" 2>&1 >/dev/null | tail -1; }
declare -a cw cu cs aw au as
cat "$model" > /dev/null  # warm the page cache once
for ((i = 0; i < runs; i++)); do
  read -r w u s < <(t sh -c "cat '$model' > '$out/copy.onnx'")
  cw+=("$w") cu+=("$u") cs+=("$s")
  read -r w u s < <(t "$amanda" -q fmt "$model" -o "$out/out.onnx")
  aw+=("$w") au+=("$u") as+=("$s")
  echo "run $i: cat ${cw[-1]} s (user ${cu[-1]}, sys ${cs[-1]}); amanda fmt ${aw[-1]} s (user ${au[-1]}, sys ${as[-1]})"
done
cmp "$model" "$out/out.onnx" >/dev/null && echo "output identical to the input" || echo "output differs from the input (a canonical rewrite)"
med() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
mcw=$(med "${cw[@]}") mcu=$(med "${cu[@]}") mcs=$(med "${cs[@]}") maw=$(med "${aw[@]}") mau=$(med "${au[@]}") mas=$(med "${as[@]}")
echo "median: cat $mcw s (user $mcu, sys $mcs); amanda fmt $maw s (user $mau, sys $mas)"
awk -v a="$maw" -v c="$mcw" -v as="$mas" -v cs="$mcs" 'BEGIN {printf "amanda/cat: wall %.2fx, system %.2fx\n", a / c, (cs > 0 ? as / cs : 0)}'
rm -f "$out/copy.onnx" "$out/out.onnx"
