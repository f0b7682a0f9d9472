// Value types, value infos and tensors between onnx.proto and the IR (both directions, so the
// importer can check that the readable form says everything and keep the proto when it does not).
#include <charconv>
#include <cstring>
#include <filesystem>
#include <map>

#include "amanda/support/diagnostics.h"
#include "amanda/support/file.h"
#include "amanda/support/path_policy.h"
#include "proto_util.h"
#include "wire.h"

namespace amanda::onnx_frontend::detail {

using ir::Value;

const Value* map_find(const Value::Map* m, std::string_view key) {
  if (!m) return nullptr;
  for (const auto& e : *m)
    if (e.key == key) return &e.value;
  return nullptr;
}

std::optional<std::string> type_string(const onnx::TypeProto& t) {
  switch (t.value_case()) {
    case onnx::TypeProto::kTensorType: {
      if (!t.tensor_type().has_elem_type()) return std::nullopt;
      const char* e = elem_name(t.tensor_type().elem_type());
      if (!e) return std::nullopt;
      return std::string("tensor(") + e + ")";
    }
    case onnx::TypeProto::kSparseTensorType: {
      if (!t.sparse_tensor_type().has_elem_type()) return std::nullopt;
      const char* e = elem_name(t.sparse_tensor_type().elem_type());
      if (!e) return std::nullopt;
      return std::string("sparse_tensor(") + e + ")";
    }
    case onnx::TypeProto::kSequenceType: {
      if (!t.sequence_type().has_elem_type()) return std::nullopt;
      auto in = type_string(t.sequence_type().elem_type());
      if (!in) return std::nullopt;
      return "seq(" + *in + ")";
    }
    case onnx::TypeProto::kOptionalType: {
      if (!t.optional_type().has_elem_type()) return std::nullopt;
      auto in = type_string(t.optional_type().elem_type());
      if (!in) return std::nullopt;
      return "optional(" + *in + ")";
    }
    case onnx::TypeProto::kMapType: {
      if (!t.map_type().has_key_type() || !t.map_type().has_value_type()) return std::nullopt;
      const char* k = elem_name(t.map_type().key_type());
      auto in = type_string(t.map_type().value_type());
      if (!k || !in) return std::nullopt;
      return std::string("map(") + k + ", " + *in + ")";
    }
    default: return std::nullopt;
  }
}

namespace {
std::string_view trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}
}  // namespace

bool parse_type_string(std::string_view s, onnx::TypeProto& t) {
  s = trim(s);
  size_t p = s.find('(');
  // A bare Amanda element type ("float32", as other frontends write it) is a tensor of it.
  if (p == std::string_view::npos)
    if (auto d = ir::dtype_from_name(s); d && elem_of(*d) > 0) {
      t.mutable_tensor_type()->set_elem_type(elem_of(*d));
      return true;
    }
  if (p == std::string_view::npos || s.back() != ')') return false;
  std::string_view head = s.substr(0, p), inner = trim(s.substr(p + 1, s.size() - p - 2));
  if (head == "tensor" || head == "sparse_tensor") {
    int e = elem_from_name(inner);
    if (e < 0) return false;
    if (head == "tensor") t.mutable_tensor_type()->set_elem_type(e);
    else t.mutable_sparse_tensor_type()->set_elem_type(e);
    return true;
  }
  if (head == "seq") return parse_type_string(inner, *t.mutable_sequence_type()->mutable_elem_type());
  if (head == "optional") return parse_type_string(inner, *t.mutable_optional_type()->mutable_elem_type());
  if (head == "map") {
    size_t c = inner.find(',');
    if (c == std::string_view::npos) return false;
    int k = elem_from_name(trim(inner.substr(0, c)));
    if (k < 0) return false;
    t.mutable_map_type()->set_key_type(k);
    return parse_type_string(inner.substr(c + 1), *t.mutable_map_type()->mutable_value_type());
  }
  return false;
}

void build_type(const Value* type, const Value* shape, onnx::TypeProto& t) {
  if (!type || !type->is_string() || !parse_type_string(type->as_string(), t)) return;
  if (!shape || !shape->is_list()) return;
  onnx::TensorShapeProto* sp = nullptr;
  if (t.has_tensor_type()) sp = t.mutable_tensor_type()->mutable_shape();
  else if (t.has_sparse_tensor_type()) sp = t.mutable_sparse_tensor_type()->mutable_shape();
  if (!sp) return;
  for (const auto& d : shape->as_list()) {
    auto* dim = sp->add_dim();
    if (d.is_int()) dim->set_dim_value(d.as_int());
    else if (d.is_string()) dim->set_dim_param(d.as_string());
  }
}

void value_info_to_attrs(const onnx::ValueInfoProto& vi, const std::string& prefix, Value::Map& out) {
  Value::Map m;
  if (vi.has_type()) {
    const auto& t = vi.type();
    if (auto s = type_string(t)) {
      m.push_back({prefix + "type", Value(*s)});
      const onnx::TensorShapeProto* sp = nullptr;
      if (t.has_tensor_type() && t.tensor_type().has_shape()) sp = &t.tensor_type().shape();
      if (t.has_sparse_tensor_type() && t.sparse_tensor_type().has_shape()) sp = &t.sparse_tensor_type().shape();
      if (sp) {
        Value::List dims;
        for (const auto& d : sp->dim()) {
          if (d.has_dim_value()) dims.push_back(Value(static_cast<int64_t>(d.dim_value())));
          else if (d.has_dim_param()) dims.push_back(Value(d.dim_param()));
          else dims.push_back(Value());
        }
        m.push_back({prefix + "shape", Value(std::move(dims))});
      }
    }
  }
  if (vi.has_doc_string()) m.push_back({"@doc_string", Value(vi.doc_string())});
  // Does the readable form say everything?
  onnx::ValueInfoProto back;
  attrs_to_value_info([&](const std::string& k) { return map_find(&m, k); }, prefix, vi.name(), back);
  if (!vi.has_name()) back.clear_name();
  if (back.SerializeAsString() != vi.SerializeAsString()) m.push_back({"@value_info", Value(base64_encode(vi.SerializeAsString()))});
  for (auto& e : m) out.push_back(std::move(e));
}

ir::TypeId type_from_proto(ir::Graph& g, const onnx::TypeProto& t) {
  ir::TypeData d;
  auto shape = [&](const onnx::TensorShapeProto* s) {
    if (!s) return;
    d.ranked = true;
    for (const auto& x : s->dim()) {
      if (x.has_dim_value()) d.dims.push_back(x.dim_value() < 0 ? ir::Dim::unknown() : ir::Dim::known(x.dim_value()));
      else if (x.has_dim_param() && !x.dim_param().empty()) d.dims.push_back(ir::Dim::symbol(g.sym(x.dim_param())));
      else d.dims.push_back(ir::Dim::unknown());
    }
  };
  switch (t.value_case()) {
    case onnx::TypeProto::kTensorType:
      d.elem = dtype_of(t.tensor_type().elem_type()).value_or(ir::DType::Undefined);
      shape(t.tensor_type().has_shape() ? &t.tensor_type().shape() : nullptr);
      break;
    case onnx::TypeProto::kSparseTensorType:
      d.kind = ir::TypeKind::SparseTensor;
      d.elem = dtype_of(t.sparse_tensor_type().elem_type()).value_or(ir::DType::Undefined);
      shape(t.sparse_tensor_type().has_shape() ? &t.sparse_tensor_type().shape() : nullptr);
      break;
    case onnx::TypeProto::kSequenceType:
      d.kind = ir::TypeKind::Sequence;
      if (t.sequence_type().has_elem_type()) d.inner = type_from_proto(g, t.sequence_type().elem_type());
      break;
    case onnx::TypeProto::kOptionalType:
      d.kind = ir::TypeKind::Optional;
      if (t.optional_type().has_elem_type()) d.inner = type_from_proto(g, t.optional_type().elem_type());
      break;
    case onnx::TypeProto::kMapType:
      d.kind = ir::TypeKind::Map;
      d.elem = dtype_of(t.map_type().key_type()).value_or(ir::DType::Undefined);
      if (t.map_type().has_value_type()) d.inner = type_from_proto(g, t.map_type().value_type());
      break;
    default: return ir::TypeId();
  }
  return g.types().intern(d);
}

void type_to_proto(const ir::Graph& g, ir::TypeId id, onnx::TypeProto& t) {
  const ir::TypeData& d = g.types().get(id);
  auto shape = [&](onnx::TensorShapeProto* s) {
    for (ir::Dim x : d.dims) {
      auto* dim = s->add_dim();
      if (x.is_known()) dim->set_dim_value(x.value());
      else if (x.is_symbol()) dim->set_dim_param(std::string(g.str(x.sym())));
    }
  };
  switch (d.kind) {
    case ir::TypeKind::Tensor:
      t.mutable_tensor_type()->set_elem_type(elem_of(d.elem));
      if (d.ranked) shape(t.mutable_tensor_type()->mutable_shape());
      break;
    case ir::TypeKind::SparseTensor:
      t.mutable_sparse_tensor_type()->set_elem_type(elem_of(d.elem));
      if (d.ranked) shape(t.mutable_sparse_tensor_type()->mutable_shape());
      break;
    case ir::TypeKind::Sequence:
      if (d.inner) type_to_proto(g, d.inner, *t.mutable_sequence_type()->mutable_elem_type());
      else t.mutable_sequence_type();
      break;
    case ir::TypeKind::Optional:
      if (d.inner) type_to_proto(g, d.inner, *t.mutable_optional_type()->mutable_elem_type());
      else t.mutable_optional_type();
      break;
    case ir::TypeKind::Map:
      t.mutable_map_type()->set_key_type(elem_of(d.elem));
      if (d.inner) type_to_proto(g, d.inner, *t.mutable_map_type()->mutable_value_type());
      break;
  }
}


// ---- tensors

namespace {

size_t elem_bytes(ir::DType t) { return ir::dtype_size(t); }

template <class T>
void put(std::string& out, T v, size_t n) {
  char b[sizeof(T)];
  std::memcpy(b, &v, sizeof(T));
  out.append(b, n);  // little-endian host: the low n bytes
}

// Under the path policy (amanda/support/path_policy.h); each file mapped once per model.
std::shared_ptr<const Buffer> map_external(const TensorContext& ctx, const std::string& location) {
  std::string what = ctx.file_name + ": error: external data location";
  if (ctx.files) return ctx.files->map(location);
  return map_model_file(ctx.base_dir, location, what);
}

}  // namespace

Value tensor_from_proto(const onnx::TensorProto& t, const TensorContext& ctx, Value::Map& meta, const RawSpan* raw) {
  if (raw && !raw->present) raw = nullptr;
  // The whole proto, canonical, for the rare tensor the readable form cannot rebuild.
  auto whole = [&]() {
    if (!raw) return t.SerializeAsString();
    onnx::TensorProto full;
    full.ParseFromArray(raw->tensor, static_cast<int>(raw->tensor_size));
    return full.SerializeAsString();
  };
  auto borrowed = [&](ir::DType d, std::vector<int64_t> s) {
    ir::Tensor b = ir::Tensor::borrow(d, std::move(s), ctx.input, raw->data, raw->size);
    b.borrowed_from_file = ctx.input_is_file;
    return b;
  };
  std::vector<int64_t> shape(t.dims().begin(), t.dims().end());
  auto dt = dtype_of(t.data_type());
  if (t.has_name()) meta.push_back({"name", Value(t.name())});
  if (t.has_doc_string()) meta.push_back({"doc_string", Value(t.doc_string())});
  ir::Tensor x;
  bool external = t.has_data_location() && t.data_location() == onnx::TensorProto::EXTERNAL;
  if (!dt) {
    // An element type the IR does not know: keep the proto, hold the raw bytes.
    meta.push_back({"proto", Value(base64_encode(whole()))});
    if (raw) return Value(borrowed(ir::DType::UInt8, {static_cast<int64_t>(raw->size)}));
    return Value(ir::Tensor::from_bytes(ir::DType::UInt8, {static_cast<int64_t>(t.raw_data().size())}, t.raw_data()));
  }
  if (*dt == ir::DType::String) {
    x.dtype = *dt;
    x.shape = shape;
    x.strings.assign(t.string_data().begin(), t.string_data().end());
  } else if (external) {
    std::string location;
    uint64_t offset = 0, length = UINT64_MAX;
    Value::List entries;
    for (const auto& kv : t.external_data()) {
      entries.push_back(Value(Value::Map{{"key", Value(kv.key())}, {"value", Value(kv.value())}}));
      // Digits only, within uint64: stoull would take "-1" as 2^64 - 1.
      auto number = [&](const std::string& v) {
        uint64_t n = 0;
        auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
        if (v.empty() || ec != std::errc() || end != v.data() + v.size())
          throw Error(ctx.file_name + ": error: tensor '" + t.name() + "': external data " + kv.key() + " '" + v +
                      "' is not a non-negative integer of at most 64 bits");
        return n;
      };
      if (kv.key() == "location") location = kv.value();
      else if (kv.key() == "offset") offset = number(kv.value());
      else if (kv.key() == "length") length = number(kv.value());
    }
    auto buf = map_external(ctx, location);
    if (offset > buf->size() || (length != UINT64_MAX && length > buf->size() - offset))
      throw Error(ctx.file_name + ": error: tensor '" + t.name() + "': external data [" + std::to_string(offset) + ", +" +
                  std::to_string(length) + ") is outside '" + location + "' (" + std::to_string(buf->size()) + " bytes)");
    if (length == UINT64_MAX) length = buf->size() - offset;
    x = ir::Tensor::borrow(*dt, shape, buf, buf->data() + offset, length);
    meta.push_back({"storage", Value("external")});
    meta.push_back({"external_data", Value(std::move(entries))});
    return Value(std::move(x));
  } else if (raw) {
    x = borrowed(*dt, shape);
  } else if (t.has_raw_data()) {
    x = ir::Tensor::from_bytes(*dt, shape, t.raw_data());
  } else {
    std::string bytes;
    size_t n = elem_bytes(*dt);
    bool typed = true;
    switch (*dt) {
      case ir::DType::Float32:
      case ir::DType::Complex64:
        for (float f : t.float_data()) put(bytes, f, 4);
        typed = t.float_data_size() > 0;
        break;
      case ir::DType::Float64:
      case ir::DType::Complex128:
        for (double d : t.double_data()) put(bytes, d, 8);
        typed = t.double_data_size() > 0;
        break;
      case ir::DType::Int64:
        for (int64_t v : t.int64_data()) put(bytes, v, 8);
        typed = t.int64_data_size() > 0;
        break;
      case ir::DType::UInt32:
      case ir::DType::UInt64:
        for (uint64_t v : t.uint64_data()) put(bytes, v, n);
        typed = t.uint64_data_size() > 0;
        break;
      default:
        for (int32_t v : t.int32_data()) put(bytes, v, n);
        typed = t.int32_data_size() > 0;
        break;
    }
    x = ir::Tensor::from_bytes(*dt, shape, std::move(bytes));
    meta.push_back({"storage", Value(typed ? "typed" : "none")});
  }
  Value v(std::move(x));
  // The common case needs no check: raw_data (borrowed, or in the proto: a Constant node's
  // tensor) with only dims, data_type, name and doc_string beside it is exactly what
  // tensor_to_proto writes back from (dtype, shape, meta); protobuf serialises fields in number
  // order, so the round trip below would compare equal (it was 43% of reading a model whose
  // weights are Constant nodes).
  if ((raw || t.has_raw_data()) && *dt != ir::DType::String && t.has_data_type() && !t.has_segment() && !t.float_data_size() &&
      !t.int32_data_size() && !t.string_data_size() && !t.int64_data_size() && !t.double_data_size() &&
      !t.uint64_data_size() && !t.external_data_size() && !t.has_data_location() && t.unknown_fields().empty())
    return v;
  onnx::TensorProto back;
  // With borrowed bytes neither proto holds them: the readable form is exact when it writes them
  // as raw_data (deferred) and everything else serialises the same.
  const ir::Tensor* deferred = nullptr;
  tensor_to_proto(v, &meta, back, raw ? &deferred : nullptr);
  if ((raw && !deferred) || back.SerializeAsString() != t.SerializeAsString()) {
    meta.clear();
    meta.push_back({"proto", Value(base64_encode(whole()))});
  }
  return v;
}

void tensor_to_proto(const Value& v, const Value::Map* meta, onnx::TensorProto& out, const ir::Tensor** defer_raw) {
  if (defer_raw) *defer_raw = nullptr;
  if (const Value* p = map_find(meta, "proto"); p && p->is_string()) {
    auto bytes = base64_decode(p->as_string());
    if (!bytes || !out.ParseFromString(*bytes)) throw Error("a tensor's 'proto' annotation is not a TensorProto in base64");
    return;
  }
  if (!v.is_tensor()) throw Error("expected a tensor, found a " + std::string(ir::kind_name(v.kind())));
  const ir::Tensor& t = v.as_tensor();
  for (int64_t d : t.shape) out.add_dims(d);
  out.set_data_type(elem_of(t.dtype));
  if (const Value* n = map_find(meta, "name"); n && n->is_string()) out.set_name(n->as_string());
  if (t.dtype == ir::DType::String) {
    for (const auto& s : t.strings) out.add_string_data(s);
  } else {
    const Value* st = map_find(meta, "storage");
    std::string storage = st && st->is_string() ? st->as_string() : "raw";
    size_t n = elem_bytes(t.dtype);
    const uint8_t* d = t.data;
    auto get = [&](size_t i, auto zero) {
      decltype(zero) x{};
      std::memcpy(&x, d + i, sizeof x);
      return x;
    };
    if (storage == "typed") {
      switch (t.dtype) {
        case ir::DType::Float32:
        case ir::DType::Complex64:
          for (size_t i = 0; i + 4 <= t.size; i += 4) out.add_float_data(get(i, float{}));
          break;
        case ir::DType::Float64:
        case ir::DType::Complex128:
          for (size_t i = 0; i + 8 <= t.size; i += 8) out.add_double_data(get(i, double{}));
          break;
        case ir::DType::Int64:
          for (size_t i = 0; i + 8 <= t.size; i += 8) out.add_int64_data(get(i, int64_t{}));
          break;
        case ir::DType::UInt32:
          for (size_t i = 0; i + 4 <= t.size; i += 4) out.add_uint64_data(get(i, uint32_t{}));
          break;
        case ir::DType::UInt64:
          for (size_t i = 0; i + 8 <= t.size; i += 8) out.add_uint64_data(get(i, uint64_t{}));
          break;
        case ir::DType::Int8:
          for (size_t i = 0; i < t.size; ++i) out.add_int32_data(get(i, int8_t{}));
          break;
        case ir::DType::Int16:
          for (size_t i = 0; i + 2 <= t.size; i += 2) out.add_int32_data(get(i, int16_t{}));
          break;
        case ir::DType::Int32:
          for (size_t i = 0; i + 4 <= t.size; i += 4) out.add_int32_data(get(i, int32_t{}));
          break;
        default:  // uint8, bool, uint16, float16, bfloat16: zero-extended
          for (size_t i = 0; i + n <= t.size; i += n) {
            uint32_t x = 0;
            std::memcpy(&x, d + i, n);
            out.add_int32_data(static_cast<int32_t>(x));
          }
          break;
      }
    } else if (storage != "none") {
      // raw (and external, which the exporter writes inline unless asked otherwise)
      if (defer_raw) *defer_raw = &t;
      else out.set_raw_data(t.bytes().data(), t.size);
    }
  }
  if (const Value* ds = map_find(meta, "doc_string"); ds && ds->is_string()) out.set_doc_string(ds->as_string());
}

onnx::AttributeProto::AttributeType inferred_attr_type(const Value& v) {
  using A = onnx::AttributeProto;
  switch (v.kind()) {
    case Value::Kind::Int: return A::INT;
    case Value::Kind::Float: return A::FLOAT;
    case Value::Kind::String: return A::STRING;
    case Value::Kind::Tensor: return A::TENSOR;
    case Value::Kind::Graph: return A::GRAPH;
    case Value::Kind::List: {
      const auto& l = v.as_list();
      if (l.empty()) return A::UNDEFINED;
      switch (l[0].kind()) {
        case Value::Kind::Int: return A::INTS;
        case Value::Kind::Float: return A::FLOATS;
        case Value::Kind::String: return A::STRINGS;
        case Value::Kind::Tensor: return A::TENSORS;
        case Value::Kind::Graph: return A::GRAPHS;
        default: return A::UNDEFINED;
      }
    }
    default: return A::UNDEFINED;
  }
}

Value sparse_from_proto(const onnx::SparseTensorProto& sp, const TensorContext& ctx, Value::Map& info) {
  Value::List dims;
  for (auto d : sp.dims()) dims.push_back(Value(static_cast<int64_t>(d)));
  info.push_back({"dims", Value(std::move(dims))});
  Value::Map vm, im;
  Value values = tensor_from_proto(sp.values(), ctx, vm);
  info.push_back({"indices", tensor_from_proto(sp.indices(), ctx, im)});
  if (!vm.empty()) info.push_back({"@values", Value(std::move(vm))});
  if (!im.empty()) info.push_back({"@indices", Value(std::move(im))});
  return values;
}

void sparse_to_proto(const Value& values, const Value::Map* info, onnx::SparseTensorProto& out) {
  if (const Value* d = map_find(info, "dims"); d && d->is_list())
    for (const auto& x : d->as_list()) out.add_dims(x.is_int() ? x.as_int() : 0);
  auto meta = [&](const char* k) -> const Value::Map* {
    const Value* m = map_find(info, k);
    return m && m->is_map() ? &m->as_map() : nullptr;
  };
  tensor_to_proto(values, meta("@values"), *out.mutable_values());
  if (const Value* i = map_find(info, "indices")) tensor_to_proto(*i, meta("@indices"), *out.mutable_indices());
}

}  // namespace amanda::onnx_frontend::detail
