// Shape and element-type rules for the ops that become graph ops, and kernels for ops whose
// inputs are all known. The rules follow ATen's own (the output-size formulas of
// convolution and pooling, broadcasting, type promotion with its zero-dim and wrapped-number
// categories); the tests compare every converted model with torch's own output.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <unordered_map>

#include "amanda/support/budget.h"
#include "frameworks/torchscript/promotion_table.h"
#include "frameworks/torchscript/runtime.h"

namespace amanda::torchscript {

using ir::DType;

// ---------------------------------------------------------------- values

const std::vector<double>& Storage::values() {
  if (overwritten) throw Unsupported("a tensor read after an in-place write" + (overwritten_by.empty() ? std::string() : " (" + overwritten_by + ")") + " through another view of it (not supported)");
  if (has_vals) return vals;
  if (count > (size_t(1) << 26))
    throw Unsupported("a constant computation on a tensor of " + std::to_string(count) + " elements");
  charge = MemoryCharge(count * sizeof(double), "a folded tensor");
  vals.resize(count);
  auto load = [&](auto tag) {
    using T = decltype(tag);
    for (size_t k = 0; k < count; ++k) {
      T x;
      std::memcpy(&x, raw + k * sizeof(T), sizeof(T));
      vals[k] = static_cast<double>(x);
    }
  };
  switch (dtype) {
    case DType::Float32: load(float{}); break;
    case DType::Float64: load(double{}); break;
    case DType::Int64: load(int64_t{}); break;
    case DType::Int32: load(int32_t{}); break;
    case DType::Int16: load(int16_t{}); break;
    case DType::Int8: load(int8_t{}); break;
    case DType::UInt8: load(uint8_t{}); break;
    case DType::Bool: load(uint8_t{}); break;
    default: throw Unsupported("a known tensor of element type " + std::string(ir::dtype_name(dtype)) + " in a computation");
  }
  has_vals = true;
  return vals;
}

VRef make_none() { return std::make_shared<Val>(); }
VRef make_bool(bool b) {
  auto v = std::make_shared<Val>();
  v->k = Val::K::Bool;
  v->b = b;
  return v;
}
VRef make_int(int64_t i) {
  auto v = std::make_shared<Val>();
  v->k = Val::K::Int;
  v->i = i;
  return v;
}
VRef make_float(double f) {
  auto v = std::make_shared<Val>();
  v->k = Val::K::Float;
  v->f = f;
  return v;
}
VRef make_str(std::string s, Val::K k) {
  auto v = std::make_shared<Val>();
  v->k = k;
  v->s = std::move(s);
  return v;
}
VRef make_list(std::vector<VRef> items, Val::K k) {
  auto v = std::make_shared<Val>();
  v->k = k;
  v->items = std::move(items);
  return v;
}

int64_t numel(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    if (d < 0 || __builtin_mul_overflow(n, d, &n)) throw Error("a tensor shape with a negative size or too many elements");
  return n;
}

namespace {
// Known tensors are shape arithmetic, masks and small parameters: a computation that would make
// a bigger one is refused rather than allowed to take the machine's memory.
constexpr int64_t kMaxKnownElements = int64_t(1) << 26;
void check_known_size(int64_t n) {
  if (n > kMaxKnownElements)
    throw Unsupported("a constant computation of " + std::to_string(n) + " elements (more than " +
                      std::to_string(kMaxKnownElements) + ")");
  Budget::run().check(BudgetKind::Memory, static_cast<uint64_t>(n) * sizeof(double), "a folded tensor");
}
// The elements of a new known tensor of this shape, all `fill`: sized and checked before allocating.
std::vector<double> filled(const std::vector<int64_t>& shape, double fill) {
  int64_t n = numel(shape);
  check_known_size(n);
  return std::vector<double>(static_cast<size_t>(n), fill);
}
}  // namespace

std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (size_t k = shape.size(); k-- > 1;) s[k - 1] = s[k] * std::max<int64_t>(shape[k], 1);
  return s;
}

VRef make_known(DType t, std::vector<int64_t> shape, std::vector<double> values) {
  check_known_size(static_cast<int64_t>(values.size()));
  auto v = std::make_shared<Val>();
  v->k = Val::K::Tensor;
  v->dtype = t;
  auto st = std::make_shared<Storage>();
  st->dtype = t;
  st->count = values.size();
  st->charge = MemoryCharge(values.size() * sizeof(double), "a folded tensor");
  st->vals = std::move(values);
  st->has_vals = true;
  v->known = std::make_shared<Known>();
  v->known->st = std::move(st);
  v->known->strides = contiguous_strides(shape);
  v->shape = std::move(shape);
  return v;
}

VRef make_symbolic(DType t, std::vector<int64_t> shape) {
  auto v = std::make_shared<Val>();
  v->k = Val::K::Tensor;
  v->dtype = t;
  v->shape = std::move(shape);
  return v;
}

std::string kind_name(const Val& v) {
  switch (v.k) {
    case Val::K::None: return "None";
    case Val::K::Bool: return "bool";
    case Val::K::Int: return "int";
    case Val::K::Float: return "float";
    case Val::K::Str: return "str";
    case Val::K::Device: return "Device";
    case Val::K::List: return "list";
    case Val::K::Tuple: return "tuple";
    case Val::K::Object: return "object";
    case Val::K::Tensor: return "Tensor";
    case Val::K::Path: return "name";
  }
  return "?";
}

std::string describe(const Val& v) {
  if (v.data) return std::string(v.k == Val::K::Bool ? "a bool" : v.k == Val::K::Int ? "an int" : "a range") + " computed from the input's values";
  switch (v.k) {
    case Val::K::Bool: return v.b ? "True" : "False";
    case Val::K::Int: return std::to_string(v.i);
    case Val::K::Float: return std::to_string(v.f);
    case Val::K::Str: return "\"" + v.s + "\"";
    case Val::K::Path: return v.s;
    case Val::K::List:
    case Val::K::Tuple: {
      std::string s = v.k == Val::K::List ? "[" : "(";
      for (size_t k = 0; k < v.items.size() && k < 8; ++k) s += (k ? ", " : "") + describe(*v.items[k]);
      if (v.items.size() > 8) s += ", ...";
      return s + (v.k == Val::K::List ? "]" : ")");
    }
    case Val::K::Tensor: {
      std::string s = "Tensor(" + std::string(ir::dtype_name(v.dtype)) + " [";
      for (size_t k = 0; k < v.shape.size(); ++k) s += (k ? ", " : "") + std::to_string(v.shape[k]);
      return s + "])";
    }
    default: return kind_name(v);
  }
}

bool is_float_type(DType t) {
  return t == DType::Float16 || t == DType::BFloat16 || t == DType::Float32 || t == DType::Float64;
}

DType dtype_from_scalar_type(int64_t code, const std::string& where) {
  switch (code) {
    case 0: return DType::UInt8;
    case 1: return DType::Int8;
    case 2: return DType::Int16;
    case 3: return DType::Int32;
    case 4: return DType::Int64;
    case 5: return DType::Float16;
    case 6: return DType::Float32;
    case 7: return DType::Float64;
    case 11: return DType::Bool;
    case 15: return DType::BFloat16;
    default: throw Unsupported(where + ": scalar type " + std::to_string(code) + " (complex and quantized types are not supported)");
  }
}

namespace {

// Calls f(storage index) for every element of a known tensor in row-major order.
template <class F>
void for_each(const Val& t, F&& f) {
  const Known& kn = *t.known;
  size_t rank = t.shape.size();
  int64_t n = numel(t.shape);
  if (n == 0) return;
  std::vector<int64_t> idx(rank, 0);
  int64_t off = kn.offset;
  for (int64_t e = 0; e < n; ++e) {
    f(off);
    for (size_t d = rank; d-- > 0;) {
      if (++idx[d] < t.shape[d]) {
        off += kn.strides[d];
        break;
      }
      off -= kn.strides[d] * (t.shape[d] - 1);
      idx[d] = 0;
    }
  }
}

}  // namespace

std::vector<double> elements(const Val& t) {
  check_known_size(numel(t.shape));
  const std::vector<double>& v = t.known->st->values();
  std::vector<double> out;
  out.reserve(static_cast<size_t>(numel(t.shape)));
  for_each(t, [&](int64_t off) { out.push_back(v[static_cast<size_t>(off)]); });
  return out;
}

ir::Tensor to_ir_tensor(const Val& t) {
  const Known& kn = *t.known;
  const Storage& st = *kn.st;
  if (st.overwritten) throw Unsupported("a tensor read after an in-place write" + (st.overwritten_by.empty() ? std::string() : " (" + st.overwritten_by + ")") + " through another view of it (not supported)");
  size_t esize = ir::dtype_size(t.dtype);
  bool contiguous = kn.strides == contiguous_strides(t.shape);
  if (st.raw && st.dtype == t.dtype && contiguous && esize) {
    size_t n = static_cast<size_t>(numel(t.shape));
    return ir::Tensor::borrow(t.dtype, t.shape, st.owner, st.raw + static_cast<size_t>(kn.offset) * esize, n * esize);
  }
  std::vector<double> v = elements(t);
  std::string bytes(v.size() * esize, '\0');
  auto store = [&](auto tag) {
    using T = decltype(tag);
    for (size_t k = 0; k < v.size(); ++k) {
      T x = static_cast<T>(v[k]);
      std::memcpy(bytes.data() + k * sizeof(T), &x, sizeof(T));
    }
  };
  switch (t.dtype) {
    case DType::Float32: store(float{}); break;
    case DType::Float64: store(double{}); break;
    case DType::Int64: store(int64_t{}); break;
    case DType::Int32: store(int32_t{}); break;
    case DType::Int16: store(int16_t{}); break;
    case DType::Int8: store(int8_t{}); break;
    case DType::UInt8: store(uint8_t{}); break;
    case DType::Bool: store(uint8_t{}); break;
    default: throw Unsupported("a computed tensor of element type " + std::string(ir::dtype_name(t.dtype)));
  }
  return ir::Tensor::from_bytes(t.dtype, t.shape, std::move(bytes));
}

// ---------------------------------------------------------------- helpers for the rules

namespace {

[[noreturn]] void bad(const std::string& where, const std::string& what) { throw Error(where + ": " + what); }

const Val& tensor_arg(const Args& a, size_t i, const std::string& where) {
  if (i >= a.size() || !a[i]->is_tensor()) bad(where, "argument " + std::to_string(i) + " is not a tensor");
  return *a[i];
}

int64_t int_arg(const Args& a, size_t i, const std::string& where) {
  if (i < a.size()) {
    if (a[i]->k == Val::K::Int) return a[i]->i;
    if (a[i]->k == Val::K::Bool) return a[i]->b;
  }
  bad(where, "argument " + std::to_string(i) + " is not an int");
}

bool has(const Args& a, size_t i) { return i < a.size() && a[i]->k != Val::K::None; }

std::vector<int64_t> ints_arg(const Args& a, size_t i, const std::string& where) {
  if (i >= a.size()) bad(where, "argument " + std::to_string(i) + " is missing");
  const Val& v = *a[i];
  if (v.k == Val::K::Int && (v.i > (int64_t(1) << 40) || v.i < -(int64_t(1) << 40)))
    bad(where, "argument " + std::to_string(i) + " holds " + std::to_string(v.i) + ", out of range for a size");
  if (v.k == Val::K::Int) return {v.i};
  if (v.k != Val::K::List && v.k != Val::K::Tuple) bad(where, "argument " + std::to_string(i) + " is not a list of ints");
  std::vector<int64_t> out;
  for (const auto& x : v.items) {
    if (x->k != Val::K::Int) bad(where, "argument " + std::to_string(i) + " holds " + describe(*x) + ", not an int");
    // sizes, strides, paddings, dims: anything beyond 2^40 is no real model's (and would overflow
    // the output-size arithmetic)
    if (x->i > (int64_t(1) << 40) || x->i < -(int64_t(1) << 40))
      bad(where, "argument " + std::to_string(i) + " holds " + std::to_string(x->i) + ", out of range for a size");
    out.push_back(x->i);
  }
  return out;
}

double num_arg(const Val& v, const std::string& where) {
  if (v.k == Val::K::Int) return static_cast<double>(v.i);
  if (v.k == Val::K::Float) return v.f;
  if (v.k == Val::K::Bool) return v.b;
  if (v.is_known_tensor() && numel(v.shape) == 1) return elements(v)[0];
  bad(where, describe(v) + " is not a number");
}

int64_t wrap_dim(int64_t d, size_t rank, const std::string& where) {
  int64_t r = static_cast<int64_t>(rank);
  if (r == 0) r = 1;
  if (d < -r || d >= r) bad(where, "dimension " + std::to_string(d) + " out of range for rank " + std::to_string(rank));
  return d < 0 ? d + r : d;
}

int category(DType t) {
  if (t == DType::Bool) return 0;
  if (is_float_type(t)) return 2;
  return 1;
}

DType promote(DType a, DType b) {
  if (a == b) return a;
  if (a == DType::Undefined) return b;
  if (b == DType::Undefined) return a;
  int ca = category(a), cb = category(b);
  if (ca != cb) return ca > cb ? a : b;
  if (ca == 2) {
    if (a == DType::Float64 || b == DType::Float64) return DType::Float64;
    return DType::Float32;  // float16 with bfloat16, or either with float32
  }
  if (ca == 1) {
    if (a == DType::UInt8 || b == DType::UInt8) {
      DType o = a == DType::UInt8 ? b : a;
      return o == DType::Int8 ? DType::Int16 : o;
    }
    return ir::dtype_size(a) >= ir::dtype_size(b) ? a : b;
  }
  return a;
}

// torch.result_type: dimensioned tensors first; zero-dim tensors and Python numbers only lift
// the category.
DType result_type(const std::vector<const Val*>& ops) {
  DType dim = DType::Undefined, zero = DType::Undefined, wrapped = DType::Undefined;
  for (const Val* v : ops) {
    if (v->is_tensor()) {
      if (!v->shape.empty()) dim = promote(dim, v->dtype);
      else zero = promote(zero, v->dtype);
    } else if (v->k == Val::K::Float) {
      wrapped = promote(wrapped, DType::Float64);
    } else if (v->k == Val::K::Int) {
      wrapped = promote(wrapped, DType::Int64);
    } else if (v->k == Val::K::Bool) {
      wrapped = promote(wrapped, DType::Bool);
    }
  }
  DType r = dim;
  if (zero != DType::Undefined && (r == DType::Undefined || category(zero) > category(r))) r = zero;
  if (wrapped != DType::Undefined && (r == DType::Undefined || category(wrapped) > category(r)))
    r = category(wrapped) == 2 ? DType::Float32 : wrapped;
  return r == DType::Undefined ? DType::Float32 : r;
}

std::vector<int64_t> shape_of(const Val& v) { return v.is_tensor() ? v.shape : std::vector<int64_t>{}; }

std::vector<int64_t> broadcast(const std::vector<int64_t>& a, const std::vector<int64_t>& b, const std::string& where) {
  size_t n = std::max(a.size(), b.size());
  std::vector<int64_t> out(n);
  for (size_t k = 0; k < n; ++k) {
    int64_t x = k < n - a.size() ? 1 : a[k - (n - a.size())];
    int64_t y = k < n - b.size() ? 1 : b[k - (n - b.size())];
    if (x != y && x != 1 && y != 1) bad(where, "shapes cannot be broadcast together");
    out[k] = x == 1 ? y : x;
  }
  return out;
}

// Pooling / convolution output size along one axis.
int64_t pooled(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d, bool ceil_mode) {
  int64_t num = in + 2 * p - d * (k - 1) - 1;
  int64_t out = (ceil_mode ? (num + s - 1) / s : num / s) + 1;
  if (ceil_mode && (out - 1) * s >= in + p) --out;
  return out;
}

int64_t pick(const std::vector<int64_t>& v, size_t i, int64_t dflt) {
  if (v.empty()) return dflt;
  return v.size() == 1 ? v[0] : v.at(i);
}

std::vector<int64_t> reshape_target(const std::vector<int64_t>& in, std::vector<int64_t> s, const std::string& where) {
  int64_t known = 1, infer = -1;
  for (size_t k = 0; k < s.size(); ++k) {
    if (s[k] == -1) {
      if (infer >= 0) bad(where, "only one dimension can be -1");
      infer = static_cast<int64_t>(k);
    } else {
      known *= s[k];
    }
  }
  int64_t total = numel(in);
  if (infer >= 0) {
    if (known == 0 || total % known) bad(where, "cannot reshape");
    s[static_cast<size_t>(infer)] = total / known;
  } else if (known != total) {
    bad(where, "shape has " + std::to_string(known) + " elements, the tensor " + std::to_string(total));
  }
  return s;
}

struct Slice {
  int64_t dim, start, end, step;
  int64_t len;
};

Slice slice_of(const Val& x, const Args& a, const std::string& where) {
  Slice s{};
  s.dim = wrap_dim(has(a, 1) ? int_arg(a, 1, where) : 0, x.shape.size(), where);
  int64_t n = x.shape[static_cast<size_t>(s.dim)];
  s.start = has(a, 2) ? int_arg(a, 2, where) : 0;
  s.end = has(a, 3) ? int_arg(a, 3, where) : INT64_MAX;
  s.step = has(a, 4) ? int_arg(a, 4, where) : 1;
  if (s.step <= 0) bad(where, "slice step must be positive");
  if (s.start < 0) s.start += n;
  if (s.end < 0) s.end += n;
  s.start = std::clamp<int64_t>(s.start, 0, n);
  s.end = std::clamp<int64_t>(s.end, 0, n);
  s.len = s.end > s.start ? (s.end - s.start + s.step - 1) / s.step : 0;
  return s;
}

std::vector<int64_t> permutation(const Val& x, const Args& a, size_t i, const std::string& where) {
  std::vector<int64_t> p = ints_arg(a, i, where);
  if (p.size() != x.shape.size()) bad(where, "permutation of the wrong length");
  std::vector<bool> seen(p.size());
  for (auto& d : p) {
    d = wrap_dim(d, x.shape.size(), where);
    if (seen[static_cast<size_t>(d)]) bad(where, "repeated dimension in permutation");
    seen[static_cast<size_t>(d)] = true;
  }
  return p;
}

std::vector<int64_t> expand_shape(const Val& x, const std::vector<int64_t>& size, const std::string& where) {
  if (size.size() < x.shape.size()) bad(where, "expand to fewer dimensions");
  std::vector<int64_t> out(size.size());
  size_t lead = size.size() - x.shape.size();
  for (size_t k = 0; k < size.size(); ++k) {
    int64_t have = k < lead ? 1 : x.shape[k - lead];
    int64_t want = size[k];
    if (want == -1) {
      if (k < lead) bad(where, "-1 in a new leading dimension");
      want = have;
    }
    if (have != want && have != 1) bad(where, "cannot expand dimension " + std::to_string(k));
    out[k] = want;
  }
  return out;
}

std::vector<int64_t> matmul_shape(const std::vector<int64_t>& a, const std::vector<int64_t>& b, const std::string& where) {
  if (a.empty() || b.empty()) bad(where, "matmul of a zero-dimensional tensor");
  if (a.size() == 1 && b.size() == 1) return {};
  if (a.size() == 2 && b.size() == 1) return {a[0]};
  if (a.size() == 1) {
    std::vector<int64_t> out(b.begin(), b.end() - 2);
    out.push_back(b.back());
    return out;
  }
  if (b.size() == 1) return std::vector<int64_t>(a.begin(), a.end() - 1);
  if (a.back() != b[b.size() - 2]) bad(where, "matmul: inner dimensions differ");
  std::vector<int64_t> ba(a.begin(), a.end() - 2), bb(b.begin(), b.end() - 2);
  std::vector<int64_t> out = broadcast(ba, bb, where);
  out.push_back(a[a.size() - 2]);
  out.push_back(b.back());
  return out;
}

std::string base_of(const std::string& op) {
  std::string b = op.substr(0, op.find('.'));
  return b;
}

std::string overload_of(const std::string& op) {
  size_t d = op.find('.');
  return d == std::string::npos ? "" : op.substr(d + 1);
}

bool is_unary_same(const std::string& b) {
  static const char* names[] = {
      "aten::relu", "aten::relu_", "aten::relu6", "aten::sigmoid", "aten::sigmoid_", "aten::tanh", "aten::tanh_",
      "aten::silu", "aten::silu_", "aten::gelu", "aten::gelu_", "aten::hardtanh", "aten::hardtanh_",
      "aten::hardswish", "aten::hardswish_", "aten::hardsigmoid", "aten::hardsigmoid_", "aten::elu", "aten::elu_",
      "aten::leaky_relu", "aten::leaky_relu_", "aten::exp", "aten::log", "aten::sqrt", "aten::rsqrt", "aten::neg",
      "aten::abs", "aten::erf", "aten::dropout", "aten::dropout_", "aten::feature_dropout", "aten::feature_dropout_",
      "aten::alpha_dropout", "aten::contiguous", "aten::clone", "aten::detach", "aten::batch_norm",
      "aten::layer_norm", "aten::instance_norm", "aten::group_norm", "aten::softmax", "aten::log_softmax",
      "aten::clamp", "aten::clamp_", "aten::clamp_min", "aten::clamp_max", "aten::roll", "aten::fill_",
      "aten::masked_fill", "aten::masked_fill_", "aten::zeros_like", "aten::ones_like", "aten::empty_like"};
  for (const char* n : names)
    if (b == n) return true;
  return false;
}

bool is_binary(const std::string& b) {
  static const char* names[] = {"aten::add", "aten::add_", "aten::sub", "aten::sub_", "aten::mul", "aten::mul_",
                                "aten::div", "aten::div_", "aten::rsub", "aten::pow", "aten::remainder",
                                "aten::floor_divide", "aten::maximum", "aten::minimum"};
  for (const char* n : names)
    if (b == n) return true;
  return false;
}

bool is_compare(const std::string& b) {
  return b == "aten::eq" || b == "aten::ne" || b == "aten::lt" || b == "aten::le" || b == "aten::gt" || b == "aten::ge";
}

}  // namespace

// ---------------------------------------------------------------- shape rules

std::optional<std::vector<OutInfo>> infer(const std::string& op, const Args& a, const std::string& where) {
  std::string b = base_of(op), ov = overload_of(op);
  auto one = [](DType t, std::vector<int64_t> s) { return std::vector<OutInfo>{OutInfo{t, std::move(s), true}}; };
  if (b == "aten::softmax" || b == "aten::log_softmax") {
    const Val& x = tensor_arg(a, 0, where);
    DType t = has(a, 2) ? dtype_from_scalar_type(int_arg(a, 2, where), where) : x.dtype;
    return one(t, x.shape);
  }
  if (b == "aten::masked_fill" || b == "aten::masked_fill_" || b == "aten::fill_") {
    const Val& x = tensor_arg(a, 0, where);
    return one(x.dtype, x.shape);
  }
  // zeros_like(x, dtype=) & co.: x's shape, the dtype argument's type (graph ops when x's shape
  // holds a symbolic dimension, else folded)
  if (b == "aten::zeros_like" || b == "aten::ones_like" || b == "aten::empty_like" || b == "aten::full_like") {
    const Val& x = tensor_arg(a, 0, where);
    size_t t = b == "aten::full_like" ? 2 : 1;
    return one(has(a, t) ? dtype_from_scalar_type(int_arg(a, t, where), where) : x.dtype, x.shape);
  }
  if (is_unary_same(b)) {
    const Val& x = tensor_arg(a, 0, where);
    // the math ops of promotion_table.h compute integers and bools as the default float type
    const PromotionOf po = promotion_of(b);
    if (po.rule && po.rule->true_division && po.rule->operands.size() == 1 && category(x.dtype) < 2) return one(DType::Float32, x.shape);
    return one(x.dtype, x.shape);
  }
  if (is_binary(b) || is_compare(b)) {
    std::vector<const Val*> ops{a.at(0).get(), a.at(1).get()};
    DType t = result_type(ops);
    if (b == "aten::div" && category(t) < 2 && !has(a, 2)) t = DType::Float32;  // true division
    if (b == "aten::pow" && category(t) < 2 && a[1]->k == Val::K::Float) t = DType::Float32;
    if (is_compare(b)) t = DType::Bool;
    if (b.back() == '_') t = a[0]->dtype;  // in place: the self's type
    return one(t, broadcast(shape_of(*a[0]), shape_of(*a[1]), where));
  }
  // (aten::convolution has _convolution's first nine arguments: what the TorchScript writer emits)
  if (b == "aten::_convolution" || b == "aten::convolution" || b == "aten::conv2d" || b == "aten::conv1d" || b == "aten::conv3d") {
    const Val& x = tensor_arg(a, 0, where);
    const Val& w = tensor_arg(a, 1, where);
    if ((b == "aten::_convolution" || b == "aten::convolution") && int_arg(a, 6, where)) {
      // transposed: (in - 1) * stride - 2 * pad + dilation * (k - 1) + output_padding + 1 per spatial dim; weight [C_in, C_out / groups, k...]
      std::vector<int64_t> stride = ints_arg(a, 3, where), pad = ints_arg(a, 4, where), dil = ints_arg(a, 5, where), opad = ints_arg(a, 7, where);
      int64_t groups = int_arg(a, 8, where);
      if (x.shape.size() < 3 || w.shape.size() != x.shape.size()) bad(where, "convolution of the wrong rank");
      std::vector<int64_t> out{x.shape[0], w.shape[1] * groups};
      for (size_t i = 0; i + 2 < x.shape.size(); ++i)
        out.push_back((x.shape[i + 2] - 1) * pick(stride, i, 1) - 2 * pick(pad, i, 0) + pick(dil, i, 1) * (w.shape[i + 2] - 1) +
                      pick(opad, i, 0) + 1);
      return one(x.dtype, out);
    }
    std::vector<int64_t> stride = ints_arg(a, 3, where), pad = ints_arg(a, 4, where), dil = ints_arg(a, 5, where);
    if (x.shape.size() < 3 || w.shape.size() != x.shape.size()) bad(where, "convolution of the wrong rank");
    std::vector<int64_t> out{x.shape[0], w.shape[0]};
    for (size_t i = 0; i + 2 < x.shape.size(); ++i)
      out.push_back(pooled(x.shape[i + 2], w.shape[i + 2], pick(stride, i, 1), pick(pad, i, 0), pick(dil, i, 1), false));
    return one(x.dtype, out);
  }
  if (b == "aten::max_pool2d" || b == "aten::avg_pool2d" || b == "aten::max_pool1d" || b == "aten::avg_pool1d") {
    const Val& x = tensor_arg(a, 0, where);
    bool avg = b.find("avg") != std::string::npos;
    std::vector<int64_t> k = ints_arg(a, 1, where), s = ints_arg(a, 2, where), p = ints_arg(a, 3, where);
    std::vector<int64_t> d = avg ? std::vector<int64_t>{1} : ints_arg(a, 4, where);
    bool ceil_mode = int_arg(a, avg ? 4 : 5, where);
    size_t sp = b.back() == 'd' && b[b.size() - 2] == '2' ? 2 : 1;
    if (x.shape.size() < sp) bad(where, "pooling input of too small a rank");
    std::vector<int64_t> out(x.shape.begin(), x.shape.end() - static_cast<long>(sp));
    for (size_t i = 0; i < sp; ++i) {
      int64_t kk = pick(k, i, 1);
      out.push_back(pooled(x.shape[x.shape.size() - sp + i], kk, pick(s, i, kk), pick(p, i, 0), pick(d, i, 1), ceil_mode));
    }
    return one(x.dtype, out);
  }
  if (b == "aten::adaptive_avg_pool2d" || b == "aten::adaptive_max_pool2d" || b == "aten::adaptive_avg_pool1d" ||
      b == "aten::adaptive_avg_pool3d" || b == "aten::adaptive_max_pool3d" || b == "aten::adaptive_max_pool1d") {
    const Val& x = tensor_arg(a, 0, where);
    std::vector<int64_t> o = ints_arg(a, 1, where);
    if (x.shape.size() < o.size()) bad(where, "adaptive pooling input of too small a rank");
    std::vector<int64_t> out(x.shape.begin(), x.shape.end() - static_cast<long>(o.size()));
    for (size_t i = 0; i < o.size(); ++i) out.push_back(o[i] < 0 ? x.shape[x.shape.size() - o.size() + i] : o[i]);
    std::vector<OutInfo> r = one(x.dtype, out);
    if (b == "aten::adaptive_max_pool2d" || b == "aten::adaptive_max_pool3d" || b == "aten::adaptive_max_pool1d") r.push_back(OutInfo{DType::Int64, out, true});
    return r;
  }
  if (b == "aten::linear") {
    const Val& x = tensor_arg(a, 0, where);
    const Val& w = tensor_arg(a, 1, where);
    if (x.shape.empty() || w.shape.size() != 2 || x.shape.back() != w.shape[1]) bad(where, "linear: input and weight do not fit");
    std::vector<int64_t> out = x.shape;
    out.back() = w.shape[0];
    return one(x.dtype, out);
  }
  if (b == "aten::matmul" || b == "aten::bmm" || b == "aten::mm") {
    const Val& x = tensor_arg(a, 0, where);
    const Val& y = tensor_arg(a, 1, where);
    return one(promote(x.dtype, y.dtype), matmul_shape(x.shape, y.shape, where));
  }
  if (b == "aten::flatten") {
    const Val& x = tensor_arg(a, 0, where);
    if (ov != "using_ints") return std::nullopt;
    if (x.shape.empty()) return one(x.dtype, {1});
    int64_t s = wrap_dim(int_arg(a, 1, where), x.shape.size(), where), e = wrap_dim(int_arg(a, 2, where), x.shape.size(), where);
    if (s > e) bad(where, "flatten: start_dim after end_dim");
    std::vector<int64_t> out(x.shape.begin(), x.shape.begin() + s);
    int64_t m = 1;
    for (int64_t k = s; k <= e; ++k) m *= x.shape[static_cast<size_t>(k)];
    out.push_back(m);
    out.insert(out.end(), x.shape.begin() + e + 1, x.shape.end());
    return one(x.dtype, out);
  }
  if (b == "aten::cat" || b == "aten::concat") {
    if (a.empty() || a[0]->k != Val::K::List || a[0]->items.empty()) bad(where, "cat of no tensors");
    const auto& ts = a[0]->items;
    std::vector<const Val*> ops;
    for (const auto& t : ts) {
      if (!t->is_tensor()) bad(where, "cat of a non-tensor");
      ops.push_back(t.get());
    }
    const Val* first = nullptr;
    for (const auto& t : ts)
      if (!(t->shape.size() == 1 && t->shape[0] == 0)) {
        first = t.get();
        break;
      }
    if (!first) return one(result_type(ops), {0});
    int64_t d = wrap_dim(int_arg(a, 1, where), first->shape.size(), where);
    std::vector<int64_t> out = first->shape;
    out[static_cast<size_t>(d)] = 0;
    for (const auto& t : ts) {
      if (t->shape.size() == 1 && t->shape[0] == 0) continue;
      if (t->shape.size() != out.size()) bad(where, "cat of tensors of different ranks");
      for (size_t k = 0; k < out.size(); ++k)
        if (static_cast<int64_t>(k) != d && t->shape[k] != out[k]) bad(where, "cat of tensors whose shapes differ");
      out[static_cast<size_t>(d)] += t->shape[static_cast<size_t>(d)];
    }
    return one(result_type(ops), out);
  }
  if (b == "aten::permute") {
    const Val& x = tensor_arg(a, 0, where);
    std::vector<int64_t> p = permutation(x, a, 1, where), out;
    for (int64_t d : p) out.push_back(x.shape[static_cast<size_t>(d)]);
    return one(x.dtype, out);
  }
  if (b == "aten::reshape" || b == "aten::view") {
    const Val& x = tensor_arg(a, 0, where);
    if (b == "aten::view" && !ov.empty()) return std::nullopt;  // view.dtype
    return one(x.dtype, reshape_target(x.shape, ints_arg(a, 1, where), where));
  }
  if (b == "aten::numpy_T") {  // x.T: every dimension reversed
    const Val& x = tensor_arg(a, 0, where);
    return one(x.dtype, std::vector<int64_t>(x.shape.rbegin(), x.shape.rend()));
  }
  if (b == "aten::transpose") {
    const Val& x = tensor_arg(a, 0, where);
    int64_t d0 = wrap_dim(int_arg(a, 1, where), x.shape.size(), where), d1 = wrap_dim(int_arg(a, 2, where), x.shape.size(), where);
    std::vector<int64_t> out = x.shape;
    if (!out.empty()) std::swap(out[static_cast<size_t>(d0)], out[static_cast<size_t>(d1)]);
    return one(x.dtype, out);
  }
  if (b == "aten::unsqueeze") {
    const Val& x = tensor_arg(a, 0, where);
    int64_t d = wrap_dim(int_arg(a, 1, where), x.shape.size() + 1, where);
    std::vector<int64_t> out = x.shape;
    out.insert(out.begin() + d, 1);
    return one(x.dtype, out);
  }
  if (b == "aten::squeeze" && ov == "dim") {
    const Val& x = tensor_arg(a, 0, where);
    std::vector<int64_t> out = x.shape;
    if (out.empty()) return one(x.dtype, out);
    int64_t d = wrap_dim(int_arg(a, 1, where), x.shape.size(), where);
    if (out[static_cast<size_t>(d)] == 1) out.erase(out.begin() + d);
    return one(x.dtype, out);
  }
  if (b == "aten::select") {
    const Val& x = tensor_arg(a, 0, where);
    if (ov != "int") return std::nullopt;
    int64_t d = wrap_dim(int_arg(a, 1, where), x.shape.size(), where);
    int64_t i = int_arg(a, 2, where), n = x.shape[static_cast<size_t>(d)];
    if (i < -n || i >= n) bad(where, "select index out of range");
    std::vector<int64_t> out = x.shape;
    out.erase(out.begin() + d);
    return one(x.dtype, out);
  }
  if (b == "aten::slice") {
    const Val& x = tensor_arg(a, 0, where);
    if (x.shape.empty()) bad(where, "slice of a zero-dimensional tensor");
    Slice s = slice_of(x, a, where);
    std::vector<int64_t> out = x.shape;
    out[static_cast<size_t>(s.dim)] = s.len;
    return one(x.dtype, out);
  }
  if (b == "aten::expand") {
    const Val& x = tensor_arg(a, 0, where);
    return one(x.dtype, expand_shape(x, ints_arg(a, 1, where), where));
  }
  if (b == "aten::pad" || b == "aten::constant_pad_nd") {
    const Val& x = tensor_arg(a, 0, where);
    std::vector<int64_t> p = ints_arg(a, 1, where);
    if (p.size() % 2 || p.size() / 2 > x.shape.size()) bad(where, "pad list of the wrong length");
    std::vector<int64_t> out = x.shape;
    for (size_t k = 0; k < p.size() / 2; ++k) out[out.size() - 1 - k] += p[2 * k] + p[2 * k + 1];
    return one(x.dtype, out);
  }
  if ((b == "aten::mean" || b == "aten::sum") && ov.empty()) {
    const Val& x = tensor_arg(a, 0, where);
    // (torch sums integers and bools as int64)
    return one(has(a, 1) ? dtype_from_scalar_type(int_arg(a, 1, where), where) : b == "aten::sum" && category(x.dtype) < 2 ? DType::Int64 : x.dtype, {});
  }
  if ((b == "aten::mean" || b == "aten::sum" || b == "aten::amax") && (ov == "dim" || ov == "dim_IntList" || ov.empty())) {
    const Val& x = tensor_arg(a, 0, where);
    std::vector<int64_t> dims = ints_arg(a, 1, where);
    bool keep = int_arg(a, 2, where);
    std::vector<bool> red(x.shape.size(), dims.empty());
    for (int64_t d : dims) red[static_cast<size_t>(wrap_dim(d, x.shape.size(), where))] = true;
    std::vector<int64_t> out;
    for (size_t k = 0; k < x.shape.size(); ++k) {
      if (!red[k]) out.push_back(x.shape[k]);
      else if (keep) out.push_back(1);
    }
    DType t = b == "aten::sum" && category(x.dtype) < 2 ? DType::Int64 : x.dtype;  // (torch sums integers and bools as int64)
    if (b != "aten::amax" && has(a, 3)) t = dtype_from_scalar_type(int_arg(a, 3, where), where);
    return one(t, out);
  }
  if (b == "aten::new_zeros" || b == "aten::new_ones" || b == "aten::new_empty") {
    const Val& x = tensor_arg(a, 0, where);
    DType t = has(a, 2) ? dtype_from_scalar_type(int_arg(a, 2, where), where) : x.dtype;
    return one(t, ints_arg(a, 1, where));
  }
  if (b == "aten::index" && ov == "Tensor") {
    // x[:, ..., idx]: one index tensor at position k, None (a full slice) before it
    const Val& x = tensor_arg(a, 0, where);
    if (a[1]->k != Val::K::List) throw Unsupported(where + ": indices that are not a list");
    size_t k = 0, tensors = 0;
    for (size_t i = 0; i < a[1]->items.size(); ++i) {
      const Val& e = *a[1]->items[i];
      if (e.k == Val::K::None) continue;
      if (!e.is_tensor()) throw Unsupported(where + ": an index that is neither a tensor nor None");
      k = i;
      ++tensors;
    }
    if (tensors != 1) throw Unsupported(where + ": indexing with " + std::to_string(tensors) + " index tensors (one is supported)");
    const Val& idx = *a[1]->items[k];
    if (k >= x.shape.size()) bad(where, "index: more indices than the tensor has dimensions");
    if (idx.dtype == DType::Bool || idx.dtype == DType::UInt8) {
      // a mask over x's leading dimensions: as many rows as it has true elements, known only at run time
      if (k != 0 || idx.shape.size() > x.shape.size()) throw Unsupported(where + ": a mask index after a slice");
      for (size_t d = 0; d < idx.shape.size(); ++d)
        if (idx.shape[d] != x.shape[d]) bad(where, "index: the mask's shape does not match the indexed tensor's leading dimensions");
      std::vector<int64_t> out{kRunTimeDim};
      out.insert(out.end(), x.shape.begin() + static_cast<long>(idx.shape.size()), x.shape.end());
      return one(x.dtype, out);
    }
    std::vector<int64_t> out(x.shape.begin(), x.shape.begin() + static_cast<long>(k));
    out.insert(out.end(), idx.shape.begin(), idx.shape.end());
    out.insert(out.end(), x.shape.begin() + static_cast<long>(k) + 1, x.shape.end());
    return one(x.dtype, out);
  }
  if (b == "aten::_native_multi_head_attention") {
    const Val& q = tensor_arg(a, 0, where);
    bool need_weights = has(a, 10) && int_arg(a, 10, where);
    if (need_weights) throw Unsupported(where + ": attention weights (need_weights=True) have no shape rule yet");
    std::vector<OutInfo> r = one(q.dtype, q.shape);
    r.push_back(OutInfo{q.dtype, {}, false});
    return r;
  }
  return std::nullopt;
}

// ---------------------------------------------------------------- kernels on known tensors

namespace {

VRef view_of(const Val& x, std::vector<int64_t> shape, std::vector<int64_t> strides, int64_t offset) {
  auto v = std::make_shared<Val>();
  v->k = Val::K::Tensor;
  v->dtype = x.dtype;
  v->shape = std::move(shape);
  v->known = std::make_shared<Known>();
  v->known->st = x.known->st;
  v->known->strides = std::move(strides);
  v->known->offset = offset;
  return v;
}

double cast_to(DType t, double x) {
  if (t == DType::Bool) return x != 0;
  if (is_float_type(t)) return t == DType::Float32 ? static_cast<double>(static_cast<float>(x)) : x;
  return std::trunc(x);
}

// Python's floor division and modulo (torch.floor_divide / torch.remainder).
double floordiv(double x, double y) { return std::floor(x / y); }
double pymod(double x, double y) {
  double r = std::fmod(x, y);
  if (r != 0 && ((r < 0) != (y < 0))) r += y;
  return r;
}

std::optional<std::vector<VRef>> elementwise(const std::string& b, const Args& a, const std::string& where) {
  const Val& x = *a[0];
  const Val& y = *a[1];
  std::vector<const Val*> ops{&x, &y};
  DType t = is_compare(b) ? DType::Bool : result_type(ops);
  DType compute = result_type(ops);
  if (b == "aten::div" && category(t) < 2) t = compute = DType::Float32;
  if (b == "aten::pow" && category(t) < 2 && y.k == Val::K::Float) t = compute = DType::Float32;
  std::vector<int64_t> shape = broadcast(shape_of(x), shape_of(y), where);
  double alpha = 1;
  if ((b == "aten::add" || b == "aten::sub" || b == "aten::rsub") && has(a, 2)) alpha = num_arg(*a[2], where);
  auto expand_vals = [&](const Val& v) -> std::vector<double> {
    if (!v.is_tensor()) return std::vector<double>(static_cast<size_t>(numel(shape)), num_arg(v, where));
    VRef e = view_of(v, shape, {}, v.known->offset);
    std::vector<int64_t> st(shape.size(), 0);
    size_t lead = shape.size() - v.shape.size();
    for (size_t k = 0; k < v.shape.size(); ++k) st[lead + k] = v.shape[k] == 1 ? 0 : v.known->strides[k];
    e->known->strides = st;
    return elements(*e);
  };
  std::vector<double> xs = expand_vals(x), ys = expand_vals(y), out(xs.size());
  for (size_t k = 0; k < xs.size(); ++k) {
    double p = cast_to(compute, xs[k]), q = cast_to(compute, ys[k]), r = 0;
    if (b == "aten::add") r = p + alpha * q;
    else if (b == "aten::sub") r = p - alpha * q;
    else if (b == "aten::rsub") r = q - alpha * p;
    else if (b == "aten::mul") r = p * q;
    else if (b == "aten::div") r = p / q;
    else if (b == "aten::pow") r = std::pow(p, q);
    else if (b == "aten::remainder") r = category(compute) == 2 ? pymod(p, q) : (q == 0 ? throw Error(where + ": integer modulo by zero") : pymod(p, q));
    else if (b == "aten::floor_divide") r = category(compute) < 2 && q == 0 ? throw Error(where + ": integer division by zero") : floordiv(p, q);
    else if (b == "aten::maximum") r = std::max(p, q);
    else if (b == "aten::minimum") r = std::min(p, q);
    else if (b == "aten::eq") r = p == q;
    else if (b == "aten::ne") r = p != q;
    else if (b == "aten::lt") r = p < q;
    else if (b == "aten::le") r = p <= q;
    else if (b == "aten::gt") r = p > q;
    else if (b == "aten::ge") r = p >= q;
    else return std::nullopt;
    out[k] = cast_to(t, r);
  }
  return std::vector<VRef>{make_known(t, shape, std::move(out))};
}

}  // namespace

int64_t to_int64(double x, const std::string& where) {
  if (!(x >= -9.2233720368547758e18 && x < 9.2233720368547758e18)) throw Error(where + ": " + std::to_string(x) + " does not fit in an int");
  return static_cast<int64_t>(x);
}

// TorchScript prints int arithmetic as torch.add(a, b), ...
std::optional<VRef> scalar_op(const std::string& b, const Args& a, const std::string& where) {
  if (a.empty()) return std::nullopt;
  for (const auto& v : a)
    if (v->k != Val::K::Int && v->k != Val::K::Float && v->k != Val::K::Bool) return std::nullopt;
  bool ints = true;
  for (const auto& v : a) ints &= v->k != Val::K::Float;
  auto num = [&](size_t i) { return num_arg(*a[i], where); };
  auto iv = [&](size_t i) { return a[i]->k == Val::K::Int ? a[i]->i : static_cast<int64_t>(a[i]->b); };
  auto number = [&](double x) { return ints ? make_int(to_int64(x, where)) : make_float(x); };
  if (a.size() == 1) {
    if (ints && iv(0) == INT64_MIN && (b == "aten::neg" || b == "aten::abs")) throw Error(where + ": integer overflow");
    if (b == "aten::neg") return ints ? make_int(-iv(0)) : make_float(-num(0));
    if (b == "aten::abs") return ints ? make_int(std::llabs(iv(0))) : make_float(std::fabs(num(0)));
    if (b == "aten::__not__") return make_bool(num(0) == 0);
    if (b == "aten::floor") return make_int(to_int64(std::floor(num(0)), where));
    if (b == "aten::ceil") return make_int(to_int64(std::ceil(num(0)), where));
    if (b == "aten::sqrt") return make_float(std::sqrt(num(0)));
    if (b == "aten::Int") return make_int(to_int64(num(0), where));
    if (b == "aten::Float") return make_float(num(0));
    if (b == "aten::Bool") return make_bool(num(0) != 0);
    return std::nullopt;
  }
  if (a.size() != 2) return std::nullopt;
  double x = num(0), y = num(1);
  if (ints && (b == "aten::floordiv" || b == "aten::remainder" || b == "aten::div") && iv(1) == 0)
    throw Error(where + ": division by zero");
  int64_t r = 0;
  auto overflow = [&]() -> VRef { throw Error(where + ": integer overflow"); };
  if (b == "aten::add") return ints ? (__builtin_add_overflow(iv(0), iv(1), &r) ? overflow() : make_int(r)) : make_float(x + y);
  if (b == "aten::sub") return ints ? (__builtin_sub_overflow(iv(0), iv(1), &r) ? overflow() : make_int(r)) : make_float(x - y);
  if (b == "aten::mul") return ints ? (__builtin_mul_overflow(iv(0), iv(1), &r) ? overflow() : make_int(r)) : make_float(x * y);
  if (b == "aten::div") return make_float(x / y);
  if (b == "aten::floordiv") return number(std::floor(x / y));
  if (b == "aten::remainder") return ints ? make_int(static_cast<int64_t>(pymod(x, y))) : make_float(pymod(x, y));
  if (b == "aten::pow") return make_float(std::pow(x, y));
  if (b == "aten::min") return number(std::min(x, y));
  if (b == "aten::max") return number(std::max(x, y));
  if (b == "aten::gt") return make_bool(x > y);
  if (b == "aten::lt") return make_bool(x < y);
  if (b == "aten::ge") return make_bool(x >= y);
  if (b == "aten::le") return make_bool(x <= y);
  if (b == "aten::eq") return make_bool(x == y);
  if (b == "aten::ne") return make_bool(x != y);
  if (b == "aten::__and__") return ints ? make_int(iv(0) & iv(1)) : std::optional<VRef>();
  if (b == "aten::__or__") return ints ? make_int(iv(0) | iv(1)) : std::optional<VRef>();
  if (b == "aten::__xor__") return ints ? make_int(iv(0) ^ iv(1)) : std::optional<VRef>();
  return std::nullopt;
}

std::optional<std::vector<VRef>> evaluate(const std::string& op, const Args& a, const std::string& where) {
  std::string b = base_of(op), ov = overload_of(op);
  if (auto v = scalar_op(b, a, where)) {
    // __and__ of bools gives a bool
    if (((*v)->k == Val::K::Int) && a[0]->k == Val::K::Bool && (b == "aten::__and__" || b == "aten::__or__" || b == "aten::__xor__"))
      (*v)->k = Val::K::Bool, (*v)->b = (*v)->i != 0;
    return std::vector<VRef>{*v};
  }
  // Shapes only: these need no known elements.
  if (b == "aten::size") {
    const Val& x = tensor_arg(a, 0, where);
    if (ov == "int") return std::vector<VRef>{make_int(x.shape.empty() ? 1 : x.shape[static_cast<size_t>(wrap_dim(int_arg(a, 1, where), x.shape.size(), where))])};
    if (ov.empty()) {
      std::vector<VRef> items;
      for (int64_t d : x.shape) items.push_back(make_int(d));
      return std::vector<VRef>{make_list(std::move(items))};
    }
    return std::nullopt;
  }
  if (b == "aten::dim") return std::vector<VRef>{make_int(static_cast<int64_t>(tensor_arg(a, 0, where).shape.size()))};
  // what a symbolic tensor's element type says (scripted code asks; no graph op); nothing here is pinned memory
  if (b == "aten::is_floating_point") return std::vector<VRef>{make_bool(is_float_type(tensor_arg(a, 0, where).dtype))};
  if (b == "aten::is_pinned") return std::vector<VRef>{make_bool(false)};
  if (b == "aten::numel") return std::vector<VRef>{make_int(numel(tensor_arg(a, 0, where).shape))};

  // new_zeros / zeros_like read only their first argument's type and shape.
  // (empty_like / new_empty: their values are unspecified, and zeros are as good as any.)
  bool meta_self = b == "aten::new_zeros" || b == "aten::new_ones" || b == "aten::new_empty" || b == "aten::zeros_like" ||
                   b == "aten::ones_like" || b == "aten::empty_like";
  for (size_t i = meta_self ? 1 : 0; i < a.size(); ++i) {
    const VRef& v = a[i];
    if (v->is_tensor() && !v->known) return std::nullopt;
    if (v->k == Val::K::List)
      for (const auto& x : v->items)
        if (x->is_tensor() && !x->known) return std::nullopt;
  }
  auto r1 = [](VRef v) { return std::optional<std::vector<VRef>>(std::vector<VRef>{std::move(v)}); };
  if (is_binary(b) || is_compare(b)) {
    if (b.back() == '_') return std::nullopt;
    return elementwise(b, a, where);
  }
  if (b == "aten::contiguous" || b == "aten::clone" || b == "aten::detach") {
    const Val& x = *a[0];
    return r1(make_known(x.dtype, x.shape, elements(x)));
  }
  if (b == "aten::view" || b == "aten::reshape") {
    const Val& x = *a[0];
    if (!ov.empty()) return std::nullopt;
    std::vector<int64_t> s = reshape_target(x.shape, ints_arg(a, 1, where), where);
    if (x.known->strides == contiguous_strides(x.shape)) return r1(view_of(x, s, contiguous_strides(s), x.known->offset));
    return r1(make_known(x.dtype, s, elements(x)));
  }
  if (b == "aten::flatten" && ov == "using_ints") {
    auto info = infer(op, a, where);
    const Val& x = *a[0];
    return r1(make_known(x.dtype, (*info)[0].shape, elements(x)));
  }
  if (b == "aten::permute") {
    const Val& x = *a[0];
    std::vector<int64_t> p = permutation(x, a, 1, where), s, st;
    for (int64_t d : p) {
      s.push_back(x.shape[static_cast<size_t>(d)]);
      st.push_back(x.known->strides[static_cast<size_t>(d)]);
    }
    return r1(view_of(x, s, st, x.known->offset));
  }
  if (b == "aten::transpose") {
    const Val& x = *a[0];
    if (x.shape.empty()) return r1(view_of(x, {}, {}, x.known->offset));
    size_t d0 = static_cast<size_t>(wrap_dim(int_arg(a, 1, where), x.shape.size(), where));
    size_t d1 = static_cast<size_t>(wrap_dim(int_arg(a, 2, where), x.shape.size(), where));
    std::vector<int64_t> s = x.shape, st = x.known->strides;
    std::swap(s[d0], s[d1]);
    std::swap(st[d0], st[d1]);
    return r1(view_of(x, s, st, x.known->offset));
  }
  if (b == "aten::unsqueeze") {
    const Val& x = *a[0];
    size_t d = static_cast<size_t>(wrap_dim(int_arg(a, 1, where), x.shape.size() + 1, where));
    std::vector<int64_t> s = x.shape, st = x.known->strides;
    s.insert(s.begin() + static_cast<long>(d), 1);
    st.insert(st.begin() + static_cast<long>(d), d < x.shape.size() ? x.known->strides[d] * x.shape[d] : 1);
    return r1(view_of(x, s, st, x.known->offset));
  }
  if (b == "aten::select" && ov == "int") {
    const Val& x = *a[0];
    infer(op, a, where);  // checks
    size_t d = static_cast<size_t>(wrap_dim(int_arg(a, 1, where), x.shape.size(), where));
    int64_t i = int_arg(a, 2, where);
    if (i < 0) i += x.shape[d];
    std::vector<int64_t> s = x.shape, st = x.known->strides;
    int64_t off = x.known->offset + i * st[d];
    s.erase(s.begin() + static_cast<long>(d));
    st.erase(st.begin() + static_cast<long>(d));
    return r1(view_of(x, s, st, off));
  }
  if (b == "aten::slice") {
    const Val& x = *a[0];
    if (x.shape.empty()) bad(where, "slice of a zero-dimensional tensor");
    Slice sl = slice_of(x, a, where);
    std::vector<int64_t> s = x.shape, st = x.known->strides;
    size_t d = static_cast<size_t>(sl.dim);
    int64_t off = x.known->offset + sl.start * st[d];
    s[d] = sl.len;
    st[d] *= sl.step;
    return r1(view_of(x, s, st, off));
  }
  if (b == "aten::expand") {
    const Val& x = *a[0];
    std::vector<int64_t> s = expand_shape(x, ints_arg(a, 1, where), where), st(s.size(), 0);
    size_t lead = s.size() - x.shape.size();
    for (size_t k = 0; k < x.shape.size(); ++k) st[lead + k] = x.shape[k] == 1 ? 0 : x.known->strides[k];
    return r1(view_of(x, s, st, x.known->offset));
  }
  if (b == "aten::new_zeros" || b == "aten::new_ones" || b == "aten::new_empty") {
    auto info = infer(op, a, where);
    const OutInfo& o = (*info)[0];
    return r1(make_known(o.dtype, o.shape, filled(o.shape, b == "aten::new_ones" ? 1.0 : 0.0)));
  }
  if (b == "aten::zeros_like" || b == "aten::ones_like" || b == "aten::empty_like") {
    const Val& x = *a[0];
    DType t = has(a, 1) ? dtype_from_scalar_type(int_arg(a, 1, where), where) : x.dtype;
    return r1(make_known(t, x.shape, filled(x.shape, b == "aten::ones_like" ? 1.0 : 0.0)));
  }
  if (b == "aten::fill_" || b == "aten::zero_") {  // through a view too: the write reaches the viewed known tensor
    const Val& x = *a[0];
    double v = b == "aten::zero_" ? 0.0 : cast_to(x.dtype, num_arg(*a[1], where));
    std::vector<double>& data = x.known->st->mutable_values();
    for_each(x, [&](int64_t off) { data[static_cast<size_t>(off)] = v; });
    return r1(a[0]);
  }
  if (b == "aten::masked_fill" && (ov == "Scalar" || ov == "Tensor")) {
    const Val& x = *a[0];
    const Val& m = *a[1];
    std::vector<int64_t> shape = broadcast(x.shape, m.shape, where);
    if (shape != x.shape) bad(where, "masked_fill: the mask does not broadcast to the tensor");
    double v = cast_to(x.dtype, num_arg(*a[2], where));
    std::vector<double> xs = elements(x);
    std::vector<int64_t> st(shape.size(), 0);
    size_t lead = shape.size() - m.shape.size();
    for (size_t k = 0; k < m.shape.size(); ++k) st[lead + k] = m.shape[k] == 1 ? 0 : m.known->strides[k];
    VRef me = view_of(m, shape, st, m.known->offset);
    std::vector<double> ms = elements(*me);
    for (size_t k = 0; k < xs.size(); ++k)
      if (ms[k] != 0) xs[k] = v;
    return r1(make_known(x.dtype, x.shape, std::move(xs)));
  }
  if (b == "aten::index" && ov == "Tensor") {
    auto info = infer(op, a, where);
    const Val& x = *a[0];
    const Val& idx = *a[1]->items[0];
    if (idx.dtype == DType::Bool) throw Unsupported(where + ": indexing with a boolean mask");
    check_known_size(numel((*info)[0].shape));  // before the rows are copied
    std::vector<double> is = elements(idx), xs = elements(x), out;
    int64_t row = numel(x.shape) / std::max<int64_t>(x.shape[0], 1);
    for (double dv : is) {
      int64_t i = static_cast<int64_t>(dv);
      if (i < 0) i += x.shape[0];
      if (i < 0 || i >= x.shape[0]) bad(where, "index " + std::to_string(i) + " out of range");
      out.insert(out.end(), xs.begin() + i * row, xs.begin() + (i + 1) * row);
    }
    return r1(make_known(x.dtype, (*info)[0].shape, std::move(out)));
  }
  if (b == "aten::cat") {
    auto info = infer(op, a, where);
    const OutInfo& o = (*info)[0];
    check_known_size(numel(o.shape));  // before the parts are copied
    int64_t d = wrap_dim(int_arg(a, 1, where), o.shape.size(), where);
    int64_t outer = 1;
    for (int64_t k = 0; k < d; ++k) outer *= o.shape[static_cast<size_t>(k)];
    std::vector<std::vector<double>> parts;
    std::vector<int64_t> chunk;
    for (const auto& t : a[0]->items) {
      if (t->shape.size() == 1 && t->shape[0] == 0) continue;
      parts.push_back(elements(*t));
      chunk.push_back(numel(t->shape) / std::max<int64_t>(outer, 1));
    }
    std::vector<double> out;
    for (int64_t r = 0; r < outer; ++r)
      for (size_t p = 0; p < parts.size(); ++p)
        out.insert(out.end(), parts[p].begin() + r * chunk[p], parts[p].begin() + (r + 1) * chunk[p]);
    return r1(make_known(o.dtype, o.shape, std::move(out)));
  }
  return std::nullopt;
}

}  // namespace amanda::torchscript

namespace amanda::torchscript {
// promotion.h: torch.result_type, for the promotion made explicit before a graph op is made.
DType promoted_type(const std::vector<const Val*>& operands) { return result_type(operands); }
}  // namespace amanda::torchscript
