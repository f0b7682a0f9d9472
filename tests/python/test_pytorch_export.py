"""amanda.convert(g, "pytorch") + amanda.save(g, "x.pt") (issue 29): the archive torch.jit.load runs
(Debian's torch; the output checked against torch's own resnet18 run of the same ONNX export's
weights is in tests/pytorch_export/; here: it loads, runs at two batch sizes, is byte-identical to
the tool's, and its parameters are the ONNX initializers)."""
import os
import subprocess

import numpy as np
import onnx
import pytest
import torch
from onnx import numpy_helper

import amanda


def test_convert_save_pt_loads_in_torch(models_dir, amanda_binary, tmp_path):
    src = os.path.join(models_dir, "resnet18.onnx")
    g = amanda.load(src)
    p = amanda.convert(g, "pytorch")
    assert p.namespace == "amanda/pytorch/1.13"
    out = str(tmp_path / "r.pt")
    amanda.save(p, out)
    m = torch.jit.load(out)
    with torch.no_grad():
        for b in (1, 3):
            y = m(torch.randn(b, 3, 224, 224))
            assert y.shape == (b, 1000)
            assert float(y.abs().max()) > 0
    params = dict(m.named_parameters())
    fc = {i.name: numpy_helper.to_array(i) for i in onnx.load(src).graph.initializer}["fc.weight"]
    np.testing.assert_array_equal(params["fc_weight"].detach().numpy(), fc)
    tool = str(tmp_path / "tool.pt")
    subprocess.run([amanda_binary, "convert", src, "-o", tool], check=True, capture_output=True)
    assert open(tool, "rb").read() == open(out, "rb").read()


def test_save_pt_of_an_onnx_graph_is_refused(models_dir, tmp_path):
    g = amanda.load(os.path.join(models_dir, "resnet18.onnx"))
    with pytest.raises(Exception, match="PyTorch namespace"):
        amanda.save(g, str(tmp_path / "x.pt"))
