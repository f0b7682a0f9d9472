// The shipped TensorFlow namespaces against TensorFlow's op registry itself: ops.pbtxt is parsed
// here with protobuf's TextFormat (not with the generator's Python), and every op, argument and
// attribute must be in amanda/tensorflow/2.2 as the generator's rules say.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include <google/protobuf/text_format.h>

#include "amanda/frameworks/tensorflow/namespaces.h"
#include "amanda/schema/validate.h"
#include "amanda/text/document.h"
#include "amanda_tf_graph.pb.h"
#include "test_files.h"

namespace amanda::tf_frontend {
namespace {

namespace fs = std::filesystem;

fs::path source_root() { return fs::path(AMANDA_TEST_DATA).parent_path(); }
fs::path registry_file() { return source_root().parent_path() / "shared" / "tensorflow" / "ops.pbtxt"; }

std::unique_ptr<schema::Registry> registry() {
  auto r = schema::make_default_registry();
  r->add_provider(make_tf_namespace_provider());
  return r;
}

const tensorflow::OpList& ops() {
  static tensorflow::OpList l = [] {
    tensorflow::OpList o;
    std::string text = test_files::slurp(registry_file());
    EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &o));
    return o;
  }();
  return l;
}

TEST(TfNamespace, EveryRegistryOpWithItsArgumentsAndAttributes) {
  if (!fs::exists(registry_file())) GTEST_SKIP() << registry_file() << " is not here";
  auto reg = registry();
  const schema::NamespaceSchema* ns = reg->find(kTensorflowNamespace);
  ASSERT_NE(ns, nullptr);
  ASSERT_EQ(ops().op_size(), 1256);
  EXPECT_EQ(ns->ops.size(), static_cast<size_t>(ops().op_size()));
  for (const auto& op : ops().op()) {
    SCOPED_TRACE(op.name());
    const schema::OpSchema* s = ns->find(op.name());
    ASSERT_NE(s, nullptr);
    auto check_args = [&](const auto& args, const std::vector<schema::PortSchema>& ports) {
      ASSERT_EQ(ports.size(), static_cast<size_t>(args.size()));
      for (int i = 0; i < args.size(); ++i) {
        const auto& a = args[i];
        const auto& p = ports[i];
        EXPECT_EQ(p.expected_name(), a.name());
        bool list = !a.number_attr().empty() || !a.type_list_attr().empty();
        EXPECT_EQ(p.arity, list ? schema::Arity::Variadic : schema::Arity::Single);
        const schema::AttrSchema* ta = p.attr("type_attr");
        EXPECT_EQ(ta != nullptr, !a.type_attr().empty());
        if (ta) EXPECT_EQ(ta->type.value, ir::Value(a.type_attr()));
        const schema::AttrSchema* na = p.attr("number_attr");
        EXPECT_EQ(na != nullptr, !a.number_attr().empty());
        EXPECT_EQ(p.attr("is_ref") != nullptr, a.is_ref());
      }
    };
    check_args(op.input_arg(), s->inputs);
    check_args(op.output_arg(), s->outputs);
    ASSERT_EQ(s->attrs.size(), static_cast<size_t>(op.attr_size()));
    for (const auto& a : op.attr()) {
      const schema::AttrSchema* sa = s->attr(a.name());
      ASSERT_NE(sa, nullptr) << a.name();
      // A default the namespace cannot say (a tensor: DecodeJpeg's bad_color) makes it optional.
      bool tensor_default = a.has_default_value() && a.default_value().has_tensor();
      EXPECT_EQ(sa->type.default_value() != nullptr, a.has_default_value() && !tensor_default) << a.name();
      EXPECT_EQ(sa->type.required(), !a.has_default_value()) << a.name();
      if (a.type() == "type" && a.has_allowed_values())
        EXPECT_EQ(sa->type.options.size(), static_cast<size_t>(a.allowed_values().list().type_size())) << a.name();
      if (a.type() == "bool" && a.has_default_value())
        EXPECT_EQ(*sa->type.default_value(), ir::Value(a.default_value().b())) << a.name();
      if (a.type() == "int" && a.has_default_value())
        EXPECT_EQ(*sa->type.default_value(), ir::Value(static_cast<int64_t>(a.default_value().i()))) << a.name();
      if (a.type() == "float" && a.has_default_value())
        EXPECT_EQ(static_cast<float>(sa->type.default_value()->as_float()), a.default_value().f()) << a.name();
      if (a.type() == "string" && a.has_default_value() && !a.has_allowed_values())
        EXPECT_EQ(*sa->type.default_value(), ir::Value(a.default_value().s())) << a.name();
    }
  }
}

TEST(TfNamespace, ExportsToTheSeedFormAndLoadsBackEqual) {
  auto reg = registry();
  for (std::string_view name : {kTensorflowNamespace, kTfjsNamespace}) {
    const schema::NamespaceSchema* ns = reg->find(name);
    ASSERT_NE(ns, nullptr) << name;
    std::string text = schema::namespace_to_text(*ns, text::Format::Json);
    fs::path tmp = fs::temp_directory_path() / ("amanda-tfns-" + std::to_string(::getpid()) + ".json");
    test_files::spit(tmp, text);
    auto back = schema::read_namespace(tmp.string(), reg->type_systems());
    fs::remove(tmp);
    ASSERT_EQ(back->ops.size(), ns->ops.size());
    for (const auto& op : ns->ops) {
      const schema::OpSchema* b = back->find(op->type);
      ASSERT_NE(b, nullptr) << op->type;
      EXPECT_EQ(b->attrs, op->attrs) << op->type;
      EXPECT_EQ(b->inputs, op->inputs) << op->type;
      EXPECT_EQ(b->outputs, op->outputs) << op->type;
    }
  }
}

TEST(TfNamespace, TfjsOpsAreTheOnesTheRegistryLacks) {
  auto reg = registry();
  const schema::NamespaceSchema* tf = reg->find(kTensorflowNamespace);
  const schema::NamespaceSchema* js = reg->find(kTfjsNamespace);
  ASSERT_NE(tf, nullptr);
  ASSERT_NE(js, nullptr);
  for (const char* op : {"_FusedConv2D", "_FusedMatMul", "FusedDepthwiseConv2dNative", "Prelu"}) {
    EXPECT_NE(js->find(op), nullptr) << op;
    EXPECT_EQ(tf->find(op), nullptr) << op;
  }
  for (const auto& op : js->ops) EXPECT_EQ(tf->find(op->type), nullptr) << op->type;
  const schema::OpSchema* conv = js->find("_FusedConv2D");
  ASSERT_EQ(conv->inputs.size(), 3u);
  EXPECT_EQ(conv->inputs[2].arity, schema::Arity::Variadic);
  EXPECT_EQ(conv->inputs[2].expected_name(), "args");
}

// The seed's example validates against its own 1.13.1 namespace and against the generated one.
TEST(TfNamespace, SeedExampleValidatesInBoth) {
  auto reg = registry();
  std::string text = test_files::slurp(source_root() / "examples" / "tensorflow_graph.yaml");
  for (bool generated : {false, true}) {
    std::string t = text;
    if (generated) t.replace(t.find("amanda/tensorflow/1.13.1"), 24, std::string(kTensorflowNamespace));
    Diagnostics d;
    text::Document doc = text::parse(t, text::Format::Yaml, "tensorflow_graph.yaml", d);
    Diagnostics vd;
    auto r = schema::validate(doc.graph, *reg, vd);
    EXPECT_EQ(vd.error_count(), 0u) << (generated ? "2.2: " : "1.13.1: ") << (vd.items().empty() ? "" : vd.items()[0].str());
    EXPECT_EQ(r.ops_checked, 4u);
  }
  // A wrong attribute is caught by the generated namespace (the check is not vacuous).
  std::string bad = text;
  bad.replace(bad.find("amanda/tensorflow/1.13.1"), 24, std::string(kTensorflowNamespace));
  bad.replace(bad.find("transpose_a: false"), 18, "transpose_a: 3");
  Diagnostics d;
  text::Document doc = text::parse(bad, text::Format::Yaml, "bad.yaml", d);
  Diagnostics vd;
  schema::validate(doc.graph, *reg, vd);
  EXPECT_GE(vd.error_count(), 1u);
}

}  // namespace
}  // namespace amanda::tf_frontend
