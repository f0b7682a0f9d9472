// The lazy schema index (src/frameworks/onnx/schema_index.h) against libonnx's own registry: for
// every op of the default and ai.onnx.ml domains and every opset up to the last, the same
// schema (since version, name, domain, inputs, outputs, inference function) or none; and a
// lookup builds only the schema asked for, never the registry.
#include <gtest/gtest.h>

#include <set>

#include <onnx/defs/schema.h>

#include "../../src/frameworks/onnx/schema_index.h"

namespace amanda {
namespace {

using onnx_frontend::detail::built_schema_count;
using onnx_frontend::detail::schema;

// Runs first in this binary (gtest order within a file); the registry is not yet built by it.
TEST(SchemaIndex, BuildsOnlyWhatIsAsked) {
  size_t before = built_schema_count();
  const onnx::OpSchema* a = schema("Relu", 13, "");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->Name(), "Relu");
  EXPECT_EQ(a->SinceVersion(), 13);
  EXPECT_EQ(schema("Relu", 13, ""), a);  // cached: the same object
  EXPECT_EQ(schema("Relu", 13, ""), schema("Relu", 13, ""));
  const onnx::OpSchema* b = schema("Relu", 12, "");  // Relu 6 (no Relu 7..12)
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->SinceVersion(), 6);
  EXPECT_LE(built_schema_count(), before + 2);
  EXPECT_EQ(schema("NoSuchOp", 17, ""), nullptr);
  EXPECT_EQ(schema("LayerNormalization", 16, ""), nullptr);  // only since 17
  EXPECT_EQ(schema("Relu", 13, "ai.onnx.ml"), nullptr);
}

TEST(SchemaIndex, SameAsLibonnxRegistryForEveryOpAndOpset) {
  std::set<std::pair<std::string, std::string>> ops;
  for (const auto& s : onnx::OpSchemaRegistry::get_all_schemas_with_history())
    if (s.domain().empty() || s.domain() == "ai.onnx.ml") ops.insert({s.Name(), s.domain()});
  ASSERT_GT(ops.size(), 180u);
  int compared = 0, found = 0;
  for (const auto& [op, domain] : ops) {
    int last = domain.empty() ? 17 : 3;
    for (int v = 1; v <= last + 1; ++v) {
      const onnx::OpSchema* want = onnx::OpSchemaRegistry::Schema(op, v, domain);
      const onnx::OpSchema* got = schema(op, v, domain);
      ++compared;
      if (!want) {
        EXPECT_EQ(got, nullptr) << op << " " << domain << " " << v;
        continue;
      }
      ++found;
      ASSERT_NE(got, nullptr) << op << " " << domain << " " << v;
      EXPECT_EQ(got->Name(), want->Name());
      EXPECT_EQ(got->domain(), want->domain());
      EXPECT_EQ(got->SinceVersion(), want->SinceVersion()) << op << " " << v;
      EXPECT_EQ(got->inputs().size(), want->inputs().size()) << op << " " << v;
      EXPECT_EQ(got->outputs().size(), want->outputs().size()) << op << " " << v;
      EXPECT_EQ(got->min_input(), want->min_input()) << op << " " << v;
      EXPECT_EQ(got->max_output(), want->max_output()) << op << " " << v;
      EXPECT_EQ(got->has_type_and_shape_inference_function(), want->has_type_and_shape_inference_function());
      EXPECT_EQ(got->HasFunction(), want->HasFunction()) << op << " " << v;
      EXPECT_EQ(got->Deprecated(), want->Deprecated()) << op << " " << v;
    }
  }
  EXPECT_GT(found, 2000);
  EXPECT_GT(compared, found);
}

}  // namespace
}  // namespace amanda
