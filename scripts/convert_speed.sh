#!/usr/bin/env bash
# ONNX opset conversion speed, Amanda against onnx.version_converter.convert_version, in one go.
# For each model and each target opset:
#   amanda    import from bytes in memory + mapping::convert + export to bytes, in process
#             (bench/convert_bench.cpp, the library calls of `amanda convert`), best of N
#   onnx      onnx.version_converter.convert_version(model, target) on the model already loaded
#             in Python (Debian's python3-onnx), best of N; "fails" where it throws (downgrades:
#             `adapter_lookup: Assertion false`)
#   command   the whole `amanda convert IN --to onnx/T -o OUT -q` (process start, registry, tables
#             from YAML, read, convert, write the file), best of N, for information
# and the ratio onnx/amanda (target: >= 10x wherever convert_version works). Models are run one
# after the other, each model's three measurements together, so machine load hits both sides alike.
#
#   scripts/convert_speed.sh [model.onnx | folder ...]
#     no argument: the six torchvision models in $AMANDA_TV_DIR (default build-bench/tv), made with
#     scripts/make_torchvision_onnx.py (opset 13, random weights) when missing
#   AMANDA_BENCH_REPS=5       repetitions (best of); AMANDA_CMD_REPS=3 for the whole command
#   AMANDA_CONVERT_TARGETS=9,11,12,14,15,17
#   AMANDA_BUILD_DIR=build-bench   (configured Release and built here: convert_bench, amanda)
set -euo pipefail
cd "$(dirname "$0")/.."
build="${AMANDA_BUILD_DIR:-build-bench}"
targets="${AMANDA_CONVERT_TARGETS:-9,11,12,14,15,17}"
reps="${AMANDA_BENCH_REPS:-5}"
cmd_reps="${AMANDA_CMD_REPS:-3}"
if [[ ! -f "$build/CMakeCache.txt" ]]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DAMANDA_BUILD_TESTS=OFF >/dev/null
fi
grep -q 'CMAKE_BUILD_TYPE:STRING=Release' "$build/CMakeCache.txt" || echo "warning: $build is not a Release build" >&2
cmake --build "$build" --target convert_bench amanda -j "${AMANDA_JOBS:-2}" >/dev/null

models=()
if [[ $# -eq 0 ]]; then
  tv="${AMANDA_TV_DIR:-$build/tv}"
  want=(resnet18 mobilenet_v2 squeezenet1_0 efficientnet_b0 convnext_tiny vit_b_16)
  missing=()
  for m in "${want[@]}"; do [[ -f "$tv/$m.onnx" ]] || missing+=("$m"); done
  if [[ ${#missing[@]} -gt 0 ]]; then
    /usr/bin/python3 scripts/make_torchvision_onnx.py "$tv" "${missing[@]}" >&2
  fi
  for m in "${want[@]}"; do models+=("$tv/$m.onnx"); done
else
  for a in "$@"; do
    if [[ -d "$a" ]]; then models+=("$a"/*.onnx); else models+=("$a"); fi
  done
fi

echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- src include bench tools || echo '+changes'), load $(cut -d' ' -f1-3 /proc/loadavg)"
/usr/bin/python3 - "$build" "$targets" "$reps" "$cmd_reps" "${models[@]}" <<'PY'
import os, subprocess, sys, tempfile, time
import onnx
from onnx import version_converter

build, targets, reps, cmd_reps = sys.argv[1], [int(t) for t in sys.argv[2].split(",")], int(sys.argv[3]), int(sys.argv[4])
models = sys.argv[5:]
bench = os.path.join(build, "bench", "convert_bench")
tool = os.path.join(build, "amanda")

def amanda_inproc(path):
    out = subprocess.run([bench, "--reps", str(reps), "--to", ",".join(map(str, targets)), path],
                         check=True, capture_output=True, text=True).stdout
    res = {}
    for line in out.splitlines():
        if line.startswith("#"):
            continue
        f = line.split("\t")
        res[int(f[1])] = {"status": f[2], "total": float(f[3]), "import": float(f[4]), "convert": float(f[5]),
                          "export": float(f[6]), "first": float(f[7]), "detail": f[9] if len(f) > 9 else ""}
    return res

def onnx_convert(model, target):
    best = float("inf")
    for _ in range(reps):
        t = time.perf_counter()
        try:
            version_converter.convert_version(model, target)
        except Exception as e:  # RuntimeError: ... adapter_lookup: Assertion `false` failed ...
            msg = str(e).strip().splitlines()
            msg = msg[0] if msg else type(e).__name__
            k = msg.find("adapter_lookup")
            return None, (msg[k:] if k >= 0 else msg)[:110]
        best = min(best, time.perf_counter() - t)
    return best, ""

def amanda_command(path, target, d):
    best, ok = float("inf"), True
    out = os.path.join(d, f"out{target}.onnx")
    for _ in range(cmd_reps):
        t = time.perf_counter()
        r = subprocess.run([tool, "convert", path, "--to", f"onnx/{target}", "-o", out, "-q"], capture_output=True)
        best = min(best, time.perf_counter() - t)
        ok = r.returncode == 0
        if not ok:
            break
    if os.path.exists(out):
        os.remove(out)
    return best, ok

def fmt(x):
    return "fails" if x is None else f"{x:.4f}"

print(f"{'model':16} {'to':>3} {'amanda s':>9} {'(import':>8} {'convert':>8} {'export)':>8} {'1st run':>8} {'onnx s':>8} {'onnx/amanda':>11} {'command s':>10}  notes")
summary = []
for path in models:
    name = os.path.splitext(os.path.basename(path))[0]
    mb = os.path.getsize(path) / 1e6
    am = amanda_inproc(path)
    model = onnx.load(path)
    with tempfile.TemporaryDirectory() as d:
        for target in targets:
            a = am.get(target, {"status": "fails", "detail": "not run"})
            py, why = onnx_convert(model, target)
            cmd, cmd_ok = amanda_command(path, target, d)
            a_ok = a["status"] == "ok"
            ratio = f"{py / a['total']:10.1f}x" if a_ok and py is not None else "          -"
            notes = []
            if not a_ok:
                notes.append("amanda: " + a["detail"][:100])
            if py is None:
                notes.append("onnx: " + why)
            if not cmd_ok:
                notes.append("command failed")
            if a_ok:
                print(f"{name:16} {target:3} {a['total']:9.4f} {a['import']:8.4f} {a['convert']:8.4f} {a['export']:8.4f} {a['first']:8.4f} {fmt(py):>8} {ratio} {cmd:10.4f}  {'; '.join(notes)}")
            else:
                print(f"{name:16} {target:3} {'fails':>9} {'':8} {'':8} {'':8} {'':8} {fmt(py):>8} {ratio} {cmd:10.4f}  {'; '.join(notes)}")
            if a_ok and py is not None:
                summary.append((name, target, py / a["total"]))
    del model
    sys.stdout.flush()
if summary:
    worst = min(summary, key=lambda s: s[2])
    print(f"ratio onnx/amanda where both work: {min(s[2] for s in summary):.1f}x .. {max(s[2] for s in summary):.1f}x "
          f"(lowest: {worst[0]} -> {worst[1]}); target >= 10x: {'PASS' if worst[2] >= 10 else 'FAIL'}")
print(f"amanda = import_model_buffer + mapping::convert + export_model_bytes, in process, best of {reps}"
      f" (1st run: the first of them, which also loads libonnx's schemas of the opsets on the way into the registry);"
      f" onnx = convert_version on the loaded model, best of {reps}; command = whole `amanda convert`, best of {cmd_reps}")
PY
