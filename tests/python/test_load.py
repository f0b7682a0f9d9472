"""Loading through Python: the torchvision ONNX exports, the shipped examples and the seed's examples
(tests/golden/seed holds verbatim copies of amanda-design.md's YAML blocks); every graph is
structurally sound, validates against its namespace where it has one, and copies exactly."""
import glob
import os

import pytest

import amanda
from conftest import MODELS, ROOT


@pytest.mark.parametrize("model", MODELS)
def test_torchvision_export_loads(models_dir, model):
    path = os.path.join(models_dir, model + ".onnx")
    g = amanda.load(path)
    assert g.kind == "graph" and g.is_root and g.namespace == "amanda/onnx/13"
    import onnx
    m = onnx.load(path, load_external_data=False)
    # Every node of the file is an op of the graph, in order, with its type.
    assert [op.type for op in g.ops] == [n.op_type for n in m.graph.node]
    assert len(g) == len(m.graph.node) == g.op_count
    assert g.inputs.names() == [i.name for i in m.graph.input] + [
        t.name for t in m.graph.initializer if t.name not in {i.name for i in m.graph.input}]
    assert g.outputs.names() == [o.name for o in m.graph.output]
    assert g.verify() == []
    result, problems = g.validate()
    assert result.ok and problems == [] and result.ops_checked == len(m.graph.node)
    order = g.topological_order()
    assert sorted(op.id for op in order) == sorted(op.id for op in g.ops)
    position = {op: i for i, op in enumerate(order)}
    for op in g.ops:
        for p in op.producers():
            if isinstance(p, amanda.Op):
                assert position[p] < position[op], f"{p.path} should come before {op.path}"
    c = g.copy()
    assert c.difference(g) is None and c != g


SEED_EXAMPLES = sorted(p for p in glob.glob(os.path.join(ROOT, "tests", "golden", "seed", "*.yaml"))
                       if not p.endswith(".expected.yaml"))
EXAMPLES = sorted(glob.glob(os.path.join(ROOT, "examples", "*")))


@pytest.mark.parametrize("path", SEED_EXAMPLES + EXAMPLES, ids=os.path.basename)
def test_seed_and_shipped_examples_load(path):
    import warnings
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")  # the PyTorch seed example's misspellings are accepted with warnings
        g = amanda.load(path)
    assert g.verify() == [], path
    assert g.copy().difference(g) is None
    # The text form round-trips (the golden tests check the bytes; here: through Python).
    if g.kind == "graph":
        back = amanda.loads(g.to_text("json"), format="json")
        assert back.difference(g) is None


def test_seed_examples_are_there():
    assert len(SEED_EXAMPLES) >= 8 and len(EXAMPLES) >= 4


def test_validate_seed_example_against_its_namespace():
    # examples/tensorflow_graph.yaml is in amanda/tensorflow/1.13.1 (namespaces/tensorflow/1.13.1.yaml).
    g = amanda.load(os.path.join(ROOT, "examples", "tensorflow_graph.yaml"))
    result, problems = g.validate()
    assert result.ok, [str(p) for p in problems]
    assert result.ops_checked == len(g.walk()) > 0
    assert sum(n for n, _ in result.by_type.values()) == result.ops_checked


def if_model(path):
    """A model with an If whose branches are graphs (ONNX subgraphs), made with onnx.helper."""
    import onnx
    from onnx import TensorProto, helper
    then_g = helper.make_graph([helper.make_node("Relu", ["x"], ["t"], name="then_relu")], "then_branch", [],
                               [helper.make_tensor_value_info("t", TensorProto.FLOAT, [2])])
    else_g = helper.make_graph([helper.make_node("Neg", ["x"], ["e"], name="else_neg")], "else_branch", [],
                               [helper.make_tensor_value_info("e", TensorProto.FLOAT, [2])])
    g = helper.make_graph(
        [helper.make_node("If", ["c"], ["y"], name="choose", then_branch=then_g, else_branch=else_g)], "main",
        [helper.make_tensor_value_info("c", TensorProto.BOOL, []), helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(m)
    onnx.save(m, path)


def test_nested_graphs(tmp_path):
    path = str(tmp_path / "if.onnx")
    if_model(path)
    g = amanda.load(path)
    (choose,) = g.ops
    assert choose.type == "If" and choose.body is None
    branches = {b.name: b for b in choose.graphs}
    assert set(branches) == {"then_branch", "else_branch"}
    assert choose.attrs["then_branch"] == branches["then_branch"]
    then_g = branches["then_branch"]
    assert then_g.owner == choose and then_g.namespace in ("", "amanda/onnx/13")
    assert [op.type for op in then_g.ops] == ["Relu"]
    assert [op.name for op in g.walk()] == ["choose", "else_neg", "then_relu"] or \
        [op.name for op in g.walk()] == ["choose", "then_relu", "else_neg"]
    relu = then_g.op("then_relu")
    assert relu.path == "choose/then_branch/then_relu"
    # The branch reads the outer x: an explicit capture through an input port of If.
    src = relu.inputs[0].producer
    assert src is not None and src.op == choose
    assert g.ops_of_type("Neg")[0].name == "else_neg"
