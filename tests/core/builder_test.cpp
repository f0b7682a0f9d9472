// The amanda/core builder, golden tests in the style of the nGraph seed (ngraph-graph-basics.rst):
// f(a, b, c) = (a + b) * c builds with every output typed; mismatched shapes and element types
// throw with the op's path; there is no implicit broadcast, and Broadcast makes one explicit.
#include <gtest/gtest.h>

#include "amanda/core/builder.h"
#include "amanda/core/namespace.h"
#include "amanda/interp/executor.h"
#include "amanda/interp/kernel.h"
#include "amanda/io/io.h"
#include "amanda/schema/validate.h"
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

TEST(CoreBuilder, RegisteredOpsCheckTheirTypes) {
  Function f;
  ir::Graph& g = f.graph();
  auto x = f.parameter(DType::Float32, {1, 3, 8, 8}, "x");
  auto w = f.parameter(DType::Float32, {4, 3, 3, 3}, "w");
  ir::Value::List two{ir::Value(int64_t(2)), ir::Value(int64_t(2))};
  ir::Value::List pads{ir::Value(int64_t(1)), ir::Value(int64_t(1)), ir::Value(int64_t(1)), ir::Value(int64_t(1))};
  auto c = op("Convolution", {x, w}, {{g.sym("strides"), ir::Value(two)}, {g.sym("pads"), ir::Value(pads)}});
  EXPECT_EQ(c.type_str(), "float32[1, 4, 4, 4]");
  auto p = op("MaxPool", {c}, {{g.sym("kernel_shape"), ir::Value(two)}, {g.sym("strides"), ir::Value(two)}});
  EXPECT_EQ(p.type_str(), "float32[1, 4, 2, 2]");
  ir::Value::List axes{ir::Value(int64_t(2)), ir::Value(int64_t(3))};
  EXPECT_EQ(op("ReduceMean", {p}, {{g.sym("axes"), ir::Value(axes)}, {g.sym("keepdims"), ir::Value(int64_t(0))}}).type_str(),
            "float32[1, 4]");
  EXPECT_EQ(op("Concat", {c, c, c}, {{g.sym("axis"), ir::Value(int64_t(1))}}).type_str(), "float32[1, 12, 4, 4]");
  auto w5 = f.parameter(DType::Float32, {4, 5, 3, 3}, "w5");
  EXPECT_EQ(message_of([&] { op("Convolution", {x, w5}, {}, "conv"); }),
            "conv: amanda/core Convolution: x has 3 channels but w takes 5 per group of 1");
  EXPECT_EQ(message_of([&] { op("Concat", {c, x}, {{g.sym("axis"), ir::Value(int64_t(1))}}, "cat"); }),
            "cat: amanda/core Concat: inputs.0 is float32[1, 4, 4, 4] but inputs.1 is float32[1, 3, 8, 8]: only the axis 1 may differ");
  EXPECT_EQ(message_of([&] { op("Softmax", {c}, {}, "sm"); }), "sm: amanda/core Softmax: the attribute 'axis' is required");
  auto k = f.constant(ir::Tensor::from_bytes(DType::Int64, {2}, std::string(16, '\0')), "k");
  EXPECT_EQ(k.type_str(), "int64[2]");
}

// The namespace schema is made from the registry: the same ops, nothing kept by hand.
TEST(CoreNamespace, SchemaListsTheRegistry) {
  auto reg = io::default_registry();
  const schema::NamespaceSchema* ns = reg->find("amanda/core");
  ASSERT_NE(ns, nullptr);
  EXPECT_EQ(ns->ops.size(), op_types().size());
  for (auto t : op_types()) EXPECT_NE(ns->find(t), nullptr) << t;
  const schema::OpSchema* conv = ns->find("Convolution");
  ASSERT_NE(conv, nullptr);
  ASSERT_EQ(conv->inputs.size(), 2u);
  EXPECT_EQ(conv->inputs[1].expected_name(), "w");
  ASSERT_NE(conv->attr("group"), nullptr);
  EXPECT_FALSE(conv->attr("group")->type.required());
  EXPECT_EQ(ns->find("Concat")->inputs[0].arity, schema::Arity::Variadic);
  // A built function validates against it.
  Function f;
  auto a = f.parameter(DType::Float32, {2, 3}, "a");
  f.result(relu(add(a, a)), "y");
  Diagnostics d;
  EXPECT_TRUE(schema::validate(f.graph(), *reg, d).ok());
}

// Every op of the namespace runs: the interpreter has a kernel for it, under amanda/core's key.
TEST(CoreNamespace, EveryOpHasAKernel) {
  for (auto t : op_types())
    EXPECT_NE(interp::KernelRegistry::builtin().find(std::string(interp::kCoreNamespace) + "::" + std::string(t), 1), nullptr) << t;
  // and a core op never finds an ONNX kernel by its bare name in a core graph
  EXPECT_EQ(interp::KernelRegistry::builtin().find("amanda/core::Conv", 1), nullptr);
}

// infer_types: a graph made by other means (here: by hand, as a table would) is typed by the
// rules, and an implicit broadcast is reported with the op's path.
TEST(CoreNamespace, InferTypesChecksAGraphMadeByHand) {
  Function f;
  ir::Graph& g = f.graph();
  auto a = f.parameter(DType::Float32, {2, 3}, "a");
  auto v = f.parameter(DType::Float32, {3}, "v");
  ir::OpId add_op = g.create_op(g.root(), g.sym("Add"), g.sym("plus"));
  g.connect(a.port(), g.add_input(add_op, g.sym("a")));
  g.connect(v.port(), g.add_input(add_op, g.sym("b")));
  g.add_output(add_op, g.sym("out"));
  Diagnostics d;
  EXPECT_FALSE(infer_types(g, d));
  ASSERT_EQ(d.items().size(), 1u);
  EXPECT_EQ(d.items()[0].str(), "plus: error: amanda/core Add: shapes differ: a is float32[2, 3], b is float32[3] (no implicit broadcast: use Broadcast)");
  // With the broadcast made explicit it types.
  Function f2;
  ir::Graph& g2 = f2.graph();
  auto a2 = f2.parameter(DType::Float32, {2, 3}, "a");
  auto v2 = f2.parameter(DType::Float32, {3}, "v");
  auto b2 = broadcast(v2, {2, 3}, {0});
  ir::OpId op2 = g2.create_op(g2.root(), g2.sym("Add"), g2.sym("plus"));
  g2.connect(a2.port(), g2.add_input(op2, g2.sym("a")));
  g2.connect(b2.port(), g2.add_input(op2, g2.sym("b")));
  ir::PortId out = g2.add_output(op2, g2.sym("out"));
  Diagnostics d2;
  EXPECT_TRUE(infer_types(g2, d2));
  EXPECT_EQ(ir::format_type(g2, g2.port_type(out)), "float32[2, 3]");
}

}  // namespace
}  // namespace amanda::core
