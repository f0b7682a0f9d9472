// The tool's schema commands: amanda schema list|show|export, amanda validate, with --schema,
// --namespace and $AMANDA_SCHEMA_PATH. Exit codes: 0 fine, 1 invalid input, 2 wrong usage.
#include <gtest/gtest.h>

#include "schema_test_util.h"

namespace amanda::schema::testing {
namespace {

std::vector<std::string> lines(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

std::string seed(const char* name) { return (golden_seed_dir() / name).string(); }

constexpr const char* kCustom = R"(namespace:
  name: amanda/custom/2
  type_system: python
  op_schemas:
    - type: Scale
      attrs:
        factor: { type: float, default: 1.0 }
      input_ports:
        - attrs: { name: { type: str, constant: x } }
      output_ports:
        - attrs: { name: { type: str, constant: y } }
)";

constexpr const char* kCustomGraph = R"(graph:
  namespace: amanda/custom/2
  ops:
    - type: Scale
      name: s
      attrs: { factor: 2 }
      input_ports: [{ name: x }]
      output_ports: [{ name: y }]
)";

TEST(SchemaList, ListsEveryNamespace) {
  RunResult r = run_amanda({"schema", "list"});
  ASSERT_EQ(r.code, 0) << r.err;
  auto l = lines(r.out);
  for (const char* n : {"amanda/onnx/1", "amanda/onnx/17", "amanda/onnx/ai.onnx.ml/3", "amanda/onnx/ai.onnx.preview.training/1",
                        "amanda/pytorch/1.4.0", "amanda/tensorflow/1.13.1"})
    EXPECT_NE(std::find(l.begin(), l.end(), n), l.end()) << n;
  EXPECT_GE(l.size(), 24u);
}

TEST(SchemaList, UnderAPrefix) {
  RunResult r = run_amanda({"schema", "list", "amanda/onnx/ai.onnx.ml"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "amanda/onnx/ai.onnx.ml/1\namanda/onnx/ai.onnx.ml/2\namanda/onnx/ai.onnx.ml/3\n");
  r = run_amanda({"schema", "list", "amanda/nothing"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, "amanda: error: no namespace under 'amanda/nothing'\n");
}

TEST(SchemaList, WithASchemaFileAndTheSearchPath) {
  TempDir tmp;
  spit(tmp / "custom.yaml", kCustom);
  RunResult r = run_amanda({"schema", "list", "amanda/custom", "--schema", (tmp / "custom.yaml").string()});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "amanda/custom/2\n");
  // $AMANDA_SCHEMA_PATH: FOLDER/custom/2.yaml is amanda/custom/2; ':' separates folders.
  TempDir a, b;
  spit(a / "custom/2.yaml", kCustom);
  spit(b / "other/1.yaml", "namespace: {name: amanda/other/1, type_system: python, op_schemas: []}\n");
  r = run_amanda({"schema", "list", "amanda/custom"}, {"AMANDA_SCHEMA_PATH=" + a.path().string() + ":" + b.path().string()});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "amanda/custom/2\n");
  r = run_amanda({"schema", "list", "amanda/other"}, {"AMANDA_SCHEMA_PATH=" + a.path().string() + ":" + b.path().string()});
  EXPECT_EQ(r.out, "amanda/other/1\n");
}

// `schema show` output is golden: tests/golden/schema/show/NAME.txt.
struct ShowCase {
  const char* golden;
  const char* op;
  const char* ns;
};

class SchemaShow : public ::testing::TestWithParam<ShowCase> {};

TEST_P(SchemaShow, MatchesGolden) {
  RunResult r = run_amanda({"schema", "show", GetParam().op, "--namespace", GetParam().ns});
  ASSERT_EQ(r.code, 0) << r.err;
  fs::path golden = golden_schema_dir() / "show" / (std::string(GetParam().golden) + ".txt");
  if (update_golden()) spit(golden, r.out);
  EXPECT_EQ(r.out, slurp(golden));
}

INSTANTIATE_TEST_SUITE_P(Golden, SchemaShow,
                         ::testing::Values(ShowCase{"tensorflow_matmul", "MatMul", "amanda/tensorflow/1.13.1"},
                                           ShowCase{"pytorch_matmul", "aten::matmul", "amanda/pytorch/1.4.0"},
                                           ShowCase{"onnx13_conv", "Conv", "amanda/onnx/13"},
                                           ShowCase{"onnx17_concat", "Concat", "amanda/onnx/17"},
                                           ShowCase{"onnx10_upsample", "Upsample", "amanda/onnx/10"},
                                           ShowCase{"onnx_ml3_label_encoder", "LabelEncoder", "amanda/onnx/ai.onnx.ml/3"}),
                         [](const auto& info) { return std::string(info.param.golden); });

TEST(SchemaShow, Errors) {
  RunResult r = run_amanda({"schema", "show", "Nope", "-n", "amanda/tensorflow/1.13.1"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, "amanda: error: namespace amanda/tensorflow/1.13.1 has no op 'Nope'\n");
  r = run_amanda({"schema", "show", "Conv", "-n", "amanda/nowhere/1"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, "amanda: error: unknown namespace 'amanda/nowhere/1' (see `amanda schema list`)\n");
  r = run_amanda({"schema", "show", "Conv"});  // --namespace is required
  EXPECT_EQ(r.code, 2);
  r = run_amanda({"schema"});
  EXPECT_EQ(r.code, 2);
}

TEST(SchemaExport, ShippedNamespaceLoadsBackEqual) {
  RunResult r = run_amanda({"schema", "export", "amanda/tensorflow/1.13.1"});
  ASSERT_EQ(r.code, 0) << r.err;
  TypeSystems types;
  auto back = parse_namespace(text::parse_tree(r.out, text::Format::Yaml, "stdout"), types);
  auto shipped = read_namespace((shipped_namespaces() / "tensorflow" / "1.13.1.yaml").string(), types);
  ASSERT_EQ(back->ops.size(), shipped->ops.size());
  for (size_t i = 0; i < back->ops.size(); ++i) {
    EXPECT_EQ(back->ops[i]->type, shipped->ops[i]->type);
    EXPECT_TRUE(back->ops[i]->attrs == shipped->ops[i]->attrs) << back->ops[i]->type;
    EXPECT_TRUE(back->ops[i]->inputs == shipped->ops[i]->inputs) << back->ops[i]->type;
    EXPECT_TRUE(back->ops[i]->outputs == shipped->ops[i]->outputs) << back->ops[i]->type;
  }
  // Written to a file by extension, JSON.
  TempDir tmp;
  r = run_amanda({"schema", "export", "amanda/pytorch/1.4.0", "-o", (tmp / "pt.json").string()});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(slurp(tmp / "pt.json").substr(0, 1), "{");
  auto json = read_namespace((tmp / "pt.json").string(), types);
  EXPECT_EQ(json->name, "amanda/pytorch/1.4.0");
  EXPECT_EQ(json->ops.size(), 4u);
}

TEST(SchemaExport, Errors) {
  RunResult r = run_amanda({"schema", "export", "amanda/nowhere/1"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, "amanda: error: unknown namespace 'amanda/nowhere/1' (see `amanda schema list`)\n");
  r = run_amanda({"schema", "export", "amanda/onnx/13", "--to", "xml"});
  EXPECT_EQ(r.code, 2);
}

TEST(Validate, ExitCodes) {
  EXPECT_EQ(run_amanda({"validate", seed("tf_graph.yaml")}).code, 0);
  EXPECT_EQ(run_amanda({"validate", seed("tf_graph.yaml"), "--namespace", "amanda/tensorflow/1.13.1"}).code, 0);
  // Every op is unknown as PyTorch.
  RunResult r = run_amanda({"validate", seed("tf_graph.yaml"), "--namespace", "amanda/pytorch/1.4.0"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("dense/MatMul: error: unknown op type 'MatMul' in namespace amanda/pytorch/1.4.0"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("4 problems in 4 ops"), std::string::npos) << r.err;
  // Wrong usage.
  r = run_amanda({"validate", seed("tf_graph.yaml"), "--namespace", "amanda/nowhere/1"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "amanda: error: unknown namespace 'amanda/nowhere/1' (see `amanda schema list`)\n");
  EXPECT_EQ(run_amanda({"validate"}).code, 2);
  EXPECT_EQ(run_amanda({"validate", seed("tf_graph.yaml"), "--bogus"}).code, 2);
  // Unreadable or namespace-less input.
  TempDir tmp;
  r = run_amanda({"validate", (tmp / "missing.yaml").string()});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("missing.yaml"), std::string::npos) << r.err;
  r = run_amanda({"validate", seed("graph_fg.yaml")});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, seed("graph_fg.yaml") + ": error: the graph names no namespace; give one with --namespace NS\n");
  r = run_amanda({"validate", seed("tf_dense_op.yaml")});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, seed("tf_dense_op.yaml") + ": error: an op document names no namespace; give one with --namespace NS\n");
}

TEST(Validate, SummaryTable) {
  RunResult r = run_amanda({"validate", seed("tf_graph.yaml"), "--summary"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out,
            "     ops problems  namespace op-type\n"
            "       1        0  amanda/tensorflow/1.13.1 MatMul\n"
            "       1        0  amanda/tensorflow/1.13.1 Placeholder\n"
            "       1        0  amanda/tensorflow/1.13.1 Relu\n"
            "       1        0  amanda/tensorflow/1.13.1 VariableV2\n" +
                seed("tf_graph.yaml") + ": valid (4 ops)\n");
}

TEST(Validate, WithSchemaFilesAndTheSearchPath) {
  TempDir tmp;
  spit(tmp / "custom.yaml", kCustom);
  spit(tmp / "graph.yaml", kCustomGraph);
  std::string graph = (tmp / "graph.yaml").string();
  RunResult r = run_amanda({"validate", graph});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("<graph>: error: unknown namespace 'amanda/custom/2'"), std::string::npos) << r.err;
  r = run_amanda({"validate", graph, "--schema", (tmp / "custom.yaml").string()});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, graph + ": valid (1 ops)\n");

  TempDir path;
  spit(path / "custom/2.yaml", kCustom);
  r = run_amanda({"validate", graph}, {"AMANDA_SCHEMA_PATH=" + path.path().string()});
  EXPECT_EQ(r.code, 0) << r.err;

  // A file on the search path that declares another namespace than its place: a clear error.
  TempDir liar;
  spit(liar / "custom/2.yaml", "namespace:\n  name: amanda/custom/3\n  type_system: python\n");
  r = run_amanda({"validate", graph}, {"AMANDA_SCHEMA_PATH=" + liar.path().string()});
  EXPECT_EQ(r.code, 1);
  std::string file = (liar / "custom/2.yaml").string();
  EXPECT_EQ(r.err, file + ":2:3: error: file " + file + " is where namespace amanda/custom/2 should be, but it declares amanda/custom/3\n");

  // Two --schema files; a later one replaces a namespace of the same name.
  spit(tmp / "strict.yaml", std::string(kCustom).replace(std::string(kCustom).find("factor: { type: float, default: 1.0 }"),
                                                          37, "factor: { type: int, default: 1 }"));
  r = run_amanda({"validate", graph, "--schema", (tmp / "custom.yaml").string(), "--schema", (tmp / "strict.yaml").string()});
  EXPECT_EQ(r.code, 0) << r.err;  // factor: 2 is an int too
}

TEST(Validate, ImportsSeveralDomains) {
  RunResult r = run_amanda({"validate", (golden_schema_dir() / "violations" / "onnx_imports.yaml").string(), "--summary"});
  EXPECT_EQ(r.code, 1);
  // Each op under its own namespace in the table.
  EXPECT_NE(r.out.find("       1        2  amanda/onnx/ai.onnx.ml/1 LabelEncoder\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("       1        0  amanda/onnx/ai.onnx.ml/1 Normalizer\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("       2        2  amanda/onnx/com.example/1 Custom\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("       1        0  amanda/onnx/13 Relu\n"), std::string::npos) << r.out;
  // With a schema for com.example, its ops resolve there.
  TempDir tmp;
  spit(tmp / "example.yaml", "namespace:\n  name: amanda/onnx/com.example/1\n  type_system: onnx\n  op_schemas:\n    - type: Custom\n");
  r = run_amanda({"validate", (golden_schema_dir() / "violations" / "onnx_imports.yaml").string(), "--schema",
                  (tmp / "example.yaml").string()});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err.find("custom: error"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("encoder: error"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace amanda::schema::testing
