#!/usr/bin/python3
"""TensorFlow -> nd4j through DL4J's TensorFlow rule set (tables/nd4j/tf_2.2_nd4j_1.0.yaml, imported by
scripts/import_dl4j_rules.py) and Amanda's rules for TF.js's fused ops (tf_2.2_nd4j_1.0_hand.yaml), on
the TF.js models of @vladmandic/human (tests/tensorflow/js/node_modules): each model that converts is
written as a .fb, read back and validated against amanda/nd4j/1.0 (ordered arguments included); the
count of models and ops is printed, and each model that does not convert with the reasons.

Usage: tfjs_human_test.py ND4J_CONVERT MODELS_DIR   (CI runs the four smallest; AMANDA_ND4J_ALL=1 all)
"""
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
MIN_CONVERTED = 10  # session 12: all but handtrack
FB_SCHEMA = os.path.join(HERE, "..", "..", "src/frameworks/nd4j/samediff.fbs")


def main():
    conv, models_dir = sys.argv[1], sys.argv[2]
    tmp = tempfile.mkdtemp()
    models = sorted(f[:-5] for f in os.listdir(models_dir) if f.endswith(".json") and f != "models.json")
    global MIN_CONVERTED
    if os.environ.get("AMANDA_ND4J_ALL") != "1":
        # CI: the four smallest models (AMANDA_ND4J_ALL=1: all eleven)
        models = sorted(models, key=lambda m: os.path.getsize(os.path.join(models_dir, m + ".json")))[:4]
        MIN_CONVERTED = 4
    if not models:
        print("no models in", models_dir)
        return 1
    converted, ops_total, failures = 0, 0, []
    for m in models:
        fb = os.path.join(tmp, m + ".fb")
        r = subprocess.run([conv, os.path.join(models_dir, m + ".json"), fb], capture_output=True, text=True)
        if r.returncode != 0:
            kinds = re.findall(r"^\s+(\S+)\s+x(\d+)", r.stderr, re.M)
            print("%-20s not converted: %s" % (m, ", ".join("%s x%s" % k for k in kinds) or " ".join(r.stderr.split())[:300]))
            continue
        again = os.path.join(tmp, m + "_again.fb")
        v = subprocess.run([conv, fb, again, "--validate"], capture_output=True, text=True)
        if v.returncode != 0:
            failures.append("%s: the .fb does not read back valid: %s" % (m, " ".join(v.stderr.split())[:300]))
            continue
        subprocess.run(["flatc", "--json", "--strict-json", "--raw-binary", "-o", tmp, FB_SCHEMA, "--", fb],
                       check=True, stderr=subprocess.DEVNULL)
        d = json.load(open(os.path.join(tmp, m + ".json")))
        nodes = len(d.get("nodes", []))
        if open(fb, "rb").read() != open(again, "rb").read():
            failures.append("%s: reading and writing the .fb again changes it" % m)
        converted += 1
        ops_total += nodes
        print("%-20s converted: %d nd4j ops, %d variables; %s" % (m, nodes, len(d.get("variables", [])), v.stdout.strip()))
    print("TF.js human models -> nd4j: %d of %d convert and validate, %d nd4j ops" % (converted, len(models), ops_total))
    for f in failures:
        print("FAIL:", f)
    if converted < MIN_CONVERTED:
        print("FAIL: %d models convert, fewer than the %d reached before" % (converted, MIN_CONVERTED))
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
