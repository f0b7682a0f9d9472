"""Tensors as NumPy arrays: the initializers of an ONNX file are views of the mapped file (no copy),
read-only, alive after the graph is gone; attributes take NumPy arrays back in; every element type."""
import os

import numpy as np
import pytest

import amanda
from conftest import ROOT


def mapped_ranges(path):
    """The address ranges of this process mapped from `path` (/proc/self/maps)."""
    real = os.path.realpath(path)
    out = []
    with open("/proc/self/maps") as f:
        for line in f:
            parts = line.split(None, 5)
            if len(parts) == 6 and parts[5].strip() == real:
                lo, hi = (int(x, 16) for x in parts[0].split("-"))
                out.append((lo, hi))
    return out


def test_initializer_is_a_view_of_the_mapped_file(models_dir):
    import onnx
    from onnx import numpy_helper
    path = os.path.join(models_dir, "resnet18.onnx")
    g = amanda.load(path)
    port = g.inputs["fc.weight"]
    a = port.attrs["initializer"]
    assert isinstance(a, np.ndarray) and a.dtype == np.float32 and a.shape == (1000, 512)
    # The values are the file's (checked with onnx's own reader, which copies).
    ref = numpy_helper.to_array(next(t for t in onnx.load(path).graph.initializer if t.name == "fc.weight"))
    assert np.array_equal(a, ref) and np.abs(ref).max() > 0
    # No copy: the array's bytes lie inside the file's mapping in this process, the array does not own
    # them, and its base is the amanda.Tensor that keeps the mapping alive.
    t = a.base
    assert isinstance(t, amanda.Tensor) and t.borrowed_from_file
    assert not a.flags.owndata and not a.flags.writeable
    ranges = mapped_ranges(path)
    assert ranges, "the model file should be mapped"
    start = a.__array_interface__["data"][0]
    assert any(lo <= start and start + a.nbytes <= hi for lo, hi in ranges)
    assert t.address == start and t.nbytes == a.nbytes == 1000 * 512 * 4
    assert t.dtype == "float32" and t.shape == (1000, 512) and "float32" in repr(t)
    # A second read gives the same bytes, and the buffer protocol too.
    assert port.attrs["initializer"].__array_interface__["data"][0] == start
    mv = memoryview(t)
    assert mv.readonly and mv.format == "f" and mv.shape == (1000, 512)
    assert np.asarray(t).__array_interface__["data"][0] == start
    assert t.numpy().__array_interface__["data"][0] == start
    with pytest.raises(ValueError):
        a[0, 0] = 1.0  # read-only: the file must not change under the graph
    # The array outlives the graph: the tensor holds the mapping.
    del g, port, mv
    total = float(a.sum())
    assert total == pytest.approx(float(ref.sum()), rel=1e-5)


def test_text_tensors_are_not_mapped():
    g = amanda.loads("""
graph:
  name: g
  attrs:
    w: !tensor {dtype: int32, shape: [2, 2], data: [1, 2, 3, 4]}
""")
    a = g.attrs["w"]
    assert a.tolist() == [[1, 2], [3, 4]] and not a.base.borrowed_from_file


@pytest.mark.parametrize("dtype", ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                                   "uint64", "float16", "float32", "float64", "complex64", "complex128"])
def test_every_element_type_round_trips(tmp_path, dtype):
    g = amanda.Graph(name="g")
    x = (np.arange(6).reshape(2, 3) % 2 == 1) if dtype == "bool" else (np.arange(6).reshape(2, 3) * 3 - 5).astype(dtype)
    if dtype.startswith("uint"):
        x = np.arange(6, dtype=dtype).reshape(2, 3)
    g.attrs["t"] = x
    back = g.attrs["t"]
    assert back.dtype == x.dtype and np.array_equal(back, x) and back.base.dtype == dtype
    # Through the YAML form and back.
    path = str(tmp_path / "g.yaml")
    amanda.save(g, path)
    assert np.array_equal(amanda.load(path).attrs["t"], x)


def test_tensor_from_numpy_and_strings():
    t = amanda.Tensor(np.array([[1.5, 2.5]], dtype=">f8"))  # big-endian in, little-endian bytes inside
    assert t.dtype == "float64" and t.shape == (1, 2) and t.numpy().tolist() == [[1.5, 2.5]]
    g = amanda.Graph()
    g.attrs["t"] = t
    assert g.attrs["t"].tolist() == [[1.5, 2.5]]
    g.attrs["s"] = np.array([b"ab", b"c"], dtype=object)
    assert g.attrs["s"].tolist() == [b"ab", b"c"]
    with pytest.raises(amanda.GraphError):
        g.attrs["bad"] = np.array(["2020-01-01"], dtype="datetime64[D]")


def test_big_side_file_tensor_is_mapped(tmp_path):
    g = amanda.Graph(name="g")
    w = np.random.default_rng(1).standard_normal((256, 64)).astype(np.float32)
    g.attrs["w"] = w
    path = str(tmp_path / "big.yaml")
    side = amanda.save(g, path, inline_limit=1024)
    assert side == path + ".data" and os.path.getsize(side) >= w.nbytes
    back = amanda.load(path).attrs["w"]
    assert np.array_equal(back, w) and back.base.borrowed_from_file
    start = back.__array_interface__["data"][0]
    assert any(lo <= start < hi for lo, hi in mapped_ranges(side))


def test_examples_have_tensors():
    g = amanda.load(os.path.join(ROOT, "examples", "small_cnn_opset13.onnx"))
    inits = [p for p in g.inputs if "initializer" in p.attrs]
    assert inits and all(isinstance(p.attrs["initializer"], np.ndarray) for p in inits)
