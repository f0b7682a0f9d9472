// Convolutions: Conv (im2col + OpenBLAS sgemm per group; a direct loop for depthwise 2-D
// convolutions, where a gemm per channel would be 1 x k*k x HW), ConvTranspose (gemm + col2im),
// ConvInteger and QLinearConv (through the float path: exact for 8-bit inputs, since every
// product and sum fits in a double's 53 bits).
#include <algorithm>
#include <cmath>

#include "families.h"

namespace amanda::interp::kernels {

Window window_geometry(const KernelContext& c, const Shape& x, const std::vector<int64_t>& kernel, bool ceil_mode) {
  Window w;
  size_t n = kernel.size();
  w.in.assign(x.end() - static_cast<int64_t>(n), x.end());
  w.kernel = kernel;
  w.strides = c.attr_ints("strides").value_or(std::vector<int64_t>(n, 1));
  w.dilations = c.attr_ints("dilations").value_or(std::vector<int64_t>(n, 1));
  std::vector<int64_t> pads = c.attr_ints("pads").value_or(std::vector<int64_t>(2 * n, 0));
  if (w.strides.size() != n || w.dilations.size() != n || pads.size() != 2 * n)
    c.fail("strides, dilations or pads do not match the " + std::to_string(n) + " spatial dimensions");
  w.pad_begin.assign(pads.begin(), pads.begin() + static_cast<int64_t>(n));
  w.pad_end.assign(pads.begin() + static_cast<int64_t>(n), pads.end());
  std::string ap = c.attr_string("auto_pad", "NOTSET");
  w.out.resize(n);
  for (size_t i = 0; i < n; ++i) {
    if (w.strides[i] <= 0 || w.dilations[i] <= 0 || w.kernel[i] <= 0) c.fail("strides, dilations and kernel sizes must be positive");
    int64_t ek = (w.kernel[i] - 1) * w.dilations[i] + 1;
    if (ap == "SAME_UPPER" || ap == "SAME_LOWER") {
      int64_t out = (w.in[i] + w.strides[i] - 1) / w.strides[i];
      int64_t total = std::max<int64_t>(0, (out - 1) * w.strides[i] + ek - w.in[i]);
      w.pad_begin[i] = ap == "SAME_UPPER" ? total / 2 : total - total / 2;
      w.pad_end[i] = total - w.pad_begin[i];
      w.out[i] = out;
      continue;
    }
    if (ap == "VALID") w.pad_begin[i] = w.pad_end[i] = 0;
    int64_t span = w.in[i] + w.pad_begin[i] + w.pad_end[i] - ek;
    if (span < 0) c.fail("the kernel is larger than the padded input");
    if (ceil_mode) {
      w.out[i] = (span + w.strides[i] - 1) / w.strides[i] + 1;
      // The last window must start inside the input or the begin padding.
      if ((w.out[i] - 1) * w.strides[i] >= w.in[i] + w.pad_begin[i]) --w.out[i];
    } else {
      w.out[i] = span / w.strides[i] + 1;
    }
  }
  return w;
}

// conv_dnnl.cpp: oneDNN's convolution (false: not available, use the gemm path).
bool conv2d_dnnl(const Tensor& x, const Tensor& w, const Tensor* bias, const Window& win, int64_t group,
                 const KernelContext::Activation& act, bool native_out, Tensor& y);

namespace {

// im2col for one image and one group: col[(c*K + k), o] = x[c, o*s - p + k*d] (0 outside).
void im2col(const float* x, int64_t channels, const Window& w, float* col) {
  size_t n = w.kernel.size();
  int64_t K = numel(w.kernel), O = numel(w.out), I = numel(w.in);
  if (n == 2) {
    int64_t H = w.in[0], W = w.in[1], OH = w.out[0], OW = w.out[1];
    for (int64_t ch = 0; ch < channels; ++ch)
      for (int64_t kh = 0; kh < w.kernel[0]; ++kh)
        for (int64_t kw = 0; kw < w.kernel[1]; ++kw) {
          float* row = col + ((ch * w.kernel[0] + kh) * w.kernel[1] + kw) * O;
          const float* xc = x + ch * H * W;
          for (int64_t oh = 0; oh < OH; ++oh) {
            int64_t ih = oh * w.strides[0] - w.pad_begin[0] + kh * w.dilations[0];
            float* r = row + oh * OW;
            if (ih < 0 || ih >= H) {
              std::fill(r, r + OW, 0.0f);
              continue;
            }
            const float* xr = xc + ih * W;
            int64_t sw = w.strides[1], off = kw * w.dilations[1] - w.pad_begin[1];
            for (int64_t ow = 0; ow < OW; ++ow) {
              int64_t iw = ow * sw + off;
              r[ow] = iw >= 0 && iw < W ? xr[iw] : 0.0f;
            }
          }
        }
    return;
  }
  std::vector<int64_t> kidx(n), oidx(n);
  for (int64_t ch = 0; ch < channels; ++ch)
    for (int64_t k = 0; k < K; ++k) {
      for (int64_t rem = k, i = static_cast<int64_t>(n); i-- > 0;) kidx[i] = rem % w.kernel[i], rem /= w.kernel[i];
      float* row = col + (ch * K + k) * O;
      for (int64_t o = 0; o < O; ++o) {
        for (int64_t rem = o, i = static_cast<int64_t>(n); i-- > 0;) oidx[i] = rem % w.out[i], rem /= w.out[i];
        int64_t at = 0;
        bool inside = true;
        for (size_t i = 0; i < n; ++i) {
          int64_t p = oidx[i] * w.strides[i] - w.pad_begin[i] + kidx[i] * w.dilations[i];
          if (p < 0 || p >= w.in[i]) {
            inside = false;
            break;
          }
          at = at * w.in[i] + p;
        }
        row[o] = inside ? x[ch * I + at] : 0.0f;
      }
    }
}

// The transpose of im2col, accumulating: x[c, o*s - p + k*d] += col[(c*K + k), o].
void col2im(const float* col, int64_t channels, const Window& w, float* x) {
  size_t n = w.kernel.size();
  int64_t K = numel(w.kernel), O = numel(w.out), I = numel(w.in);
  std::vector<int64_t> kidx(n), oidx(n);
  for (int64_t ch = 0; ch < channels; ++ch)
    for (int64_t k = 0; k < K; ++k) {
      for (int64_t rem = k, i = static_cast<int64_t>(n); i-- > 0;) kidx[i] = rem % w.kernel[i], rem /= w.kernel[i];
      const float* row = col + (ch * K + k) * O;
      for (int64_t o = 0; o < O; ++o) {
        for (int64_t rem = o, i = static_cast<int64_t>(n); i-- > 0;) oidx[i] = rem % w.out[i], rem /= w.out[i];
        int64_t at = 0;
        bool inside = true;
        for (size_t i = 0; i < n; ++i) {
          int64_t p = oidx[i] * w.strides[i] - w.pad_begin[i] + kidx[i] * w.dilations[i];
          if (p < 0 || p >= w.in[i]) {
            inside = false;
            break;
          }
          at = at * w.in[i] + p;
        }
        if (inside) x[ch * I + at] += row[o];
      }
    }
}

void depthwise2d(const float* x, const float* wt, const Window& w, float* y, int64_t channels, int64_t mult) {
  int64_t H = w.in[0], W = w.in[1], OH = w.out[0], OW = w.out[1], KH = w.kernel[0], KW = w.kernel[1];
  for (int64_t oc = 0; oc < channels * mult; ++oc) {
    const float* xc = x + (oc / mult) * H * W;
    const float* k = wt + oc * KH * KW;
    float* yc = y + oc * OH * OW;
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        float s = 0;
        for (int64_t kh = 0; kh < KH; ++kh) {
          int64_t ih = oh * w.strides[0] - w.pad_begin[0] + kh * w.dilations[0];
          if (ih < 0 || ih >= H) continue;
          for (int64_t kw = 0; kw < KW; ++kw) {
            int64_t iw = ow * w.strides[1] - w.pad_begin[1] + kw * w.dilations[1];
            if (iw >= 0 && iw < W) s += xc[ih * W + iw] * k[kh * KW + kw];
          }
        }
        yc[oh * OW + ow] = s;
      }
  }
}

// Conv in float32 (float64 inputs go through float32 too: a reference for those is rare).
Tensor conv_f32(const KernelContext& c, const Tensor& x, const Tensor& wt, const Tensor* bias) {
  if (x.rank() < 3 || wt.rank() != x.rank()) c.fail("X and W must have the same rank >= 3");
  int64_t N = x.dim(0), C = x.dim(1), M = wt.dim(0);
  int64_t group = c.attr_int("group", 1);
  if (group <= 0 || C % group || M % group || wt.dim(1) * group != C)
    c.fail("channels " + std::to_string(C) + " and W " + shape_str(wt.shape()) + " do not match group " + std::to_string(group));
  std::vector<int64_t> kernel(wt.shape().begin() + 2, wt.shape().end());
  if (auto ks = c.attr_ints("kernel_shape"); ks && *ks != kernel) c.fail("kernel_shape differs from W's shape");
  Window w = window_geometry(c, x.shape(), kernel, false);
  Shape out{N, M};
  out.insert(out.end(), w.out.begin(), w.out.end());
  Tensor y;
  const KernelContext::Activation& act = c.fused_activation();
  if (kernel.size() == 2 && conv2d_dnnl(x, wt, bias, w, group, act, c.native_output_ok(), y)) return y;
  if (x.layout()) return conv_f32(c, x.plain(), wt, bias);
  y = Tensor::uninit(DType::Float32, out);
  int64_t Cg = C / group, Mg = M / group, K = numel(kernel), O = numel(w.out), I = numel(w.in);
  const float* px = x.data<float>();
  const float* pw = wt.data<float>();
  float* py = y.mutable_data<float>();
  bool pointwise = K == 1;
  for (size_t i = 0; i < kernel.size(); ++i)
    pointwise = pointwise && w.strides[i] == 1 && w.pad_begin[i] == 0 && w.pad_end[i] == 0;
  bool depthwise = group == C && Cg == 1 && kernel.size() == 2 && group > 1;
  if (bias && bias->numel() != M) c.fail("B must have " + std::to_string(M) + " elements");
  std::vector<float> col;
  if (!pointwise && !depthwise) col.resize(static_cast<size_t>(Cg * K * O));
  for (int64_t n = 0; n < N; ++n) {
    if (depthwise) {
      depthwise2d(px + n * C * I, pw, w, py + n * M * O, C, Mg);
      continue;
    }
    for (int64_t g = 0; g < group; ++g) {
      const float* xg = px + (n * C + g * Cg) * I;
      const float* B = xg;
      if (!pointwise) {
        im2col(xg, Cg, w, col.data());
        B = col.data();
      }
      gemm_f32(false, false, Mg, O, Cg * K, 1.0f, pw + g * Mg * Cg * K, Cg * K, B, O, 0.0f, py + (n * M + g * Mg) * O, O);
    }
  }
  if (bias) {
    if (bias->numel() != M) c.fail("B must have " + std::to_string(M) + " elements");
    for (int64_t n = 0; n < N; ++n)
      for (int64_t m = 0; m < M; ++m) {
        float b = bias->data<float>()[m];
        float* r = py + (n * M + m) * O;
        for (int64_t o = 0; o < O; ++o) r[o] += b;
      }
  }
  apply_activation(act, py, y.numel());
  return y;
}

void k_conv(KernelContext& c) {
  DType t = c.input(0).dtype();
  Tensor x = c.input(0).layout() ? c.input(0) : cast_tensor(c.input(0), DType::Float32);
  Tensor w = cast_tensor(c.input(1), DType::Float32);
  Tensor b;
  if (c.has_input(2)) b = cast_tensor(c.input(2), DType::Float32);
  c.set_output(0, cast_tensor(conv_f32(c, x, w, c.has_input(2) ? &b : nullptr), t));
}

void k_conv_transpose(KernelContext& c) {
  DType t = c.input(0).dtype();
  Tensor x = cast_tensor(c.input(0), DType::Float32), wt = cast_tensor(c.input(1), DType::Float32);
  int64_t N = x.dim(0), C = x.dim(1), group = c.attr_int("group", 1);
  if (C % group || wt.dim(0) != C) c.fail("W's first dimension must equal the input channels");
  int64_t Mg = wt.dim(1), M = Mg * group, Cg = C / group;
  size_t n = static_cast<size_t>(x.rank() - 2);
  std::vector<int64_t> kernel(wt.shape().begin() + 2, wt.shape().end());
  Window w;
  w.kernel = kernel;
  w.strides = c.attr_ints("strides").value_or(std::vector<int64_t>(n, 1));
  w.dilations = c.attr_ints("dilations").value_or(std::vector<int64_t>(n, 1));
  auto opad = c.attr_ints("output_padding").value_or(std::vector<int64_t>(n, 0));
  auto pads = c.attr_ints("pads").value_or(std::vector<int64_t>(2 * n, 0));
  auto oshape = c.attr_ints("output_shape");
  std::string ap = c.attr_string("auto_pad", "NOTSET");
  w.pad_begin.resize(n);
  w.pad_end.resize(n);
  std::vector<int64_t> in(x.shape().begin() + 2, x.shape().end()), outsz(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t ek = (kernel[i] - 1) * w.dilations[i] + 1;
    int64_t full = w.strides[i] * (in[i] - 1) + opad[i] + ek;
    if (oshape || ap == "SAME_UPPER" || ap == "SAME_LOWER") {
      int64_t want = oshape ? (*oshape)[oshape->size() - n + i] : in[i] * w.strides[i];
      int64_t total = std::max<int64_t>(0, full - want);
      bool lower = ap == "SAME_LOWER";
      w.pad_begin[i] = lower ? total - total / 2 : total / 2;
      w.pad_end[i] = total - w.pad_begin[i];
      outsz[i] = want;
    } else {
      w.pad_begin[i] = pads[i];
      w.pad_end[i] = pads[i + n];
      outsz[i] = full - pads[i] - pads[i + n];
    }
  }
  // In col2im terms the "image" is the output and the "windows" are the input positions.
  w.in = outsz;
  w.out = in;
  Shape out{N, M};
  out.insert(out.end(), outsz.begin(), outsz.end());
  Tensor y(DType::Float32, out);
  int64_t K = numel(kernel), I = numel(in), O = numel(outsz);
  std::vector<float> col(static_cast<size_t>(Mg * K * I));
  for (int64_t b = 0; b < N; ++b)
    for (int64_t g = 0; g < group; ++g) {
      // col[Mg*K, I] = W_g^T [Mg*K, Cg] * X_g [Cg, I]
      gemm_f32(true, false, Mg * K, I, Cg, 1.0f, wt.data<float>() + g * Cg * Mg * K, Mg * K,
               x.data<float>() + (b * C + g * Cg) * I, I, 0.0f, col.data(), I);
      col2im(col.data(), Mg, w, y.mutable_data<float>() + (b * M + g * Mg) * O);
    }
  if (c.has_input(2)) {
    Tensor bias = cast_tensor(c.input(2), DType::Float32);
    for (int64_t b = 0; b < N; ++b)
      for (int64_t m = 0; m < M; ++m)
        for (int64_t o = 0; o < O; ++o) y.mutable_data<float>()[(b * M + m) * O + o] += bias.data<float>()[m];
  }
  c.set_output(0, cast_tensor(y, t));
}

// x - zero point (per tensor, or per output channel for W) as float32.
Tensor minus_zero(const Tensor& x, const Tensor* zp, bool per_channel) {
  Tensor y = cast_tensor(x, DType::Float32);
  if (!zp) return y;
  int64_t per = x.numel() / std::max<int64_t>(x.dim(0), 1);
  for (int64_t i = 0; i < y.numel(); ++i)
    y.mutable_data<float>()[i] -= static_cast<float>(zp->get_f64(zp->numel() == 1 ? 0 : (per_channel ? i / per : 0)));
  return y;
}

void k_conv_integer(KernelContext& c) {
  Tensor x = minus_zero(c.input(0), c.has_input(2) ? &c.input(2) : nullptr, false);
  Tensor w = minus_zero(c.input(1), c.has_input(3) ? &c.input(3) : nullptr, true);
  c.set_output(0, cast_tensor(conv_f32(c, x, w, nullptr), DType::Int32));
}

void k_qlinear_conv(KernelContext& c) {
  Tensor x = minus_zero(c.input(0), &c.input(2), false);
  Tensor w = minus_zero(c.input(3), &c.input(5), true);
  double xs = c.input(1).get_f64(0);
  const Tensor& ws = c.input(4);
  Tensor acc = conv_f32(c, x, w, nullptr);
  int64_t M = acc.dim(1), per = acc.numel() / std::max<int64_t>(acc.dim(0) * M, 1);
  Tensor real = Tensor::uninit(DType::Float64, acc.shape());
  for (int64_t i = 0; i < acc.numel(); ++i) {
    int64_t m = (i / per) % M;
    double b = c.has_input(8) ? c.input(8).get_f64(m) : 0;
    real.mutable_data<double>()[i] = (acc.data<float>()[i] + b) * xs * ws.get_f64(ws.numel() == 1 ? 0 : m);
  }
  c.set_output(0, quant_requantize(real, static_cast<float>(c.input(6).get_f64(0)), c.input(7)));
}

}  // namespace

void register_conv(KernelRegistry& r) {
  r.add("Conv", 1, k_conv);
  r.add("ConvTranspose", 1, k_conv_transpose);
  r.add("ConvInteger", 10, k_conv_integer);
  r.add("QLinearConv", 10, k_qlinear_conv);
}

}  // namespace amanda::interp::kernels
