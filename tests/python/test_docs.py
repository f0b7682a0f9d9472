"""The README's Python example runs as written (from the source folder) and prints what it says."""
import contextlib
import io
import os
import re

from conftest import ROOT


def test_readme_python_example(monkeypatch):
    readme = open(os.path.join(ROOT, "README.md")).read()
    (block,) = re.findall(r"```python\n(.*?)```", readme, re.S)
    monkeypatch.chdir(ROOT)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(block, "README.md", "exec"), {})
    lines = out.getvalue().splitlines()
    # The comments in the example say what it prints.
    assert lines[0] == "['Conv', 'Relu', 'GlobalAveragePool', 'Squeeze', 'Gemm', 'Softmax']"
    assert lines[1].startswith("2 ['amanda/onnx/13 -> amanda/onnx/12', ")
    assert os.path.getsize("/tmp/small_cnn_opset11.onnx") > 0


def test_python_md_tour_runs(models_dir, tmp_path, monkeypatch):
    """docs/python.md's tour, on resnet18 (its file names pointed at the models folder and tmp)."""
    doc = open(os.path.join(ROOT, "docs", "python.md")).read()
    blocks = re.findall(r"```python\n(.*?)```", doc, re.S)
    assert len(blocks) >= 2
    code = "\n".join(blocks).replace('"resnet18.onnx"', repr(os.path.abspath(os.path.join(models_dir, "resnet18.onnx"))))
    monkeypatch.chdir(tmp_path)
    ns = {}
    with contextlib.redirect_stdout(io.StringIO()) as out:
        exec(compile(code, "docs/python.md", "exec"), ns)
    assert out.getvalue().startswith("amanda/onnx/13 49\n")
    assert (tmp_path / "resnet18_opset11.onnx").stat().st_size > 40_000_000
    assert ns["result"].ok and ns["g11"].report.ok and ns["w"].base.borrowed_from_file
