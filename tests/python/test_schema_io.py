"""Namespaces and validation from Python, file I/O (formats, external data, atomic failure), and the
exceptions: each carries where the problem is (file:line:column or the entity's path)."""
import os

import numpy as np
import pytest

import amanda
from conftest import ROOT


def test_registry_and_namespaces(tmp_path):
    reg = amanda.default_registry()
    assert reg is amanda.default_registry()  # shared
    names = reg.names("amanda/onnx")
    assert "amanda/onnx/13" in names and "amanda/onnx/11" in names and "amanda/onnx/13" in reg
    ns = reg["onnx/13"]
    assert ns.name == "amanda/onnx/13" and ns.type_system == "onnx" and len(ns) == len(ns.op_types) > 0
    assert "amanda/onnx/13" in repr(ns) and ns.to_text().startswith("namespace:") or "namespace" in ns.to_text()
    conv = reg.resolve("onnx/13", "Conv")
    assert conv.type == "Conv" and conv.declared_in.startswith("amanda/onnx/") and conv.since_version == 11
    assert conv.domain in ("", "ai.onnx") and conv.deprecated is False and "Conv" in repr(conv)
    assert conv.attrs["group"]["default"] == 1 and conv.attrs["group"]["required"] is False
    assert [p["name"] for p in conv.inputs] == ["X", "W", "B"] and conv.outputs[0]["name"] == "Y"
    assert conv.inputs[2]["arity"] == "optional"
    assert reg.resolve("onnx/13", "NoSuchOp") is None
    with pytest.raises(KeyError):
        reg["amanda/nowhere/1"]
    # A user's namespace file, and a folder of them.
    f = tmp_path / "mine.yaml"
    f.write_text("namespace:\n  name: amanda/mine/1\n  type_system: python\n  op_schemas:\n"
                 "    - type: Scale\n      attrs:\n        factor: {type: float, default: 1.0}\n")
    own = amanda.Registry()
    assert own.add_file(str(f)) == "amanda/mine/1" and "Scale" in own["mine/1"]
    assert own["mine/1"]["Scale"].attrs["factor"] == {"type": "float", "default": 1.0, "required": False}
    d = tmp_path / "more"
    (d / "mine").mkdir(parents=True)
    (d / "mine" / "2.yaml").write_text(f.read_text().replace("mine/1", "mine/2"))  # the name comes from the path
    own.add_folder(str(d))
    assert "amanda/mine/2" in own.names("amanda/mine")
    # Validation against it: every problem with its path.
    g = amanda.Graph(namespace="amanda/mine/1", name="g")
    op = g.create_op("Scale", "s", attrs={"factor": "big"})
    g.create_op("Unknown", "u")
    result, problems = g.validate(registry=own)
    assert not result.ok and result.ops_checked == 2 and len(problems) >= 2
    assert {p.where.split(":")[0] for p in problems} >= {"s", "u"}
    with pytest.raises(amanda.ValidationError) as e:
        g.validate(registry=own, strict=True)
    assert e.value.problems and "s" in str(e.value)
    op.attrs["factor"] = 2.0
    g.erase(g.op("u"))
    assert g.validate(registry=own)[0].ok
    del op.attrs["factor"]
    r, _ = g.validate(registry=own, fill_defaults=True)
    assert r.filled == 1 and op.attrs["factor"] == 1.0
    r, _ = g.validate(registry=own, drop_defaults=True)
    assert r.dropped == 1 and "factor" not in op.attrs
    r, _ = g.validate(registry=own, namespace="mine/2")
    assert r.ok and list(r.by_type) == ["amanda/mine/2 Scale"]


def test_save_formats_and_external_data(models_dir, tmp_path):
    g = amanda.load(os.path.join(models_dir, "squeezenet1_0.onnx"))
    ext = str(tmp_path / "ext.onnx")
    side = amanda.save(g, ext, external_data=True, threshold=4096)
    assert side == ext + ".data" and os.path.getsize(side) > 4_000_000 and os.path.getsize(ext) < 200_000
    back = amanda.load(ext)
    assert [op.type for op in back.ops] == [op.type for op in g.ops] and back.inputs.names() == g.inputs.names()
    big = [p for p in back.inputs if "initializer" in p.attrs and p.attrs["initializer"].nbytes >= 4096]
    assert big and all(p.attrs["initializer"].base.borrowed_from_file for p in big)
    for p in big:
        assert np.array_equal(p.attrs["initializer"], g.inputs[p.name].attrs["initializer"])
    js = str(tmp_path / "g.json")
    amanda.save(g, js, inline_limit=1 << 30)
    assert open(js).read(1) == "{" and amanda.load(js).difference(g) is None
    yml = str(tmp_path / "g.txt")
    amanda.save(g, yml, format="yaml")
    assert amanda.load(yml, format="yaml").difference(g) is None
    with pytest.raises(ValueError):
        amanda.save(g, yml, format="xml")


def test_errors_carry_where(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("graph:\n  name: g\n  ops:\n    - name: a\n      type: [\n")
    with pytest.raises(amanda.ParseError) as e:
        amanda.load(str(bad))
    assert e.value.file.endswith("bad.yaml") and e.value.line >= 5 and e.value.column > 0
    assert e.value.path.startswith(str(bad)) and isinstance(e.value, amanda.Error)
    with pytest.raises(amanda.Error) as e:
        amanda.load(str(tmp_path / "missing.onnx"))
    assert "missing.onnx" in str(e.value)
    junk = tmp_path / "junk.onnx"
    junk.write_bytes(b"\xff\xff\xff\xff not a model")
    with pytest.raises(amanda.Error):
        amanda.load(str(junk))
    # A failed save leaves no file behind (an op document is not an ONNX model).
    g = amanda.loads("op:\n  name: a\n  type: Foo\n")
    assert g.kind == "op"
    out = tmp_path / "out.onnx"
    with pytest.raises(amanda.Error):
        amanda.save(g, str(out))
    assert not out.exists() and [p.name for p in tmp_path.iterdir() if p.name.startswith("out")] == []
    with pytest.raises(amanda.ParseError) as e:
        amanda.loads("graph: [", format="yaml")
    assert e.value.file == "<string>"


def test_pytorch_and_torch_plugin(tmp_path):
    """A TorchScript module (traced here, random weights) loads with input shapes, as `amanda convert`."""
    torch = pytest.importorskip("torch")
    assert isinstance(amanda.torch_available(), bool)
    torch.manual_seed(1)  # unseeded, the random Linear made all six outputs negative (all zero after ReLU) now and then; seed 1: five positive
    m = torch.jit.trace(torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU()).eval(), torch.zeros(2, 4))
    path = str(tmp_path / "m.pt")
    m.save(path)
    g = amanda.load(path, input_shapes=[[2, 4]], input_type="float32", reader="script")
    assert g.namespace.startswith("amanda/pytorch/") and g.ops_of_type("aten::relu")
    onnx_g = amanda.convert(g, "onnx/13")
    out = str(tmp_path / "m.onnx")
    amanda.save(onnx_g, out)
    import onnx
    onnx.checker.check_model(onnx.load(out), full_check=True)  # a path would be rewritten with inferred shapes
    x = np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32)
    expected = m(torch.from_numpy(x)).detach().numpy()
    assert np.abs(expected).max() > 0
    # onnxruntime for Node.js runs it on the same input (tests/js/ort_run.js).
    import json
    import subprocess
    xin = str(tmp_path / "x.bin")
    x.tofile(xin)
    name = onnx.load(out).graph.input[0].name
    jobs = tmp_path / "jobs.json"
    jobs.write_text(json.dumps([{"model": out, "inputs": {name: {"file": xin, "shape": [2, 4]}},
                                 "out": str(tmp_path / "r")}]))
    subprocess.run(["node", os.path.join(ROOT, "tests", "js", "ort_run.js"), str(jobs)], check=True)
    meta = json.loads((tmp_path / "r.json").read_text())
    assert "error" not in meta, meta
    got = np.fromfile(str(tmp_path / "r.0.bin"), dtype=np.float32).reshape(meta["outputs"][0]["shape"])
    assert np.allclose(got, expected, atol=1e-5)


def test_formats_and_plugins(tmp_path):
    # The registered frameworks, each with a description; the built-ins are all there.
    names = [n for n, _ in amanda.formats()]
    assert {"onnx", "pytorch", "tensorflow", "text"} <= set(names)
    assert all(d for _, d in amanda.formats())
    # A plug-in that cannot be loaded is an error that names it, never a crash.
    not_a_plugin = tmp_path / "not_a_plugin.so"
    not_a_plugin.write_bytes(b"\x7fELF junk")
    with pytest.raises(amanda.Error) as e:
        amanda.load_plugin(str(not_a_plugin))
    assert "not_a_plugin.so" in str(e.value)
