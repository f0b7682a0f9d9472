// The optimisers of ai.onnx.preview.training (Adagrad, Momentum, Adam), as ONNX defines them.
#include <cmath>

#include "families.h"

namespace amanda::interp::kernels {

namespace {

Tensor f64(const Tensor& t) { return cast_tensor(to_float32(t), DType::Float64); }

void k_adagrad(KernelContext& c) {
  double R = c.input(0).get_f64(0), T = c.input(1).get_f64(0);
  double decay = c.attr_float("decay_factor", 0.0f), eps = c.attr_float("epsilon", 0.0f), nc = c.attr_float("norm_coefficient", 0.0f);
  size_t n = (c.input_count() - 2) / 3;
  double r = R / (1 + T * decay);
  for (size_t k = 0; k < n; ++k) {
    Tensor X = f64(c.input(2 + k)), G = f64(c.input(2 + n + k)), Hh = f64(c.input(2 + 2 * n + k));
    Tensor Xn = Tensor::uninit(DType::Float64, X.shape()), Hn = Tensor::uninit(DType::Float64, X.shape());
    for (int64_t i = 0; i < X.numel(); ++i) {
      double g = nc * X.data<double>()[i] + G.data<double>()[i];
      double h = Hh.data<double>()[i] + g * g;
      Hn.mutable_data<double>()[i] = h;
      Xn.mutable_data<double>()[i] = X.data<double>()[i] - r * g / (std::sqrt(h) + eps);
    }
    c.set_output(k, cast_tensor(Xn, c.input(2 + k).dtype()));
    c.set_output(n + k, cast_tensor(Hn, c.input(2 + 2 * n + k).dtype()));
  }
}

void k_momentum(KernelContext& c) {
  double R = c.input(0).get_f64(0), T = c.input(1).get_f64(0);
  double alpha = c.attr_float("alpha", 0.0f), beta = c.attr_float("beta", 0.0f), nc = c.attr_float("norm_coefficient", 0.0f);
  bool nesterov = c.attr_string("mode", "standard") == "nesterov";
  size_t n = (c.input_count() - 2) / 3;
  double ba = T > 0 ? beta : 1;
  for (size_t k = 0; k < n; ++k) {
    Tensor X = f64(c.input(2 + k)), G = f64(c.input(2 + n + k)), V = f64(c.input(2 + 2 * n + k));
    Tensor Xn = Tensor::uninit(DType::Float64, X.shape()), Vn = Tensor::uninit(DType::Float64, X.shape());
    for (int64_t i = 0; i < X.numel(); ++i) {
      double g = nc * X.data<double>()[i] + G.data<double>()[i];
      double v = alpha * V.data<double>()[i] + ba * g;
      Vn.mutable_data<double>()[i] = v;
      Xn.mutable_data<double>()[i] = X.data<double>()[i] - R * (nesterov ? g + alpha * v : v);
    }
    c.set_output(k, cast_tensor(Xn, c.input(2 + k).dtype()));
    c.set_output(n + k, cast_tensor(Vn, c.input(2 + 2 * n + k).dtype()));
  }
}

void k_adam(KernelContext& c) {
  double R = c.input(0).get_f64(0), T = c.input(1).get_f64(0);
  double alpha = c.attr_float("alpha", 0.9f), beta = c.attr_float("beta", 0.999f), eps = c.attr_float("epsilon", 1e-6f);
  double nc = c.attr_float("norm_coefficient", 0.0f), ncp = c.attr_float("norm_coefficient_post", 0.0f);
  size_t n = (c.input_count() - 2) / 4;
  double ra = T > 0 ? R * std::sqrt(1 - std::pow(beta, T)) / (1 - std::pow(alpha, T)) : R;
  for (size_t k = 0; k < n; ++k) {
    Tensor X = f64(c.input(2 + k)), G = f64(c.input(2 + n + k)), V = f64(c.input(2 + 2 * n + k)), Hh = f64(c.input(2 + 3 * n + k));
    Tensor Xn = Tensor::uninit(DType::Float64, X.shape()), Vn = Tensor::uninit(DType::Float64, X.shape()),
           Hn = Tensor::uninit(DType::Float64, X.shape());
    for (int64_t i = 0; i < X.numel(); ++i) {
      double x = X.data<double>()[i];
      double g = nc * x + G.data<double>()[i];
      double v = alpha * V.data<double>()[i] + (1 - alpha) * g;
      double h = beta * Hh.data<double>()[i] + (1 - beta) * g * g;
      Vn.mutable_data<double>()[i] = v;
      Hn.mutable_data<double>()[i] = h;
      Xn.mutable_data<double>()[i] = (1 - ncp) * (x - ra * v / (std::sqrt(h) + eps));
    }
    c.set_output(k, cast_tensor(Xn, c.input(2 + k).dtype()));
    c.set_output(n + k, cast_tensor(Vn, c.input(2 + 2 * n + k).dtype()));
    c.set_output(2 * n + k, cast_tensor(Hn, c.input(2 + 3 * n + k).dtype()));
  }
}

}  // namespace

void register_training(KernelRegistry& r) {
  r.add("ai.onnx.preview.training::Adagrad", 1, k_adagrad);
  r.add("ai.onnx.preview.training::Momentum", 1, k_momentum);
  r.add("ai.onnx.preview.training::Adam", 1, k_adam);
}

}  // namespace amanda::interp::kernels
