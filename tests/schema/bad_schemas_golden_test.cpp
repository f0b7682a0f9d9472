// Bad namespace schema files get a clear error at file:line:column, and the tool exits 1:
// tests/golden/schema/bad_schemas/NAME.yaml must fail with the one line of NAME.expected.txt.
// AMANDA_UPDATE_GOLDEN=1 rewrites the expected files (then read them!).
#include <gtest/gtest.h>

#include <regex>

#include "amanda/io/io.h"
#include "schema_test_util.h"

namespace amanda::schema::testing {
namespace {

fs::path bad_dir() { return golden_schema_dir() / "bad_schemas"; }

std::vector<std::string> cases() {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(bad_dir()))
    if (e.path().extension() == ".yaml") out.push_back(e.path().stem().string());
  std::sort(out.begin(), out.end());
  return out;
}

// The error, with the folder left out so that the golden files do not depend on where the tree is.
// The type systems are the default registry's (the frameworks add theirs, as in the tool).
std::string error_of(const std::string& name) {
  auto reg = io::default_registry();
  try {
    read_namespace((bad_dir() / (name + ".yaml")).string(), reg->type_systems());
  } catch (const ParseError& e) {
    return strip(e.what(), bad_dir().string() + "/") + "\n";
  } catch (const std::exception& e) {
    return std::string("not a ParseError: ") + e.what() + "\n";
  }
  return "no error\n";
}

class BadSchemas : public ::testing::TestWithParam<std::string> {};

TEST_P(BadSchemas, ErrorMatchesGolden) {
  const std::string name = GetParam();
  std::string actual = error_of(name);
  fs::path expected_path = bad_dir() / (name + ".expected.txt");
  if (update_golden()) spit(expected_path, actual);
  ASSERT_TRUE(fs::exists(expected_path)) << "no " << expected_path << "; run with AMANDA_UPDATE_GOLDEN=1";
  EXPECT_EQ(actual, slurp(expected_path));
  // file:line:column: error: ...
  EXPECT_TRUE(std::regex_search(actual, std::regex("^" + name + R"(\.yaml:[0-9]+:[0-9]+: error: .+)"))) << actual;
}

TEST_P(BadSchemas, ToolExitsOneWithTheSameMessage) {
  const std::string name = GetParam();
  std::string path = (bad_dir() / (name + ".yaml")).string();
  std::string expected = slurp(bad_dir() / (name + ".expected.txt"));
  for (const auto& args : {std::vector<std::string>{"schema", "list", "--schema", path},
                           std::vector<std::string>{"validate", (golden_seed_dir() / "tf_graph.yaml").string(), "--schema", path}}) {
    RunResult r = run_amanda(args);
    EXPECT_EQ(r.code, 1) << args[0];
    EXPECT_EQ(strip(r.err, bad_dir().string() + "/"), expected) << args[0];
  }
}

INSTANTIATE_TEST_SUITE_P(Golden, BadSchemas, ::testing::ValuesIn(cases()), [](const auto& info) { return info.param; });

// The issue's list of bad schemas each has a case.
TEST(BadSchemas, TheIssuesKindsAreCovered) {
  auto all = cases();
  for (const char* c : {"unknown_form_list", "unknown_form_key", "one_of_empty", "duplicate_op", "default_wrong_type",
                        "constant_wrong_type", "namespace_not_a_path_empty_part", "namespace_not_a_path_space"})
    EXPECT_NE(std::find(all.begin(), all.end(), c), all.end()) << c;
}

// The same checks apply to JSON schema files, with JSON positions.
TEST(BadSchemas, Json) {
  TempDir tmp;
  spit(tmp / "bad.json", R"({"namespace": {"name": "amanda/j/1", "type_system": "python",
  "op_schemas": [{"type": "A", "attrs": {"k": {"one_of": []}}}]}})");
  TypeSystems types;
  try {
    read_namespace((tmp / "bad.json").string(), types);
    ADD_FAILURE() << "no error";
  } catch (const ParseError& e) {
    EXPECT_EQ(strip(e.what(), tmp.path().string() + "/"), "bad.json:2:58: error: attribute 'k': one_of has no options");
  }
}

}  // namespace
}  // namespace amanda::schema::testing
