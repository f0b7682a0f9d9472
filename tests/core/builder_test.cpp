// The amanda/core builder, golden tests in the style of the nGraph seed (ngraph-graph-basics.rst):
// f(a, b, c) = (a + b) * c builds with every output typed; mismatched shapes and element types
// throw with the op's path; there is no implicit broadcast, and Broadcast makes one explicit.
#include <gtest/gtest.h>

#include "amanda/core/builder.h"
#include "amanda/ir/verify.h"
#include "amanda/support/diagnostics.h"
#include "amanda/text/document.h"

namespace amanda::core {
namespace {

using ir::DType;

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(CoreBuilder, SeedExampleBuildsWithTypes) {
  Function f;
  Shape shape{32, 32};
  auto a = f.parameter(DType::Float32, shape, "a");
  auto b = f.parameter(DType::Float32, shape, "b");
  auto c = f.parameter(DType::Float32, shape, "c");
  auto t0 = add(a, b);
  auto t1 = multiply(t0, c);
  f.result(t1, "f");
  EXPECT_EQ(t0.type_str(), "float32[32, 32]");
  EXPECT_EQ(t1.type_str(), "float32[32, 32]");
  ASSERT_EQ(f.results().size(), 1u);
  EXPECT_EQ(f.results()[0].type_str(), "float32[32, 32]");
  // One data structure: the ops are ir ops of the function's graph, in amanda/core.
  ir::Graph& g = f.graph();
  EXPECT_EQ(g.str(g.graph_namespace(g.root())), "amanda/core");
  EXPECT_EQ(g.op_count(), 2u);
  EXPECT_EQ(g.type_str(t1.op()), "Multiply");
  EXPECT_EQ(g.port_role(a.port()), ir::PortRole::GraphInput);
  Diagnostics vd;
  EXPECT_TRUE(ir::verify(g, vd));
  // Its YAML says the types, and reads back typed.
  text::Document doc;
  doc.graph = std::move(g);
  std::string yaml = text::to_text(doc, text::Format::Yaml);
  EXPECT_NE(yaml.find("\"@type\": float32"), std::string::npos) << yaml;
  Diagnostics d;
  auto again = text::parse(yaml, text::Format::Yaml, "f.yaml", d);
  Function back(again.graph);
  EXPECT_EQ(back.results()[0].type_str(), "float32[32, 32]");
}

TEST(CoreBuilder, MismatchedShapesThrowWithThePath) {
  Function f;
  auto a = f.parameter(DType::Float32, {32, 32}, "a");
  auto v = f.parameter(DType::Float32, {32}, "v");
  size_t before = f.graph().op_count();
  EXPECT_EQ(message_of([&] { add(a, v, "sum"); }),
            "sum: amanda/core Add: shapes differ: a is float32[32, 32], b is float32[32] (no implicit broadcast: use Broadcast)");
  EXPECT_EQ(f.graph().op_count(), before);  // nothing was created
  // The same with an explicit Broadcast of v along axis 0.
  auto vb = broadcast(v, {32, 32}, {0});
  EXPECT_EQ(vb.type_str(), "float32[32, 32]");
  EXPECT_EQ(add(a, vb).type_str(), "float32[32, 32]");
}

TEST(CoreBuilder, NoImplicitConversion) {
  Function f;
  auto a = f.parameter(DType::Float32, {4}, "a");
  auto i = f.parameter(DType::Int32, {4}, "i");
  EXPECT_EQ(message_of([&] { multiply(a, i, "m"); }),
            "m: amanda/core Multiply: element types differ: a is float32[4], b is int32[4] (no implicit conversion: use Convert)");
  EXPECT_EQ(multiply(a, convert(i, DType::Float32)).type_str(), "float32[4]");
  EXPECT_EQ(message_of([&] { exp(i, "e"); }), "e: amanda/core Exp: x is int32[4]: a floating-point element type is expected");
}

TEST(CoreBuilder, SymbolicDimensionsFlow) {
  Function f;
  ir::Graph& g = f.graph();
  auto x = f.parameter(DType::Float32, PartialShape({ir::Dim::symbol(g.sym("N")), ir::Dim::known(784)}), "x");
  auto w = f.parameter(DType::Float32, {784, 100}, "w");
  auto y = relu(dot(x, w));
  EXPECT_EQ(y.type_str(), "float32[N, 100]");
  auto other = f.parameter(DType::Float32, PartialShape({ir::Dim::symbol(g.sym("M")), ir::Dim::known(100)}), "o");
  EXPECT_NE(message_of([&] { add(y, other, "s"); }).find("shapes differ"), std::string::npos);
  EXPECT_EQ(message_of([&] { dot(w, w, "d"); }),
            "d: amanda/core Dot: inner dimensions differ: a is float32[784, 100], b is float32[784, 100]");
}

TEST(CoreBuilder, BroadcastAndReshapeCheckTheirAttributes) {
  Function f;
  auto v = f.parameter(DType::Float32, {3}, "v");
  EXPECT_EQ(message_of([&] { broadcast(v, {2, 4}, {0}, "b"); }),
            "b: amanda/core Broadcast: x is float32[3] but the shape without the broadcast axes is float32[4]");
  EXPECT_EQ(message_of([&] { broadcast(v, {2, 3}, {2}, "b"); }),
            "b: amanda/core Broadcast: axes must be increasing and less than the rank 2");
  EXPECT_EQ(reshape(broadcast(v, {2, 3}, {0}), {6}).type_str(), "float32[6]");
  EXPECT_EQ(message_of([&] { reshape(v, {2, 2}, "r"); }),
            "r: amanda/core Reshape: x is float32[3] (3 elements) but the shape float32[2, 2] has 4");
}

TEST(CoreBuilder, ParametersAndResultsAreChecked) {
  Function f;
  f.parameter(DType::Float32, {1}, "a");
  EXPECT_EQ(message_of([&] { f.parameter(DType::Float32, {1}, "a"); }), "amanda/core: Parameter 'a' already exists");
  Function other;
  auto x = other.parameter(DType::Float32, {1}, "x");
  EXPECT_EQ(message_of([&] { f.result(x); }), "amanda/core: a result must be a value of this function");
  auto a = f.parameters()[0];
  EXPECT_EQ(message_of([&] { add(a, x); }), "amanda/core Add: inputs from two different graphs");
}

}  // namespace
}  // namespace amanda::core
