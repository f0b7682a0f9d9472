"""The tool and the Python module run the same pipeline: every conversion of the corpus gives
byte-identical output through `amanda convert` and through `amanda.convert` + `amanda.save`.

    tool_python_identical_test.py AMANDA PYTHON_MODULE_DIR [MODELS_DIR]

The corpus: the shipped examples, the ONNX backend node tests (libonnx-testdata; a deterministic
sample in CI, every one with AMANDA_TEST_FULL=1) to an older and a newer opset, the torchvision
exports in MODELS_DIR, and the TF.js models of @vladmandic/human (tests/tensorflow/js).
"""
import glob
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))


def node_tests():
    out = subprocess.run(["dpkg", "-L", "libonnx-testdata"], capture_output=True, text=True).stdout.split()
    models = sorted(p for p in out if p.endswith("/model.onnx") and "/node/" in p)
    if os.environ.get("AMANDA_TEST_FULL") != "1":
        models = models[::12]  # every 12th: about 80 of 1,000, deterministic
    return models


def corpus(models_dir):
    jobs = []  # (input, target, output extension)
    for m in sorted(glob.glob(os.path.join(ROOT, "examples", "*"))):
        if m.endswith(".onnx"):
            jobs += [(m, "onnx/11", ".onnx"), (m, "onnx/17", ".onnx")]
        elif "pytorch" in os.path.basename(m) or "tensorflow_graph" in os.path.basename(m):
            jobs.append((m, "onnx/13", ".onnx"))
    for m in node_tests():
        jobs += [(m, "onnx/9", ".onnx"), (m, "onnx/17", ".onnx")]
    if models_dir:
        for name in ["resnet18", "mobilenet_v2", "squeezenet1_0"]:
            p = os.path.join(models_dir, name + ".onnx")
            if os.path.exists(p):
                jobs += [(p, "onnx/11", ".onnx"), (p, "onnx/17", ".onnx")]
    human = os.path.join(ROOT, "tests", "tensorflow", "js", "node_modules", "@vladmandic", "human", "models")
    for m in sorted(glob.glob(os.path.join(human, "*.json")))[:4]:
        jobs.append((m, "onnx/13", ".onnx"))
    return jobs


def main():
    amanda, pydir = sys.argv[1:3]
    models_dir = sys.argv[3] if len(sys.argv) > 3 else ""
    jobs = corpus(models_dir)
    with tempfile.TemporaryDirectory() as d:
        tool_ok = {}
        for i, (src, to, ext) in enumerate(jobs):
            out = os.path.join(d, f"{i}.tool{ext}")
            r = subprocess.run([amanda, "convert", src, "--to", to, "-o", out, "-q"], capture_output=True, text=True)
            tool_ok[i] = r.returncode == 0
        spec = [[i, src, to, os.path.join(d, f"{i}.py{ext}")] for i, (src, to, ext) in enumerate(jobs)]
        with open(os.path.join(d, "jobs.json"), "w") as f:
            json.dump(spec, f)
        code = ("import amanda, json, sys\n"
                "res = {}\n"
                "for i, src, to, out in json.load(open(sys.argv[1])):\n"
                "    try:\n"
                "        amanda.save(amanda.convert(amanda.load(src), to), out)\n"
                "        res[i] = True\n"
                "    except amanda.Error:\n"
                "        res[i] = False\n"
                "json.dump(res, open(sys.argv[2], 'w'))\n")
        subprocess.run(["/usr/bin/python3", "-c", code, os.path.join(d, "jobs.json"), os.path.join(d, "py.json")],
                       env=dict(os.environ, PYTHONPATH=pydir), check=True)
        py_ok = {int(k): v for k, v in json.load(open(os.path.join(d, "py.json"))).items()}
        failures, converted = [], 0
        for i, (src, to, ext) in enumerate(jobs):
            name = f"{os.path.relpath(src, '/usr/share') if src.startswith('/usr') else os.path.basename(src)} -> {to}"
            if tool_ok[i] != py_ok[i]:
                failures.append(f"{name}: the tool {'converted' if tool_ok[i] else 'refused'}, Python "
                                f"{'converted' if py_ok[i] else 'refused'}")
                continue
            if not tool_ok[i]:
                continue
            converted += 1
            a = open(os.path.join(d, f"{i}.tool{ext}"), "rb").read()
            b = open(os.path.join(d, f"{i}.py{ext}"), "rb").read()
            if a != b:
                failures.append(f"{name}: the outputs differ ({len(a)} vs {len(b)} bytes)")
    for f in failures:
        print("FAIL:", f)
    print(f"tool vs Python: {len(jobs)} conversions, {converted} converted by both with identical bytes, "
          f"{len(jobs) - converted - len(failures)} refused by both, {len(failures)} differ")
    if converted < len(jobs) // 2:
        print("FAIL: fewer than half of the corpus converted: the comparison proves too little")
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
