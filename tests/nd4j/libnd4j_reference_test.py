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
    "simplewhile_1": [("ConditionalTests", "Flat_Test_6", (25, 0)), ("ConditionalTests", "Flat_Test_7", (25, 0))],
    "scalar_float32": [],  # its test (test_assert_scalar_float32_1) is commented out in libnd4j
    "simpleif_0_alt": [],  # no libnd4j test loads it
}


MIN_MATCHED = 4  # crelu, assert_type, identity_n, reduce_all (session 12): fewer is a regression


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


def main():
    conv, shared = sys.argv[1], sys.argv[2]
    strict = "--strict" in sys.argv
    tmp = tempfile.mkdtemp()
    models = sorted(f[:-3] for f in os.listdir(os.path.join(shared, "models")) if f.endswith(".fb"))
    rows, matched, checked, ran, refused, failures = [], 0, 0, 0, 0, []
    for name in models:
        fb = os.path.join(shared, "models", name + ".fb")
        onnx_path = os.path.join(tmp, name + ".onnx")
        r = subprocess.run([conv, fb, onnx_path, "--to", "onnx/13"], capture_output=True, text=True)
        checks = CHECKS.get(name, [])
        if r.returncode != 0:
            why = " ".join(r.stderr.split())[:400]
            refused += 1
            rows.append((name, "not converted", why))
            continue
        out_json = os.path.join(tmp, name + ".json")
        subprocess.run(["node", os.path.join(HERE, "ort_outputs.js"), onnx_path, out_json], check=True)
        outs = json.load(open(out_json))
        if "error" in outs:
            failures.append("%s: onnxruntime: %s" % (name, outs["error"]))
            rows.append((name, "FAIL", outs["error"][:300]))
            continue
        ran += 1
        # variable id -> name, from the .fb itself
        subprocess.run(["flatc", "--json", "--strict-json", "--raw-binary", "-o", tmp, FB_SCHEMA, "--", fb],
                       check=True, stderr=subprocess.DEVNULL)
        d = json.load(open(os.path.join(tmp, name + ".json")))
        names = {(v["id"].get("first", 0), v["id"].get("second", 0)): v.get("name") for v in d["variables"]}
        if not checks:
            rows.append((name, "runs", "no libnd4j test checks its values"))
            continue
        for suite, test, var in checks:
            exp = expected_from_test(shared, suite, test)
            if exp is None:
                rows.append((name, "runs", "%s checks only that it executes" % test))
                continue
            checked += 1
            if var is None:
                if len(outs) != 1:
                    failures.append("%s: %d outputs, the test reads one" % (name, len(outs)))
                    continue
                got_name = next(iter(outs))
            else:
                got_name = names.get(var)
            if got_name not in outs:
                failures.append("%s: variable %s (%s) is not an output of the ONNX graph" % (name, var, got_name))
                rows.append((name, "FAIL", "no output %s" % got_name))
                continue
            o = outs[got_name]
            got = np.array(o["data"]).reshape(o["dims"])
            if exp.dtype == bool:
                ok = got.shape == exp.shape and (got.astype(bool) == exp).all()
            else:
                ok = got.shape == exp.shape and np.allclose(got, exp, rtol=1e-5, atol=1e-6)
            nonzero = bool(np.any(exp != 0))
            if ok:
                matched += 1
                rows.append((name, "matches", "%s: %s %s%s" % (test, got_name, list(exp.shape), "" if nonzero else " (all-zero expected)")))
            else:
                failures.append("%s: %s differs from %s's expected array" % (name, got_name, test))
                rows.append((name, "FAIL", "%s: got %s, expected %s" % (test, got.reshape(-1)[:8], exp.reshape(-1)[:8])))
    for row in rows:
        print("%-58s %-14s %s" % row)
    print("libnd4j graphs: %d; converted and run in onnxruntime: %d; expected arrays checked: %d, matched: %d; "
          "not converted: %d" % (len(models), ran, checked, matched, refused))
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
