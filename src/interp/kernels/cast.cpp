// Cast and CastLike, and the conversion every other kernel uses (cast_tensor). ONNX's rules:
// floating -> integer truncates toward zero (as C and numpy do); values outside the target's range
// saturate here rather than being undefined; -> float16/bfloat16 rounds to nearest even; -> bool is
// "!= 0"; strings are parsed (strtod: also "NaN", "INF") and printed as the shortest decimal that
// reads back (numpy's str()).
#include <cstdlib>
#include <limits>

#include <fmt/format.h>

#include "families.h"

namespace amanda::interp::kernels {

namespace {

template <class To>
To convert_f64(double v) {
  if constexpr (std::is_same_v<To, bool>) {
    return v != 0;
  } else if constexpr (std::is_floating_point_v<To>) {
    return static_cast<To>(v);
  } else {
    if (std::isnan(v)) return To(0);
    if (v <= static_cast<double>(std::numeric_limits<To>::lowest())) return std::numeric_limits<To>::lowest();
    if (v >= static_cast<double>(std::numeric_limits<To>::max())) return std::numeric_limits<To>::max();
    return static_cast<To>(v);
  }
}

template <class To, class From>
To convert(From v) {
  if constexpr (std::is_floating_point_v<From>) return convert_f64<To>(static_cast<double>(v));
  else if constexpr (std::is_same_v<To, bool>) return v != 0;
  else return static_cast<To>(v);  // integer -> integer wraps (two's complement), as numpy does
}

std::string to_string_elem(const Tensor& x, int64_t i) {
  switch (x.dtype()) {
    case DType::Float32: return fmt::format("{}", x.data<float>()[i]);
    case DType::Float64: return fmt::format("{}", x.data<double>()[i]);
    case DType::Float16: return fmt::format("{}", half_to_float(x.data<uint16_t>()[i]));
    case DType::Bool: return x.data<bool>()[i] ? "True" : "False";
    default: return std::to_string(x.get_i64(i));
  }
}

}  // namespace

Tensor cast_tensor(const Tensor& x, DType to, bool saturate) {
  DType from = x.dtype();
  if (from == to) return x;
  Tensor y = Tensor::uninit(to, x.shape());
  int64_t n = x.numel();
  if (to == DType::String) {
    for (int64_t i = 0; i < n; ++i) y.strings()[i] = to_string_elem(x, i);
    return y;
  }
  if (from == DType::String) {
    Tensor f = Tensor::uninit(DType::Float64, x.shape());
    for (int64_t i = 0; i < n; ++i) f.mutable_data<double>()[i] = std::strtod(x.strings()[i].c_str(), nullptr);
    return cast_tensor(f, to, saturate);
  }
  if (is_half(from)) {
    Tensor f = Tensor::uninit(DType::Float32, x.shape());
    for (int64_t i = 0; i < n; ++i)
      f.mutable_data<float>()[i] = from == DType::Float16 ? half_to_float(x.data<uint16_t>()[i]) : bf16_to_float(x.data<uint16_t>()[i]);
    return cast_tensor(f, to, saturate);
  }
  if (is_half(to)) {
    Tensor f = cast_tensor(x, DType::Float32, saturate);
    for (int64_t i = 0; i < n; ++i) {
      float v = f.data<float>()[i];
      y.mutable_data<uint16_t>()[i] = to == DType::Float16 ? float_to_half(v) : float_to_bf16(v);
    }
    return y;
  }
  dispatch(from, [&](auto ftag) {
    using F = decltype(ftag);
    dispatch(to, [&](auto ttag) {
      using T = decltype(ttag);
      const F* a = x.data<F>();
      T* o = y.mutable_data<T>();
      for (int64_t i = 0; i < n; ++i) o[i] = convert<T>(a[i]);
    });
  });
  return y;
}

namespace {

std::optional<DType> onnx_dtype(int64_t code) {
  switch (code) {
    case 1: return DType::Float32;
    case 2: return DType::UInt8;
    case 3: return DType::Int8;
    case 4: return DType::UInt16;
    case 5: return DType::Int16;
    case 6: return DType::Int32;
    case 7: return DType::Int64;
    case 8: return DType::String;
    case 9: return DType::Bool;
    case 10: return DType::Float16;
    case 11: return DType::Float64;
    case 12: return DType::UInt32;
    case 13: return DType::UInt64;
    case 16: return DType::BFloat16;
    default: return std::nullopt;
  }
}

void k_cast(KernelContext& c) {
  const ir::Value* to = c.attr("to");
  std::optional<DType> t;
  if (to && to->is_int()) t = onnx_dtype(to->as_int());
  else if (to && to->is_string()) t = ir::dtype_from_name(to->as_string());
  if (!t) c.fail("attribute 'to' names no supported element type");
  c.set_output(0, cast_tensor(c.input(0), *t));
}

void k_cast_like(KernelContext& c) { c.set_output(0, cast_tensor(c.input(0), c.input(1).dtype())); }

}  // namespace

std::optional<DType> dtype_from_onnx(int64_t code) { return onnx_dtype(code); }

void register_cast(KernelRegistry& r) {
  r.add("Cast", 1, k_cast);
  r.add("CastLike", 15, k_cast_like);
}

}  // namespace amanda::interp::kernels
