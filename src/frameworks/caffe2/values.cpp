#include "values.h"

#include "amanda/support/base64.h"
#include "amanda/support/diagnostics.h"

namespace amanda::caffe2_frontend::detail {

using ir::Value;
namespace c2 = amanda_caffe2;

namespace {

template <class M>
bool has_unknown(const M& m) {
  return !m.GetReflection()->GetUnknownFields(m).empty();
}

const Value* field(const Value::Map& m, std::string_view k) {
  for (const auto& e : m)
    if (e.key == k) return &e.value;
  return nullptr;
}

}  // namespace

[[noreturn]] void bad(const std::string& where, const std::string& msg) { throw Error(where + ": " + msg); }

namespace {

int64_t as_int(const Value& v, const std::string& where, std::string_view key) {
  if (!v.is_int()) bad(where, "'" + std::string(key) + "' is not an integer");
  return v.as_int();
}

const std::string& as_str(const Value& v, const std::string& where, std::string_view key) {
  if (!v.is_string()) bad(where, "'" + std::string(key) + "' is not a string");
  return v.as_string();
}

Value strings(const google::protobuf::RepeatedPtrField<std::string>& r) {
  Value::List l;
  l.reserve(r.size());
  for (const auto& s : r) l.push_back(Value(s));
  return Value(std::move(l));
}

template <class F>
void each(const Value& v, const std::string& where, std::string_view key, F&& f) {
  if (!v.is_list()) bad(where, "'" + std::string(key) + "' is not a list");
  for (const auto& x : v.as_list()) f(x);
}

}  // namespace

std::string serialize(const google::protobuf::MessageLite& m) {
  std::string s;
  m.SerializeToString(&s);
  return s;
}

Value kept(const google::protobuf::MessageLite& m) { return Value(base64_encode(serialize(m))); }

void parse_kept(const Value& v, google::protobuf::MessageLite& m, const std::string& where) {
  std::optional<std::string> bytes = v.is_string() ? base64_decode(v.as_string()) : std::nullopt;
  if (!bytes || !m.ParseFromString(*bytes)) bad(where, "not the base64 of a " + m.GetTypeName());
}

Value device_option_value(const c2::DeviceOption& d) {
  if (has_unknown(d)) return kept(d);
  Value::Map m;
  if (d.has_device_type()) m.push_back({"device_type", Value(static_cast<int64_t>(d.device_type()))});
  if (d.has_device_id()) m.push_back({"device_id", Value(static_cast<int64_t>(d.device_id()))});
  if (d.has_random_seed()) m.push_back({"random_seed", Value(static_cast<int64_t>(d.random_seed()))});
  if (d.has_node_name()) m.push_back({"node_name", Value(d.node_name())});
  if (d.has_numa_node_id()) m.push_back({"numa_node_id", Value(static_cast<int64_t>(d.numa_node_id()))});
  if (d.extra_info_size()) m.push_back({"extra_info", strings(d.extra_info())});
  return Value(std::move(m));
}

void device_option_from(const Value& v, c2::DeviceOption& d, const std::string& where) {
  if (v.is_string()) return parse_kept(v, d, where);
  if (!v.is_map()) bad(where, "device_option is not a map");
  for (const auto& e : v.as_map()) {
    const std::string& k = e.key;  // (not a structured binding: clang 14's lambdas cannot capture one)
    const Value& x = e.value;
    if (k == "device_type") d.set_device_type(static_cast<int32_t>(as_int(x, where, k)));
    else if (k == "device_id") d.set_device_id(static_cast<int32_t>(as_int(x, where, k)));
    else if (k == "random_seed") d.set_random_seed(static_cast<uint32_t>(as_int(x, where, k)));
    else if (k == "node_name") d.set_node_name(as_str(x, where, k));
    else if (k == "numa_node_id") d.set_numa_node_id(static_cast<int32_t>(as_int(x, where, k)));
    else if (k == "extra_info") each(x, where, k, [&](const Value& s) { d.add_extra_info(as_str(s, where, k)); });
    else bad(where, "device_option has no field '" + k + "'");
  }
}

Value partition_info_value(const c2::PartitionInfo& p) {
  if (has_unknown(p)) return kept(p);
  for (const auto& b : p.backend_options()) {
    if (has_unknown(b)) return kept(p);
    for (const auto& o : b.option())
      if (has_unknown(o) || !o.has_key() || !o.has_val()) return kept(p);
  }
  Value::Map m;
  if (p.has_name()) m.push_back({"name", Value(p.name())});
  if (p.device_id_size()) {
    Value::List l;
    for (int32_t i : p.device_id()) l.push_back(Value(static_cast<int64_t>(i)));
    m.push_back({"device_id", Value(std::move(l))});
  }
  if (p.has_extra_info()) m.push_back({"extra_info", Value(p.extra_info())});
  if (p.backend_options_size()) {
    Value::List l;
    for (const auto& b : p.backend_options()) {
      Value::Map bm;
      if (b.has_backend_name()) bm.push_back({"backend_name", Value(b.backend_name())});
      Value::List opts;
      for (const auto& o : b.option()) opts.push_back(Value(Value::Map{{"key", Value(o.key())}, {"val", Value(o.val())}}));
      if (!opts.empty()) bm.push_back({"option", Value(std::move(opts))});
      l.push_back(Value(std::move(bm)));
    }
    m.push_back({"backend_options", Value(std::move(l))});
  }
  return Value(std::move(m));
}

void partition_info_from(const Value& v, c2::PartitionInfo& p, const std::string& where) {
  if (v.is_string()) return parse_kept(v, p, where);
  if (!v.is_map()) bad(where, "partition_info is not a map");
  for (const auto& e : v.as_map()) {
    const std::string& k = e.key;
    const Value& x = e.value;
    if (k == "name") p.set_name(as_str(x, where, k));
    else if (k == "device_id") each(x, where, k, [&](const Value& i) { p.add_device_id(static_cast<int32_t>(as_int(i, where, k))); });
    else if (k == "extra_info") p.set_extra_info(as_str(x, where, k));
    else if (k == "backend_options")
      each(x, where, k, [&](const Value& b) {
        if (!b.is_map()) bad(where, "a backend_options entry is not a map");
        auto* bo = p.add_backend_options();
        if (const Value* n = field(b.as_map(), "backend_name")) bo->set_backend_name(as_str(*n, where, "backend_name"));
        if (const Value* o = field(b.as_map(), "option"))
          each(*o, where, "option", [&](const Value& e) {
            if (!e.is_map()) bad(where, "an option entry is not a map");
            const Value* key = field(e.as_map(), "key");
            const Value* val = field(e.as_map(), "val");
            if (!key || !val) bad(where, "an option entry needs 'key' and 'val'");
            auto* me = bo->add_option();
            me->set_key(as_str(*key, where, "key"));
            me->set_val(as_str(*val, where, "val"));
          });
      });
    else bad(where, "partition_info has no field '" + k + "'");
  }
}

std::optional<Value> argument_value(const c2::Argument& a, const NetToGraph& net) {
  if (has_unknown(a) || a.has_t() || a.tensors_size() || a.qtensors_size()) return std::nullopt;
  int set = a.has_f() + a.has_i() + a.has_s() + a.has_n() + (a.floats_size() > 0) + (a.ints_size() > 0) +
            (a.strings_size() > 0) + (a.nets_size() > 0);
  if (set > 1) return std::nullopt;
  if (a.has_f()) return Value(static_cast<double>(a.f()));
  if (a.has_i()) return Value(static_cast<int64_t>(a.i()));
  if (a.has_s()) return Value(a.s());
  if (a.has_n()) return net(a.n());
  if (a.floats_size()) {
    Value::List l;
    l.reserve(a.floats_size());
    for (float f : a.floats()) l.push_back(Value(static_cast<double>(f)));
    return Value(std::move(l));
  }
  if (a.ints_size()) {
    Value::List l;
    l.reserve(a.ints_size());
    for (int64_t i : a.ints()) l.push_back(Value(i));
    return Value(std::move(l));
  }
  if (a.strings_size()) return strings(a.strings());
  if (a.nets_size()) {
    Value::List l;
    for (const auto& n : a.nets()) l.push_back(net(n));
    return Value(std::move(l));
  }
  // A name alone: what an empty list serialises to (a scalar shape `[]`, an empty `ints`), so read
  // as one; it writes back as the name alone.
  return Value(Value::List{});
}

void argument_from(const Value& v, c2::Argument& a, const GraphToNet& net, const std::function<std::string()>& where_fn) {
  auto bad = [&](const std::string&, const std::string& msg) { detail::bad(where_fn(), msg); };
  switch (v.kind()) {
    case Value::Kind::Null: return;
    case Value::Kind::Bool: a.set_i(v.as_bool() ? 1 : 0); return;  // Caffe2 reads a bool argument as i
    case Value::Kind::Int: a.set_i(v.as_int()); return;
    case Value::Kind::Float: a.set_f(static_cast<float>(v.as_float())); return;
    case Value::Kind::String: a.set_s(v.as_string()); return;
    case Value::Kind::Graph: net(v, *a.mutable_n()); return;
    case Value::Kind::List: {
      const auto& l = v.as_list();
      if (l.empty()) return;  // an empty list has no bytes: the name alone
      Value::Kind k = l.front().kind();
      for (const auto& x : l)
        if (x.kind() != k && !(k == Value::Kind::Float && x.is_int()) && !(k == Value::Kind::Int && x.is_bool()))
          bad("", "argument '" + a.name() + "' mixes " + std::string(kind_name(k)) + " and " + std::string(kind_name(x.kind())) + " values");
      for (const auto& x : l) {
        switch (k) {
          case Value::Kind::Float: a.add_floats(static_cast<float>(x.is_int() ? x.as_int() : x.as_float())); break;
          case Value::Kind::Int: a.add_ints(x.is_bool() ? x.as_bool() : x.as_int()); break;
          case Value::Kind::Bool: a.add_ints(x.as_bool() ? 1 : 0); break;
          case Value::Kind::String: a.add_strings(x.as_string()); break;
          case Value::Kind::Graph: net(x, *a.add_nets()); break;
          default: bad("", "argument '" + a.name() + "': a list of " + std::string(kind_name(k)) + " has no Argument field");
        }
      }
      return;
    }
    case Value::Kind::Tensor: {
      // A tensor argument (an ONNX attribute of type TENSOR on its way to Caffe2): the values as
      // a list, as Caffe2's GivenTensorFill `values` holds them, is the caller's choice; here the
      // exact form is a TensorProto.
      const ir::Tensor& t = v.as_tensor();
      auto* tp = a.mutable_t();
      for (int64_t d : t.shape) tp->add_dims(d);
      switch (t.dtype) {
        case ir::DType::Float32: tp->set_data_type(c2::TensorProto::FLOAT); break;
        case ir::DType::Float64: tp->set_data_type(c2::TensorProto::DOUBLE); break;
        case ir::DType::Int32: tp->set_data_type(c2::TensorProto::INT32); break;
        case ir::DType::Int64: tp->set_data_type(c2::TensorProto::INT64); break;
        case ir::DType::Bool: tp->set_data_type(c2::TensorProto::BOOL); break;
        case ir::DType::UInt8: tp->set_data_type(c2::TensorProto::UINT8); break;
        case ir::DType::Int8: tp->set_data_type(c2::TensorProto::INT8); break;
        default: bad("", "argument '" + a.name() + "': a " + std::string(ir::dtype_name(t.dtype)) + " tensor has no Caffe2 type");
      }
      tp->set_raw_data(std::string(t.bytes()));
      return;
    }
    case Value::Kind::Map: bad("", "argument '" + a.name() + "' is a map: no Argument field holds one");
  }
}

}  // namespace amanda::caffe2_frontend::detail
