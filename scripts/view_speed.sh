#!/usr/bin/env bash
# How fast `amanda view` pages of big graphs open in headless Chromium (a measurement, not a test;
# docs/performance.md records the figures). Needs a build (build/amanda, build/bench/make_big_graph),
# Debian's chromium and Node.js.
#   scripts/view_speed.sh [BUILD_DIR] [RUNS]
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$here/build}"
runs="${2:-3}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores"
printf '%-26s %8s %8s %9s %9s %10s %10s %12s %12s\n' graph ops edges "view s" "layout ms" "html MB" "open ms" "page ms" "frame ms"
for spec in "tf 10000" "tf 100000" "dag 100000"; do
  set -- $spec
  kind=$1 ops=$2
  yaml="$tmp/$kind$ops.yaml" page="$tmp/$kind$ops.html"
  extra=()
  [ "$kind" = dag ] && extra=(--edges $((ops * 3 / 2)))
  "$build/bench/make_big_graph" --kind "$kind" --ops "$ops" "${extra[@]}" "$yaml" >/dev/null
  start=$(date +%s.%N)
  "$build/amanda" view "$yaml" -o "$page" -q
  view_s=$(echo "$(date +%s.%N) - $start" | bc)
  best_open=999999 best_page=0 frames=""
  for ((r = 0; r < runs; r++)); do
    out=$(node "$here/tests/view/cdp_view.js" "$page" --frames --timeout 300)
    read -r open pagems layout edges nops frames < <(node -e '
      const r = JSON.parse(require("fs").readFileSync(0, "utf8"));
      if (r.error || r.errors.length) { console.error(r.error || r.errors); process.exit(1); }
      console.log(r.readyMs, Math.round(r.parseMs), r.layoutMs, r.edges, r.ops,
                  r.frameMs.fitted.toFixed(0) + "/" + r.frameMs.actual.toFixed(0));' <<<"$out")
    if ((open < best_open)); then best_open=$open best_page=$pagems best_frames=$frames; fi
  done
  printf '%-26s %8s %8s %9.2f %9s %10.1f %10s %12s %12s\n' "$kind --ops $ops" "$nops" "$edges" "$view_s" "$layout" \
    "$(echo "$(stat -c %s "$page") / 1048576" | bc -l)" "$best_open" "$best_page" "$best_frames"
done
echo "open ms: from Page.navigate to the viewer's first full frame (best of $runs); page ms: the page's own"
echo "script (parse the scene + place + first draw); frame ms: one redraw fitted / at 100 %."
