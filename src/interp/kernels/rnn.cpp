// Recurrent layers: RNN, GRU, LSTM (forward, reverse, bidirectional; sequence_lens; layout 0/1;
// the activation list with alpha/beta; clip; GRU's linear_before_reset; LSTM's peepholes and
// input_forget). Written for clarity: one time step at a time, in double.
#include <algorithm>
#include <cmath>

#include "families.h"

namespace amanda::interp::kernels {

namespace {

struct Act {
  std::string name;
  double alpha = 0, beta = 0;
  double operator()(double x) const {
    if (name == "Sigmoid") return 1 / (1 + std::exp(-x));
    if (name == "Tanh") return std::tanh(x);
    if (name == "Relu") return std::max(0.0, x);
    if (name == "Affine") return alpha * x + beta;
    if (name == "LeakyRelu") return x >= 0 ? x : alpha * x;
    if (name == "ThresholdedRelu") return x > alpha ? x : 0;
    if (name == "ScaledTanh") return alpha * std::tanh(beta * x);
    if (name == "HardSigmoid") return std::clamp(alpha * x + beta, 0.0, 1.0);
    if (name == "Elu") return x >= 0 ? x : alpha * (std::exp(x) - 1);
    if (name == "Softsign") return x / (1 + std::fabs(x));
    if (name == "Softplus") return std::log1p(std::exp(x));
    return x;
  }
};

enum class Cell { Rnn, Gru, Lstm };

std::vector<Act> activations(const KernelContext& c, const std::vector<std::string>& dflt, int dirs) {
  auto names = c.attr_strings("activations").value_or(std::vector<std::string>{});
  auto alphas = c.attr_floats("activation_alpha").value_or(std::vector<float>{});
  auto betas = c.attr_floats("activation_beta").value_or(std::vector<float>{});
  std::vector<Act> r;
  size_t per = dflt.size();
  for (int d = 0; d < dirs; ++d)
    for (size_t k = 0; k < per; ++k) {
      size_t i = d * per + k;
      Act a;
      a.name = i < names.size() ? names[i] : dflt[k];
      // Per-activation defaults, as ONNX documents them.
      if (a.name == "LeakyRelu") a.alpha = 0.01;
      if (a.name == "ThresholdedRelu" || a.name == "Elu") a.alpha = 1.0;
      if (a.name == "HardSigmoid") a.alpha = 0.2, a.beta = 0.5;
      if (a.name == "ScaledTanh") a.alpha = 1.0, a.beta = 1.0;
      if (i < alphas.size()) a.alpha = alphas[i];
      if (i < betas.size()) a.beta = betas[i];
      r.push_back(a);
    }
  return r;
}

template <Cell K>
void recurrent(KernelContext& c) {
  constexpr int G = K == Cell::Rnn ? 1 : (K == Cell::Gru ? 3 : 4);
  DType t = c.input(0).dtype();
  auto f64 = [&](size_t i) { return cast_tensor(to_float32(c.input(i)), DType::Float64); };
  Tensor X = f64(0), W = f64(1), R = f64(2);
  int layout = static_cast<int>(c.attr_int("layout", 0));
  if (layout) X = transpose(X, {1, 0, 2});
  int64_t S = X.dim(0), B = X.dim(1), I = X.dim(2);
  int64_t H = c.attr_int("hidden_size", R.dim(2));
  std::string direction = c.attr_string("direction", "forward");
  int dirs = direction == "bidirectional" ? 2 : 1;
  double clip = c.attr_float("clip", 0.0f);
  bool lbr = c.attr_int("linear_before_reset", 0), input_forget = c.attr_int("input_forget", 0);
  std::vector<std::string> dflt = K == Cell::Rnn ? std::vector<std::string>{"Tanh"}
                                  : K == Cell::Gru ? std::vector<std::string>{"Sigmoid", "Tanh"}
                                                   : std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"};
  auto acts = activations(c, dflt, dirs);
  std::vector<int64_t> lens(B, S);
  if (c.has_input(4))
    for (int64_t b = 0; b < B; ++b) lens[b] = c.input(4).get_i64(b);
  Tensor bias = c.has_input(3) ? f64(3) : Tensor(DType::Float64, {dirs, 2 * G * H});
  Tensor h0 = c.has_input(5) ? f64(5) : Tensor(DType::Float64, {dirs, B, H});
  Tensor c0, P;
  if constexpr (K == Cell::Lstm) {
    c0 = c.has_input(6) ? f64(6) : Tensor(DType::Float64, {dirs, B, H});
    P = c.has_input(7) ? f64(7) : Tensor(DType::Float64, {dirs, 3 * H});
  }
  if (layout) {  // initial states are [batch, dirs, hidden] in layout 1
    if (c.has_input(5)) h0 = transpose(h0, {1, 0, 2});
    if constexpr (K == Cell::Lstm)
      if (c.has_input(6)) c0 = transpose(c0, {1, 0, 2});
  }
  Tensor Y(DType::Float64, {S, dirs, B, H}), Yh(DType::Float64, {dirs, B, H}), Yc(DType::Float64, {dirs, B, H});
  auto clipf = [&](double v) { return clip > 0 ? std::clamp(v, -clip, clip) : v; };
  for (int d = 0; d < dirs; ++d) {
    bool reverse = direction == "reverse" || d == 1;
    const double* w = W.data<double>() + d * G * H * I;
    const double* r = R.data<double>() + d * G * H * H;
    const double* wb = bias.data<double>() + d * 2 * G * H;
    const double* rb = wb + G * H;
    const Act* a = &acts[d * dflt.size()];
    for (int64_t b = 0; b < B; ++b) {
      std::vector<double> h(h0.data<double>() + (d * B + b) * H, h0.data<double>() + (d * B + b + 1) * H), cs(H, 0);
      if constexpr (K == Cell::Lstm) cs.assign(c0.data<double>() + (d * B + b) * H, c0.data<double>() + (d * B + b + 1) * H);
      for (int64_t step = 0; step < lens[b]; ++step) {
        int64_t s = reverse ? lens[b] - 1 - step : step;
        const double* x = X.data<double>() + (s * B + b) * I;
        // xw[g*H + j] = x . W[g*H + j] + Wb; hr[...] = h . R[...] + Rb
        std::vector<double> xw(G * H), hr(G * H);
        for (int64_t k = 0; k < G * H; ++k) {
          double sx = wb[k], sh = rb[k];
          for (int64_t i = 0; i < I; ++i) sx += x[i] * w[k * I + i];
          for (int64_t i = 0; i < H; ++i) sh += h[i] * r[k * H + i];
          xw[k] = sx;
          hr[k] = sh;
        }
        std::vector<double> nh(H);
        if constexpr (K == Cell::Rnn) {
          for (int64_t j = 0; j < H; ++j) nh[j] = a[0](clipf(xw[j] + hr[j]));
        } else if constexpr (K == Cell::Gru) {
          std::vector<double> z(H), rr(H);
          for (int64_t j = 0; j < H; ++j) {
            z[j] = a[0](clipf(xw[j] + hr[j]));
            rr[j] = a[0](clipf(xw[H + j] + hr[H + j]));
          }
          for (int64_t j = 0; j < H; ++j) {
            double hh;
            if (lbr) {
              hh = a[1](clipf(xw[2 * H + j] + rr[j] * hr[2 * H + j]));
            } else {
              double s2 = rb[2 * H + j];
              for (int64_t i = 0; i < H; ++i) s2 += rr[i] * h[i] * r[(2 * H + j) * H + i];
              hh = a[1](clipf(xw[2 * H + j] + s2));
            }
            nh[j] = (1 - z[j]) * hh + z[j] * h[j];
          }
        } else {
          const double* p = P.data<double>() + d * 3 * H;
          std::vector<double> nc(H);
          for (int64_t j = 0; j < H; ++j) {
            double ig = a[0](clipf(xw[j] + hr[j] + p[j] * cs[j]));
            double fg = a[0](clipf(xw[2 * H + j] + hr[2 * H + j] + p[2 * H + j] * cs[j]));
            if (input_forget) fg = 1 - ig;
            double cg = a[1](clipf(xw[3 * H + j] + hr[3 * H + j]));
            nc[j] = fg * cs[j] + ig * cg;
            double og = a[0](clipf(xw[H + j] + hr[H + j] + p[H + j] * nc[j]));
            nh[j] = og * a[2](nc[j]);
          }
          cs = nc;
        }
        h = nh;
        for (int64_t j = 0; j < H; ++j) Y.mutable_data<double>()[((s * dirs + d) * B + b) * H + j] = h[j];
      }
      for (int64_t j = 0; j < H; ++j) {
        Yh.mutable_data<double>()[(d * B + b) * H + j] = h[j];
        Yc.mutable_data<double>()[(d * B + b) * H + j] = cs[j];
      }
    }
  }
  if (layout) {
    Y = transpose(Y, {2, 0, 1, 3});
    Yh = transpose(Yh, {1, 0, 2});
    Yc = transpose(Yc, {1, 0, 2});
  }
  c.set_output(0, cast_tensor(Y, t));
  c.set_output(1, cast_tensor(Yh, t));
  if constexpr (K == Cell::Lstm) c.set_output(2, cast_tensor(Yc, t));
}

}  // namespace

void register_rnn(KernelRegistry& r) {
  r.add("RNN", 1, recurrent<Cell::Rnn>);
  r.add("GRU", 1, recurrent<Cell::Gru>);
  r.add("LSTM", 1, recurrent<Cell::Lstm>);
}

}  // namespace amanda::interp::kernels
