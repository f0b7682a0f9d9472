#include "signatures.h"

#include <mutex>

#include "amanda/frameworks/tensorflow/namespaces.h"

namespace amanda::tf_frontend::detail {

namespace {

std::string constant_of(const schema::PortSchema& p, std::string_view key) {
  const schema::AttrSchema* a = p.attr(key);
  if (!a || !a->type.value.is_string()) return {};
  return a->type.value.as_string();
}

OpSignature from_schema(const schema::OpSchema& s, bool tfjs) {
  OpSignature sig;
  sig.schema = &s;
  sig.tfjs = tfjs;
  for (auto [ports, out] : {std::pair{&s.inputs, &sig.inputs}, std::pair{&s.outputs, &sig.outputs}}) {
    for (const auto& p : *ports) {
      ArgSpec a;
      a.name = p.expected_name().value_or("input");
      a.list = p.arity == schema::Arity::Variadic;
      a.number_attr = constant_of(p, "number_attr");
      a.type_list_attr = constant_of(p, "type_list_attr");
      out->push_back(std::move(a));
    }
  }
  return sig;
}

}  // namespace

void Signatures::add_function(const tensorflow::OpDef& def) {
  OpSignature sig;
  for (auto [args, out] : {std::pair{&def.input_arg(), &sig.inputs}, std::pair{&def.output_arg(), &sig.outputs}}) {
    for (const auto& a : *args) {
      ArgSpec s;
      s.name = a.name();
      s.number_attr = a.number_attr();
      s.type_list_attr = a.type_list_attr();
      s.list = !s.number_attr.empty() || !s.type_list_attr.empty();
      out->push_back(std::move(s));
    }
  }
  functions_[def.name()] = std::move(sig);
}

// The registry's signatures, derived once per process (the registry is never freed): deriving
// them again for every import was a few percent of reading a small model.
const OpSignature* registry_signature(std::string_view op) {
  static std::mutex mu;
  static auto* shared = new absl::node_hash_map<std::string, OpSignature>();  // never freed, as the registry
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = shared->find(absl::string_view(op.data(), op.size())); it != shared->end())
    return it->second.schema ? &it->second : nullptr;
  schema::Registry& reg = tf_registry();
  OpSignature sig;
  if (const schema::OpSchema* s = reg.resolve(kTensorflowNamespace, op)) sig = from_schema(*s, false);
  else if (const schema::OpSchema* j = reg.resolve(kTfjsNamespace, op)) sig = from_schema(*j, true);
  auto& slot = (*shared)[std::string(op)];
  slot = std::move(sig);
  return slot.schema ? &slot : nullptr;
}

const OpSignature* Signatures::find(std::string_view op) {
  if (!functions_.empty())
    if (auto it = functions_.find(absl::string_view(op.data(), op.size())); it != functions_.end()) return &it->second;
  if (auto it = cache_.find(absl::string_view(op.data(), op.size())); it != cache_.end()) return it->second;
  const OpSignature* sig = registry_signature(op);
  cache_.emplace(std::string(op), sig);
  return sig;
}

std::string_view Signatures::attr_hint(std::string_view op, std::string_view name) { return attr_hint(find(op), name); }

std::string_view Signatures::attr_hint(const OpSignature* sig, std::string_view name) {
  if (!sig || !sig->schema) return {};
  const schema::AttrSchema* a = sig->schema->attr(name);
  if (!a) return {};
  const schema::AttrType& t = a->type;
  if (t.form == schema::AttrType::Form::OneOf) return t.options.empty() ? std::string_view() : t.options[0].type;
  return t.type;
}

int64_t list_length(const ArgSpec& a, const google::protobuf::Map<std::string, tensorflow::AttrValue>& attrs) {
  if (!a.number_attr.empty()) {
    auto it = attrs.find(a.number_attr);
    if (it != attrs.end() && it->second.value_case() == tensorflow::AttrValue::kI && it->second.i() >= 0) return it->second.i();
    return -1;
  }
  if (!a.type_list_attr.empty()) {
    auto it = attrs.find(a.type_list_attr);
    if (it != attrs.end() && it->second.value_case() == tensorflow::AttrValue::kList) return it->second.list().type_size();
    return -1;
  }
  return -1;
}

}  // namespace amanda::tf_frontend::detail
