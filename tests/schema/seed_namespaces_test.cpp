// The seed's two namespace examples (amanda-design.md, "Namespace"), shipped unchanged in
// namespaces/, validate the seed's example graphs cleanly.
#include <gtest/gtest.h>

#include "schema_test_util.h"

namespace amanda::schema::testing {
namespace {

// The YAML block of the design document that follows `marker`.
std::string seed_block(const std::string& doc, const std::string& marker) {
  size_t at = doc.find(marker);
  if (at == std::string::npos) return {};
  size_t open = doc.find("```yaml\n", at);
  size_t close = doc.find("```", open + 8);
  return doc.substr(open + 8, close - open - 8);
}

// The file without its leading comment lines.
std::string without_comments(const std::string& s) {
  std::string out;
  std::istringstream in(s);
  for (std::string line; std::getline(in, line);)
    if (line.rfind("#", 0) != 0) out += line + "\n";
  return out;
}

TEST(SeedNamespaces, ShippedFilesAreTheSeedsExamplesUnchanged) {
  fs::path design = fs::path(AMANDA_SEEDS) / "amanda-design.md";
  if (!fs::exists(design)) GTEST_SKIP() << "no seed document at " << design;
  std::string doc = slurp(design);
  std::string tf = seed_block(doc, "For example, a minimal namespace schema for the TensorFlow graph");
  std::string pt = seed_block(doc, "A minimal namespace schema for the PyTorch graph");
  ASSERT_FALSE(tf.empty());
  ASSERT_FALSE(pt.empty());
  EXPECT_EQ(without_comments(slurp(shipped_namespaces() / "tensorflow" / "1.13.1.yaml")), tf);
  EXPECT_EQ(without_comments(slurp(shipped_namespaces() / "pytorch" / "1.4.0.yaml")), pt);
  // The golden copies are the same files.
  EXPECT_EQ(slurp(test_data() / "golden" / "seed_namespaces" / "tensorflow_1.13.1.yaml"),
            slurp(shipped_namespaces() / "tensorflow" / "1.13.1.yaml"));
  EXPECT_EQ(slurp(test_data() / "golden" / "seed_namespaces" / "pytorch_1.4.0.yaml"),
            slurp(shipped_namespaces() / "pytorch" / "1.4.0.yaml"));
}

TEST(SeedNamespaces, Load) {
  TypeSystems types;
  auto tf = read_namespace((shipped_namespaces() / "tensorflow" / "1.13.1.yaml").string(), types);
  EXPECT_EQ(tf->name, "amanda/tensorflow/1.13.1");
  EXPECT_EQ(tf->type_system, "python");
  ASSERT_EQ(tf->ops.size(), 4u);
  const OpSchema* mm = tf->find("MatMul");
  ASSERT_NE(mm, nullptr);
  ASSERT_EQ(mm->inputs.size(), 2u);
  EXPECT_EQ(mm->inputs[0].expected_name(), "a");
  EXPECT_EQ(mm->inputs[1].expected_name(), "b");
  EXPECT_EQ(mm->outputs[0].expected_name(), "product");
  const AttrSchema* t = mm->attr("T");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->type.form, AttrType::Form::OneOf);
  EXPECT_EQ(t->type.options.size(), 8u);  // complex64 twice, as the seed has it
  EXPECT_TRUE(t->type.required());
  const AttrSchema* ta = mm->attr("transpose_a");
  ASSERT_NE(ta, nullptr);
  EXPECT_EQ(ta->type.form, AttrType::Form::Default);
  EXPECT_EQ(ta->type.value, ir::Value(false));
  EXPECT_FALSE(ta->type.required());

  auto pt = read_namespace((shipped_namespaces() / "pytorch" / "1.4.0.yaml").string(), types);
  EXPECT_EQ(pt->name, "amanda/pytorch/1.4.0");
  EXPECT_EQ(pt->type_system, "torchscript");
  ASSERT_EQ(pt->ops.size(), 4u);
  for (const char* op : {"prim::Param", "aten::t", "aten::matmul", "aten::relu"}) EXPECT_NE(pt->find(op), nullptr) << op;
  EXPECT_EQ(pt->find("aten::matmul")->inputs.size(), 2u);
}

TEST(SeedNamespaces, TheRegistryFindsThemByFolder) {
  Registry reg;
  reg.add_folder(shipped_namespaces().string());
  // (namespaces/caffe2/1.13.yaml is the generated Caffe2 namespace, a YAML file like the seed's)
  EXPECT_EQ(reg.list(), (std::vector<std::string>{"amanda/caffe2/1.13", "amanda/pytorch/1.4.0", "amanda/tensorflow/1.13.1"}));
  EXPECT_EQ(reg.loaded_count(), 0u);  // nothing read yet
  EXPECT_NE(reg.find("amanda/tensorflow/1.13.1"), nullptr);
  EXPECT_EQ(reg.loaded_count(), 1u);
}

struct SeedCase {
  const char* file;
  size_t ops;
};

class SeedGraphs : public ::testing::TestWithParam<SeedCase> {};

TEST_P(SeedGraphs, ValidateCleanly) {
  auto reg = tool_registry();
  Diagnostics read;
  text::Document doc = text::read_file((golden_seed_dir() / GetParam().file).string(), read);
  Diagnostics diags;
  ValidationResult r = validate(doc.graph, *reg, diags);
  EXPECT_TRUE(r.ok()) << diags.str();
  EXPECT_TRUE(diags.empty()) << diags.str();
  EXPECT_EQ(r.ops_checked, GetParam().ops);
}

INSTANTIATE_TEST_SUITE_P(Seed, SeedGraphs,
                         ::testing::Values(SeedCase{"tf_graph.yaml", 4}, SeedCase{"pytorch_graph.yaml", 4}),
                         [](const auto& info) {
                           std::string n = info.param.file;
                           return n.substr(0, n.find('.'));
                         });

// The seed's Dense op holds TensorFlow ops in its body: they validate; Dense itself is not a
// TensorFlow op of the minimal namespace, and is reported as such.
TEST(SeedGraphs, DenseOpBodyValidatesAsTensorFlow) {
  auto reg = tool_registry();
  Diagnostics read;
  text::Document doc = text::read_file((golden_seed_dir() / "tf_dense_op.yaml").string(), read);
  Diagnostics diags;
  ValidateOptions opt;
  opt.namespace_override = "amanda/tensorflow/1.13.1";
  ValidationResult r = validate(doc.graph, *reg, diags, opt);
  EXPECT_EQ(r.ops_checked, 4u);
  EXPECT_EQ(diags.str(), "fc: error: unknown op type 'Dense' in namespace amanda/tensorflow/1.13.1\n");
}

// The other seed examples name no namespace: nothing to check, nothing reported.
TEST(SeedGraphs, DocumentsWithoutNamespaceAreNotChecked) {
  auto reg = tool_registry();
  for (const char* f : {"graph_fg.yaml", "op_f.yaml", "op_h.yaml", "attr_g.yaml"}) {
    Diagnostics read;
    text::Document doc = text::read_file((golden_seed_dir() / f).string(), read);
    Diagnostics diags;
    ValidationResult r = validate(doc.graph, *reg, diags);
    EXPECT_TRUE(r.ok()) << f << "\n" << diags.str();
    EXPECT_EQ(r.ops_checked, 0u) << f;
  }
}

// Both graphs, through the tool.
TEST(SeedGraphs, ToolSaysValid) {
  for (const char* f : {"tf_graph.yaml", "pytorch_graph.yaml"}) {
    RunResult r = run_amanda({"validate", (golden_seed_dir() / f).string()});
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find(std::string(f) + ": valid (4 ops)"), std::string::npos) << r.out;
  }
}

}  // namespace
}  // namespace amanda::schema::testing
