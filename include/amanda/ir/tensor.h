// Tensors: an element type, a shape and the bytes (row-major, little-endian). The bytes may be
// borrowed from a mapped file (a side file of a YAML document, external data of an ONNX model):
// a Tensor keeps the Buffer alive and never copies it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "amanda/support/file.h"

namespace amanda::ir {

enum class DType : uint8_t {
  Undefined,
  Bool,
  Int8,
  Int16,
  Int32,
  Int64,
  UInt8,
  UInt16,
  UInt32,
  UInt64,
  Float16,
  BFloat16,
  Float32,
  Float64,
  Complex64,
  Complex128,
  String,  // variable length: elements are kept in Tensor::strings, not in bytes
  // Element types that ports may carry although no importer makes tensors of them yet: the rest
  // of ONNX's, TensorFlow's and torch's vocabularies. Appended so that existing codes keep their
  // values.
  Complex32,  // torch.complex32 (ComplexHalf)
  QInt8,      // TF qint8, torch.qint8
  QUInt8,     // TF quint8, torch.quint8
  QInt16,     // TF qint16
  QUInt16,    // TF quint16
  QInt32,     // TF qint32, torch.qint32
  QUInt4x2,   // torch.quint4x2
  Float8E4M3FN,
  Float8E4M3FNUZ,
  Float8E5M2,
  Float8E5M2FNUZ,
  UInt4,
  Int4,
  Resource,  // TF resource handle
  Variant,   // TF variant
};
inline constexpr int kDTypeCount = static_cast<int>(DType::Variant) + 1;

std::string_view dtype_name(DType t);                  // "float32", ...
std::optional<DType> dtype_from_name(std::string_view);  // also accepts "float", "double", "half", "int", "long"
size_t dtype_size(DType t);                            // bytes per element; 0 for String/Undefined

struct Tensor {
  DType dtype = DType::Undefined;
  std::vector<int64_t> shape;
  // The bytes: [data, data + size) inside *owner (or inside `owned` when the tensor owns them).
  std::shared_ptr<const Buffer> owner;
  const uint8_t* data = nullptr;
  size_t size = 0;
  std::vector<std::string> strings;  // DType::String only

  // Number of elements the shape describes, or nullopt if a dimension is negative or it overflows.
  std::optional<uint64_t> element_count() const;
  // Bytes the shape and element type need, or nullopt (String, overflow, bad shape).
  std::optional<uint64_t> expected_bytes() const;
  std::string_view bytes() const { return {reinterpret_cast<const char*>(data), size}; }
  bool borrowed_from_file = false;  // true when the bytes live in a mapped file

  static Tensor from_bytes(DType t, std::vector<int64_t> shape, std::string bytes);
  static Tensor borrow(DType t, std::vector<int64_t> shape, std::shared_ptr<const Buffer> owner, const uint8_t* data,
                       size_t size);
  bool operator==(const Tensor& o) const;  // same dtype, shape and bytes (strings)
};

}  // namespace amanda::ir
