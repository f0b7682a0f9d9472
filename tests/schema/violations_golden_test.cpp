// Golden validation messages: tests/golden/schema/violations/NAME.yaml is validated (with the
// namespaces of violations/schemas/ added, as `--schema` would) and its messages must equal
// NAME.expected.txt. AMANDA_UPDATE_GOLDEN=1 rewrites the expected files (then read them!).
#include <gtest/gtest.h>

#include <regex>

#include "schema_test_util.h"

namespace amanda::schema::testing {
namespace {

fs::path violations_dir() { return golden_schema_dir() / "violations"; }

std::vector<std::string> cases() {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(violations_dir()))
    if (e.is_regular_file() && e.path().extension() == ".yaml") out.push_back(e.path().stem().string());
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> schema_files() {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(violations_dir() / "schemas"))
    if (e.path().extension() == ".yaml") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> lines(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);)
    if (!l.empty()) out.push_back(l);
  return out;
}

std::string messages_of(const std::string& name) {
  auto reg = tool_registry();
  for (const auto& f : schema_files()) reg->add(read_namespace(f, reg->type_systems()));
  Diagnostics read;
  text::Document doc = text::read_file((violations_dir() / (name + ".yaml")).string(), read);
  EXPECT_FALSE(read.has_errors()) << read.str();
  Diagnostics diags;
  ValidationResult r = validate(doc.graph, *reg, diags);
  EXPECT_EQ(r.problems, diags.error_count()) << name;
  return diags.str();
}

class Violations : public ::testing::TestWithParam<std::string> {};

TEST_P(Violations, MessagesMatchGolden) {
  const std::string name = GetParam();
  std::string actual = messages_of(name);
  fs::path expected_path = violations_dir() / (name + ".expected.txt");
  if (update_golden()) spit(expected_path, actual);
  ASSERT_TRUE(fs::exists(expected_path)) << "no " << expected_path << "; run with AMANDA_UPDATE_GOLDEN=1";
  EXPECT_EQ(actual, slurp(expected_path)) << name;
  EXPECT_FALSE(actual.empty()) << name << ": a violation case must report something";
  // Every message names where (an op, port or graph path) before ": error: ".
  for (const auto& l : lines(actual)) {
    size_t p = l.find(": error: ");
    EXPECT_NE(p, std::string::npos) << l;
    EXPECT_GT(p, 0u) << "no path in: " << l;
  }
}

// The same messages through the tool, on standard error, with exit code 1.
TEST_P(Violations, ToolReportsThemAndExitsOne) {
  const std::string name = GetParam();
  std::vector<std::string> args = {"validate", (violations_dir() / (name + ".yaml")).string()};
  for (const auto& f : schema_files()) {
    args.push_back("--schema");
    args.push_back(f);
  }
  RunResult r = run_amanda(args);
  EXPECT_EQ(r.code, 1) << r.err;
  for (const auto& l : lines(slurp(violations_dir() / (name + ".expected.txt"))))
    EXPECT_NE(r.err.find(l + "\n"), std::string::npos) << "missing: " << l << "\nin:\n" << r.err;
  // The per-op-type table goes to standard output.
  EXPECT_NE(r.out.find("namespace op-type"), std::string::npos) << r.out;
}

INSTANTIATE_TEST_SUITE_P(Golden, Violations, ::testing::ValuesIn(cases()), [](const auto& info) { return info.param; });

// The issue's list: the golden files show a message for each kind of violation.
TEST(Violations, EveryKindHasAGoldenMessage) {
  std::string all;
  for (const auto& c : cases()) {
    fs::path p = violations_dir() / (c + ".expected.txt");
    if (fs::exists(p)) all += slurp(p);
  }
  struct Kind {
    const char* name;
    const char* pattern;
  };
  const Kind kinds[] = {
      {"unknown op", R"(dense/Softmax: error: unknown op type 'Softmax' in namespace amanda/tensorflow/1\.13\.1)"},
      {"unknown attribute", R"(dense/MatMul: error: unknown attribute 'use_cudnn' on op type MatMul \(its attributes: T, transpose_a, transpose_b\))"},
      {"missing attribute", R"(dense/kernel: error: missing attribute 'shape' \(of type 'tensorflow\.TensorShape'\), which op type VariableV2 requires)"},
      {"wrong type", R"(dense/MatMul: error: attribute 'transpose_a': wrong type: 1 is not of type 'bool')"},
      {"constant mismatch", R"(dense/kernel:output ref: error: attribute 'is_ref': constant mismatch: must be true, found false)"},
      {"one_of mismatch", R"(dense/MatMul: error: attribute 'T': one_of mismatch: 'string' is not one of \('bfloat16', 'half', 'float', 'double', 'int32', 'int64', 'complex64'\))"},
      {"wrong port name", R"(dense/MatMul:input b: error: wrong port name: input port #0 of MatMul is named 'b', the schema says 'a')"},
      {"too many ports", R"(dense/Relu: error: too many input ports: Relu has 2 \(the first extra one is 'alpha'\), the schema allows at most 1)"},
  };
  for (const auto& k : kinds) EXPECT_TRUE(std::regex_search(all, std::regex(k.pattern))) << k.name << ": " << k.pattern;
}

// Problems past max_problems_per_type are counted, not printed.
TEST(Violations, ProblemsPerTypeAreCapped) {
  auto reg = tool_registry();
  std::string yaml = "graph:\n  namespace: amanda/tensorflow/1.13.1\n  ops:\n";
  for (int i = 0; i < 5; ++i) yaml += "    - {type: Softmax, name: s" + std::to_string(i) + "}\n";
  yaml += "    - {type: Tanh, name: t}\n";
  ValidateOptions opt;
  opt.max_problems_per_type = 2;
  Validated v = validate_text(yaml, *reg, opt);
  EXPECT_EQ(v.result.problems, 6u);
  EXPECT_EQ(v.diags.error_count(), 3u) << v.messages();
  EXPECT_EQ(v.result.by_type.at("amanda/tensorflow/1.13.1 Softmax").problems, 5u);
  EXPECT_EQ(v.result.by_type.at("amanda/tensorflow/1.13.1 Softmax").ops, 5u);
  EXPECT_EQ(v.result.by_type.at("amanda/tensorflow/1.13.1 Tanh").problems, 1u);
}

// Ops in a nested body and in a graph-valued attribute are checked with their paths; an
// attribute graph may name its own namespace.
TEST(Violations, NestedGraphsAreCheckedWithTheirPaths) {
  auto reg = tool_registry();
  Validated v = validate_text(R"(
graph:
  namespace: amanda/onnx/13
  ops:
    - type: If
      name: branch
      attrs:
        then_branch: !graph
          name: then
          ops:
            - { type: Relu, name: r, input_ports: [{name: X}], output_ports: [{name: Y}] }
            - { type: Bogus, name: b }
        else_branch: !graph
          name: else
          namespace: amanda/tensorflow/1.13.1
          ops:
            - { type: Relu, name: r, attrs: { T: float32 }, input_ports: [{name: X}] }
      input_ports: [{name: cond}]
      output_ports: [{name: outputs}]
)", *reg);
  EXPECT_EQ(v.result.ops_checked, 4u);
  EXPECT_EQ(v.messages(),
            "branch/then/b: error: unknown op type 'Bogus' in namespace amanda/onnx/13 (nor in any earlier version of amanda/onnx)\n"
            "branch/else/r:input X: error: wrong port name: input port #0 of Relu is named 'X', the schema says 'features'\n");
}

}  // namespace
}  // namespace amanda::schema::testing
