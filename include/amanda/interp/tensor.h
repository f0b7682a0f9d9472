// Runtime tensors of the reference interpreter: an element type, a shape and row-major bytes, as
// the nGraph seed's backends see them. The bytes are either owned (allocated from the memory pool,
// see memory.h) or borrowed from an ir::Tensor (an initializer's bytes in the mapped model file),
// which the runtime tensor keeps alive; borrowed bytes are never written.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "amanda/ir/tensor.h"
#include "amanda/support/diagnostics.h"

namespace amanda::interp {

using ir::DType;
using Shape = std::vector<int64_t>;

int64_t numel(const Shape& s);
std::string shape_str(const Shape& s);  // "[1, 3, 224, 224]"

class Tensor;

// A dimension or element index past a tensor's rank or size (a kernel reading what a hostile model
// left out); the executor adds the node's location.
class NoSuchDim : public Error {
 public:
  using Error::Error;
};

// A library's own arrangement of a tensor's bytes (oneDNN's blocked layouts), which a chain of
// kernels that understand it passes along instead of converting back to row-major after every
// op. Only kernels that ask for such inputs see them (see Executor); to_plain converts.
class NativeLayout {
 public:
  virtual ~NativeLayout() = default;
  virtual size_t bytes() const = 0;                          // storage the layout needs
  virtual bool same(const NativeLayout& other) const = 0;    // byte-for-byte the same arrangement
  virtual void to_plain(const Tensor& src, Tensor& dst) const = 0;  // dst: row-major, allocated
};

class Tensor {
 public:
  Tensor() = default;
  // Owned storage, zero-filled.
  Tensor(DType t, Shape shape);
  // Owned storage, not initialised (the kernel writes every element).
  static Tensor uninit(DType t, Shape shape);
  // Borrows the bytes of an IR tensor (copies only String elements). Bytes that are not aligned
  // for their element type (an initializer at an odd offset of a mapped .onnx file) are copied
  // once per IR tensor into an aligned block, which later borrows of it reuse.
  static Tensor borrow(std::shared_ptr<const ir::Tensor> t);
  // Owned storage in a native layout (not initialised); shape is the logical shape.
  static Tensor native(DType t, Shape shape, std::shared_ptr<const NativeLayout> layout);
  static Tensor scalar_i64(int64_t v);
  static Tensor scalar_f32(float v);

  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int64_t rank() const { return static_cast<int64_t>(shape_.size()); }
  // Checked: a kernel that trusts a hostile model's rank (EyeLike of a 1-D tensor) gets a
  // NoSuchDim, which the executor reports with the node's location, not a read past the shape.
  int64_t dim(int64_t i) const {
    if (i < 0 || i >= rank()) no_such_dim(i);
    return shape_[static_cast<size_t>(i)];
  }
  int64_t numel() const { return numel_; }
  size_t nbytes() const { return nbytes_; }
  bool defined() const { return dtype_ != DType::Undefined; }
  bool borrowed() const { return borrowed_; }
  // What keeps the bytes alive (a pool block, or the IR tensor they are borrowed from): a cache
  // keyed by the bytes' address holds a weak reference to it, so that an address reused after the
  // model is gone is not mistaken for the old tensor.
  const std::shared_ptr<void>& owner() const { return keep_; }
  // The native layout of the bytes, or null for row-major (every tensor most kernels see).
  const NativeLayout* layout() const { return layout_.get(); }
  const std::shared_ptr<const NativeLayout>& layout_ptr() const { return layout_; }
  // Row-major: this tensor when it is, else a converted copy.
  Tensor plain() const;

  template <class T>
  const T* data() const { return reinterpret_cast<const T*>(data_); }
  template <class T>
  T* mutable_data() { return reinterpret_cast<T*>(data_); }  // owned tensors only
  const uint8_t* raw() const { return data_; }
  uint8_t* mutable_raw() { return data_; }

  std::vector<std::string>& strings() { return *strings_; }
  const std::vector<std::string>& strings() const { return *strings_; }

  // Same bytes, another shape of the same element count (Reshape, Flatten, Squeeze...): no copy.
  Tensor reshaped(Shape s) const;
  // Same bytes read as another element type of the same size (bfloat16 stored as uint16).
  Tensor retyped(DType t) const;
  // A deep copy into owned storage.
  Tensor clone() const;
  // Element i as double / int64 (for attribute-like inputs: shapes, axes, scalars).
  double get_f64(int64_t i) const;
  int64_t get_i64(int64_t i) const;
  std::vector<int64_t> to_i64_vector() const;

 private:
  [[noreturn]] void no_such_dim(int64_t i) const;
  [[noreturn]] void no_such_element(int64_t i) const;
  DType dtype_ = DType::Undefined;
  Shape shape_;
  int64_t numel_ = 0;
  size_t nbytes_ = 0;
  std::shared_ptr<void> keep_;  // owner of the bytes (pool block or IR tensor)
  uint8_t* data_ = nullptr;
  bool borrowed_ = false;
  std::shared_ptr<std::vector<std::string>> strings_;
  std::shared_ptr<const NativeLayout> layout_;
};

// A value as the executor passes it between ops: a tensor, a sequence of tensors, or an optional
// that holds nothing.
struct RValue {
  enum class Kind : uint8_t { Tensor, Sequence, None };
  Kind kind = Kind::Tensor;
  Tensor tensor;
  std::vector<Tensor> seq;
  DType elem = DType::Undefined;  // element type of an empty sequence / none optional, when known

  RValue() = default;
  RValue(Tensor t) : kind(Kind::Tensor), tensor(std::move(t)) {}
  static RValue sequence(std::vector<Tensor> s, DType elem = DType::Undefined) {
    RValue v;
    v.kind = Kind::Sequence;
    v.seq = std::move(s);
    v.elem = elem;
    return v;
  }
  static RValue none() {
    RValue v;
    v.kind = Kind::None;
    return v;
  }
  bool is_tensor() const { return kind == Kind::Tensor; }
};

// IEEE half and bfloat16 <-> float (round to nearest even).
float half_to_float(uint16_t h);
uint16_t float_to_half(float f);
inline float bf16_to_float(uint16_t b) {
  uint32_t u = uint32_t(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
uint16_t float_to_bf16(float f);

}  // namespace amanda::interp
