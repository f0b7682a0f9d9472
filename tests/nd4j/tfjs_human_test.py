#!/usr/bin/python3
"""TensorFlow -> nd4j through DL4J's TensorFlow rule set (tables/nd4j/tf_2.2_nd4j_1.0.yaml, imported by
scripts/import_dl4j_rules.py) and Amanda's rules for TF.js's fused ops (tf_2.2_nd4j_1.0_hand.yaml), on
the TF.js models of @vladmandic/human (tests/tensorflow/js/node_modules): each model that converts is
written as a .fb, read back and validated against amanda/nd4j/1.0 (ordered arguments included); the
count of models and ops is printed, and each model that does not convert with the reasons.

Usage: tfjs_human_test.py ND4J_CONVERT MODELS_DIR   (CI runs the four smallest; AMANDA_ND4J_ALL=1 all)
"""
import base64
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dl4j_oracle  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
MIN_CONVERTED = 10  # session 12: all but handtrack
FB_SCHEMA = os.path.join(HERE, "..", "..", "src/frameworks/nd4j/samediff.fbs")


ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
TF_KIND = {"int": "INT", "float": "FLOAT", "str": "STRING", "bool": "BOOL", "tensorflow.DType": "DTYPE",
           "List[int]": "INTS", "List[float]": "FLOATS", "List[str]": "STRINGS"}
# Functions whose arguments come from tensor values or shapes, which the comparison does not read
NEEDS_TENSORS = {"ndarrayinputtonumericalattribute", "ndarraytointattributevalue", "ndarraysizeat", "listnumbertondarray"}


def tf_defaults():
    ops, cur = {}, None
    for line in open(os.path.join(ROOT, "namespaces/tensorflow/2.2.tfops")):
        q = line.rstrip("\n").split("\t")
        if q[0] == "op":
            cur = ops[q[1]] = {}
        elif q[0] == "attr" and cur is not None:
            cur[q[1]] = (TF_KIND.get(q[2], "OTHER"), json.loads(q[4]) if q[3] == "d" else None)
    return ops


def tf_attr(node, defaults):
    """irAttributeValueForNode of a TF.js node: its attribute, else TensorFlow's default."""
    op_attrs = defaults.get(node["op"], {})
    attrs = node.get("attr", {})

    def get(name):
        kind = op_attrs.get(name, ("OTHER", None))[0]
        a = attrs.get(name)
        if a is None:
            d = op_attrs.get(name)
            return (d[1], d[0]) if d and d[1] is not None else (None, None)
        if "i" in a:
            return int(a["i"]), "INT"
        if "f" in a:
            return float(a["f"]), "FLOAT"
        if "b" in a:
            return bool(a["b"]), "BOOL"
        if "s" in a:
            return base64.b64decode(a["s"]).decode("utf-8", "replace"), "STRING"
        if "type" in a:
            return a["type"], "DTYPE"
        if "list" in a:
            lst = a["list"]
            if "i" in lst:
                return [int(x) for x in lst["i"]], "INTS"
            if "f" in lst:
                return [float(x) for x in lst["f"]], "FLOATS"
            if "s" in lst:
                return [base64.b64decode(x).decode() for x in lst["s"]], "STRINGS"
            return [], kind
        return None, None
    return get


def compare_rules(model_json, fb_json, rules, desc, pb, defaults):
    """(compared, skipped, problems): each nd4j op a DL4J rule made, against the oracle."""
    by_name = {n["name"]: n for n in model_json["modelTopology"]["node"]}
    compared, skipped, problems = 0, 0, []
    for n in fb_json.get("nodes", []):
        tf = by_name.get(n.get("name"))
        if tf is None:
            continue
        ms = [m for m in rules if m.inputFrameworkOpName == tf["op"] and m.opName == n.get("opName")]
        if not ms:
            continue  # made by Amanda's own rules
        m = ms[0]
        if any(r.functionName in NEEDS_TENSORS for r in m.rule):
            skipped += 1
            continue
        try:
            exp = dl4j_oracle.ordered_lists(dl4j_oracle.apply(m, None, {}, desc, pb, tf_attr(tf, defaults)))
        except (dl4j_oracle.Refused, dl4j_oracle.NotImported) as e:
            problems.append("%s (%s): Amanda converted, DL4J's rule refuses: %s" % (tf["name"], tf["op"], e))
            continue
        got = {"int": n.get("extraInteger", []), "float": n.get("extraParams", []), "bool": n.get("extraBools", [])}
        for lst in ("int", "float", "bool"):
            want = [v for _, v in exp.get(lst, [])]
            if lst == "float":
                same = len(want) == len(got[lst]) and all(abs(float(a) - float(b)) <= 1e-6 * max(1, abs(float(a))) for a, b in zip(want, got[lst]))
            else:
                same = [bool(x) if lst == "bool" else x for x in want] == got[lst]
            if not same:
                problems.append("%s (%s -> %s): %s arguments %s, DL4J's rules give %s" % (tf["name"], tf["op"], n["opName"], lst, got[lst], want))
        compared += 1
    return compared, skipped, problems


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
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    import import_dl4j_rules as imp
    pb = imp.load_proto()
    from google.protobuf import text_format
    rules_set = pb.MappingDefinitionSet()
    shared = os.environ.get("AMANDA_ND4J_SHARED", os.path.join(ROOT, "..", "shared", "nd4j"))
    with open(os.path.join(shared, "tensorflow-mapping-ruleset.pbtxt")) as f:
        text_format.Parse(f.read(), rules_set)
    desc = dl4j_oracle.Descriptors(os.path.join(ROOT, "namespaces/nd4j/1.0.nd4jops"))
    defaults = tf_defaults()
    total_compared = total_skipped = 0
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
        c, sk, probs = compare_rules(json.load(open(os.path.join(models_dir, m + ".json"))), d, list(rules_set.mappings), desc, pb, defaults)
        total_compared += c
        total_skipped += sk
        failures += ["%s: %s" % (m, p) for p in probs[:5]]
        print("%-20s converted: %d nd4j ops, %d variables; %s" % (m, nodes, len(d.get("variables", [])), v.stdout.strip()))
    print("TF.js human models -> nd4j: %d of %d convert and validate, %d nd4j ops; %d ops made by DL4J's rules "
          "have the arguments DL4J's rules give (tests/nd4j/dl4j_oracle.py), %d not compared (arguments from tensor values)"
          % (converted, len(models), ops_total, total_compared - len([f for f in failures if "arguments" in f or "refuses" in f]), total_skipped))
    for f in failures:
        print("FAIL:", f)
    if converted < MIN_CONVERTED:
        print("FAIL: %d models convert, fewer than the %d reached before" % (converted, MIN_CONVERTED))
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
