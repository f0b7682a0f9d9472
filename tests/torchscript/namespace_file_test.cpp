// The compact form of the PyTorch namespace (namespaces/pytorch/<version>.ops): round trip of a
// hand-made namespace with every feature, errors with path:line, the committed file, and (with the
// plugin) that the committed file is exactly what libtorch's registry gives.
#include "frameworks/torchscript/namespace_file.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <functional>
#include <fstream>
#include <sstream>

#include "amanda/frameworks/torch/torchscript.h"
#include "amanda/schema/registry.h"
#include "amanda/support/diagnostics.h"

using namespace amanda;
using amanda::ir::Value;
using schema::Arity;

namespace {

const std::string kFile = std::string(AMANDA_TEST_DATA) + "/../namespaces/pytorch/1.13.ops";

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

schema::AttrType constant_str(const std::string& v) {
  schema::AttrType a;
  a.form = schema::AttrType::Form::Constant;
  a.type = "str";
  a.value = Value(v);
  return a;
}

// A port as the plugin builds it (plugin.cpp, port()), with an optional default.
schema::PortSchema port(const std::string& name, const std::string& type, Arity arity, std::optional<Value> def = {}) {
  schema::PortSchema p;
  p.attrs.push_back({"name", constant_str(name)});
  p.arity = arity;
  p.arity_given = true;
  p.type = type;
  if (arity == Arity::Variadic) p.min_arity = 0;
  if (def) {
    schema::AttrType d;
    d.form = schema::AttrType::Form::Default;
    d.type = "Any";
    d.value = *def;
    p.attrs.push_back({"default", d});
  }
  return p;
}

std::unique_ptr<schema::NamespaceSchema> hand_made() {
  auto ns = std::make_unique<schema::NamespaceSchema>();
  ns->name = "amanda/pytorch/9.9";
  ns->type_system = "torchscript";
  auto op = std::make_unique<schema::OpSchema>();
  op->type = "aten::every";
  op->domain = "aten";
  op->inputs.push_back(port("self", "Tensor", Arity::Single));
  op->inputs.push_back(port("none", "Tensor?", Arity::Optional, Value()));
  op->inputs.push_back(port("yes", "bool", Arity::Optional, Value(true)));
  op->inputs.push_back(port("no", "bool", Arity::Optional, Value(false)));
  op->inputs.push_back(port("i", "int", Arity::Optional, Value(int64_t{-9223372036854775807 - 1})));
  op->inputs.push_back(port("f1", "float", Arity::Optional, Value(0.1)));
  op->inputs.push_back(port("f2", "float", Arity::Optional, Value(1e-05)));
  op->inputs.push_back(port("f3", "float", Arity::Optional, Value(1.0)));
  op->inputs.push_back(port("f4", "float", Arity::Optional, Value(-INFINITY)));
  op->inputs.push_back(port("f5", "float", Arity::Optional, Value(1.7976931348623157e308)));
  op->inputs.push_back(port("f6", "float", Arity::Optional, Value(-0.0)));
  op->inputs.push_back(port("s", "str", Arity::Optional, Value(std::string("a \"q\"\\ \t\n\r,]\x01\x7f é"))));
  op->inputs.push_back(port("empty", "str", Arity::Optional, Value("")));
  op->inputs.push_back(port("l", "int[]", Arity::Optional,
                            Value(Value::List{Value(1), Value(Value::List{}), Value(Value::List{Value(2.5), Value("x,]")}),
                                              Value()})));
  op->inputs.push_back(port("args", "Any", Arity::Variadic));
  op->outputs.push_back(port("result0", "(Tensor, Dict(str, Tensor))", Arity::Single));
  op->outputs.push_back(port("outputs", "Any", Arity::Variadic));
  ns->add(std::move(op));

  auto c = std::make_unique<schema::OpSchema>();  // an op with attributes and no domain, like prim::If
  c->type = "prim::If";
  schema::AttrType any;
  any.type = "Any";
  c->attrs.push_back({"block0", any});
  c->attrs.push_back({"block1", any});
  c->inputs.push_back(port("cond", "bool", Arity::Single));
  ns->add(std::move(c));
  auto e = std::make_unique<schema::OpSchema>();  // an op with nothing
  e->type = "prim::Nothing";
  ns->add(std::move(e));
  return ns;
}

// Everything the namespace holds, compared op by op (the schema's own operator== for attrs and ports).
void expect_same(const schema::NamespaceSchema& a, const schema::NamespaceSchema& b) {
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.type_system, b.type_system);
  ASSERT_EQ(a.ops.size(), b.ops.size());
  for (size_t i = 0; i < a.ops.size(); ++i) {
    const schema::OpSchema& x = *a.ops[i];
    const schema::OpSchema& y = *b.ops[i];
    SCOPED_TRACE(x.type);
    EXPECT_EQ(x.type, y.type);
    EXPECT_EQ(x.domain, y.domain);
    EXPECT_EQ(x.attrs, y.attrs);
    EXPECT_EQ(x.inputs, y.inputs);
    EXPECT_EQ(x.outputs, y.outputs);
    for (const auto* ports : {&y.inputs, &y.outputs})
      for (const auto& p : *ports) {
        EXPECT_TRUE(p.arity_given);
        for (const auto& at : p.attrs) EXPECT_TRUE(at.type.compiled) << "compiled by compile_types";
      }
    EXPECT_EQ(x.declared_in, y.declared_in);
    EXPECT_FALSE(y.ops || y.edges || y.since_version || y.deprecated || !y.type_constraints.empty());
  }
}

std::string error_of(const std::string& text) {
  schema::Registry reg;
  try {
    torchscript::read_namespace_file(text, "x.ops", reg.type_systems());
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST(NamespaceFile, RoundTripOfEveryFeature) {
  schema::Registry reg;
  auto ns = hand_made();
  std::string text = torchscript::write_namespace_file(*ns);
  auto back = torchscript::read_namespace_file(text, "x.ops", reg.type_systems());
  expect_same(*ns, *back);
  EXPECT_EQ(torchscript::write_namespace_file(*back), text);
  // Floats are exact and show they are floats; -0.0 keeps its sign.
  const schema::OpSchema* op = back->find("aten::every");
  ASSERT_TRUE(op);
  EXPECT_EQ(op->inputs[5].attrs[1].type.value.as_float(), 0.1);
  EXPECT_TRUE(std::signbit(op->inputs[10].attrs[1].type.value.as_float()));
  EXPECT_NE(text.find("\tf3\tfloat\t1.0\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\tf2\tfloat\t1e-05\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\ti\tint\t-9223372036854775808\n"), std::string::npos) << text;
  EXPECT_NE(text.find("[1,[],[2.5,\"x,]\"],null]"), std::string::npos) << text;
}

TEST(NamespaceFile, WriteRefusesWhatItCannotCarry) {
  auto expect_refused = [](const std::function<void(schema::NamespaceSchema&)>& change, const std::string& why) {
    auto ns = hand_made();
    change(*ns);
    EXPECT_THROW(torchscript::write_namespace_file(*ns), Error) << why;
  };
  auto every = [](schema::NamespaceSchema& ns) -> schema::OpSchema& { return *ns.ops[0]; };
  expect_refused([&](auto& ns) { every(ns).inputs[1].attrs[1].type.value = Value(Value::Map{{"k", Value(1)}}); }, "a map default");
  expect_refused([&](auto& ns) { every(ns).inputs[1].attrs[1].type.type = "int"; }, "a default not of type Any");
  expect_refused([&](auto& ns) { every(ns).inputs[0].attrs.push_back({"other", constant_str("x")}); }, "a third port attr");
  expect_refused([&](auto& ns) { every(ns).inputs[0].attrs.clear(); }, "a port with no name");
  expect_refused([&](auto& ns) { every(ns).inputs[0].min_arity = 3; }, "min_arity");
  expect_refused([&](auto& ns) { every(ns).inputs[0].homogeneous = false; }, "heterogeneous");
  expect_refused([&](auto& ns) { every(ns).inputs[0].type = "a\tb"; }, "a tab in a type");
  expect_refused([&](auto& ns) { every(ns).inputs[0].attrs[0].type.value = Value("a\nb"); }, "a line break in a name");
  expect_refused([&](auto& ns) { every(ns).deprecated = true; }, "deprecated");
  expect_refused([&](auto& ns) { every(ns).since_version = 3; }, "since_version");
  expect_refused([&](auto& ns) { every(ns).type_constraints.push_back({"T", {"Tensor"}}); }, "type constraints");
  expect_refused([&](auto& ns) { ns.ops[1]->attrs[0].type.form = schema::AttrType::Form::Default; }, "an attr default");
  expect_refused([&](auto& ns) { ns.ops[1]->attrs[0].type.optional = true; }, "an optional attr");
}

TEST(NamespaceFile, ErrorsNameTheLine) {
  const std::string head = "amanda-ops 1\nnamespace\tamanda/pytorch/9.9\ttorchscript\n";
  EXPECT_EQ(error_of("amanda-ops 2\n"), "x.ops:1: error: not an .ops namespace file (the first line must be 'amanda-ops 1')");
  EXPECT_EQ(error_of("amanda-ops 1\nop\ta\t\n"), "x.ops:2: error: expected the 'namespace' line");
  EXPECT_EQ(error_of(head + "in\t1\tx\tTensor\n"), "x.ops:3: error: 'in' before the first 'op' line");
  EXPECT_EQ(error_of(head + "op\ta\t\n# c\n\nin\t2\tx\tTensor\n"), "x.ops:6: error: bad arity '2' (1, ? or *)");
  EXPECT_EQ(error_of(head + "op\ta\t\nin\t?\tx\tint\t12x\n"), "x.ops:4: error: bad value '12x'");
  EXPECT_EQ(error_of(head + "op\ta\t\nin\t?\tx\tint\t[1,2\n"), "x.ops:4: error: a list is not closed with ']'");
  EXPECT_EQ(error_of(head + "op\ta\t\nin\t?\tx\tstr\t\"ab\n"), "x.ops:4: error: a string is not closed with '\"'");
  EXPECT_EQ(error_of(head + "op\ta\t\nin\t?\tx\tstr\t\"a\\q\"\n"), "x.ops:4: error: unknown escape '\\q' in a string");
  EXPECT_EQ(error_of(head + "op\ta\t\nin\t?\tx\tstr\t\"a\"b\n"), "x.ops:4: error: unexpected 'b' after a default value");
  EXPECT_EQ(error_of(head + "op\ta\t\nin\t?\tx\tint\t1\textra\n"),
            "x.ops:4: error: expected 'in<TAB>ARITY<TAB>NAME<TAB>TYPE[<TAB>DEFAULT]'");
  EXPECT_EQ(error_of(head + "op\ta\t\nin\t?\tx\tint\t" + std::string(100, '[') + "\n"),
            "x.ops:4: error: lists nest too deeply");
  EXPECT_EQ(error_of(head + "op\ta\t\nop\ta\t\n"), "x.ops:4: error: op 'a' given twice");
  EXPECT_EQ(error_of(head + "op\ta\t\nattr\tv\tAny\nattr\tv\tAny\n"), "x.ops:5: error: attribute 'v' given twice");
  EXPECT_EQ(error_of(head + "op\ta\t\nfoo\n"), "x.ops:4: error: unknown line kind 'foo'");
  EXPECT_EQ(error_of(head + "namespace\tb\ttorchscript\n"), "x.ops:3: error: a second 'namespace' line");
  // Types are compiled against the type system: errors there name the file.
  EXPECT_EQ(error_of("amanda-ops 1\nnamespace\tamanda/pytorch/9.9\tnosuch\n"),
            "x.ops: error: namespace amanda/pytorch/9.9: unknown type system 'nosuch'");
}

TEST(NamespaceFile, CommittedFileHasWhatTheImporterNeeds) {
  schema::Registry reg;
  std::string text = slurp(kFile);
  ASSERT_FALSE(text.empty()) << kFile;
  auto t0 = std::chrono::steady_clock::now();
  auto ns = torchscript::read_namespace_file(text, kFile, reg.type_systems());
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::cout << "read " << kFile << " (" << text.size() << " bytes, " << ns->ops.size() << " ops) in " << ms << " ms\n";
  EXPECT_EQ(ns->name, "amanda/pytorch/1.13");
  EXPECT_GT(ns->ops.size(), 3000u);
  for (const char* t : {"aten::_convolution", "aten::batch_norm", "prim::Constant", "prim::ListConstruct", "prim::If",
                        "prim::Loop", "prim::TupleConstruct", "prim::ListUnpack"})
    EXPECT_TRUE(ns->find(t)) << t;
  const schema::OpSchema* add = ns->find("aten::add.Tensor");
  ASSERT_TRUE(add);
  ASSERT_EQ(add->inputs.size(), 3u);
  EXPECT_EQ(add->inputs[0].expected_name(), "self");
  EXPECT_EQ(add->inputs[1].expected_name(), "other");
  EXPECT_EQ(add->inputs[2].expected_name(), "alpha");
  EXPECT_EQ(add->inputs[0].arity, Arity::Single);
  EXPECT_EQ(add->inputs[2].arity, Arity::Optional);
  ASSERT_TRUE(add->inputs[2].attr("default"));
  EXPECT_EQ(add->inputs[2].attr("default")->type.value, Value(1));
  EXPECT_EQ(add->inputs[2].type, "Scalar");
  ASSERT_TRUE(ns->find("prim::Constant")->attr("value"));
  // The file is written as write_namespace_file writes it (so the drift test can compare bytes).
  EXPECT_EQ(torchscript::write_namespace_file(*ns), text);
}

TEST(NamespaceFile, ProviderReadsTheFileWithoutThePlugin) {
  auto reg = schema::make_default_registry();
  reg->add_provider(torch_frontend::make_torch_namespace_provider());
  EXPECT_TRUE(reg->known("amanda/pytorch/1.13"));
  EXPECT_EQ(reg->loaded_count(), 0u);  // listing reads nothing
  const schema::OpSchema* add = reg->resolve("amanda/pytorch/1.13", "aten::add.Tensor");
  ASSERT_TRUE(add);
  EXPECT_EQ(add->inputs[1].expected_name(), "other");
}

// namespaces/pytorch/1.13.d/*.ops (torchvision's operators, hand-written) join the namespace.
TEST(NamespaceFile, ProviderJoinsTheExtensions) {
  auto reg = schema::make_default_registry();
  reg->add_provider(torch_frontend::make_torch_namespace_provider());
  const schema::OpSchema* nms = reg->resolve("amanda/pytorch/1.13", "torchvision::nms");
  ASSERT_TRUE(nms);
  EXPECT_EQ(nms->domain, "torchvision");
  ASSERT_EQ(nms->inputs.size(), 3u);
  EXPECT_EQ(nms->inputs[2].expected_name(), "iou_threshold");
  EXPECT_TRUE(reg->resolve("amanda/pytorch/1.13", "aten::add.Tensor"));  // and the base file's ops
}

// The drift test: the committed file must be what libtorch's registry gives, byte for byte.
TEST(NamespaceFile, CommittedFileMatchesLibtorch) {
  std::string why;
  if (!torch_frontend::torch_available(&why)) GTEST_SKIP() << why;
  if (torch_frontend::torch_namespace_name() != "amanda/pytorch/1.13")
    GTEST_SKIP() << "the plugin is built with another libtorch: " << torch_frontend::torch_namespace_name();
  schema::Registry reg;
  auto from_plugin = torch_frontend::plugin_namespace(reg.type_systems());
  std::string text = slurp(kFile);
  auto from_file = torchscript::read_namespace_file(text, kFile, reg.type_systems());
  const char* regenerate =
      "namespaces/pytorch/1.13.ops differs from libtorch's registry; regenerate it with\n"
      "  build/amanda schema export amanda/pytorch/1.13 --from-libtorch --to ops -o namespaces/pytorch/1.13.ops";
  expect_same(*from_plugin, *from_file);
  EXPECT_EQ(schema::namespace_to_text(*from_plugin), schema::namespace_to_text(*from_file)) << regenerate;
  EXPECT_TRUE(torchscript::write_namespace_file(*from_plugin) == text) << regenerate;
}
