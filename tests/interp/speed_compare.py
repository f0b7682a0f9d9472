#!/usr/bin/python3
"""Speed and peak memory of `amanda run` against onnxruntime-node on the same models, with the
same thread count, in one go. Prints the ratios (ours / onnxruntime).

  speed_compare.py --amanda build/amanda --models DIR [--threads 2] [--repeat 5] [names...]

Models are DIR/NAME.onnx (scripts/make_torchvision_onnx.py DIR resnet18 mobilenet_v2 vit_b_16
makes them). Time: the best of --repeat runs after a warm-up, inside each process (model loading
excluded on both sides). Memory: the peak resident set of each whole process (GNU time's %M),
which includes the weights on both sides (ours maps the file; onnxruntime copies it) and, for
onnxruntime, Node.js itself; the Node.js baseline is printed too.
"""
import argparse
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def peak_rss_mb(cmd, env):
    p = subprocess.run(["/usr/bin/time", "-f", "MAXRSS %M"] + cmd, capture_output=True, text=True, env=env, timeout=1800)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed: {p.stderr[-500:]}")
    m = re.search(r"MAXRSS (\d+)", p.stderr)
    return p.stdout, int(m.group(1)) / 1024.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--amanda", required=True)
    ap.add_argument("--models", required=True)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("names", nargs="*", default=["resnet18", "mobilenet_v2", "vit_b_16"])
    a = ap.parse_args()
    env = dict(os.environ, AMANDA_THREADS=str(a.threads), OPENBLAS_NUM_THREADS=str(a.threads))
    modules = os.environ.get("AMANDA_ORT_NODE_MODULES", os.path.join(HERE, "..", "js", "node_modules"))
    _, node_base = peak_rss_mb(["node", "-e", "require(process.argv[1])", os.path.join(modules, "onnxruntime-node")], env)
    print(f"threads {a.threads}, best of {a.repeat} runs; Node.js + onnxruntime-node baseline RSS {node_base:.0f} MB")
    print(f"{'model':14} {'amanda s':>9} {'ort s':>8} {'time x':>7} {'amanda MB':>10} {'ort MB':>8} {'mem x':>6}")
    worst_t = worst_m = 0
    for name in a.names:
        model = os.path.join(a.models, name + ".onnx")
        out, ours_mb = peak_rss_mb([a.amanda, "run", model, "--repeat", str(a.repeat)], env)
        m = re.search(r"in ([0-9.]+) s", out)
        ours_s = float(m.group(1))
        out, ort_mb = peak_rss_mb(["node", os.path.join(HERE, "ort_speed.js"), model, str(a.threads), str(a.repeat)], env)
        ort_s = json.loads(out.strip().splitlines()[-1])["best_s"]
        tr, mr = ours_s / ort_s, ours_mb / ort_mb
        worst_t, worst_m = max(worst_t, tr), max(worst_m, mr)
        print(f"{name:14} {ours_s:9.3f} {ort_s:8.3f} {tr:7.2f} {ours_mb:10.0f} {ort_mb:8.0f} {mr:6.2f}")
    print(f"worst ratios: time {worst_t:.2f}x, peak memory {worst_m:.2f}x (targets: 3x, 1.5x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
