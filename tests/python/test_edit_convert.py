"""The issue's end-to-end path through Python: load a torchvision export, edit it (insert an op on an
edge, replace a subgraph by a graph), convert 13 -> 11, save, and check the result with onnx.checker
and against the untouched export in onnxruntime (tests/js/ort_compare.js, one seeded input)."""
import os

import pytest

import amanda
from conftest import MODELS, SAMPLE, ort_compare

TOL = 1e-4


def relu_graph():
    """relu(x) = (x + |x|) * 0.5 as a graph of four ONNX ops: the replacement of a Relu."""
    import numpy as np
    r = amanda.Graph(namespace="amanda/onnx/13", name="relu_by_abs")
    x = r.add_input("x")
    y = r.add_output("y")
    ab = r.create_op("Abs", inputs=["X"], outputs=["Y"])
    add = r.create_op("Add", inputs=["A", "B"], outputs=["C"])
    half = r.create_op("Constant", outputs=["output"], attrs={"value": np.array(0.5, dtype=np.float32)})
    mul = r.create_op("Mul", inputs=["A", "B"], outputs=["C"])
    r.connect(x, ab.inputs["X"])
    x.connect(add.inputs["A"])
    ab.outputs[0].connect(add.inputs["B"])
    add.outputs["C"].connect(mul.inputs[0])
    half.outputs[0].connect(mul.inputs[1])
    r.connect(mul.outputs[0], y)
    assert r.verify() == []
    assert [op.type for op in r.topological_order()].index("Mul") == 3
    return r


def edit(g):
    """Inserts an Identity on the edge into the first Relu's consumer, and replaces the first Relu by
    relu_graph(). Returns (inserted op name, number of ops replaced)."""
    relu = next(op for op in g.ops if op.type == "Relu")
    (edge,) = relu.outputs[0].out_edges[:1]
    consumer = edge.dst.op
    ident = edge.insert_op("Identity", name="inserted_identity")
    assert ident.graph == g and ident.producers() == [relu] and ident.consumers() == [consumer]
    with pytest.raises(amanda.GraphError):  # the split edge is gone
        edge.src
    assert ident.outputs["output"].consumers[0].op == consumer
    assert ident.inputs["input"].producer == relu.outputs[0]

    ins, outs = g.boundary([relu])
    assert ins == [relu.inputs[0]] and outs == [relu.outputs[0]]
    before = len(g)
    new_ops = g.replace([relu], relu_graph(), inputs={relu.inputs[0]: 0}, outputs={relu.outputs[0]: "y"})
    assert [op.type for op in new_ops] == ["Abs", "Add", "Constant", "Mul"]
    assert not relu.alive and len(g) == before + 3
    assert ident.producers()[0].type == "Mul"
    assert g.verify() == []
    return ident.name


def convert_and_check(g, path, tmp_path):
    import onnx
    g11 = amanda.convert(g, "onnx/11")
    assert g11 is not g and g11.namespace == "amanda/onnx/11" and g.namespace == "amanda/onnx/13"
    rep = g11.report
    assert rep.ok and rep.tables == ["amanda/onnx/13 -> amanda/onnx/12", "amanda/onnx/12 -> amanda/onnx/11"]
    assert rep.mapped + rep.passed == rep.ops > 0
    out = str(tmp_path / (os.path.basename(path)[:-5] + "_edited_11.onnx"))
    assert amanda.save(g11, out) is None
    onnx.checker.check_model(onnx.load(out), full_check=True)  # a path would be rewritten with inferred shapes
    m = onnx.load(out)
    assert [o.version for o in m.opset_import if o.domain in ("", "ai.onnx")] == [11]
    return out, m


def models():
    return MODELS if os.environ.get("AMANDA_PYTHON_TESTS_ALL") else SAMPLE


@pytest.mark.parametrize("model", models())
def test_edit_convert_save_run(models_dir, tmp_path, model):
    path = os.path.join(models_dir, model + ".onnx")
    g = amanda.load(path)
    has_relu = any(op.type == "Relu" for op in g.ops)
    name = edit(g) if has_relu else None
    out, m = convert_and_check(g, path, tmp_path)
    if name:
        node = next(n for n in m.graph.node if n.name == name)
        assert node.op_type == "Identity"
        assert sum(n.op_type == "Abs" for n in m.graph.node) == 1
    res = ort_compare(path, [out])
    assert res["max_abs_reference"] > 0, "the reference output is all zeros: the comparison would prove nothing"
    (r,) = res["results"]
    assert "error" not in r, r
    assert r["max_abs_diff"] <= TOL, f"{model}: max abs difference {r['max_abs_diff']}"


def test_convert_unmapped_raises_with_report():
    g = amanda.Graph(namespace="amanda/onnx/13", name="g")
    x, y = g.add_input("x"), g.add_output("y")
    op = g.create_op("NoSuchOp", name="mystery", inputs=["X"], outputs=["Y"])
    g.connect(x, op.inputs[0])
    g.connect(op.outputs[0], y)
    with pytest.raises(amanda.ConversionError) as e:
        amanda.convert(g, "onnx/11")
    rep = e.value.report
    # An op the source namespace does not define exists in no target either: refused with the reason.
    listed = rep.unmapped + rep.unsupported
    assert not rep.ok and [u.type for u in listed] == ["NoSuchOp"]
    u = listed[0]
    assert u.count == 1 and u.names == ["mystery"] and isinstance(u.reason, str) and isinstance(u.rule, str)
    assert "NoSuchOp" in rep.text() and '"NoSuchOp"' in rep.json() and "NoSuchOp" in str(e.value)
    assert g.op("mystery").type == "NoSuchOp"  # the input graph is untouched (convert works on a copy)
    kept = amanda.convert(g, "onnx/11", keep_unmapped=True)
    assert (kept.report.unmapped + kept.report.unsupported)[0].type == "NoSuchOp" and kept.namespace == "amanda/onnx/11"
    assert rep.errors == []


def test_convert_options_match_the_tool(models_dir, amanda_binary, tmp_path):
    """explain, tags, tables and in_place behave as `amanda convert --explain/--tags/--tables`; the
    Python report says what the tool's --report json says."""
    import json
    import subprocess
    # The shipped example: its Squeeze needs a rule at 13 -> 12 (axes move from an input to an
    # attribute); ops whose schemas did not change need none, so a torchvision CNN may have no rule.
    path = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "small_cnn_opset13.onnx")
    g = amanda.load(path)
    target = next(op for op in g.ops if op.type == "Conv").name
    converted = amanda.convert(g, "onnx/11", explain=target, tags=[], tables=[])
    r = subprocess.run([amanda_binary, "convert", path, "--to", "onnx/11", "--report", "json", "--explain", target],
                       capture_output=True, text=True, check=True)
    tool = json.loads(r.stdout)
    assert json.loads(converted.report.json()) == tool
    assert converted.report.by_rule == tool["by_rule"] and sum(tool["by_rule"].values()) == tool["converted"] > 0
    assert converted.report.explain == tool["explain"] and target in converted.report.explain[0]
    same = amanda.convert(g, "onnx/12", in_place=True)
    assert same == g and g.namespace == "amanda/onnx/12"


def test_optimize_removes_identity_and_keeps_outputs(tmp_path):
    # An Identity between a Relu and the output is a no-op the default passes remove; the graph still
    # computes the same values (checked by the tool's interpreter, not by the passes themselves).
    names = [p["name"] for p in amanda.optimize_passes()]
    assert any("identity" in n for n in names), names
    g = amanda.loads(
        "graph:\n  name: g\n  namespace: amanda/onnx/13\n"
        "  input_ports: [{name: x, attrs: {type: tensor(float), shape: [2, 3]}}]\n"
        "  output_ports: [{name: y, attrs: {type: tensor(float), shape: [2, 3]}}]\n"
        "  ops:\n"
        "    - {type: Relu, name: r, input_ports: [{name: X}], output_ports: [{name: Y, attrs: {'@value': r}}]}\n"
        "    - {type: Identity, name: i, input_ports: [{name: input}], output_ports: [{name: output, attrs: {'@value': y}}]}\n"
        "  edges:\n"
        "    - {output_port: {op: g, port: x}, input_port: {op: r, port: X}}\n"
        "    - {output_port: {op: r, port: Y}, input_port: {op: i, port: input}}\n"
        "    - {output_port: {op: i, port: output}, input_port: {op: g, port: y}}\n")
    before = sorted(op.type for op in g.ops)
    amanda.optimize(g)
    after = sorted(op.type for op in g.ops)
    assert before == ["Identity", "Relu"] and after == ["Relu"], after
