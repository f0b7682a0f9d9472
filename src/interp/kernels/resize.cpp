// Resampling: Resize (opsets 10-18: nearest with its four rounding modes, linear, cubic; every
// coordinate_transformation_mode; tf_crop_and_resize's extrapolation), Upsample, GridSample.
// Resize is separable: each axis gets a list of (input index, weight) per output index, and an
// output element sums the product over the axes.
#include <algorithm>
#include <cmath>

#include "families.h"

namespace amanda::interp::kernels {

namespace {

struct Tap {
  int64_t index;
  double weight;
};
struct AxisPlan {
  std::vector<std::vector<Tap>> taps;  // per output index
  std::vector<bool> outside;           // tf_crop_and_resize: use the extrapolation value
};

double nearest_round(double x, const std::string& mode) {
  if (mode == "floor") return std::floor(x);
  if (mode == "ceil") return std::ceil(x);
  if (mode == "round_prefer_ceil") return std::round(x);
  // round_prefer_floor
  if (x == std::floor(x) + 0.5) return std::floor(x);
  return std::round(x);
}

AxisPlan plan_axis(int64_t in, int64_t out, double out_len, double scale, double roi_start, double roi_end, const std::string& coord,
                   const std::string& mode, const std::string& nearest_mode, double cubic_a, bool exclude_outside) {
  AxisPlan p;
  p.taps.resize(out);
  p.outside.assign(out, false);
  for (int64_t o = 0; o < out; ++o) {
    double x = static_cast<double>(o), xo;
    if (coord == "half_pixel") xo = (x + 0.5) / scale - 0.5;
    else if (coord == "pytorch_half_pixel") xo = out > 1 ? (x + 0.5) / scale - 0.5 : 0;
    // With scales, ONNX's reference takes the resized length as in * scale, not its floor.
    else if (coord == "align_corners") xo = out == 1 ? 0 : x * static_cast<double>(in - 1) / (out_len - 1);
    else if (coord == "tf_half_pixel_for_nn") xo = (x + 0.5) / scale;
    else if (coord == "tf_crop_and_resize")
      xo = out > 1 ? roi_start * static_cast<double>(in - 1) + x * (roi_end - roi_start) * static_cast<double>(in - 1) / static_cast<double>(out - 1)
                   : 0.5 * (roi_start + roi_end) * static_cast<double>(in - 1);
    else xo = x / scale;  // asymmetric
    if (coord == "tf_crop_and_resize" && (xo < 0 || xo > static_cast<double>(in - 1))) {
      p.outside[o] = true;
      continue;
    }
    auto clampi = [&](int64_t i) { return std::clamp<int64_t>(i, 0, in - 1); };
    if (mode == "nearest") {
      p.taps[o].push_back({clampi(static_cast<int64_t>(nearest_round(xo, nearest_mode))), 1.0});
    } else if (mode == "linear") {
      double xc = std::clamp(xo, 0.0, static_cast<double>(in - 1));
      int64_t i0 = static_cast<int64_t>(std::floor(xc));
      double t = xc - static_cast<double>(i0);
      p.taps[o].push_back({clampi(i0), 1 - t});
      p.taps[o].push_back({clampi(i0 + 1), t});
    } else {  // cubic
      int64_t i0 = static_cast<int64_t>(std::floor(xo));
      double t = xo - static_cast<double>(i0), A = cubic_a;
      auto w_far = [&](double s) { return ((A * s - 5 * A) * s + 8 * A) * s - 4 * A; };  // 1 < |s| < 2
      auto w_near = [&](double s) { return ((A + 2) * s - (A + 3)) * s * s + 1; };      // |s| <= 1
      double w[4] = {w_far(t + 1), w_near(t), w_near(1 - t), w_far(2 - t)};
      double total = 0;
      for (int k = 0; k < 4; ++k) {
        int64_t i = i0 - 1 + k;
        if (exclude_outside && (i < 0 || i >= in)) continue;
        p.taps[o].push_back({clampi(i), w[k]});
        total += w[k];
      }
      if (exclude_outside && total != 0)
        for (auto& tp : p.taps[o]) tp.weight /= total;
    }
  }
  return p;
}

Tensor resample(KernelContext& c, const Tensor& x0, const std::vector<double>& scales, const Shape& out,
                const std::vector<double>& roi, const std::string& coord, const std::string& mode,
                const std::string& nearest_mode, bool scales_given) {
  Tensor x = cast_tensor(to_float32(x0), DType::Float64);
  int64_t r = x.rank();
  double a = c.attr_float("cubic_coeff_a", -0.75f);
  bool excl = c.attr_int("exclude_outside", 0);
  double extrap = c.attr_float("extrapolation_value", 0.0f);
  std::vector<AxisPlan> plans;
  for (int64_t d = 0; d < r; ++d) {
    double rs = roi.size() == static_cast<size_t>(2 * r) ? roi[d] : 0, re = roi.size() == static_cast<size_t>(2 * r) ? roi[d + r] : 1;
    // An axis that is not resized keeps its elements (no interpolation between them).
    bool same = out[d] == x.dim(d) && scales[d] == 1.0 && coord != "tf_crop_and_resize";
    double out_len = scales_given ? static_cast<double>(x.dim(d)) * scales[d] : static_cast<double>(out[d]);
    plans.push_back(plan_axis(x.dim(d), out[d], out_len, scales[d], rs, re, same ? "asymmetric" : coord, same ? "nearest" : mode,
                              "floor", a, excl));
    if (!same && mode == "nearest") plans.back() = plan_axis(x.dim(d), out[d], out_len, scales[d], rs, re, coord, mode, nearest_mode, a, excl);
  }
  Tensor y = Tensor::uninit(DType::Float64, out);
  auto ist = strides_of(x.shape());
  auto ost = strides_of(out);
  std::vector<int64_t> oi(r), ti(r);
  for (int64_t o = 0; o < y.numel(); ++o) {
    bool outside = false;
    for (int64_t d = 0, rem = o; d < r; ++d) {
      oi[d] = rem / ost[d];
      rem %= ost[d];
      outside = outside || plans[d].outside[oi[d]];
    }
    if (outside) {
      y.mutable_data<double>()[o] = extrap;
      continue;
    }
    // Sum over the product of the axes' taps.
    double s = 0;
    std::fill(ti.begin(), ti.end(), 0);
    while (true) {
      double w = 1;
      int64_t at = 0;
      for (int64_t d = 0; d < r; ++d) {
        const Tap& tp = plans[d].taps[oi[d]][ti[d]];
        w *= tp.weight;
        at += tp.index * ist[d];
      }
      s += w * x.data<double>()[at];
      int64_t d = r - 1;
      for (; d >= 0; --d) {
        if (++ti[d] < static_cast<int64_t>(plans[d].taps[oi[d]].size())) break;
        ti[d] = 0;
      }
      if (d < 0) break;
    }
    y.mutable_data<double>()[o] = s;
  }
  return cast_tensor(y, x0.dtype());
}

void k_resize(KernelContext& c) {
  const Tensor& x = c.input(0);
  int64_t r = x.rank();
  std::vector<double> scales, roi;
  Shape out;
  std::string mode = c.attr_string("mode", "nearest");
  std::string coord = c.attr_string("coordinate_transformation_mode", "half_pixel");
  std::string nm = c.attr_string("nearest_mode", "round_prefer_floor");
  if (c.opset() < 11) {
    coord = "asymmetric";
    nm = "floor";
    const Tensor& s = c.input(1);
    for (int64_t i = 0; i < s.numel(); ++i) scales.push_back(s.get_f64(i));
  } else {
    if (c.has_input(1))
      for (int64_t i = 0; i < c.input(1).numel(); ++i) roi.push_back(c.input(1).get_f64(i));
    if (c.has_input(2) && c.input(2).numel() > 0)
      for (int64_t i = 0; i < c.input(2).numel(); ++i) scales.push_back(c.input(2).get_f64(i));
    if (c.has_input(3) && c.input(3).numel() > 0) {
      out = c.input(3).to_i64_vector();
      if (static_cast<int64_t>(out.size()) != r) c.fail("sizes must have one entry per axis");
      scales.clear();
      for (int64_t d = 0; d < r; ++d) scales.push_back(static_cast<double>(out[d]) / static_cast<double>(x.dim(d)));
    }
  }
  if (static_cast<int64_t>(scales.size()) != r) c.fail("scales must have one entry per axis");
  if (out.empty())
    for (int64_t d = 0; d < r; ++d) out.push_back(static_cast<int64_t>(std::floor(static_cast<double>(x.dim(d)) * scales[d])));
  if (mode == "linear" || mode == "cubic" || mode == "nearest") {
  } else {
    c.fail("unknown mode '" + mode + "'");
  }
  bool scales_given = !(c.opset() >= 11 && c.has_input(3) && c.input(3).numel() > 0);
  c.set_output(0, resample(c, x, scales, out, roi, coord, mode, nm, scales_given));
}

void k_upsample(KernelContext& c) {
  const Tensor& x = c.input(0);
  std::vector<double> scales;
  if (c.opset() < 9) {
    for (float s : c.attr_floats("scales").value_or(std::vector<float>{})) scales.push_back(s);
  } else {
    for (int64_t i = 0; i < c.input(1).numel(); ++i) scales.push_back(c.input(1).get_f64(i));
  }
  if (static_cast<int64_t>(scales.size()) != x.rank()) c.fail("scales must have one entry per axis");
  Shape out;
  for (int64_t d = 0; d < x.rank(); ++d) out.push_back(static_cast<int64_t>(std::floor(static_cast<double>(x.dim(d)) * scales[d])));
  std::string mode = c.attr_string("mode", "nearest");
  if (mode == "bilinear") mode = "linear";
  c.set_output(0, resample(c, x, scales, out, {}, "asymmetric", mode, "floor", true));
}

void k_grid_sample(KernelContext& c) {
  Tensor x = cast_tensor(to_float32(c.input(0)), DType::Float64);
  Tensor grid = cast_tensor(to_float32(c.input(1)), DType::Float64);
  std::string mode = c.attr_string("mode", "bilinear"), pad = c.attr_string("padding_mode", "zeros");
  bool align = c.attr_int("align_corners", 0);
  if (x.rank() != 4) c.fail("only 4-D inputs are supported");
  int64_t N = x.dim(0), C = x.dim(1), H = x.dim(2), W = x.dim(3), Ho = grid.dim(1), Wo = grid.dim(2);
  Tensor y = Tensor::uninit(DType::Float64, {N, C, Ho, Wo});
  auto unnorm = [&](double v, int64_t size) {
    return align ? (v + 1) / 2 * static_cast<double>(size - 1) : ((v + 1) * static_cast<double>(size) - 1) / 2;
  };
  auto reflect = [&](double v, double lo, double hi) {
    double span = hi - lo;
    if (span <= 0) return lo;
    double d = std::fabs(v - lo);
    int64_t flips = static_cast<int64_t>(std::floor(d / span));
    double extra = d - static_cast<double>(flips) * span;
    return flips % 2 == 0 ? lo + extra : hi - extra;
  };
  auto fix = [&](double v, int64_t size) {
    if (pad == "border") return std::clamp(v, 0.0, static_cast<double>(size - 1));
    if (pad == "reflection")
      return align ? reflect(v, 0, static_cast<double>(size - 1)) : std::clamp(reflect(v, -0.5, static_cast<double>(size) - 0.5), 0.0, static_cast<double>(size - 1));
    return v;
  };
  for (int64_t n = 0; n < N; ++n)
    for (int64_t ch = 0; ch < C; ++ch) {
      const double* img = x.data<double>() + (n * C + ch) * H * W;
      auto pix = [&](int64_t yy, int64_t xx) -> double {
        if (pad != "zeros") {
          yy = std::clamp<int64_t>(yy, 0, H - 1);
          xx = std::clamp<int64_t>(xx, 0, W - 1);
        }
        return yy < 0 || yy >= H || xx < 0 || xx >= W ? 0.0 : img[yy * W + xx];
      };
      for (int64_t i = 0; i < Ho; ++i)
        for (int64_t j = 0; j < Wo; ++j) {
          const double* g = grid.data<double>() + ((n * Ho + i) * Wo + j) * 2;
          double gx = fix(unnorm(g[0], W), W), gy = fix(unnorm(g[1], H), H);
          double v = 0;
          if (mode == "nearest") {
            v = pix(static_cast<int64_t>(std::nearbyint(gy)), static_cast<int64_t>(std::nearbyint(gx)));
          } else if (mode == "bilinear") {
            int64_t x0 = static_cast<int64_t>(std::floor(gx)), y0 = static_cast<int64_t>(std::floor(gy));
            double tx = gx - static_cast<double>(x0), ty = gy - static_cast<double>(y0);
            v = (1 - ty) * ((1 - tx) * pix(y0, x0) + tx * pix(y0, x0 + 1)) + ty * ((1 - tx) * pix(y0 + 1, x0) + tx * pix(y0 + 1, x0 + 1));
          } else {  // bicubic, A = -0.75
            int64_t x0 = static_cast<int64_t>(std::floor(gx)), y0 = static_cast<int64_t>(std::floor(gy));
            double tx = gx - static_cast<double>(x0), ty = gy - static_cast<double>(y0), A = -0.75;
            auto coeffs = [&](double t, double* w) {
              auto far = [&](double s) { return ((A * s - 5 * A) * s + 8 * A) * s - 4 * A; };
              auto near = [&](double s) { return ((A + 2) * s - (A + 3)) * s * s + 1; };
              w[0] = far(t + 1), w[1] = near(t), w[2] = near(1 - t), w[3] = far(2 - t);
            };
            double wx[4], wy[4];
            coeffs(tx, wx);
            coeffs(ty, wy);
            for (int a = 0; a < 4; ++a)
              for (int b = 0; b < 4; ++b) v += wy[a] * wx[b] * pix(y0 - 1 + a, x0 - 1 + b);
          }
          y.mutable_data<double>()[((n * C + ch) * Ho + i) * Wo + j] = v;
        }
    }
  c.set_output(0, cast_tensor(y, c.input(0).dtype()));
}

}  // namespace

void register_resize(KernelRegistry& r) {
  r.add("Resize", 10, k_resize);
  r.add("Upsample", 7, k_upsample);
  r.add("GridSample", 16, k_grid_sample);
}

}  // namespace amanda::interp::kernels
