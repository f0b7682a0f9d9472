// Builtin attributes (op name and type, port name, graph namespace) may be written as keys or
// inside attrs, as the seed does; anonymous ops and ports get "_0", "_1", ... names.
#include <gtest/gtest.h>

#include "text_test_util.h"

namespace amanda::text {
namespace {

using namespace testing;

TEST(Builtins, NameInsideAttrsEqualsNameKey) {
  Document in_attrs = parse_yaml("op: {attrs: {name: g}}\n");
  Document as_key = parse_yaml("op: {name: g}\n");
  EXPECT_TRUE(same_document(in_attrs, as_key));
  EXPECT_EQ(in_attrs.graph.name_str(in_attrs.graph.root()), "g");
  EXPECT_TRUE(in_attrs.graph.attrs(in_attrs.graph.root()).empty());
  EXPECT_EQ(to_text(in_attrs, Format::Yaml), "op:\n  name: g\n");
}

TEST(Builtins, EveryBuiltinInsideAttrs) {
  Document in_attrs = parse_yaml(R"(graph:
  attrs: {namespace: amanda/onnx/13, name: top, producer: x}
  ops:
    - attrs: {type: Relu, name: r, alpha: 1}
      input_ports:
        - attrs: {name: x, shape: [1]}
)");
  Document as_keys = parse_yaml(R"(graph:
  namespace: amanda/onnx/13
  name: top
  attrs: {producer: x}
  ops:
    - type: Relu
      name: r
      attrs: {alpha: 1}
      input_ports:
        - name: x
          attrs: {shape: [1]}
)");
  EXPECT_TRUE(same_document(in_attrs, as_keys));
  EXPECT_EQ(to_text(in_attrs, Format::Yaml), to_text(as_keys, Format::Yaml));
  EXPECT_EQ(to_text(in_attrs, Format::Json), to_text(as_keys, Format::Json));
}

TEST(Builtins, SameValueTwiceIsFineDifferentValuesAreAnError) {
  Document twice = parse_yaml("op: {name: g, attrs: {name: g}}\n");
  EXPECT_EQ(twice.graph.name_str(twice.graph.root()), "g");
  ParseError e = parse_error("op:\n  name: g\n  attrs:\n    name: h\n");
  EXPECT_EQ(e.loc().line, 4u);
  EXPECT_EQ(e.loc().column, 5u);  // the second 'name'

  EXPECT_NE(e.message().find("'name' given twice with different values ('g' and 'h')"), std::string::npos) << e.what();
  ParseError t = parse_error("op: {type: A, attrs: {type: B}}\n");
  EXPECT_NE(t.message().find("'type' given twice"), std::string::npos) << t.what();
  ParseError p = parse_error("op: {input_ports: [{name: a, attrs: {name: b}}]}\n");
  EXPECT_NE(p.message().find("'name' given twice"), std::string::npos) << p.what();
}

// `type` is a builtin of ops only and `namespace` of graphs only: elsewhere they are ordinary
// attributes inside attrs, and unknown keys outside.
TEST(Builtins, OnlyWhereTheSeedDefinesThem) {
  Document g = parse_yaml("graph: {attrs: {type: not_builtin_here}, ops: []}\n");
  EXPECT_EQ(*g.graph.attr(g.graph.root(), g.graph.symbols().find("type")), ir::Value("not_builtin_here"));
  Document o = parse_yaml("op: {attrs: {namespace: not_builtin_here}}\n");
  EXPECT_EQ(*o.graph.attr(o.graph.root(), o.graph.symbols().find("namespace")), ir::Value("not_builtin_here"));
  EXPECT_NE(parse_error("graph: {type: X}\n").message().find("unknown key 'type' in a graph"), std::string::npos);
  EXPECT_NE(parse_error("op: {namespace: X}\n").message().find("unknown key 'namespace' in an op"), std::string::npos);
}

TEST(Anonymous, OpsAreNamedByPosition) {
  Document doc = parse_yaml(R"(graph:
  ops:
    - type: A
    - type: B
      name: named
    - type: C
)");
  const ir::Graph& g = doc.graph;
  auto kids = g.children(g.root());
  ASSERT_EQ(kids.size(), 3u);
  EXPECT_EQ(g.name_str(kids[0]), "_0");
  EXPECT_EQ(g.name_str(kids[1]), "named");
  EXPECT_EQ(g.name_str(kids[2]), "_2");
  EXPECT_TRUE(g.name_generated(kids[0]));
  EXPECT_FALSE(g.name_generated(kids[1]));
  // Generated names are not written back: the canonical text keeps the ops anonymous.
  EXPECT_EQ(to_text(doc, Format::Yaml), "graph:\n  ops:\n    - type: A\n    - type: B\n      name: named\n    - type: C\n  edges: []\n");
}

TEST(Anonymous, GeneratedNamesSkipTakenOnesAndEdgesMayUseThem) {
  Document doc = parse_yaml(R"(graph:
  ops:
    - output_ports: [{}, {}]
    - name: _0
      output_ports: [_1, {}]
    - input_ports: [{}, {name: _0}, {}]
  edges:
    - {output_port: {op: _1, port: _0}, input_port: {op: _2, port: _1}}
    - {output_port: {op: _1, port: _1}, input_port: {op: _2, port: _0}}
    - {output_port: {op: _0, port: _1}, input_port: {op: _2, port: _2}}
)");
  const ir::Graph& g = doc.graph;
  auto kids = g.children(g.root());
  EXPECT_EQ(g.name_str(kids[0]), "_1");  // "_0" is taken by the second op
  EXPECT_EQ(g.name_str(kids[2]), "_2");
  auto names = [&](ir::OpId op, ir::PortDir d) {
    std::vector<std::string> out;
    for (ir::PortId p : g.ports(op, d)) out.emplace_back(g.port_name_str(p));
    return out;
  };
  EXPECT_EQ(names(kids[0], ir::PortDir::Out), (std::vector<std::string>{"_0", "_1"}));
  EXPECT_EQ(names(kids[1], ir::PortDir::Out), (std::vector<std::string>{"_1", "_2"}));  // "_1" is taken
  EXPECT_EQ(names(kids[2], ir::PortDir::In), (std::vector<std::string>{"_1", "_0", "_2"}));
  EXPECT_EQ(g.edge_count(), 3u);
  EXPECT_EQ(g.path(g.producer(g.inputs(kids[2])[0])), "_1:output _0");
  EXPECT_EQ(g.path(g.producer(g.inputs(kids[2])[1])), "_1:output _1");
  EXPECT_EQ(g.path(g.producer(g.inputs(kids[2])[2])), "_0:output _1");
  // The canonical text names nothing that was anonymous, and reads back the same.
  std::string y = to_text(doc, Format::Yaml);
  EXPECT_TRUE(same_document(doc, parse_yaml(y))) << y;
}

TEST(Anonymous, EmptyNameIsAnonymous) {
  Document doc = parse_yaml("graph: {ops: [{name: \"\"}, {name: b, input_ports: [\"\"]}]}\n");
  const ir::Graph& g = doc.graph;
  EXPECT_EQ(g.name_str(g.children(g.root())[0]), "_0");
  EXPECT_EQ(g.port_name_str(g.inputs(g.find_op(g.root(), "b"))[0]), "_0");
}

// The seed's PyTorch graph: the graph's own anonymous output port is addressed as `graph:_0`.
TEST(Anonymous, GraphBoundaryPortsByGeneratedName) {
  Document doc = parse_yaml(R"(graph:
  name: graph
  input_ports: [{}]
  output_ports: [{}]
  ops:
    - {type: Id, input_ports: [{}], output_ports: [{}]}
  edges:
    - {output_port: {op: graph, port: _0}, input_port: {op: _0, port: _0}}
    - {output_port: {op: _0, port: _0}, input_port: {op: graph, port: _0}}
)");
  const ir::Graph& g = doc.graph;
  EXPECT_EQ(g.edge_count(), 2u);
  EXPECT_EQ(g.producer(g.outputs(g.root())[0]), g.outputs(g.children(g.root())[0])[0]);
}

// An anonymous root graph is addressed by the empty name (how the writer spells it).
TEST(Anonymous, UnnamedRootGraphBoundary) {
  Document doc = parse_yaml(R"(graph:
  input_ports: [x]
  ops: [{name: a, input_ports: [i]}]
  edges: [{output_port: {op: "", port: x}, input_port: {op: a, port: i}}]
)");
  EXPECT_EQ(doc.graph.edge_count(), 1u);
  std::string y = to_text(doc, Format::Yaml);
  EXPECT_NE(y.find("output_port: {op: \"\", port: x}"), std::string::npos) << y;
  EXPECT_TRUE(same_document(doc, parse_yaml(y)));
}

}  // namespace
}  // namespace amanda::text
