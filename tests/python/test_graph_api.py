"""The graph API from Python, on graphs built here: ops, ports, edges, attributes, control edges,
bodies and attribute graphs, producers/consumers, replace by an op, clone, erase, topological order
and its cycle report, and errors that name the entity's path."""
import numpy as np
import pytest

import amanda


def chain():
    """x -> a(Neg) -> b(Abs) -> y, in a fresh document."""
    g = amanda.Graph(namespace="amanda/onnx/13", name="chain")
    x, y = g.add_input("x"), g.add_output("y")
    a = g.create_op("Neg", "a", inputs=["X"], outputs=["Y"])
    b = g.create_op("Abs", "b", inputs=["X"], outputs=["Y"], attrs={"note": "kept"})
    g.connect(x, a.inputs["X"])
    a.outputs["Y"].connect(b.inputs["X"])
    g.connect(b.outputs["Y"], y)
    return g, a, b


def test_build_and_navigate():
    g, a, b = chain()
    assert g.name == "chain" and g.namespace == "amanda/onnx/13" and g.kind == "graph" and g.is_root
    assert g.path == "" and g.owner is None and g.root == g
    assert list(g) == g.ops == [a, b] and len(g) == 2 and "a" in g and "zz" not in g and g["b"] == b
    assert g.op("a") == a and g.walk() == [a, b] and g.ops_of_type("Abs") == [b]
    assert a.name == "a" and a.type == "Neg" and a.path == "a" and a.graph == g and a.alive and a.id > 0
    assert len(a.inputs) == 1 and a.inputs.names() == ["X"] and "X" in a.inputs and "Q" not in a.outputs
    assert [p.name for p in a.outputs] == ["Y"] and repr(a.inputs) == "[X]"
    assert a.producers() == [g] and a.consumers() == [b] and b.producers() == [a] and b.consumers() == [g]
    p = a.outputs[0]
    assert p.path == "a:output Y" and p.op == a and p.direction == "out" and p.index == 0 and not p.is_control
    assert p.consumers == [b.inputs[0]] and b.inputs[0].producer == p and g.inputs[0].producer is None
    (e,) = p.out_edges
    assert b.inputs[0].in_edges == [e] and e.src == p and e.dst == b.inputs[0] and not e.is_control
    assert e.graph == g and "a:output Y -> b:input X" in e.path and len(g.edges) == 3
    assert g.op_count == 2 and g.edge_count == 3 and g.verify() == []
    assert g.inputs["x"].direction == "out" or g.inputs["x"].direction == "in"
    assert {a: 1}[g.op("a")] == 1 and hash(p) == hash(a.outputs["Y"]) and hash(e) == hash(p.out_edges[0])
    assert "Neg" in repr(a) and "a:output Y" in repr(p) and "chain" in repr(g) and "a:output Y" in repr(e)


def test_attributes():
    g, a, b = chain()
    attrs = b.attrs
    assert attrs["note"] == "kept" and len(attrs) == 1 and "note" in attrs and list(attrs) == ["note"]
    attrs["k"] = [1, 2.5, "s", None, True, {"m": [3]}]
    attrs["w"] = np.ones((2, 2), dtype=np.float32)
    assert attrs["k"] == [1, 2.5, "s", None, True, {"m": [3]}]
    assert attrs.keys() == ["note", "k", "w"] and attrs.items()[0] == ("note", "kept")
    assert attrs.get("missing", 7) == 7 and attrs.get("note") == "kept"
    assert set(attrs.to_dict()) == {"note", "k", "w"}
    del attrs["note"]
    assert "note" not in attrs
    with pytest.raises(KeyError):
        attrs["note"]
    with pytest.raises(KeyError):
        del attrs["note"]
    with pytest.raises(amanda.GraphError) as e:
        attrs["x"] = object()
    assert "b" in e.value.path and "attribute x" in e.value.path
    with pytest.raises(amanda.GraphError):
        attrs["big"] = 2 ** 70
    g.inputs[0].attrs["type"] = "tensor(float)"
    g.inputs[0].attrs["shape"] = ["N", 3, None]
    assert g.inputs[0].type == "tensor(float)" and g.inputs[0].shape == ["N", 3, None] and a.outputs[0].type is None
    a.outputs[0].attrs["@shape"] = [1]
    assert a.outputs[0].shape == [1]
    e = a.outputs[0].out_edges[0]
    e.attrs["why"] = "test"
    assert e.attrs["why"] == "test" and "Attributes" in repr(e.attrs)
    np.int64(3)
    attrs["n"] = np.int64(3)
    attrs["f"] = np.float32(0.5)
    assert attrs["n"] == 3 and type(attrs["n"]) is int and attrs["f"] == 0.5


def test_rename_retype_ports_control():
    g, a, b = chain()
    a.name = "neg"
    a.type = "Neg"
    assert g.op("neg") == a and "a" not in g
    with pytest.raises(amanda.GraphError) as e:
        b.name = "neg"
    assert e.value.path == "b"
    extra = b.add_input("extra")
    out2 = b.add_output("out2")
    assert b.inputs.names() == ["X", "extra"] and out2.index == 1
    extra.name = "E"
    assert b.inputs[-1].name == "E"
    ce = a.control_output.connect(b.control_input)
    assert ce.is_control and b.control_input.is_control and b.control_input.path == "b:input ^control"
    order = g.topological_order()
    assert order.index(a) < order.index(b)
    gi = g.add_input("z")
    gi.connect(extra)
    with pytest.raises(amanda.GraphError) as e:
        g.connect(g.inputs["x"], extra)  # a data port has one producer
    assert e.value.path == "b:input E"
    a.outputs[0].replace_all_uses(g.inputs["x"])
    assert b.inputs[0].producer == g.inputs["x"] and a.consumers() == []  # consumers: of data outputs
    assert a.control_output.consumers == [b.control_input]
    ce.disconnect()
    assert a.control_output.consumers == [] and g.verify() == []


def test_cycle_is_reported_with_paths():
    g, a, b = chain()
    c = g.create_op("Add", "c", inputs=["A", "B"], outputs=["C"])
    b.outputs[0].connect(c.inputs[0])
    c.outputs[0].connect(c.inputs[1])
    with pytest.raises(amanda.GraphError) as e:
        g.topological_order()
    assert "cycle" in str(e.value) and e.value.path == "c"
    # convert refuses it as the tool does, naming the problem, and leaves the graph as it was.
    before = g.to_text()
    with pytest.raises(amanda.GraphError) as e:
        amanda.convert(g, "onnx/11")
    assert "not converted" in str(e.value) and "cycle" in str(e.value) and e.value.path.startswith("c")
    assert g.to_text() == before


def test_erase_and_stale_handles():
    g, a, b = chain()
    p = a.outputs[0]
    g.erase(a)
    assert not a.alive and g.ops == [b] and b.producers() == []
    for get in (lambda: a.name, lambda: p.name, lambda: a.inputs):
        with pytest.raises(amanda.GraphError):
            get()
    assert "erased" in repr(a) and "erased" in repr(p)
    b.erase()
    assert len(g) == 0
    g2, a2, b2 = chain()
    g2.erase([a2, b2])
    assert g2.ops == []
    with pytest.raises(amanda.GraphError):
        g.erase(a2)  # an op of another graph


def test_replace_by_an_op_and_clone():
    g, a, b = chain()
    fused = g.create_op("NegAbs", "fused", inputs=["X"], outputs=["Y"])
    with pytest.raises(amanda.Error):  # a boundary port is unmapped: nothing changes
        g.replace([a, b], fused, inputs={}, outputs={b.outputs[0]: fused.outputs[0]})
    assert a.alive and b.alive
    r = g.replace([a, b], fused, inputs={a.inputs[0]: fused.inputs[0]}, outputs={b.outputs[0]: fused.outputs[0]})
    assert r == fused and g.ops == [fused] and fused.producers() == [g] and fused.consumers() == [g]
    copies = g.clone([fused])
    assert copies[0].type == "NegAbs" and copies[0].name != "fused" and len(g) == 2
    other = amanda.Graph(name="other")
    (moved,) = g.clone([fused], into=other)
    assert moved.graph == other and moved.name == "fused"


def test_bodies_and_attribute_graphs(tmp_path):
    g = amanda.Graph(name="outer")
    sub = g.create_op("Block", "blk", inputs=["in"], outputs=["out"])
    assert sub.body is None
    body = sub.add_body()
    assert sub.body == body and body.owner == sub and body.path == "blk" and not body.is_root
    inner = body.create_op("Relu", "r", inputs=["X"], outputs=["Y"])
    body.connect(sub.inputs[0], inner.inputs[0])
    body.connect(inner.outputs[0], sub.outputs[0])
    assert inner.path == "blk/r" and inner.graph == body and g.walk() == [sub, inner]
    branch = sub.add_graph("then")
    sub.attrs["then"] = branch
    assert sub.graphs == [branch] and branch.owner == sub and sub.attrs["then"] == branch
    assert branch.name == "then"
    branch.namespace = "amanda/onnx/13"
    branch.create_op("Identity", "i")
    assert [op.name for op in g.walk()] == ["blk", "r", "i"]
    assert g.verify() == []
    # The YAML form keeps it all, and a copy is equal.
    path = str(tmp_path / "nested.yaml")
    amanda.save(g, path)
    back = amanda.load(path)
    assert back.difference(g) is None and g.copy().difference(g) is None
    with pytest.raises(amanda.GraphError):
        sub.attrs["bad"] = amanda.Graph()  # a graph of another document


def test_verify_reports_paths():
    g, a, b = chain()
    dup = g.create_op("Neg", "", inputs=["X"])
    dup.name = "dup"
    x2 = dup.add_input("X")  # two inputs of one name
    problems = g.verify()
    assert problems and problems[0].where.startswith("dup") and problems[0].severity == "error"
    assert problems[0].message and "dup" in str(problems[0]) and "Diagnostic" in repr(problems[0])
    assert x2.index == 1


def test_misuse_is_refused_with_paths():
    """Edges that the verifier would reject are refused when made, naming both ports."""
    g, a, b = chain()
    blk = g.create_op("Block", "blk", inputs=["i"], outputs=["o"])
    inner = blk.add_body().create_op("Relu", "in", inputs=["X"], outputs=["Y"])
    for src, dst in [(a.outputs[0], b.outputs[0]), (a.inputs[0], b.inputs[0]), (a.outputs[0], inner.inputs[0]),
                     (a.control_output, b.inputs[0])]:
        with pytest.raises(amanda.GraphError) as e:
            g.connect(src, dst)
        assert e.value.path == f"{src.path} -> {dst.path}"
    with pytest.raises(amanda.GraphError):
        a.control_output.connect(b.control_input).insert_op("Identity")
    branch = a.add_graph("then")
    with pytest.raises(amanda.GraphError) as e:
        b.attrs["then"] = branch  # a's graph
    assert e.value.path == "b attribute then"
    r = branch.create_op("Relu", "r", inputs=["X"])
    branch.connect(a.inputs[0], r.inputs[0])  # an explicit capture of the owner's input
    a.attrs["then"] = branch
    assert g.verify() == []


def test_self_containing_values_are_refused():
    g = amanda.Graph(name="g")
    loop = []
    loop.append(loop)
    with pytest.raises(amanda.GraphError) as e:
        g.attrs["x"] = loop
    assert e.value.path == "g attribute x" and "deeper" in str(e.value)
    assert "x" not in g.attrs
