"""A TF.js graph model converts to ONNX through the Python module as through the tool: graph inputs
from the placeholders, outputs from the signature, named and typed (docs/tensorflow.md)."""
import os

import pytest

from conftest import ROOT

MODEL = os.path.join(ROOT, "tests/tensorflow/js/node_modules/@vladmandic/human/models/emotion.json")


@pytest.mark.skipif(not os.path.exists(MODEL), reason="the npm test packages are not installed")
def test_tfjs_model_to_onnx(tmp_path):
    import amanda
    import onnx

    g = amanda.load(MODEL)
    out = amanda.convert(g, "onnx/13")
    path = str(tmp_path / "emotion.onnx")
    amanda.save(out, path)
    m = onnx.load(path)
    onnx.checker.check_model(m, full_check=True)
    assert [i.name for i in m.graph.input] == ["input_1:0"]
    assert [o.name for o in m.graph.output] == ["Identity:0"]
    dims = m.graph.output[0].type.tensor_type.shape.dim
    assert [d.dim_param or d.dim_value for d in dims] == ["input_1_dim0", 7]
