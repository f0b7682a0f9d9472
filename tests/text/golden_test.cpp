// Golden text tests: every example of tests/golden/{seed,features}/NAME.yaml is read and written
// canonically, and the output must equal NAME.expected.yaml and NAME.expected.json byte for byte.
//
// The expected files were written by `amanda fmt NAME.yaml -o NAME.expected.yaml` (and .json) and
// then read against the seed by hand. When the canonical form changes on purpose, regenerate them
// the same way and read the diff: a golden file is only as good as the review it got.
#include <gtest/gtest.h>

#include "amanda/ir/verify.h"
#include "text_test_util.h"

namespace amanda::text {
namespace {

using namespace testing;

std::vector<fs::path> golden_inputs() {
  std::vector<fs::path> out = seed_examples();
  for (const auto& e : fs::directory_iterator(test_data() / "golden" / "features")) {
    std::string n = e.path().filename().string();
    if ((e.path().extension() == ".yaml" || e.path().extension() == ".json") && n.find(".expected.") == std::string::npos)
      out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string param_name(const ::testing::TestParamInfo<fs::path>& info) {
  std::string s = info.param.parent_path().filename().string() + "_" + info.param.stem().string() + "_" +
                  info.param.extension().string().substr(1);
  for (char& c : s)
    if (!isalnum(static_cast<unsigned char>(c))) c = '_';
  return s;
}

class Golden : public ::testing::TestWithParam<fs::path> {};

TEST_P(Golden, CanonicalOutputMatchesExpectedFiles) {
  const fs::path& in = GetParam();
  Diagnostics diags;
  Document doc = read_file(in.string(), diags);
  EXPECT_EQ(diags.error_count(), 0u) << diags.str();
  if (doc.kind != Document::Kind::Edge) {
    Diagnostics problems;
    EXPECT_TRUE(ir::verify(doc.graph, problems)) << problems.str();
  }
  fs::path base = in.parent_path() / in.stem();
  for (Format f : {Format::Yaml, Format::Json}) {
    fs::path expected_path = base.string() + ".expected." + std::string(format_name(f));
    ASSERT_TRUE(fs::exists(expected_path)) << expected_path;
    std::string expected = slurp(expected_path);
    std::string got = to_text(doc, f);
    EXPECT_EQ(got, expected) << "canonical " << format_name(f) << " of " << in << " differs from " << expected_path;

    // The expected file reads back as the same document, and is its own canonical form.
    Diagnostics d2;
    Document again = parse(expected, f, expected_path.string(), d2);
    EXPECT_TRUE(same_document(doc, again)) << expected_path;
    EXPECT_EQ(to_text(again, f), expected) << expected_path << " is not a fixed point of fmt";
    EXPECT_EQ(d2.warning_count(), 0u) << "canonical output must not need accepted misspellings: " << d2.str();
  }
}

INSTANTIATE_TEST_SUITE_P(Examples, Golden, ::testing::ValuesIn(golden_inputs()), param_name);

// ---------------------------------------------------------------------------------------------
// What the seed shows, checked on the IR itself, so that a regenerated golden file that lost
// something cannot pass unnoticed.

Document read_seed(const std::string& name, Diagnostics* diags = nullptr) {
  Diagnostics local;
  return read_file((golden_seed_dir() / name).string(), diags ? *diags : local);
}

std::vector<std::string> port_names(const ir::Graph& g, ir::OpId op, ir::PortDir d) {
  std::vector<std::string> out;
  for (ir::PortId p : g.ports(op, d)) out.emplace_back(g.port_name_str(p));
  return out;
}

std::vector<std::string> child_names(const ir::Graph& g, ir::OpId scope) {
  std::vector<std::string> out;
  for (ir::OpId c = g.first_child(scope); c; c = g.next_sibling(c)) out.emplace_back(g.name_str(c));
  return out;
}

using Names = std::vector<std::string>;

TEST(SeedStructure, OpF) {
  Document doc = read_seed("op_f.yaml");
  const ir::Graph& g = doc.graph;
  ASSERT_EQ(doc.kind, Document::Kind::Op);
  EXPECT_EQ(g.name_str(g.root()), "f");
  EXPECT_EQ(port_names(g, g.root(), ir::PortDir::In), (Names{"x", "y"}));
  EXPECT_EQ(port_names(g, g.root(), ir::PortDir::Out), (Names{"m", "n"}));
  EXPECT_EQ(g.child_count(g.root()), 0u);
  // An op document has no body of its own: nothing like `ops: []` is invented.
  EXPECT_EQ(to_text(doc, Format::Yaml).find("ops:"), std::string::npos);
}

TEST(SeedStructure, AttrNameIsTheBuiltinName) {
  Document doc = read_seed("attr_g.yaml");
  const ir::Graph& g = doc.graph;
  EXPECT_EQ(g.name_str(g.root()), "g");
  EXPECT_TRUE(g.attrs(g.root()).empty()) << "the builtin 'name' must not also become an ordinary attribute";
  EXPECT_EQ(to_text(doc, Format::Yaml), "op:\n  name: g\n");
}

TEST(SeedStructure, Edges) {
  Document data = read_seed("edge_data.yaml");
  ASSERT_EQ(data.kind, Document::Kind::Edge);
  EXPECT_EQ(data.edge.src_op, "f");
  EXPECT_EQ(data.edge.src_port, "m");
  EXPECT_EQ(data.edge.dst_op, "g");
  EXPECT_EQ(data.edge.dst_port, "z");
  Document control = read_seed("edge_control.yaml");
  EXPECT_EQ(control.edge.src_port, "^control");
  EXPECT_EQ(control.edge.dst_port, "^control");
}

TEST(SeedStructure, GraphFG) {
  Document doc = read_seed("graph_fg.yaml");
  const ir::Graph& g = doc.graph;
  ASSERT_EQ(doc.kind, Document::Kind::Graph);
  EXPECT_EQ(child_names(g, g.root()), (Names{"f", "g"}));
  ASSERT_EQ(g.edge_count(), 1u);
  ir::OpId gop = g.find_op(g.root(), "g");
  ir::PortId z = g.inputs(gop)[0];
  EXPECT_EQ(g.path(g.producer(z)), "f:output m");
}

TEST(SeedStructure, SubgraphOpH) {
  Document doc = read_seed("op_h.yaml");
  const ir::Graph& g = doc.graph;
  ir::OpId h = g.root();
  EXPECT_EQ(child_names(g, h), (Names{"f", "g"}));
  EXPECT_EQ(g.edge_count(), 4u);
  // Inside h, its input ports send and its output ports receive.
  ir::OpId f = g.find_op(h, "f");
  EXPECT_EQ(g.producer(g.inputs(f)[0]), g.inputs(h)[0]);
  EXPECT_EQ(g.producer(g.inputs(f)[1]), g.inputs(h)[1]);
  EXPECT_EQ(g.path(g.producer(g.outputs(h)[0])), "g:output k");
}

TEST(SeedStructure, TensorFlowGraph) {
  Document doc = read_seed("tf_graph.yaml");
  const ir::Graph& g = doc.graph;
  EXPECT_EQ(g.str(g.graph_namespace(g.root())), "amanda/tensorflow/1.13.1");
  EXPECT_EQ(child_names(g, g.root()), (Names{"Placeholder", "dense/kernel", "dense/MatMul", "dense/Relu"}));
  EXPECT_EQ(g.edge_count(), 3u);
  const ir::Value* versions = g.attr(g.root(), g.symbols().find("versions"));
  ASSERT_TRUE(versions && versions->is_map());
  EXPECT_EQ(*versions->find("producer"), ir::Value(27));
  ir::OpId var = g.find_op(g.root(), "dense/kernel");
  EXPECT_EQ(g.type_str(var), "VariableV2");
  EXPECT_EQ(*g.attr(var, g.symbols().find("shape")), ir::Value(ir::Value::List{784, 10}));
  EXPECT_EQ(*g.attr(var, g.symbols().find("container")), ir::Value(""));
  EXPECT_EQ(*g.attr(g.outputs(var)[0], g.symbols().find("is_ref")), ir::Value(true));
}

TEST(SeedStructure, TensorFlowDenseSubgraph) {
  Document doc = read_seed("tf_dense_op.yaml");
  const ir::Graph& g = doc.graph;
  EXPECT_EQ(g.type_str(g.root()), "Dense");
  EXPECT_EQ(g.name_str(g.root()), "fc");
  EXPECT_EQ(child_names(g, g.root()), (Names{"dense/kernel", "dense/MatMul", "dense/Relu"}));
  EXPECT_EQ(g.edge_count(), 4u);
  EXPECT_EQ(*g.attr(g.root(), g.symbols().find("activation")), ir::Value("tf.nn.relu"));
  EXPECT_EQ(*g.attr(g.root(), g.symbols().find("use_bias")), ir::Value(false));
}

TEST(SeedStructure, PyTorchGraphWithMisspeltEdgeKeys) {
  Diagnostics diags;
  Document doc = read_seed("pytorch_graph.yaml", &diags);
  // The seed writes `input_ports` in its edges where it means `input_port`: accepted, with a
  // warning for each of the five edges.
  EXPECT_EQ(diags.warning_count(), 5u) << diags.str();
  EXPECT_EQ(diags.error_count(), 0u);
  EXPECT_NE(diags.items()[0].message.find("'input_ports' should be 'input_port'"), std::string::npos);
  EXPECT_NE(diags.items()[0].where.find("pytorch_graph.yaml:44:7"), std::string::npos) << diags.items()[0].where;
  const ir::Graph& g = doc.graph;
  EXPECT_EQ(g.name_str(g.root()), "graph");
  EXPECT_EQ(g.str(g.graph_namespace(g.root())), "amanda/pytorch/1.4.0");
  EXPECT_EQ(child_names(g, g.root()), (Names{"_0", "_1", "_2", "_3"}));
  EXPECT_EQ(g.edge_count(), 5u);
  ir::OpId matmul = g.find_op(g.root(), "_2");
  EXPECT_EQ(g.type_str(matmul), "aten::matmul");
  EXPECT_EQ(g.producer(g.inputs(matmul)[0]), g.inputs(g.root())[0]);  // graph:input.1 -> _2:_0
  EXPECT_EQ(g.path(g.producer(g.inputs(matmul)[1])), "_1:output 7");
  EXPECT_EQ(g.path(g.producer(g.outputs(g.root())[0])), "_3:output 9");
  // Names the seed gave explicitly ("_0" included) are written back; "10" must stay a string.
  std::string yaml = to_text(doc, Format::Yaml);
  EXPECT_NE(yaml.find("name: _0\n"), std::string::npos);
  EXPECT_NE(yaml.find("name: \"10\"\n"), std::string::npos);
  EXPECT_EQ(yaml.find("input_ports: {"), std::string::npos);
}

}  // namespace
}  // namespace amanda::text
