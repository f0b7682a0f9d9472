// Quantisation: QuantizeLinear, DequantizeLinear (per tensor or per axis), DynamicQuantizeLinear.
// Rounding is to nearest even, then saturation to the 8-bit range, as ONNX specifies.
#include <algorithm>
#include <cmath>

#include "families.h"

namespace amanda::interp::kernels {

namespace {

// Index of the scale/zero point an element uses: per tensor, or along `axis`.
struct PerAxis {
  int64_t stride = 1, dim = 1;
  bool per_axis = false;
  int64_t at(int64_t i) const { return per_axis ? (i / stride) % dim : 0; }
};
PerAxis per_axis(const KernelContext& c, const Tensor& x, const Tensor& scale) {
  PerAxis p;
  if (scale.numel() <= 1) return p;
  int64_t axis = norm_axis(c, c.attr_int("axis", 1), x.rank());
  p.per_axis = true;
  p.dim = x.dim(axis);
  p.stride = strides_of(x.shape())[axis];
  return p;
}

void k_quantize(KernelContext& c) {
  const Tensor& x = c.input(0);
  const Tensor& scale = c.input(1);
  DType t = c.has_input(2) ? c.input(2).dtype() : DType::UInt8;
  PerAxis pa = per_axis(c, x, scale);
  double lo = t == DType::UInt8 ? 0 : -128, hi = t == DType::UInt8 ? 255 : 127;
  Tensor y = Tensor::uninit(t, x.shape());
  for (int64_t i = 0; i < x.numel(); ++i) {
    int64_t k = pa.at(i);
    double z = c.has_input(2) ? c.input(2).get_f64(c.input(2).numel() == 1 ? 0 : k) : 0;
    double v = std::clamp(std::nearbyint(x.get_f64(i) / scale.get_f64(k)) + z, lo, hi);
    if (t == DType::UInt8) y.mutable_data<uint8_t>()[i] = static_cast<uint8_t>(v);
    else y.mutable_data<int8_t>()[i] = static_cast<int8_t>(v);
  }
  c.set_output(0, y);
}

void k_dequantize(KernelContext& c) {
  const Tensor& x = c.input(0);
  const Tensor& scale = c.input(1);
  PerAxis pa = per_axis(c, x, scale);
  Tensor y = Tensor::uninit(DType::Float32, x.shape());
  for (int64_t i = 0; i < x.numel(); ++i) {
    int64_t k = pa.at(i);
    double z = c.has_input(2) ? c.input(2).get_f64(c.input(2).numel() == 1 ? 0 : k) : 0;
    y.mutable_data<float>()[i] = static_cast<float>((x.get_f64(i) - z) * scale.get_f64(k));
  }
  c.set_output(0, cast_tensor(y, scale.dtype()));
}

void k_dynamic_quantize(KernelContext& c) {
  const Tensor& x = c.input(0);
  double lo = 0, hi = 0;
  for (int64_t i = 0; i < x.numel(); ++i) lo = std::min(lo, x.get_f64(i)), hi = std::max(hi, x.get_f64(i));
  // float32 arithmetic, as ONNX's reference computes it (rounding of x / scale depends on it).
  float scale = (static_cast<float>(hi) - static_cast<float>(lo)) / 255.0f;
  float zp = scale == 0 ? 0 : std::clamp(std::nearbyint(0.0f - static_cast<float>(lo) / scale), 0.0f, 255.0f);
  Tensor y = Tensor::uninit(DType::UInt8, x.shape());
  for (int64_t i = 0; i < x.numel(); ++i)
    y.mutable_data<uint8_t>()[i] = static_cast<uint8_t>(
        scale == 0 ? zp : std::clamp(std::nearbyint(static_cast<float>(x.get_f64(i)) / scale) + zp, 0.0f, 255.0f));
  Tensor s = Tensor::scalar_f32(scale);
  Tensor z = Tensor::uninit(DType::UInt8, {});
  *z.mutable_data<uint8_t>() = static_cast<uint8_t>(zp);
  c.set_output(0, y);
  c.set_output(1, s);
  c.set_output(2, z);
}

}  // namespace

void register_quant(KernelRegistry& r) {
  r.add("QuantizeLinear", 10, k_quantize);
  r.add("DequantizeLinear", 10, k_dequantize);
  r.add("DynamicQuantizeLinear", 11, k_dynamic_quantize);
}

}  // namespace amanda::interp::kernels
