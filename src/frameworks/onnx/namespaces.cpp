#include "amanda/frameworks/onnx/namespaces.h"

#include <charconv>
#include <map>
#include <onnx/defs/schema.h>

namespace amanda::onnx_frontend {

namespace {

const std::vector<onnx::OpSchema>& all_schemas() {
  static const std::vector<onnx::OpSchema> all = onnx::OpSchemaRegistry::get_all_schemas_with_history();
  return all;
}

std::string attr_type_name(onnx::AttributeProto::AttributeType t) {
  using A = onnx::AttributeProto;
  switch (t) {
    case A::FLOAT: return "float";
    case A::INT: return "int";
    case A::STRING: return "string";
    case A::TENSOR: return "tensor";
    case A::GRAPH: return "graph";
    case A::SPARSE_TENSOR: return "sparse_tensor";
    case A::TYPE_PROTO: return "type_proto";
    case A::FLOATS: return "floats";
    case A::INTS: return "ints";
    case A::STRINGS: return "strings";
    case A::TENSORS: return "tensors";
    case A::GRAPHS: return "graphs";
    case A::SPARSE_TENSORS: return "sparse_tensors";
    case A::TYPE_PROTOS: return "type_protos";
    default: return "any";
  }
}

// ONNX floats are float32: 0.0001f is held as the double 0.0001 (the shortest decimal that reads
// back as the same float), not 9.999999747378752e-05, so that exported schemas read naturally.
// The onnx type system compares floats as float32, so either spelling matches.
double float32_value(float f) {
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof buf, f);
  double d = 0;
  if (std::from_chars(buf, r.ptr, d).ec != std::errc()) return static_cast<double>(f);
  return d;
}

// The default of an attribute, when libonnx gives one we can hold as a plain value.
std::optional<ir::Value> default_of(const onnx::AttributeProto& a) {
  using A = onnx::AttributeProto;
  switch (a.type()) {
    case A::FLOAT: return ir::Value(float32_value(a.f()));
    case A::INT: return ir::Value(static_cast<int64_t>(a.i()));
    case A::STRING: return ir::Value(a.s());
    case A::FLOATS: {
      ir::Value::List l;
      for (float f : a.floats()) l.push_back(ir::Value(float32_value(f)));
      return ir::Value(std::move(l));
    }
    case A::INTS: {
      ir::Value::List l;
      for (auto i : a.ints()) l.push_back(ir::Value(static_cast<int64_t>(i)));
      return ir::Value(std::move(l));
    }
    case A::STRINGS: {
      ir::Value::List l;
      for (const auto& s : a.strings()) l.push_back(ir::Value(s));
      return ir::Value(std::move(l));
    }
    default: return std::nullopt;
  }
}

schema::PortSchema port_of(const onnx::OpSchema::FormalParameter& p) {
  schema::PortSchema ps;
  schema::AttrType name;
  name.form = schema::AttrType::Form::Constant;
  name.type = "string";
  name.value = ir::Value(p.GetName());
  ps.attrs.push_back({"name", std::move(name)});
  ps.arity_given = true;
  switch (p.GetOption()) {
    case onnx::OpSchema::Single: ps.arity = schema::Arity::Single; break;
    case onnx::OpSchema::Optional: ps.arity = schema::Arity::Optional; break;
    case onnx::OpSchema::Variadic: ps.arity = schema::Arity::Variadic; break;
  }
  if (ps.arity == schema::Arity::Variadic) {
    ps.min_arity = static_cast<uint32_t>(p.GetMinArity());
    ps.homogeneous = p.GetIsHomogeneous();
  }
  ps.type = p.GetTypeStr();
  return ps;
}

std::unique_ptr<schema::OpSchema> op_of(const onnx::OpSchema& s) {
  auto op = std::make_unique<schema::OpSchema>();
  op->type = s.Name();
  op->domain = s.domain().empty() ? "ai.onnx" : s.domain();
  op->since_version = s.SinceVersion();
  op->deprecated = s.Deprecated();
  for (const auto& [name, a] : s.attributes()) {  // std::map: sorted by name
    schema::AttrType at;
    at.type = attr_type_name(a.type);
    auto def = a.required ? std::nullopt : default_of(a.default_value);
    if (def) {
      at.form = schema::AttrType::Form::Default;
      at.value = std::move(*def);
    } else {
      at.form = schema::AttrType::Form::Type;
      at.optional = !a.required;
    }
    op->attrs.push_back({name, std::move(at)});
  }
  for (const auto& p : s.inputs()) op->inputs.push_back(port_of(p));
  for (const auto& p : s.outputs()) op->outputs.push_back(port_of(p));
  for (const auto& tc : s.typeConstraintParams())
    op->type_constraints.push_back({tc.type_param_str, tc.allowed_type_strs});
  return op;
}

class OnnxProvider final : public schema::Provider {
 public:
  OnnxProvider() {
    for (const auto& [domain, range] : onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map())
      for (int v = range.first; v <= range.second; ++v) {
        std::string n = onnx_namespace(domain, v);
        names_.push_back(n);
        where_[n] = {domain, v};
      }
  }
  std::vector<std::string> names() const override { return names_; }
  std::unique_ptr<schema::NamespaceSchema> load(const std::string& name, const schema::TypeSystems& types) const override {
    auto it = where_.find(name);
    if (it == where_.end()) return nullptr;
    const auto& [domain, version] = it->second;
    auto ns = std::make_unique<schema::NamespaceSchema>();
    ns->name = name;
    ns->type_system = "onnx";
    std::vector<const onnx::OpSchema*> declared;
    for (const auto& s : all_schemas())
      if (s.domain() == domain && s.SinceVersion() == version) declared.push_back(&s);
    std::sort(declared.begin(), declared.end(), [](auto* a, auto* b) { return a->Name() < b->Name(); });
    for (const auto* s : declared) ns->add(op_of(*s));
    schema::compile_types(*ns, types);
    return ns;
  }

 private:
  std::vector<std::string> names_;
  std::map<std::string, std::pair<std::string, int>> where_;
};

}  // namespace

std::string onnx_namespace_family(const std::string& domain) {
  return domain.empty() || domain == "ai.onnx" ? "amanda/onnx" : "amanda/onnx/" + domain;
}

std::string onnx_namespace(const std::string& domain, int version) {
  return onnx_namespace_family(domain) + "/" + std::to_string(version);
}

std::shared_ptr<schema::Provider> make_onnx_namespace_provider() { return std::make_shared<OnnxProvider>(); }

}  // namespace amanda::onnx_frontend
