// The examples of docs/namespaces.md work: every complete schema loads, the imports example
// validates with only the unknown custom domain reported.
#include <gtest/gtest.h>

#include "schema_test_util.h"

namespace amanda::schema::testing {
namespace {

std::vector<std::string> yaml_blocks() {
  std::string doc = slurp(test_data().parent_path() / "docs" / "namespaces.md");
  std::vector<std::string> out;
  for (size_t at = 0; (at = doc.find("```yaml\n", at)) != std::string::npos;) {
    size_t end = doc.find("```", at + 8);
    out.push_back(doc.substr(at + 8, end - at - 8));
    at = end + 3;
  }
  return out;
}

TEST(DocsExamples, CompleteSchemasLoad) {
  TypeSystems types;
  size_t schemas = 0;
  for (const auto& b : yaml_blocks()) {
    if (b.rfind("namespace:\n  name: amanda/", 0) != 0) continue;
    if (b.find("NAME: attr_type") != std::string::npos) continue;  // the format's outline, not an example
    EXPECT_NO_THROW(parse_schema(b, types)) << b;
    ++schemas;
  }
  EXPECT_GE(schemas, 1u);
}

TEST(DocsExamples, ImportsExample) {
  auto reg = tool_registry();
  size_t graphs = 0;
  for (const auto& b : yaml_blocks()) {
    if (b.rfind("graph:", 0) != 0 || b.find("imports") == std::string::npos) continue;
    ++graphs;
    Validated v = validate_text(b, *reg);
    EXPECT_EQ(v.result.ops_checked, 3u);
    EXPECT_EQ(v.diags.error_count(), 1u) << v.messages();
    EXPECT_NE(v.messages().find("c: error: op type 'com.example::Custom'"), std::string::npos) << v.messages();
  }
  EXPECT_EQ(graphs, 1u);
}

}  // namespace
}  // namespace amanda::schema::testing
