#!/usr/bin/python3
"""nd4j -> ONNX for the SameDiff graphs of libnd4j's test resources (../shared/nd4j/models), run in
onnxruntime against the expected arrays of the libnd4j tests that execute them
(../shared/nd4j/reference/libnd4j-tests/*.cpp, read from the test sources here: the oracle is
libnd4j's, not ours). A graph whose test checks only that it executes must run; a graph that does
not convert is reported with the reason (the converter's report) and counted.

Usage: libnd4j_reference_test.py ND4J_CONVERT SHARED_ND4J [--strict]
"""
import json
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
FB_SCHEMA = os.path.join(ROOT, "src/frameworks/nd4j/samediff.fbs")

# graph -> (libnd4j test, the variable the test reads (node id, output index) or None when the test
# checks only that the graph executes)
CHECKS = {
    "channels_last_b1_k2_s1_d1_SAME_crelu": [("OneOffTests", "test_conv2d_nhwc_failed_1", (9, 0))],
    "assert_type_rank2_int64": [("OneOffTests", "test_assert_4", (1, 0))],
    "identity_n_2": [("OneOffTests", "test_identity_n_2", (1, 0))],
    "reduce_all_rank2_d0_keep": [("OneOffTests", "test_reduce_all_1", None)],
    "tensor_array_close_sz1_float32_nodynamic_noname_noshape": [("OneOffTests", "test_tensor_array_1", (5, 0))],
    "tensor_array_split_sz1_float32_nodynamic_noname_noshape": [("OneOffTests", "test_tensor_array_2", (6, 0))],
    "tensor_array_unstack_sz1_int64_nodynamic_noname_shape2-3": [("OneOffTests", "test_tensor_array_4", (11, 0))],
    "non2d_0A": [("OneOffTests", "test_non2d_0A_1", None)],
    "assertsomething": [("OneOffTests", "test_assert_scalar_float32_2", None)],
    # The tests assign the placeholders (getVariable(1) and (2)->assign(...): parsed as the feeds) and
    # read variable 25, which this file names while/NextIteration_1, a scalar inside the loop; their
    # expected 2x2 arrays (-1 from -4, -3 from -9) are the graph's one result, `output` (node 26:
    # Exit + Exit_1, x and y after the loop), which is what is compared.
    "simplewhile_1": [("ConditionalTests", "Flat_Test_6", "output"), ("ConditionalTests", "Flat_Test_7", "output")],
    "scalar_float32": [],  # its test (test_assert_scalar_float32_1) is commented out in libnd4j
    "simpleif_0_alt": [],  # no libnd4j test loads it: NUMPY_CHECKS
}

# Graphs no libnd4j test checks, whose placeholders need values to run: numpy computes what the
# graph's TF1 ops compute (simpleif_0_alt: tf.cond(reduce_sum(x) < y, x + v, x - v), v = the
# file's Variable, 2.0), once per branch.
def _simpleif(input_0, input_1):
    return input_0 + 2.0 if input_0.sum() < input_1 else input_0 - 2.0


NUMPY_CHECKS = {
    "simpleif_0_alt": [
        ({"input_0": np.array([[1, 2], [3, 4]], np.float32), "input_1": np.float32(100)}, "output", _simpleif),
        ({"input_0": np.array([[1, 2], [3, 4]], np.float32), "input_1": np.float32(-100)}, "output", _simpleif),
    ],
}


# crelu, assert_type, identity_n, reduce_all (session 12); the three tensor arrays, simplewhile_1's
# two tests (session 14: TF1 control flow and TensorArrays lowered): fewer is a regression
MIN_MATCHED = 9

# The graphs that stay refused: the op the refusal must name, with its reason (a refusal that does
# not say why, or a graph that stops converting for another reason, fails).
REFUSALS = {
    "assertsomething": ("Assert", "ONNX has no op that stops a run when a condition is false"),
    "scalar_float32": ("Assert", "ONNX has no op that stops a run when a condition is false"),
}


def assigned_inputs(shared, suite, test):
    """The placeholders a test sets before executing: {variable id: value} from its
    varSpace->getVariable(N)->getNDArray()->assign(X) lines."""
    src = open(os.path.join(shared, "reference/libnd4j-tests", suite + ".cpp")).read()
    m = re.search(r"TEST_F\(\w+, %s\)\s*\{(.*?)\n\}" % re.escape(test), src, re.S)
    if not m:
        return {}
    return {int(k): float(v) for k, v in re.findall(r"getVariable\((\d+)\)->getNDArray\(\)->assign\(([-+0-9.eE]+)f?\)", m.group(1))}


def run_ort(onnx_path, feeds, tmp, tag):
    """onnxruntime's outputs for `feeds` ({name: numpy array})."""
    out_json = os.path.join(tmp, tag + ".out.json")
    cmd = ["node", os.path.join(HERE, "ort_outputs.js"), onnx_path, out_json]
    if feeds:
        kinds = {np.float32: "float32", np.int32: "int32", np.int64: "int64", np.bool_: "bool"}
        fj = os.path.join(tmp, tag + ".feeds.json")
        json.dump({n: {"type": kinds[a.dtype.type], "dims": list(a.shape), "data": a.reshape(-1).tolist()}
                   for n, a in feeds.items()}, open(fj, "w"))
        cmd.append(fj)
    subprocess.run(cmd, check=True)
    return json.load(open(out_json))


def compare(got_o, exp):
    got = np.array(got_o["data"]).reshape(got_o["dims"])
    if exp.dtype == bool:
        return got, got.shape == exp.shape and (got.astype(bool) == exp).all()
    return got, got.shape == exp.shape and np.allclose(got, exp, rtol=1e-5, atol=1e-6)


def expected_from_test(shared, suite, test):
    """The first NDArrayFactory::create<T>('c', {shape}, {values}) of the test, and the variable its
    getVariable(N) reads (the reduce_all test reads the only output)."""
    src = open(os.path.join(shared, "reference/libnd4j-tests", suite + ".cpp")).read()
    m = re.search(r"TEST_F\(\w+, %s\)\s*\{(.*?)\n\}" % re.escape(test), src, re.S)
    if not m:
        return None
    body = m.group(1)
    c = re.search(r"NDArrayFactory::create<(\w+)>\(\s*'c',\s*\{([^}]*)\},\s*\{([^}]*)\}", body, re.S)
    if not c:
        return None
    t = c.group(1)
    shape = [int(x) for x in c.group(2).split(",") if x.strip()]
    vals = [x.strip().rstrip("f") for x in c.group(3).split(",") if x.strip()]
    if t == "bool":
        arr = np.array([v == "true" for v in vals], bool)
    elif t in ("float", "double"):
        arr = np.array([float(v) for v in vals], np.float64)
    else:
        arr = np.array([int(v) for v in vals], np.int64)
    return arr.reshape(shape)


def hostile_frames(conv, shared, tmp):
    """simplewhile_1 with its loop switch's true output taken away (a file lists only the ports it
    has): the loop lowering must refuse naming the switch, not index a port that is not there; and
    a switch without its predicate. Returns the failures."""
    fails = []
    yml = os.path.join(tmp, "simplewhile_1.yaml")
    subprocess.run([conv, os.path.join(shared, "models", "simplewhile_1.fb"), yml, "--to", "nd4j/1.0"], check=True)
    text = open(yml).read()
    cases = {
        "no true output": re.sub(r"\n    - output_port: \{op: while/Switch_1, port: more\.0\}\n      input_port: [^\n]*", "",
                                 re.sub(r"\n        - name: more\.0\n          attrs:\n            \"@value\": while/Switch_1:1\n(?:            .*\n|              .*\n)*?(?=    - type:)",
                                        "\n", text)),
        "no predicate": re.sub(r"\n    - output_port: \{op: while/LoopCond, port: outputs\}\n      input_port: \{op: while/Switch_1, port: predicate\}", "", text),
    }
    for what, t in cases.items():
        if t == text:
            fails.append("hostile %s: the edit did not apply" % what)
            continue
        bad = os.path.join(tmp, "hostile.yaml")
        open(bad, "w").write(t)
        r = subprocess.run([conv, bad, os.path.join(tmp, "hostile.onnx"), "--to", "onnx/13"], capture_output=True, text=True)
        if r.returncode != 1 or "while/Switch_1" not in r.stderr:
            fails.append("hostile %s: exit %d, %s" % (what, r.returncode, " ".join(r.stderr.split())[:300]))
        else:
            print("hostile %-16s refused: %s" % (what, " ".join(r.stderr.split())[:200]))
    return fails


def main():
    conv, shared = sys.argv[1], sys.argv[2]
    strict = "--strict" in sys.argv
    tmp = tempfile.mkdtemp()
    models = sorted(f[:-3] for f in os.listdir(os.path.join(shared, "models")) if f.endswith(".fb"))
    rows, matched, checked, ran, refused, failures = [], 0, 0, 0, 0, []
    np_checked, np_matched = 0, 0
    for name in models:
        fb = os.path.join(shared, "models", name + ".fb")
        onnx_path = os.path.join(tmp, name + ".onnx")
        r = subprocess.run([conv, fb, onnx_path, "--to", "onnx/13"], capture_output=True, text=True)
        checks = CHECKS.get(name, [])
        if r.returncode != 0:
            why = " ".join(r.stderr.split())
            refused += 1
            want = REFUSALS.get(name)
            if not want or want[0] not in why or want[1] not in why:
                failures.append("%s: not converted, and not for the expected reason: %s" % (name, why[:400]))
            why = why[:400]
            rows.append((name, "not converted", why))
            continue
        # variable id -> name, dtype, shape, from the .fb itself
        subprocess.run(["flatc", "--json", "--strict-json", "--raw-binary", "-o", tmp, FB_SCHEMA, "--", fb],
                       check=True, stderr=subprocess.DEVNULL)
        d = json.load(open(os.path.join(tmp, name + ".json")))
        var = {(v["id"].get("first", 0), v["id"].get("second", 0)): v for v in d["variables"]}
        names = {k: v.get("name") for k, v in var.items()}
        np_types = {"FLOAT": np.float32, "INT32": np.int32, "INT64": np.int64, "BOOL": np.bool_}

        def feeds_of(suite, test):
            feeds = {}
            for vid, x in assigned_inputs(shared, suite, test).items():
                v = var[(vid, 0)]
                feeds[v["name"]] = np.full(v.get("shape", []), x, np_types[v.get("dtype", "FLOAT")])
            return feeds

        runs = [(suite, test, target, feeds_of(suite, test), None) for suite, test, target in checks]
        runs += [("numpy", "branch %d" % k, target, feeds, fn) for k, (feeds, target, fn) in enumerate(NUMPY_CHECKS.get(name, []))]
        if not runs:
            runs = [(None, None, None, {}, None)]
        ok_run = True
        for k, (suite, test, target, feeds, fn) in enumerate(runs):
            outs = run_ort(onnx_path, feeds, tmp, "%s.%d" % (name, k))
            if "error" in outs:
                failures.append("%s: onnxruntime: %s" % (name, outs["error"]))
                rows.append((name, "FAIL", outs["error"][:300]))
                ok_run = False
                break
            if suite is None:
                rows.append((name, "runs", "no libnd4j test checks its values"))
                continue
            if fn is not None:
                exp = np.asarray(fn(**feeds))
                label = "numpy (no libnd4j test), %s" % ", ".join("%s=%s" % (n, a.reshape(-1).tolist()) for n, a in feeds.items())
            else:
                exp = expected_from_test(shared, suite, test)
                label = test + ("" if not feeds else " (" + ", ".join("%s=%s" % (n, a.reshape(-1)[0]) for n, a in feeds.items()) + ")")
                if exp is None:
                    rows.append((name, "runs", "%s checks only that it executes" % test))
                    continue
            if fn is None:
                checked += 1
            else:
                np_checked += 1
            if target is None:
                if len(outs) != 1:
                    failures.append("%s: %d outputs, the test reads one" % (name, len(outs)))
                    continue
                got_name = next(iter(outs))
            elif isinstance(target, str):
                got_name = target
            else:
                got_name = names.get(target)
            if got_name not in outs:
                failures.append("%s: variable %s (%s) is not an output of the ONNX graph" % (name, target, got_name))
                rows.append((name, "FAIL", "no output %s" % got_name))
                continue
            got, ok = compare(outs[got_name], exp)
            nonzero = bool(np.any(exp != 0))
            if ok:
                if fn is None:
                    matched += 1
                else:
                    np_matched += 1
                rows.append((name, "matches", "%s: %s %s%s" % (label, got_name, list(exp.shape), "" if nonzero else " (all-zero expected)")))
            else:
                failures.append("%s: %s differs from %s's expected array" % (name, got_name, label))
                rows.append((name, "FAIL", "%s: got %s, expected %s" % (label, got.reshape(-1)[:8], exp.reshape(-1)[:8])))
        ran += ok_run
    failures += hostile_frames(conv, shared, tmp)
    for row in rows:
        print("%-58s %-14s %s" % row)
    print("libnd4j graphs: %d; converted and run in onnxruntime: %d; the libnd4j tests' expected arrays checked: %d, "
          "matched: %d; numpy checks of graphs no test checks: %d, matched: %d; not converted: %d"
          % (len(models), ran, checked, matched, np_checked, np_matched, refused))
    for f in failures:
        print("FAIL:", f)
    if strict and refused:
        return 1
    if matched < MIN_MATCHED:
        print("FAIL: %d expected arrays matched, fewer than the %d reached before" % (matched, MIN_MATCHED))
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
