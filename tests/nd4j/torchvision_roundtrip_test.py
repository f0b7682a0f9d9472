#!/usr/bin/python3
"""ONNX -> nd4j -> ONNX for the eight torchvision exports (tests/onnx/torchvision_models.py makes them
with random weights): each converts to nd4j (validated against amanda/nd4j/1.0, ordered arguments
complete), is written as a SameDiff .fb, read back, converted to ONNX, and the result must give the
original's outputs in onnxruntime within 1e-5 (tests/js/ort_compare.js, seeded input). A model that
does not convert is reported with the converter's reasons and counted.

Usage: torchvision_roundtrip_test.py ND4J_CONVERT MODELS_DIR [MODEL ...] [--strict] [--min-match N]
(CI runs resnet18, mobilenet_v2, squeezenet1_0; AMANDA_ND4J_ALL=1 all eight)
"""
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = ["resnet18", "mobilenet_v2", "squeezenet1_0", "efficientnet_b0", "densenet121",
          "convnext_tiny", "vit_b_16", "swin_t"]


def main():
    argv = sys.argv[1:]
    min_match = 0
    if "--min-match" in argv:  # the figure reached so far: fewer is a regression
        i = argv.index("--min-match")
        min_match = int(argv[i + 1])
        del argv[i:i + 2]
    args = [a for a in argv if not a.startswith("--")]
    strict = "--strict" in argv
    conv, models_dir = args[0], args[1]
    models = args[2:] or MODELS
    if not args[2:] and os.environ.get("AMANDA_ND4J_ALL") != "1":
        # CI: three of the eight (AMANDA_ND4J_ALL=1: all); the floor scales with them
        models = ["resnet18", "mobilenet_v2", "squeezenet1_0"]
        min_match = min(min_match, len(models))
    tmp = tempfile.mkdtemp()
    rows, failures, matched = [], [], 0
    for m in models:
        src = os.path.join(models_dir, m + ".onnx")
        if not os.path.exists(src):
            failures.append("%s: %s is missing (the torchvision_models fixture makes it)" % (m, src))
            continue
        fb = os.path.join(tmp, m + ".fb")
        back = os.path.join(tmp, m + "_back.onnx")
        t = time.monotonic()
        r1 = subprocess.run([conv, src, fb], capture_output=True, text=True)
        if r1.returncode != 0:
            rows.append((m, "not converted", "ONNX -> nd4j: " + " ".join(r1.stderr.split())[:500]))
            continue
        r2 = subprocess.run([conv, fb, back, "--to", "onnx/13"], capture_output=True, text=True)
        if r2.returncode != 0:
            rows.append((m, "not converted", "nd4j -> ONNX: " + " ".join(r2.stderr.split())[:500]))
            failures.append("%s: converts to nd4j but not back" % m)
            continue
        secs = time.monotonic() - t
        r3 = subprocess.run(["node", os.path.join(HERE, "..", "js", "ort_compare.js"), src, back],
                            capture_output=True, text=True)
        try:
            res = json.loads(r3.stdout)
            c = res["results"][0]
        except Exception:
            failures.append("%s: ort_compare failed: %s" % (m, r3.stderr[-300:]))
            continue
        if "error" in c:
            failures.append("%s: onnxruntime: %s" % (m, c["error"]))
            rows.append((m, "FAIL", c["error"][:300]))
            continue
        d, ref = c["max_abs_diff"], res["max_abs_reference"]
        ok = d <= 1e-5 * max(1.0, ref) and ref > 0
        rows.append((m, "matches" if ok else "FAIL", "max |diff| %.3g (outputs up to %.3g), .fb %.1f MB, %.1f s" %
                     (d, ref, os.path.getsize(fb) / 1e6, secs)))
        if ok:
            matched += 1
        else:
            failures.append("%s: max |diff| %g" % (m, d))
    for row in rows:
        print("%-16s %-14s %s" % row)
    print("torchvision ONNX -> nd4j -> ONNX: %d models, %d match onnxruntime within 1e-5, %d not converted"
          % (len(models), matched, sum(r[1] == "not converted" for r in rows)))
    for f in failures:
        print("FAIL:", f)
    if strict and matched != len(models):
        return 1
    if matched < min_match:
        print("FAIL: %d models match, fewer than the %d reached before" % (matched, min_match))
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
