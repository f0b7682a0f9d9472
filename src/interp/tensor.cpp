#include "amanda/interp/tensor.h"

#include <sys/mman.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <stdexcept>

#include "amanda/interp/memory.h"
#include "amanda/support/budget.h"
#include "amanda/support/diagnostics.h"
#include "amanda/support/float16.h"

namespace amanda::interp {

int64_t numel(const Shape& s) {
  // Checked: a [2^32, 2^32] shape wrapped to 0 elements, and a Slice then read wild memory.
  uint64_t n = 1;
  for (int64_t d : s) {
    if (d < 0) throw Error("negative dimension in shape " + shape_str(s));
    if (d != 0 && n > uint64_t(INT64_MAX) / uint64_t(d)) throw Error("the element count of shape " + shape_str(s) + " overflows int64");
    n *= uint64_t(d);
  }
  return int64_t(n);
}

std::string shape_str(const Shape& s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + "]";
}

Tensor Tensor::uninit(DType t, Shape shape) {
  Tensor r;
  r.dtype_ = t;
  for (int64_t d : shape)
    if (d < 0) throw Error("negative dimension in shape " + shape_str(shape));
  r.shape_ = std::move(shape);
  r.numel_ = interp::numel(r.shape_);
  if (t == DType::String) {
    // (Empty strings: their size is charged where a kernel fills them.)
    Budget::run().check(BudgetKind::Memory, checked_mul(uint64_t(r.numel_), uint64_t(sizeof(std::string)), "a string tensor"),
                        "a string tensor of shape " + shape_str(r.shape_));
    r.strings_ = std::make_shared<std::vector<std::string>>(static_cast<size_t>(r.numel_));
    return r;
  }
  size_t es = ir::dtype_size(t);
  if (es == 0) throw Error("no runtime tensors of element type " + std::string(ir::dtype_name(t)));
  // The budget first (its message names --max-memory), then the interpreter's own cap.
  Budget::run().check(BudgetKind::Memory, checked_mul(uint64_t(r.numel_), uint64_t(es), "a tensor"),
                      "a tensor of shape " + shape_str(r.shape_));
  if (r.numel_ > (int64_t(1) << 40) / int64_t(es)) throw Error("tensor of shape " + shape_str(r.shape_) + " is too big");
  r.nbytes_ = static_cast<size_t>(r.numel_) * es;
  r.keep_ = allocate_block(r.nbytes_, &r.data_);
  return r;
}

Tensor Tensor::native(DType t, Shape shape, std::shared_ptr<const NativeLayout> layout) {
  Tensor r;
  r.dtype_ = t;
  r.shape_ = std::move(shape);
  r.numel_ = interp::numel(r.shape_);
  r.nbytes_ = layout->bytes();
  r.keep_ = allocate_block(r.nbytes_, &r.data_);
  r.layout_ = std::move(layout);
  return r;
}

Tensor Tensor::plain() const {
  if (!layout_) return *this;
  Tensor r = uninit(dtype_, shape_);
  layout_->to_plain(*this, r);
  return r;
}

Tensor::Tensor(DType t, Shape shape) {
  *this = uninit(t, std::move(shape));
  if (nbytes_) std::memset(data_, 0, nbytes_);
}

Tensor Tensor::borrow(std::shared_ptr<const ir::Tensor> t) {
  Tensor r;
  r.dtype_ = t->dtype;
  r.shape_ = t->shape;
  r.numel_ = interp::numel(r.shape_);
  if (t->dtype == DType::String) {
    r.strings_ = std::make_shared<std::vector<std::string>>(t->strings);
    return r;
  }
  auto expect = t->expected_bytes();
  if (!expect || *expect != t->size) throw Error("tensor bytes do not match its shape " + shape_str(r.shape_));
  r.nbytes_ = t->size;
  if (t->dtype == DType::Bool && std::any_of(t->data, t->data + t->size, [](uint8_t b) { return b > 1; })) {
    // A file's bool bytes may hold any value; kernels read them as C++ bool, where anything but
    // 0 or 1 is undefined behaviour (run_fuzz: a bool initializer byte 17 in Cast). Nonzero is
    // true, as in the file formats; the copy holds 0 and 1 only.
    Tensor c = uninit(DType::Bool, r.shape_);
    for (size_t i = 0; i < t->size; ++i) c.data_[i] = t->data[i] != 0;
    return c;
  }
  size_t align = std::min<size_t>(ir::dtype_size(t->dtype), 8);
  if (align > 1 && reinterpret_cast<uintptr_t>(t->data) % align != 0) {
    // Kernels read elements through typed pointers: misaligned ones are undefined behaviour (and
    // slow). One aligned copy per IR tensor, kept while that tensor lives.
    static std::mutex mu;
    static auto* copies = new std::map<const ir::Tensor*, std::pair<std::weak_ptr<const ir::Tensor>, Tensor>>;
    std::lock_guard lock(mu);
    auto it = copies->find(t.get());
    if (it != copies->end() && it->second.first.lock() == t) return it->second.second;
    for (auto i = copies->begin(); i != copies->end();)  // forget the copies of tensors gone
      i = i->second.first.expired() ? copies->erase(i) : std::next(i);
    Tensor c = uninit(r.dtype_, r.shape_);
    std::memcpy(c.data_, t->data, t->size);
    // The copy is what kernels read from now on: the pages of the original (a mapped model file's,
    // as a rule) are handed back, so that a model's weights are not resident twice. MADV_PAGEOUT
    // only reclaims; it never changes what the memory holds (anonymous pages without swap stay).
    uintptr_t lo = (reinterpret_cast<uintptr_t>(t->data) + 4095) & ~uintptr_t(4095);
    uintptr_t hi = (reinterpret_cast<uintptr_t>(t->data) + t->size) & ~uintptr_t(4095);
    if (hi > lo) madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_PAGEOUT);
    c.borrowed_ = true;  // stable, read-only bytes for as long as the model lives
    (*copies)[t.get()] = {t, c};
    return c;
  }
  // Borrowed bytes are read-only; kernels never write their inputs.
  r.data_ = const_cast<uint8_t*>(t->data);
  r.borrowed_ = true;
  r.keep_ = std::const_pointer_cast<void>(std::static_pointer_cast<const void>(t));
  return r;
}

Tensor Tensor::scalar_i64(int64_t v) {
  Tensor t = uninit(DType::Int64, {});
  *t.mutable_data<int64_t>() = v;
  return t;
}

Tensor Tensor::scalar_f32(float v) {
  Tensor t = uninit(DType::Float32, {});
  *t.mutable_data<float>() = v;
  return t;
}

Tensor Tensor::reshaped(Shape s) const {
  if (layout_) return plain().reshaped(std::move(s));
  if (interp::numel(s) != numel_) throw Error("cannot reshape " + shape_str(shape_) + " to " + shape_str(s));
  Tensor r = *this;
  r.shape_ = std::move(s);
  return r;
}

Tensor Tensor::retyped(DType t) const {
  if (layout_) return plain().retyped(t);
  if (ir::dtype_size(t) != ir::dtype_size(dtype_) || t == DType::String || dtype_ == DType::String)
    throw Error("cannot read " + std::string(ir::dtype_name(dtype_)) + " as " + std::string(ir::dtype_name(t)));
  Tensor r = *this;
  r.dtype_ = t;
  return r;
}

Tensor Tensor::clone() const {
  if (layout_) return plain();
  Tensor r = uninit(dtype_, shape_);
  if (dtype_ == DType::String) *r.strings_ = *strings_;
  else if (nbytes_) std::memcpy(r.data_, data_, nbytes_);
  return r;
}

void Tensor::no_such_dim(int64_t i) const {
  throw NoSuchDim("a tensor of shape " + shape_str(shape_) + " has no dimension " + std::to_string(i));
}

void Tensor::no_such_element(int64_t i) const {
  throw NoSuchDim("a tensor of shape " + shape_str(shape_) + " has no element " + std::to_string(i));
}

double Tensor::get_f64(int64_t i) const {
  if (i < 0 || i >= numel_) no_such_element(i);
  switch (dtype_) {
    case DType::Bool: return data<uint8_t>()[i] != 0;
    case DType::Int8: return data<int8_t>()[i];
    case DType::Int16: return data<int16_t>()[i];
    case DType::Int32: return data<int32_t>()[i];
    case DType::Int64: return static_cast<double>(data<int64_t>()[i]);
    case DType::UInt8: return data<uint8_t>()[i];
    case DType::UInt16: return data<uint16_t>()[i];
    case DType::UInt32: return data<uint32_t>()[i];
    case DType::UInt64: return static_cast<double>(data<uint64_t>()[i]);
    case DType::Float16: return half_to_float(data<uint16_t>()[i]);
    case DType::BFloat16: return bf16_to_float(data<uint16_t>()[i]);
    case DType::Float32: return data<float>()[i];
    case DType::Float64: return data<double>()[i];
    default: throw Error("element type " + std::string(ir::dtype_name(dtype_)) + " is not numeric here");
  }
}

int64_t Tensor::get_i64(int64_t i) const {
  if (i < 0 || i >= numel_) no_such_element(i);
  switch (dtype_) {
    case DType::Int64: return data<int64_t>()[i];
    case DType::Int32: return data<int32_t>()[i];
    case DType::UInt64: return static_cast<int64_t>(data<uint64_t>()[i]);
    default: return static_cast<int64_t>(get_f64(i));
  }
}

std::vector<int64_t> Tensor::to_i64_vector() const {
  std::vector<int64_t> v(static_cast<size_t>(numel_));
  for (int64_t i = 0; i < numel_; ++i) v[static_cast<size_t>(i)] = get_i64(i);
  return v;
}

// The conversions themselves are amanda/support/float16.h's (one copy for every layer).
float half_to_float(uint16_t h) { return amanda::half_to_float(h); }
uint16_t float_to_half(float f) { return amanda::float_to_half(f); }
uint16_t float_to_bf16(float f) { return amanda::float_to_bf16(f); }

}  // namespace amanda::interp
