// Normalisation: BatchNormalization (inference, and training_mode's batch statistics with the
// running-mean outputs), InstanceNormalization, LayerNormalization (with Mean and InvStdDev),
// MeanVarianceNormalization. Statistics are accumulated in double.
#include <cmath>

#include "families.h"

namespace amanda::interp::kernels {

namespace {

void k_batch_norm(KernelContext& c) {
  const Tensor& x0 = c.input(0);
  Tensor x = to_float32(x0);
  Tensor scale = cast_tensor(c.input(1), DType::Float64), bias = cast_tensor(c.input(2), DType::Float64);
  Tensor mean = cast_tensor(c.input(3), DType::Float64), var = cast_tensor(c.input(4), DType::Float64);
  double eps = c.attr_float("epsilon", 1e-5f), momentum = c.attr_float("momentum", 0.9f);
  bool training = c.attr_int("training_mode", 0) && c.opset() >= 14;
  int64_t N = x.dim(0), C = x.rank() > 1 ? x.dim(1) : 1, I = x.numel() / std::max<int64_t>(N * C, 1);
  std::vector<double> m(C), v(C);
  for (int64_t ch = 0; ch < C; ++ch) m[ch] = mean.data<double>()[ch], v[ch] = var.data<double>()[ch];
  if (training) {
    Tensor running_mean(DType::Float64, {C}), running_var(DType::Float64, {C});
    for (int64_t ch = 0; ch < C; ++ch) {
      double s = 0, s2 = 0;
      for (int64_t n = 0; n < N; ++n)
        for (int64_t i = 0; i < I; ++i) {
          double e = x.get_f64((n * C + ch) * I + i);
          s += e;
          s2 += e * e;
        }
      double cnt = static_cast<double>(N * I), bm = s / cnt, bv = s2 / cnt - bm * bm;
      running_mean.mutable_data<double>()[ch] = m[ch] * momentum + bm * (1 - momentum);
      running_var.mutable_data<double>()[ch] = v[ch] * momentum + bv * (1 - momentum);
      m[ch] = bm;
      v[ch] = bv;
    }
    c.set_output(1, cast_tensor(running_mean, c.input(3).dtype()));
    c.set_output(2, cast_tensor(running_var, c.input(4).dtype()));
  }
  Tensor y = Tensor::uninit(x.dtype(), x.shape());
  dispatch(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<T>) {
      for (int64_t ch = 0; ch < C; ++ch) {
        double a = scale.data<double>()[ch] / std::sqrt(v[ch] + eps);
        double b = bias.data<double>()[ch] - m[ch] * a;
        for (int64_t n = 0; n < N; ++n) {
          const T* px = x.data<T>() + (n * C + ch) * I;
          T* py = y.mutable_data<T>() + (n * C + ch) * I;
          for (int64_t i = 0; i < I; ++i) py[i] = static_cast<T>(px[i] * a + b);
        }
      }
    } else {
      c.fail("needs a floating-point input");
    }
  });
  c.set_output(0, from_float32(y, x0.dtype()));
}

// Normalises each of `outer` groups of `inner` contiguous elements; scale/bias indexed by `affine`.
void normalize_groups(const Tensor& x, Tensor& y, int64_t outer, int64_t inner, double eps,
                      const std::function<double(int64_t, int64_t, double)>& affine, double* means, double* inv_std) {
  for (int64_t o = 0; o < outer; ++o) {
    double s = 0, s2 = 0;
    for (int64_t i = 0; i < inner; ++i) s += x.get_f64(o * inner + i);
    double mean = s / static_cast<double>(inner);
    for (int64_t i = 0; i < inner; ++i) {
      double d = x.get_f64(o * inner + i) - mean;
      s2 += d * d;
    }
    double inv = 1.0 / std::sqrt(s2 / static_cast<double>(inner) + eps);
    if (means) means[o] = mean;
    if (inv_std) inv_std[o] = inv;
    for (int64_t i = 0; i < inner; ++i)
      y.mutable_data<double>()[o * inner + i] = affine(o, i, (x.get_f64(o * inner + i) - mean) * inv);
  }
}

void k_instance_norm(KernelContext& c) {
  const Tensor& x = c.input(0);
  Tensor scale = cast_tensor(c.input(1), DType::Float64), bias = cast_tensor(c.input(2), DType::Float64);
  int64_t N = x.dim(0), C = x.dim(1), I = x.numel() / std::max<int64_t>(N * C, 1);
  Tensor y = Tensor::uninit(DType::Float64, x.shape());
  normalize_groups(to_float32(x), y, N * C, I, c.attr_float("epsilon", 1e-5f),
                   [&](int64_t o, int64_t, double v) { return v * scale.data<double>()[o % C] + bias.data<double>()[o % C]; },
                   nullptr, nullptr);
  c.set_output(0, cast_tensor(y, x.dtype()));
}

void k_layer_norm(KernelContext& c) {
  const Tensor& x = c.input(0);
  int64_t axis = norm_axis(c, c.attr_int("axis", -1), x.rank());
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= x.dim(d);
  int64_t inner = x.numel() / std::max<int64_t>(outer, 1);
  Shape norm_shape(x.shape().begin() + axis, x.shape().end());
  Tensor scale = cast_tensor(c.input(1), DType::Float64);
  Tensor bias;
  if (c.has_input(2)) bias = cast_tensor(c.input(2), DType::Float64);
  auto sst = broadcast_strides(scale.shape(), norm_shape);
  std::vector<int64_t> scale_at(inner), bias_at(inner);
  {
    std::array<std::vector<int64_t>, 2> st{sst, c.has_input(2) ? broadcast_strides(bias.shape(), norm_shape) : sst};
    broadcast_loop<2>(norm_shape, st, [&](int64_t o, const std::array<int64_t, 2>& i) { scale_at[o] = i[0], bias_at[o] = i[1]; });
  }
  Tensor y = Tensor::uninit(DType::Float64, x.shape());
  Shape stat_shape = x.shape();
  for (int64_t d = axis; d < x.rank(); ++d) stat_shape[d] = 1;
  Tensor mean = Tensor::uninit(DType::Float64, stat_shape), inv = Tensor::uninit(DType::Float64, stat_shape);
  normalize_groups(to_float32(x), y, outer, inner, c.attr_float("epsilon", 1e-5f),
                   [&](int64_t, int64_t i, double v) {
                     return v * scale.data<double>()[scale_at[i]] + (c.has_input(2) ? bias.data<double>()[bias_at[i]] : 0);
                   },
                   mean.mutable_data<double>(), inv.mutable_data<double>());
  DType st = DType::Float32;
  if (const ir::Value* s = c.attr("stash_type"); s && s->is_int())
    if (auto d = dtype_from_onnx(s->as_int())) st = *d;
  c.set_output(0, cast_tensor(y, x.dtype()));
  c.set_output(1, cast_tensor(mean, st));
  c.set_output(2, cast_tensor(inv, st));
}

void k_mvn(KernelContext& c) {
  Tensor x = cast_tensor(to_float32(c.input(0)), DType::Float64);
  auto axes = c.attr_ints("axes").value_or(std::vector<int64_t>{0, 2, 3});
  std::vector<bool> red(x.rank(), false);
  for (int64_t a : axes) red[norm_axis(c, a, x.rank())] = true;
  Shape kept;
  for (int64_t d = 0; d < x.rank(); ++d) kept.push_back(red[d] ? 1 : x.dim(d));
  int64_t on = numel(kept), cnt = x.numel() / std::max<int64_t>(on, 1);
  std::vector<double> s(on, 0), s2(on, 0);
  std::array<std::vector<int64_t>, 1> st{broadcast_strides(kept, x.shape())};
  broadcast_loop<1>(x.shape(), st, [&](int64_t i, const std::array<int64_t, 1>& o) {
    double v = x.data<double>()[i];
    s[o[0]] += v;
    s2[o[0]] += v * v;
  });
  Tensor y = Tensor::uninit(DType::Float64, x.shape());
  broadcast_loop<1>(x.shape(), st, [&](int64_t i, const std::array<int64_t, 1>& o) {
    double m = s[o[0]] / static_cast<double>(cnt), var = s2[o[0]] / static_cast<double>(cnt) - m * m;
    y.mutable_data<double>()[i] = (x.data<double>()[i] - m) / (std::sqrt(var) + 1e-9);
  });
  c.set_output(0, cast_tensor(y, c.input(0).dtype()));
}

}  // namespace

void register_norm(KernelRegistry& r) {
  r.add("BatchNormalization", 1, k_batch_norm);
  r.add("InstanceNormalization", 1, k_instance_norm);
  r.add("LayerNormalization", 17, k_layer_norm);
  r.add("MeanVarianceNormalization", 9, k_mvn);
}

}  // namespace amanda::interp::kernels
