// Round trips: text -> IR -> text loses nothing (the IRs are equal), and the second trip is
// byte-identical to the first, for YAML, for JSON, and across the two forms.
#include <gtest/gtest.h>

#include "amanda/ir/verify.h"
#include "text_test_util.h"

namespace amanda::text {
namespace {

using namespace testing;

std::vector<fs::path> inputs() {
  std::vector<fs::path> out = seed_examples();
  for (const auto& e : fs::directory_iterator(test_data() / "golden" / "features")) {
    std::string n = e.path().filename().string();
    if (n.find(".expected.") == std::string::npos) out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string param_name(const ::testing::TestParamInfo<fs::path>& info) {
  std::string s = info.param.stem().string() + "_" + info.param.extension().string().substr(1);
  for (char& c : s)
    if (!isalnum(static_cast<unsigned char>(c))) c = '_';
  return s;
}

class RoundTrip : public ::testing::TestWithParam<fs::path> {
 protected:
  void SetUp() override {
    Diagnostics diags;
    original_ = std::make_unique<Document>(read_file(GetParam().string(), diags));
  }
  std::unique_ptr<Document> original_;
};

// One trip through `f`, checked: equal IR, and writing the re-read document gives the same text.
std::string trip(const Document& doc, Format f, std::unique_ptr<Document>* reread = nullptr) {
  std::string text = to_text(doc, f);
  Diagnostics diags;
  auto again = std::make_unique<Document>(parse(text, f, "trip", diags));
  EXPECT_EQ(diags.items().size(), 0u) << diags.str();
  EXPECT_TRUE(same_document(doc, *again)) << format_name(f) << " text:\n" << text;
  EXPECT_EQ(to_text(*again, f), text) << "second " << format_name(f) << " trip is not byte-identical";
  if (again->kind != Document::Kind::Edge) {
    Diagnostics problems;
    EXPECT_TRUE(ir::verify(again->graph, problems)) << problems.str();
  }
  if (reread) *reread = std::move(again);
  return text;
}

TEST_P(RoundTrip, Yaml) { trip(*original_, Format::Yaml); }

TEST_P(RoundTrip, Json) { trip(*original_, Format::Json); }

TEST_P(RoundTrip, YamlToJsonToYaml) {
  std::string yaml = trip(*original_, Format::Yaml);
  std::unique_ptr<Document> from_json;
  trip(*original_, Format::Json, &from_json);
  EXPECT_TRUE(same_document(*original_, *from_json));
  EXPECT_EQ(to_text(*from_json, Format::Yaml), yaml) << "YAML written from the JSON form differs";
}

TEST_P(RoundTrip, JsonToYamlToJson) {
  std::string json = to_text(*original_, Format::Json);
  std::unique_ptr<Document> from_yaml;
  trip(*original_, Format::Yaml, &from_yaml);
  EXPECT_EQ(to_text(*from_yaml, Format::Json), json) << "JSON written from the YAML form differs";
}

// The output does not depend on anything but the document (no addresses, no hash order).
TEST_P(RoundTrip, Deterministic) {
  Diagnostics diags;
  Document again = read_file(GetParam().string(), diags);
  for (Format f : {Format::Yaml, Format::Json}) EXPECT_EQ(to_text(again, f), to_text(*original_, f));
}

INSTANTIATE_TEST_SUITE_P(Examples, RoundTrip, ::testing::ValuesIn(inputs()), param_name);

// A larger generated graph: many ops, a chain of edges, nested bodies and attributes.
TEST(RoundTripGenerated, ThousandOpsWithNestedBodies) {
  std::string y = "graph:\n  name: big\n  input_ports: [in]\n  output_ports: [out]\n  ops:\n";
  const int n = 1000;
  for (int i = 0; i < n; ++i) {
    y += "    - type: T" + std::to_string(i % 7) + "\n      name: op" + std::to_string(i) +
         "\n      attrs: {i: " + std::to_string(i) + ", f: " + std::to_string(i) + ".5, s: \"" + std::to_string(i) +
         "\"}\n      input_ports: [x]\n      output_ports: [y]\n";
    if (i % 100 == 0)
      y += "      ops:\n        - {name: inner, input_ports: [a], output_ports: [b]}\n      edges:\n"
           "        - {output_port: {op: op" + std::to_string(i) + ", port: x}, input_port: {op: inner, port: a}}\n"
           "        - {output_port: {op: inner, port: b}, input_port: {op: op" + std::to_string(i) + ", port: y}}\n";
  }
  y += "  edges:\n    - output_port: {op: big, port: in}\n      input_port: {op: op0, port: x}\n";
  for (int i = 1; i < n; ++i)
    y += "    - output_port: {op: op" + std::to_string(i - 1) + ", port: y}\n      input_port: {op: op" + std::to_string(i) +
         ", port: x}\n";
  y += "    - output_port: {op: op" + std::to_string(n - 1) + ", port: y}\n      input_port: {op: big, port: out}\n";
  Document doc = parse_yaml(y);
  EXPECT_EQ(doc.graph.op_count(), static_cast<size_t>(n + n / 100));
  EXPECT_EQ(doc.graph.edge_count(), static_cast<size_t>(n + 1 + 2 * (n / 100)));
  std::string yaml = trip(doc, Format::Yaml);
  std::unique_ptr<Document> from_json;
  trip(doc, Format::Json, &from_json);
  EXPECT_EQ(to_text(*from_json, Format::Yaml), yaml);
}

// Edits through the IR API survive a trip: erased ops and edges leave no trace, names made by
// create_op are not written, new attributes appear.
TEST(RoundTripGenerated, AfterMutation) {
  Document doc = parse_yaml(R"(graph:
  ops:
    - {name: a, output_ports: [o]}
    - {name: b, input_ports: [i], output_ports: [o]}
    - {name: c, input_ports: [i]}
  edges:
    - {output_port: {op: a, port: o}, input_port: {op: b, port: i}}
    - {output_port: {op: b, port: o}, input_port: {op: c, port: i}}
)");
  ir::Graph& g = doc.graph;
  ir::OpId b = g.find_op(g.root(), "b");
  ir::PortId a_out = g.outputs(g.find_op(g.root(), "a"))[0];
  ir::PortId c_in = g.inputs(g.find_op(g.root(), "c"))[0];
  g.erase_op(b);
  g.connect(a_out, c_in);
  g.set_attr(g.root(), g.sym("note"), ir::Value("edited"));
  std::string y = trip(doc, Format::Yaml);
  EXPECT_EQ(y, R"(graph:
  attrs:
    note: edited
  ops:
    - name: a
      output_ports:
        - name: o
    - name: c
      input_ports:
        - name: i
  edges:
    - output_port: {op: a, port: o}
      input_port: {op: c, port: i}
)");
  trip(doc, Format::Json);
}

// An op that owns a graph-valued attribute has a body only if the text gave it one; the writer
// must not invent `ops: []` for it, nor drop one that was given.
TEST(RoundTripGenerated, AttributeGraphsDoNotMakeABody) {
  for (const char* body : {"", ", ops: []", ", ops: [], edges: []"}) {
    SCOPED_TRACE(body);
    Document doc = parse_yaml(std::string("graph:\n  ops:\n    - {name: loop, attrs: {body: !graph {ops: []}}") + body + "}\n");
    ir::OpId loop = doc.graph.find_op(doc.graph.root(), "loop");
    EXPECT_EQ(doc.graph.has_body(loop), std::string(body) != "");
    std::string y = trip(doc, Format::Yaml);
    EXPECT_EQ(y.find("\n      ops: []\n") != std::string::npos, std::string(body) != "") << y;
    trip(doc, Format::Json);
  }
}

// An `op:` document has no body unless it lists ops or edges (the seed's f and g have none).
TEST(RoundTripGenerated, RootOpBodyOnlyWhenItHasOne) {
  // A plain op has no body; an op written with an empty body keeps it.
  EXPECT_EQ(to_text(parse_yaml("op: {name: f}\n"), Format::Yaml), "op:\n  name: f\n");
  EXPECT_EQ(to_text(parse_yaml("op: {name: f, ops: []}\n"), Format::Yaml), "op:\n  name: f\n  ops: []\n  edges: []\n");
  Document id = parse_yaml("op: {name: id, input_ports: [x], output_ports: [y], edges: [{output_port: {op: id, port: x}, "
                           "input_port: {op: id, port: y}}]}\n");
  std::string y = trip(id, Format::Yaml);
  EXPECT_NE(y.find("  ops: []\n  edges:\n    - output_port: {op: id, port: x}"), std::string::npos) << y;
}


// Ops named by the API's counter ("_0") where the reader would name them by position ("_1"), and
// positions moved by an erase: the writer names those explicitly so that edges still resolve.
TEST(RoundTripGenerated, ApiGeneratedNamesThatPositionsWouldNotReproduce) {
  Document doc;
  ir::Graph& g = doc.graph;
  ir::OpId a = g.create_op(g.root(), "A", "a", {}, {"out"});
  ir::OpId b = g.create_op(g.root(), "B", {}, {"in"}, {"out"});  // "_0" by the counter, position 1
  ir::OpId c = g.create_op(g.root(), "C", {}, {"in"}, {});       // "_1" by the counter, position 2
  g.connect(g.output(a, 0), g.input(b, 0));
  g.connect(g.output(b, 0), g.input(c, 0));
  ASSERT_EQ(g.name_str(b), "_0");
  ASSERT_EQ(g.name_str(c), "_1");
  std::string y = to_text(doc, Format::Yaml);
  Document back = parse_yaml(y);
  EXPECT_EQ(ir::first_difference(doc.graph, back.graph), "") << y;
  // The second round trip is byte-identical.
  EXPECT_EQ(to_text(back, Format::Yaml), y);
  // After erasing the named op the anonymous ones sit at positions 0 and 1 again: nothing to write.
  g.erase_op(a);
  std::string y2 = to_text(doc, Format::Yaml);
  EXPECT_EQ(y2.find("name: _0"), std::string::npos) << y2;
  EXPECT_EQ(ir::first_difference(doc.graph, parse_yaml(y2).graph), "") << y2;
}

}  // namespace
}  // namespace amanda::text
