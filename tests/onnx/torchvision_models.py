#!/usr/bin/python3
"""ctest driver for the torchvision models (tests/CMakeLists.txt registers it).

    torchvision_models.py make MODELS_DIR
        Runs scripts/make_torchvision_onnx.py for the models MODELS_DIR does not hold yet (all of
        them again when the script or torch changed since: MODELS_DIR/stamp.txt). The fixture
        every model test requires.
    torchvision_models.py check AMANDA MODELS_DIR MODEL [--yaml]
        amanda fmt M.onnx -o OUT.onnx; amanda diff M.onnx OUT.onnx is empty; onnx.checker
        (full_check) accepts OUT.onnx; amanda validate OUT.onnx reports nothing; with --yaml also
        M.onnx -> YAML -> ONNX. Prints how many outputs are byte-identical to M.onnx.

Run with /usr/bin/python3 (Debian's python3-onnx, python3-torch and python3-torchvision).
"""
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
MAKE = os.path.join(HERE, "..", "..", "scripts", "make_torchvision_onnx.py")
MODELS = ["resnet18", "mobilenet_v2", "squeezenet1_0", "efficientnet_b0", "densenet121",
          "convnext_tiny", "vit_b_16", "swin_t"]


def stamp():
    import torch
    import torchvision
    with open(MAKE, "rb") as f:
        h = hashlib.sha256(f.read()).hexdigest()[:16]
    return f"{h} torch {torch.__version__} torchvision {torchvision.__version__}\n"


def make(models_dir):
    os.makedirs(models_dir, exist_ok=True)
    stamp_path = os.path.join(models_dir, "stamp.txt")
    want = stamp()
    have = open(stamp_path).read() if os.path.exists(stamp_path) else ""
    if have != want:
        for m in MODELS:
            p = os.path.join(models_dir, m + ".onnx")
            if os.path.exists(p):
                os.remove(p)
    missing = [m for m in MODELS if not os.path.exists(os.path.join(models_dir, m + ".onnx"))]
    if not missing:
        print(f"all {len(MODELS)} models are in {models_dir} already")
        return 0
    t = time.monotonic()
    r = subprocess.run([sys.executable, MAKE, models_dir] + missing)
    print(f"made {len(missing)} models in {time.monotonic() - t:.1f} s")
    if r.returncode != 0:
        return r.returncode
    with open(stamp_path, "w") as f:
        f.write(want)
    return 0


def run(args, what):
    t = time.monotonic()
    r = subprocess.run(args, capture_output=True, text=True)
    print(f"  {what}: exit {r.returncode}, {time.monotonic() - t:.1f} s")
    return r


def diff_is_empty(r):
    """`amanda diff` found no difference: exit 0 and only its "equal" line."""
    return r.returncode == 0 and r.stdout.strip() == "equal" and not r.stderr.strip()


def check(amanda, models_dir, model, yaml):
    import onnx
    import onnx.checker

    src = os.path.join(models_dir, model + ".onnx")
    if not os.path.exists(src):
        print(f"{src} is missing (the torchvision_models fixture makes it)")
        return 1
    failures = []
    outputs = []
    tmp = tempfile.mkdtemp(prefix="amanda-tv-")
    try:
        out = os.path.join(tmp, model + ".onnx")
        r = run([amanda, "fmt", src, "-o", out], "fmt -o OUT.onnx")
        if r.returncode != 0:
            failures.append("fmt: " + r.stderr)
        else:
            outputs.append(("fmt", out))
        if yaml:
            y = os.path.join(tmp, model + ".yaml")
            back = os.path.join(tmp, model + ".from_yaml.onnx")
            r1 = run([amanda, "fmt", src, "--to", "yaml", "-o", y], "fmt --to yaml")
            r2 = run([amanda, "fmt", y, "-o", back], "fmt YAML -o ONNX") if r1.returncode == 0 else r1
            if r1.returncode != 0 or r2.returncode != 0:
                failures.append("YAML route: " + r1.stderr + r2.stderr)
            else:
                outputs.append(("yaml", back))
                r = run([amanda, "diff", src, y], "diff M.onnx M.yaml")
                if not diff_is_empty(r):
                    failures.append(f"diff M.onnx M.yaml: exit {r.returncode}: {r.stdout}{r.stderr}")
        with open(src, "rb") as f:
            original = f.read()
        identical = 0
        for route, path in outputs:
            r = run([amanda, "diff", src, path], f"diff ({route})")
            if not diff_is_empty(r):
                failures.append(f"diff ({route}): exit {r.returncode}: {r.stdout}{r.stderr}")
            t = time.monotonic()
            try:
                onnx.checker.check_model(onnx.load(path), full_check=True)
                print(f"  onnx.checker full_check ({route}): ok, {time.monotonic() - t:.1f} s")
            except Exception as e:  # the checker's error types vary between versions
                failures.append(f"onnx.checker ({route}): {e}")
            r = run([amanda, "validate", path], f"validate ({route})")
            lines = r.stdout.strip().splitlines()
            if r.returncode != 0 or r.stderr.strip() or len(lines) != 1 or not re.search(r": valid \(\d+ ops\)$", lines[0]):
                failures.append(f"validate ({route}): exit {r.returncode}: {r.stdout}{r.stderr}")
            with open(path, "rb") as f:
                identical += f.read() == original
        print(f"{model}: {len(outputs)} outputs, {identical} byte-identical to the input")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for f in failures:
        print("FAIL", f[:2000])
    return 1 if failures or not outputs else 0


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "make":
        return make(sys.argv[2])
    if len(sys.argv) >= 5 and sys.argv[1] == "check":
        return check(sys.argv[2], sys.argv[3], sys.argv[4], "--yaml" in sys.argv[5:])
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
