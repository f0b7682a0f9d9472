// Value types on ports (ir/types.h): interning, symbolic dimensions shared across the graph, the
// text forms every reader writes, and the types surviving a YAML round trip.
#include <gtest/gtest.h>

#include "amanda/ir/graph.h"
#include "amanda/ir/value.h"
#include "amanda/text/document.h"

namespace amanda::ir {
namespace {

TEST(Types, InternedTypesAreEqualExactlyWhenTheirIdsAre) {
  Graph g;
  TypeId a = g.types().tensor(DType::Float32, {Dim::known(1), Dim::symbol(g.sym("N"))});
  TypeId b = g.types().tensor(DType::Float32, {Dim::known(1), Dim::symbol(g.sym("N"))});
  TypeId c = g.types().tensor(DType::Float32, {Dim::known(1), Dim::symbol(g.sym("M"))});
  TypeId d = g.types().unranked(DType::Float32);
  TypeId e = g.types().tensor(DType::Float32, std::span<const Dim>{});
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_NE(d, e);  // unknown rank is not a scalar
  EXPECT_EQ(g.types().size(), 4u);
}

TEST(Types, FormatAndParseRoundTrip) {
  Graph g;
  for (std::string s : {"float32[N, 3, 224, 224]", "float16[?, 8]", "bfloat16[*]", "bool[]", "seq(int64[2, ?])",
                        "optional(seq(float32[5]))", "map(int64, float32[*])", "sparse(float32[3, 4])", "complex128[1]",
                        "string[2]", "qint8[4]", "float8e4m3fn[4]", "resource[*]"}) {
    auto t = parse_type(g, s);
    ASSERT_TRUE(t) << s;
    EXPECT_EQ(format_type(g, *t), s);
  }
}

TEST(Types, ParsesWhatReadersAndTheSeedWrite) {
  Graph g;
  EXPECT_EQ(format_type(g, *parse_type(g, "Float(1, 784)")), "float32[1, 784]");  // the seed's
  EXPECT_EQ(format_type(g, *parse_type(g, "tensor(float)")), "float32[*]");       // ONNX's
  EXPECT_EQ(format_type(g, *parse_type(g, "seq(tensor(int64))")), "seq(int64[*])");
  EXPECT_EQ(format_type(g, *parse_type(g, "float32")), "float32[*]");             // TorchScript reader's
  EXPECT_EQ(format_type(g, *parse_type(g, "Half(2)")), "float16[2]");
  EXPECT_FALSE(parse_type(g, "tensor(notatype)"));
  EXPECT_FALSE(parse_type(g, "float32[1, 2"));
  EXPECT_FALSE(parse_type(g, ""));
}

TEST(Types, AttributesGiveThePortTypes) {
  Graph g;
  Value shape(Value::List{Value(int64_t(1)), Value("batch"), Value()});
  Value t("tensor(float)");
  TypeId id = type_from_attrs(g, &t, &shape);
  EXPECT_EQ(format_type(g, id), "float32[1, batch, ?]");
  Value seed("Float(1, 784)");
  EXPECT_EQ(format_type(g, type_from_attrs(g, &seed, nullptr)), "float32[1, 784]");
}

TEST(Types, SeedExampleReadsWithTypesAndTheYamlKeepsThem) {
  const char* yaml = R"(graph:
  namespace: amanda/pytorch/1.4.0
  name: graph
  input_ports:
    - name: x
      attrs:
        type: Float(1, 784)
  ops:
    - type: aten::relu
      name: relu
      input_ports:
        - name: x
      output_ports:
        - name: y
          attrs:
            type: Float(1, 784)
        - name: z
          attrs:
            '@type': float32
            '@shape': [N, 784]
  edges:
    - output_port: { op: graph, port: x }
      input_port: { op: relu, port: x }
)";
  Diagnostics diags;
  auto doc = text::parse(yaml, text::Format::Yaml, "seed.yaml", diags);
  Graph& g = doc.graph;
  PortId x = g.input(g.root(), 0);
  OpId relu = g.find_op(g.root(), "relu");
  PortId y = g.output(relu, 0);
  EXPECT_EQ(format_type(g, g.port_type(x)), "float32[1, 784]");
  EXPECT_EQ(format_type(g, g.port_type(y)), "float32[1, 784]");
  EXPECT_EQ(format_type(g, g.port_type(g.output(relu, 1))), "float32[N, 784]");
  // Lossless: the text written reads back to the same text and the same types.
  std::string out = text::to_text(doc, text::Format::Yaml);
  EXPECT_NE(out.find("type: Float(1, 784)"), std::string::npos) << out;
  auto again = text::parse(out, text::Format::Yaml, "again.yaml", diags);
  EXPECT_EQ(text::to_text(again, text::Format::Yaml), out);
  EXPECT_EQ(format_type(again.graph, again.graph.port_type(again.graph.input(again.graph.root(), 0))), "float32[1, 784]");
}

TEST(Types, WrittenTypesReadBackEqual) {
  text::Document doc;
  Graph& g = doc.graph;
  OpId op = g.create_op(g.root(), "Relu", "r", {"x"}, {"y"});
  TypeId t = *parse_type(g, "bfloat16[N, ?, 3]");
  write_type_attrs(g, g.output(op, 0), t);
  Diagnostics diags;
  auto again = text::parse(text::to_text(doc, text::Format::Json), text::Format::Json, "t.json", diags);
  Graph& h = again.graph;
  EXPECT_EQ(format_type(h, h.port_type(h.output(h.find_op(h.root(), "r"), 0))), "bfloat16[N, ?, 3]");
}

TEST(Types, CloneKeepsTypesAndRolesAcrossGraphs) {
  Graph a, b;
  OpId op = a.create_op(a.root(), "Relu", "r", {"x"}, {"y"});
  a.set_port_type(a.output(op, 0), *parse_type(a, "float32[N]"));
  a.set_port_role(a.output(op, 0), PortRole::Constant);
  b.sym("unrelated");  // symbol ids differ between the graphs
  auto made = b.clone_ops(a, std::vector<OpId>{op}, b.root());
  PortId y = b.output(made[0], 0);
  EXPECT_EQ(format_type(b, b.port_type(y)), "float32[N]");
  EXPECT_EQ(b.port_role(y), PortRole::Constant);
}

}  // namespace
}  // namespace amanda::ir
