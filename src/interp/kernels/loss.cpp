// Losses: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (reduction none/sum/mean,
// per-class weights, ignore_index), computed in double.
#include <cmath>
#include <limits>

#include "families.h"

namespace amanda::interp::kernels {

namespace {

// input: [N, C, d...] log-probabilities (double); target [N, d...].
Tensor nll(KernelContext& c, const Tensor& in, const Tensor& target, const Tensor* weight, DType out_type) {
  int64_t N = in.dim(0), C = in.dim(1), D = in.numel() / std::max<int64_t>(N * C, 1);
  std::string reduction = c.attr_string("reduction", "mean");
  const ir::Value* ig = c.attr("ignore_index");
  Shape ls = target.shape();
  Tensor loss = Tensor::uninit(DType::Float64, ls);
  double wsum = 0, lsum = 0;
  Tensor w;
  if (weight) w = cast_tensor(to_float32(*weight), DType::Float64);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t d = 0; d < D; ++d) {
      int64_t t = target.get_i64(n * D + d);
      double l = 0, wt = 0;
      if (!(ig && t == ig->as_int())) {
        if (t < 0 || t >= C) c.fail("target " + std::to_string(t) + " is out of range");
        wt = weight ? w.data<double>()[t] : 1.0;
        l = -in.data<double>()[(n * C + t) * D + d] * wt;
      }
      loss.mutable_data<double>()[n * D + d] = l;
      lsum += l;
      wsum += wt;
    }
  if (reduction == "none") return cast_tensor(loss, out_type);
  Tensor r = Tensor::uninit(DType::Float64, {});
  *r.mutable_data<double>() = reduction == "sum" ? lsum : lsum / wsum;
  return cast_tensor(r, out_type);
}

void k_nll(KernelContext& c) {
  Tensor in = cast_tensor(to_float32(c.input(0)), DType::Float64);
  c.set_output(0, nll(c, in, c.input(1), c.has_input(2) ? &c.input(2) : nullptr, c.input(0).dtype()));
}

void k_sce(KernelContext& c) {
  const Tensor& x = c.input(0);
  Tensor s = cast_tensor(to_float32(x), DType::Float64);
  int64_t N = s.dim(0), C = s.dim(1), D = s.numel() / std::max<int64_t>(N * C, 1);
  Tensor lp = Tensor::uninit(DType::Float64, s.shape());
  for (int64_t n = 0; n < N; ++n)
    for (int64_t d = 0; d < D; ++d) {
      double m = -std::numeric_limits<double>::infinity(), sum = 0;
      for (int64_t k = 0; k < C; ++k) m = std::max(m, s.data<double>()[(n * C + k) * D + d]);
      for (int64_t k = 0; k < C; ++k) sum += std::exp(s.data<double>()[(n * C + k) * D + d] - m);
      for (int64_t k = 0; k < C; ++k)
        lp.mutable_data<double>()[(n * C + k) * D + d] = s.data<double>()[(n * C + k) * D + d] - m - std::log(sum);
    }
  c.set_output(0, nll(c, lp, c.input(1), c.has_input(2) ? &c.input(2) : nullptr, x.dtype()));
  c.set_output(1, cast_tensor(lp, x.dtype()));
}

}  // namespace

void register_loss(KernelRegistry& r) {
  r.add("NegativeLogLikelihoodLoss", 12, k_nll);
  r.add("SoftmaxCrossEntropyLoss", 12, k_sce);
}

}  // namespace amanda::interp::kernels
