#include "amanda/core/namespace.h"

#include "registry.h"

namespace amanda::core {

namespace {

schema::PortSchema port(std::string_view name, schema::Arity arity) {
  schema::PortSchema ps;
  schema::AttrType n;
  n.form = schema::AttrType::Form::Constant;
  n.type = "string";
  n.value = ir::Value(std::string(name));
  ps.attrs.push_back({"name", std::move(n)});
  ps.arity = arity;
  ps.arity_given = true;
  return ps;
}

std::unique_ptr<schema::OpSchema> op_schema(const detail::OpDef& d) {
  auto op = std::make_unique<schema::OpSchema>();
  op->type = std::string(d.type);
  op->since_version = 1;
  for (const auto& a : d.attrs) {
    schema::AttrType at;
    at.type = std::string(a.type);
    if (a.dflt && !a.dflt->is_null()) {
      at.form = schema::AttrType::Form::Default;
      at.value = *a.dflt;
    } else {
      at.form = schema::AttrType::Form::Type;
      at.optional = a.dflt.has_value();
    }
    op->attrs.push_back({std::string(a.name), std::move(at)});
  }
  for (auto name : d.inputs) {
    op->inputs.push_back(port(name, d.variadic ? schema::Arity::Variadic : schema::Arity::Single));
    if (d.variadic) op->inputs.back().min_arity = 1;
  }
  op->outputs.push_back(port("out", schema::Arity::Single));
  return op;
}

class CoreProvider final : public schema::Provider {
 public:
  std::vector<std::string> names() const override { return {std::string(kNamespace)}; }
  std::unique_ptr<schema::NamespaceSchema> load(const std::string& name, const schema::TypeSystems& types) const override {
    if (name != kNamespace) return nullptr;
    auto ns = std::make_unique<schema::NamespaceSchema>();
    ns->name = name;
    ns->type_system = "onnx";  // its attribute type names (int, ints, float, string, tensor, any)
    for (const auto& d : detail::registry()) ns->add(op_schema(d));
    schema::compile_types(*ns, types);
    return ns;
  }
};

}  // namespace

std::shared_ptr<schema::Provider> make_core_namespace_provider() { return std::make_shared<CoreProvider>(); }

}  // namespace amanda::core
