// Signal processing (opset 17): HannWindow, HammingWindow, BlackmanWindow, DFT, STFT,
// MelWeightMatrix. A plain O(n^2) DFT in double: a reference, not a fast transform.
#include <cmath>

#include "families.h"

namespace amanda::interp::kernels {

namespace {

constexpr double kPi = 3.14159265358979323846;

DType output_type(const KernelContext& c) {
  const ir::Value* d = c.attr("output_datatype");
  if (d && d->is_int())
    if (auto t = dtype_from_onnx(d->as_int())) return *t;
  return DType::Float32;
}

template <int K>
void window(KernelContext& c) {
  int64_t n = c.input(0).get_i64(0);
  bool periodic = c.attr_int("periodic", 1);
  double N = static_cast<double>(periodic ? n : n - 1);
  Tensor y = Tensor::uninit(DType::Float64, {n});
  for (int64_t i = 0; i < n; ++i) {
    double a = 2 * kPi * static_cast<double>(i) / N, v;
    if constexpr (K == 0) v = 0.5 - 0.5 * std::cos(a);  // Hann
    else if constexpr (K == 1) v = 25.0 / 46 - (1 - 25.0 / 46) * std::cos(a);  // Hamming
    else v = 0.42 - 0.5 * std::cos(a) + 0.08 * std::cos(2 * a);  // Blackman
    y.mutable_data<double>()[i] = v;
  }
  c.set_output(0, cast_tensor(y, output_type(c)));
}

// DFT of `len` complex samples (re, im at stride `st` in units of complex elements) into out.
void dft1(const double* re_im, int64_t st, int64_t n_in, int64_t n, bool inverse, int64_t n_out, double* out) {
  for (int64_t k = 0; k < n_out; ++k) {
    double sr = 0, si = 0;
    for (int64_t t = 0; t < std::min(n_in, n); ++t) {
      double a = 2 * kPi * static_cast<double>(k * t) / static_cast<double>(n) * (inverse ? 1 : -1);
      double xr = re_im[t * st * 2], xi = re_im[t * st * 2 + 1];
      sr += xr * std::cos(a) - xi * std::sin(a);
      si += xr * std::sin(a) + xi * std::cos(a);
    }
    if (inverse) sr /= static_cast<double>(n), si /= static_cast<double>(n);
    out[2 * k] = sr;
    out[2 * k + 1] = si;
  }
}

// x as complex double [..., 2].
Tensor as_complex(const Tensor& x0) {
  Tensor x = cast_tensor(to_float32(x0), DType::Float64);
  if (x.dim(x.rank() - 1) == 2) return x;
  Shape s = x.shape();
  s.back() = 2;
  Tensor y(DType::Float64, s);
  for (int64_t i = 0; i < x.numel(); ++i) y.mutable_data<double>()[2 * i] = x.data<double>()[i];
  return y;
}

void k_dft(KernelContext& c) {
  Tensor x = as_complex(c.input(0));
  int64_t axis = c.attr_int("axis", 1);
  axis = norm_axis(c, axis, x.rank() - 1);
  bool inverse = c.attr_int("inverse", 0), onesided = c.attr_int("onesided", 0);
  int64_t n_in = x.dim(axis);
  int64_t n = c.has_input(1) && c.input(1).numel() ? c.input(1).get_i64(0) : n_in;
  int64_t n_out = onesided ? n / 2 + 1 : n;
  Shape os = x.shape();
  os[axis] = n_out;
  Tensor y(DType::Float64, os);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= x.dim(d);
  for (int64_t d = axis + 1; d < x.rank() - 1; ++d) inner *= x.dim(d);
  std::vector<double> tmp(2 * n_out);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      dft1(x.data<double>() + (o * n_in * inner + i) * 2, inner, n_in, n, inverse, n_out, tmp.data());
      for (int64_t k = 0; k < n_out; ++k) {
        y.mutable_data<double>()[((o * n_out + k) * inner + i) * 2] = tmp[2 * k];
        y.mutable_data<double>()[((o * n_out + k) * inner + i) * 2 + 1] = tmp[2 * k + 1];
      }
    }
  c.set_output(0, cast_tensor(y, c.input(0).dtype()));
}

void k_stft(KernelContext& c) {
  Tensor x = as_complex(c.input(0));
  int64_t step = c.input(1).get_i64(0);
  Tensor win;
  if (c.has_input(2)) win = cast_tensor(to_float32(c.input(2)), DType::Float64);
  int64_t flen = c.has_input(3) ? c.input(3).get_i64(0) : win.numel();
  bool onesided = c.attr_int("onesided", 1);
  int64_t B = x.dim(0), L = x.dim(1);
  int64_t frames = (L - flen) / step + 1, bins = onesided ? flen / 2 + 1 : flen;
  Tensor y(DType::Float64, {B, frames, bins, 2});
  std::vector<double> frame(2 * flen), tmp(2 * bins);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t f = 0; f < frames; ++f) {
      for (int64_t t = 0; t < flen; ++t) {
        double w = win.defined() ? win.data<double>()[t] : 1;
        frame[2 * t] = x.data<double>()[((b * L) + f * step + t) * 2] * w;
        frame[2 * t + 1] = x.data<double>()[((b * L) + f * step + t) * 2 + 1] * w;
      }
      dft1(frame.data(), 1, flen, flen, false, bins, tmp.data());
      std::copy(tmp.begin(), tmp.end(), y.mutable_data<double>() + (b * frames + f) * bins * 2);
    }
  c.set_output(0, cast_tensor(y, c.input(0).dtype()));
}

void k_mel(KernelContext& c) {
  int64_t mels = c.input(0).get_i64(0), dft = c.input(1).get_i64(0), rate = c.input(2).get_i64(0);
  double lo = c.input(3).get_f64(0), hi = c.input(4).get_f64(0);
  int64_t bins = dft / 2 + 1;
  double lmel = 2595 * std::log10(1 + lo / 700), hmel = 2595 * std::log10(1 + hi / 700);
  double mstep = (hmel - lmel) / static_cast<double>(mels + 2);  // as ONNX's reference (not mels + 1)
  std::vector<int64_t> fb(mels + 2);
  for (int64_t i = 0; i < mels + 2; ++i) {
    double hz = 700 * (std::pow(10, (static_cast<double>(i) * mstep + lmel) / 2595) - 1);
    fb[i] = static_cast<int64_t>(std::floor(static_cast<double>(dft + 1) * hz / static_cast<double>(rate)));
  }
  Tensor y(DType::Float64, {bins, mels});
  double* o = y.mutable_data<double>();
  for (int64_t i = 0; i < mels; ++i) {
    int64_t l = fb[i], ce = fb[i + 1], h = fb[i + 2];
    if (ce - l == 0) {
      if (ce >= 0 && ce < bins) o[ce * mels + i] = 1;
    } else {
      for (int64_t j = l; j <= ce; ++j)
        if (j >= 0 && j < bins) o[j * mels + i] = static_cast<double>(j - l) / static_cast<double>(ce - l);
    }
    if (h - ce > 0)
      for (int64_t j = ce; j < h; ++j)
        if (j >= 0 && j < bins) o[j * mels + i] = static_cast<double>(h - j) / static_cast<double>(h - ce);
  }
  c.set_output(0, cast_tensor(y, output_type(c)));
}

}  // namespace

void register_signal(KernelRegistry& r) {
  r.add("HannWindow", 17, window<0>);
  r.add("HammingWindow", 17, window<1>);
  r.add("BlackmanWindow", 17, window<2>);
  r.add("DFT", 17, k_dft);
  r.add("STFT", 17, k_stft);
  r.add("MelWeightMatrix", 17, k_mel);
}

}  // namespace amanda::interp::kernels
