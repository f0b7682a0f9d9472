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
    assert lines[1].startswith("4 ['amanda/onnx/13 -> amanda/onnx/12', ")
    assert os.path.getsize("/tmp/small_cnn_opset11.onnx") > 0
