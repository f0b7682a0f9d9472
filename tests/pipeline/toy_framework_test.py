"""A framework made only for this test (tests/pipeline/toy_framework/toy.cpp, a plug-in named in
$AMANDA_PLUGINS, with its namespace and its table found through $AMANDA_SCHEMA_PATH and
$AMANDA_TABLE_PATH) is read, converted and written by `amanda convert` and by `amanda.convert` with
no other change to Amanda: the plug-in design's promise (docs/architecture.md).

    toy_framework_test.py AMANDA PLUGIN.so PYTHON_MODULE_DIR
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
TOY = os.path.join(HERE, "toy_framework")


def main():
    amanda, plugin, pydir = sys.argv[1:4]
    env = dict(os.environ, AMANDA_PLUGINS=plugin, AMANDA_SCHEMA_PATH=os.path.join(TOY, "namespaces"),
               AMANDA_TABLE_PATH=os.path.join(TOY, "tables"), PYTHONPATH=pydir)
    failures = []
    with tempfile.TemporaryDirectory() as d:
        def run(*args):
            return subprocess.run([amanda, *args], env=env, capture_output=True, text=True)

        # The registry lists it.
        r = run("formats")
        if r.returncode or "toy" not in r.stdout:
            failures.append(f"`amanda formats` does not list the plug-in: {r.stdout}{r.stderr}")
        # toy -> ONNX: detected by content (a .txt name), converted by the table, written as ONNX.
        src = os.path.join(d, "model.txt")
        with open(os.path.join(TOY, "model.toy")) as f, open(src, "w") as g:
            g.write(f.read())
        onnx_tool = os.path.join(d, "tool.onnx")
        r = run("convert", src, "-o", onnx_tool)
        if r.returncode:
            failures.append(f"toy -> onnx failed: {r.stdout}{r.stderr}")
        # ... and it computes what the toy file says, in onnxruntime.
        rng = np.random.default_rng(7)
        x = rng.standard_normal((2, 3)).astype(np.float32)
        w = rng.standard_normal((3, 4)).astype(np.float32)
        expected = 2 * (np.maximum(x, 0) @ w)
        assert np.abs(expected).max() > 0.1
        x.tofile(os.path.join(d, "x.bin"))
        w.tofile(os.path.join(d, "w.bin"))
        jobs = [{"model": onnx_tool, "inputs": {"x": {"file": os.path.join(d, "x.bin"), "shape": [2, 3]},
                                              "w": {"file": os.path.join(d, "w.bin"), "shape": [3, 4]}},
                 "out": os.path.join(d, "ort")}]
        with open(os.path.join(d, "jobs.json"), "w") as f:
            json.dump(jobs, f)
        subprocess.run(["node", os.path.join(HERE, "..", "js", "ort_run.js"), os.path.join(d, "jobs.json")], check=True,
                       cwd=os.path.join(HERE, "..", "js"))
        meta = json.load(open(os.path.join(d, "ort.json")))
        if "error" in meta:
            failures.append(f"onnxruntime refused the converted toy model: {meta['error']}")
        else:
            got = np.fromfile(os.path.join(d, "ort.0.bin"), dtype=np.float32).reshape(2, 4)
            if not np.allclose(got, expected, rtol=1e-5, atol=1e-6):
                failures.append(f"onnxruntime output differs from the toy semantics: {np.abs(got - expected).max()}")
        # ONNX -> toy: the reversible table backwards, written by the plug-in's writer.
        back = os.path.join(d, "back.toy")
        r = run("convert", onnx_tool, "--to", "toy/1", "-o", back)
        if r.returncode:
            failures.append(f"onnx -> toy failed: {r.stdout}{r.stderr}")
        else:
            lines = open(back).read().split("\n")
            want = open(os.path.join(TOY, "model.toy")).read().split("\n")
            if sorted(lines) != sorted(want):
                failures.append(f"onnx -> toy gave {lines}, not {want}")
        # The Python module: the same conversion, the same bytes.
        onnx_py = os.path.join(d, "py.onnx")
        code = ("import amanda, sys\n"
                "g = amanda.load(sys.argv[1])\n"
                "assert 'toy' in [n for n, _ in amanda.formats()]\n"
                "amanda.save(amanda.convert(g, 'onnx/13'), sys.argv[2])\n")
        r = subprocess.run(["/usr/bin/python3", "-c", code, src, onnx_py], env=env, capture_output=True, text=True)
        if r.returncode:
            failures.append(f"amanda.convert of the toy file failed: {r.stderr}")
        elif open(onnx_py, "rb").read() != open(onnx_tool, "rb").read():
            failures.append("the tool and the Python module wrote different bytes for the toy conversion")
        # A bad toy file: the plug-in's error, with its line, and nothing written.
        bad = os.path.join(d, "bad.toy")
        with open(bad, "w") as f:
            f.write("toy 1\ninput x 2\nfrobnicate y x\noutput y\n")
        out = os.path.join(d, "bad.onnx")
        r = run("convert", bad, "-o", out)
        if r.returncode != 1 or "bad.toy:3" not in r.stderr or os.path.exists(out):
            failures.append(f"a bad toy file: exit {r.returncode}, {r.stderr!r}, output exists: {os.path.exists(out)}")
    for f in failures:
        print("FAIL:", f)
    print(f"toy framework: {len(failures)} failure(s)" if failures else "toy framework: ok")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
