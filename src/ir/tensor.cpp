#include "amanda/ir/tensor.h"

#include <cstring>

namespace amanda::ir {

namespace {
struct DTypeInfo {
  DType t;
  const char* name;
  size_t size;
};
constexpr DTypeInfo kInfo[] = {
    {DType::Undefined, "undefined", 0}, {DType::Bool, "bool", 1},           {DType::Int8, "int8", 1},
    {DType::Int16, "int16", 2},         {DType::Int32, "int32", 4},         {DType::Int64, "int64", 8},
    {DType::UInt8, "uint8", 1},         {DType::UInt16, "uint16", 2},       {DType::UInt32, "uint32", 4},
    {DType::UInt64, "uint64", 8},       {DType::Float16, "float16", 2},     {DType::BFloat16, "bfloat16", 2},
    {DType::Float32, "float32", 4},     {DType::Float64, "float64", 8},     {DType::Complex64, "complex64", 8},
    {DType::Complex128, "complex128", 16}, {DType::String, "string", 0},
    {DType::Complex32, "complex32", 4},  {DType::QInt8, "qint8", 1},   {DType::QUInt8, "quint8", 1},
    {DType::QInt16, "qint16", 2},        {DType::QUInt16, "quint16", 2}, {DType::QInt32, "qint32", 4},
    {DType::QUInt4x2, "quint4x2", 1},    {DType::Float8E4M3FN, "float8e4m3fn", 1},
    {DType::Float8E4M3FNUZ, "float8e4m3fnuz", 1}, {DType::Float8E5M2, "float8e5m2", 1},
    {DType::Float8E5M2FNUZ, "float8e5m2fnuz", 1}, {DType::UInt4, "uint4", 0}, {DType::Int4, "int4", 0},
    {DType::Resource, "resource", 0},    {DType::Variant, "variant", 0},
};
static_assert(sizeof(kInfo) / sizeof(kInfo[0]) == kDTypeCount);
}  // namespace

std::string_view dtype_name(DType t) { return kInfo[static_cast<size_t>(t)].name; }
size_t dtype_size(DType t) { return kInfo[static_cast<size_t>(t)].size; }

std::optional<DType> dtype_from_name(std::string_view s) {
  for (const auto& i : kInfo)
    if (s == i.name) return i.t;
  if (s == "float" || s == "f32") return DType::Float32;
  if (s == "double" || s == "f64") return DType::Float64;
  if (s == "half" || s == "f16") return DType::Float16;
  if (s == "int" || s == "i32") return DType::Int32;
  if (s == "long" || s == "i64") return DType::Int64;
  return std::nullopt;
}

std::optional<uint64_t> Tensor::element_count() const {
  uint64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) return std::nullopt;
    if (d != 0 && n > UINT64_MAX / static_cast<uint64_t>(d)) return std::nullopt;
    n *= static_cast<uint64_t>(d);
  }
  return n;
}

std::optional<uint64_t> Tensor::expected_bytes() const {
  auto n = element_count();
  size_t es = dtype_size(dtype);
  if (!n || es == 0) return std::nullopt;
  if (*n > UINT64_MAX / es) return std::nullopt;
  return *n * es;
}

Tensor Tensor::from_bytes(DType t, std::vector<int64_t> shape, std::string bytes) {
  Tensor x;
  x.dtype = t;
  x.shape = std::move(shape);
  x.owner = make_buffer(std::move(bytes));
  x.data = x.owner->data();
  x.size = x.owner->size();
  return x;
}

Tensor Tensor::borrow(DType t, std::vector<int64_t> shape, std::shared_ptr<const Buffer> owner, const uint8_t* data,
                      size_t size) {
  Tensor x;
  x.dtype = t;
  x.shape = std::move(shape);
  x.owner = std::move(owner);
  x.data = data;
  x.size = size;
  x.borrowed_from_file = true;
  return x;
}

bool Tensor::operator==(const Tensor& o) const {
  return dtype == o.dtype && shape == o.shape && size == o.size && (size == 0 || std::memcmp(data, o.data, size) == 0) &&
         strings == o.strings;
}

}  // namespace amanda::ir
