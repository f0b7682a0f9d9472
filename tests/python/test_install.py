"""`cmake --install` makes a self-contained package: installed into a temporary prefix, it imports
from there (not from the build tree), finds the namespaces and tables it carries, and converts."""
import os
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT


def test_cmake_install(tmp_path):
    build = os.environ.get("AMANDA_BUILD_DIR")
    if not build or not shutil.which("cmake"):
        pytest.skip("AMANDA_BUILD_DIR is not set (ctest sets it)")
    prefix = tmp_path / "prefix"
    subprocess.run(["cmake", "--install", build, "--prefix", str(prefix)], check=True, capture_output=True)
    (site,) = list(prefix.glob("lib/python3*/dist-packages"))
    assert (site / "amanda" / "__init__.pyi").exists() and (site / "amanda" / "py.typed").exists()
    env = {k: v for k, v in os.environ.items() if not k.startswith("AMANDA_")}
    env["PYTHONPATH"] = str(site)
    code = f"""
import os, amanda
assert amanda.__file__.startswith({str(site)!r}), amanda.__file__
assert os.environ["AMANDA_NAMESPACES_DIR"].startswith({str(site)!r})
assert os.environ["AMANDA_TABLES_DIR"].startswith({str(site)!r})
g = amanda.convert(amanda.load({os.path.join(ROOT, "examples", "small_cnn_opset13.onnx")!r}), "onnx/11")
amanda.save(g, "out.onnx")
print(g.report.tables[-1])
"""
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "amanda/onnx/12 -> amanda/onnx/11" and (tmp_path / "out.onnx").stat().st_size > 0
