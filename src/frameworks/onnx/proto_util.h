// Helpers shared by the ONNX importer and exporter: element types, value-type strings, float32
// spelling, annotation keys.
#pragma once

#include <charconv>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include <onnx/onnx_pb.h>

#include "amanda/support/path_policy.h"
#include "amanda/ir/graph.h"
#include "amanda/ir/tensor.h"
#include "amanda/ir/value.h"
#include "amanda/support/base64.h"

namespace amanda::onnx_frontend::detail {

inline std::optional<ir::DType> dtype_of(int elem) {
  using D = ir::DType;
  switch (elem) {
    case 1: return D::Float32;
    case 2: return D::UInt8;
    case 3: return D::Int8;
    case 4: return D::UInt16;
    case 5: return D::Int16;
    case 6: return D::Int32;
    case 7: return D::Int64;
    case 8: return D::String;
    case 9: return D::Bool;
    case 10: return D::Float16;
    case 11: return D::Float64;
    case 12: return D::UInt32;
    case 13: return D::UInt64;
    case 14: return D::Complex64;
    case 15: return D::Complex128;
    case 16: return D::BFloat16;
    default: return std::nullopt;
  }
}

inline int elem_of(ir::DType t) {
  for (int e = 1; e <= 16; ++e)
    if (dtype_of(e) == t) return e;
  return 0;
}

// ONNX's own spelling inside value types: tensor(float), seq(tensor(int64)).
inline const char* elem_name(int elem) {
  static const char* names[] = {"undefined", "float", "uint8", "int8", "uint16", "int16", "int32", "int64", "string",
                                "bool", "float16", "double", "uint32", "uint64", "complex64", "complex128", "bfloat16"};
  return elem >= 0 && elem <= 16 ? names[elem] : nullptr;
}
inline int elem_from_name(std::string_view s) {
  for (int e = 0; e <= 16; ++e)
    if (s == elem_name(e)) return e;
  return -1;
}

// The shortest decimal that reads back as the same float32 (0.0001, not 9.99999974737875e-05).
inline double float32_value(float f) {
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof buf, f);
  double d = 0;
  if (std::from_chars(buf, r.ptr, d).ec != std::errc()) return static_cast<double>(f);
  return d;
}

inline bool is_annotation(std::string_view key) { return !key.empty() && key[0] == '@'; }
inline constexpr std::string_view kCapturePrefix = "@capture.";

}  // namespace amanda::onnx_frontend::detail

namespace amanda::onnx_frontend::detail {

// "tensor(float)", "seq(tensor(int64))", ...; nullopt when the type has no such spelling.
std::optional<std::string> type_string(const onnx::TypeProto& t);
// A TypeProto as a type of g (interned; TypeId() for a type without a value) and back.
ir::TypeId type_from_proto(ir::Graph& g, const onnx::TypeProto& t);
void type_to_proto(const ir::Graph& g, ir::TypeId id, onnx::TypeProto& t);
// Parses a type string; false when it is not one.
bool parse_type_string(std::string_view s, onnx::TypeProto& t);

// The readable attributes of a value's type: type, shape (ints, strings for symbolic dims, null
// for unknown ones) and, when those do not say everything, the whole proto in base64 under
// `fallback_key`. Keys get `prefix` ("" on graph ports, "@" on op ports).
void value_info_to_attrs(const onnx::ValueInfoProto& vi, const std::string& prefix, ir::Value::Map& out);
// The inverse; `get` looks an attribute up by key (nullptr when absent).
template <class Get>
void attrs_to_value_info(Get&& get, const std::string& prefix, const std::string& name, onnx::ValueInfoProto& vi);

// Tensors. meta collects what the ir::Tensor cannot hold (name, doc_string, storage form, ...).
struct TensorContext {
  std::string base_dir;  // for external data; empty: refused
  std::string file_name;
  std::shared_ptr<const Buffer> input;  // the model's bytes, when raw_data spans point into them
  bool input_is_file = false;           // ... and they are a mapped file
  // The external data files, each mapped once for the whole model (null: mapped per tensor).
  std::shared_ptr<ModelFiles> files;
};
struct RawSpan;
// With `raw` (its raw_data, left out of `t` by parse_model_borrowing), the tensor borrows those
// bytes from ctx.input instead of copying them.
ir::Value tensor_from_proto(const onnx::TensorProto& t, const TensorContext& ctx, ir::Value::Map& meta,
                            const RawSpan* raw = nullptr);
// With `defer_raw`, a tensor written as raw_data gets no bytes in `out`: *defer_raw points to the
// tensor holding them instead (the caller splices them in, see wire.h); otherwise it stays null.
void tensor_to_proto(const ir::Value& v, const ir::Value::Map* meta, onnx::TensorProto& out,
                     const ir::Tensor** defer_raw = nullptr);

const ir::Value* map_find(const ir::Value::Map* m, std::string_view key);
// A sparse tensor as its `values` tensor (what a schema's sparse_tensor type expects) plus
// `info`: {dims, indices, and the two tensors' metadata}.
// The attribute type a plain value reads as: INT, FLOATS, ...; UNDEFINED for an empty list (it
// could be any list type) and for kinds ONNX attributes do not have.
onnx::AttributeProto::AttributeType inferred_attr_type(const ir::Value& v);

ir::Value sparse_from_proto(const onnx::SparseTensorProto& sp, const TensorContext& ctx, ir::Value::Map& info);
void sparse_to_proto(const ir::Value& values, const ir::Value::Map* info, onnx::SparseTensorProto& out);
void build_type(const ir::Value* type, const ir::Value* shape, onnx::TypeProto& t);

template <class Get>
void attrs_to_value_info(Get&& get, const std::string& prefix, const std::string& name, onnx::ValueInfoProto& vi) {
  if (const ir::Value* fb = get("@value_info"); fb && fb->is_string()) {
    if (auto bytes = base64_decode(fb->as_string()); bytes && vi.ParseFromString(*bytes)) return;
  }
  vi.set_name(name);
  const ir::Value* type = get(prefix + "type");
  if (type) build_type(type, get(prefix + "shape"), *vi.mutable_type());
  if (const ir::Value* d = get("@doc_string"); d && d->is_string()) vi.set_doc_string(d->as_string());
}

}  // namespace amanda::onnx_frontend::detail

namespace amanda::onnx_frontend::detail {
// An attribute from its value and its `@attr.NAME` annotation. Graph values are filled by
// `graph` (called with the graph node and the GraphProto to fill).
void attr_to_proto(const std::string& name, const ir::Value& v, const ir::Value::Map& meta, onnx::AttributeProto& out,
                   const std::function<void(ir::OpId, onnx::GraphProto&)>& graph);
// A model-local function from its entry in the root's `functions` list.
void export_function(const ir::Graph& g, const ir::Value& entry, onnx::FunctionProto& out);
// A graph node (an attribute graph, say) as the GraphProto the exporter writes for it.
void export_graph_proto(const ir::Graph& g, ir::OpId gn, onnx::GraphProto& out);
inline void attr_to_proto(const std::string& name, const ir::Value& v, const ir::Value::Map& meta, onnx::AttributeProto& out) {
  attr_to_proto(name, v, meta, out, nullptr);
}
}  // namespace amanda::onnx_frontend::detail
