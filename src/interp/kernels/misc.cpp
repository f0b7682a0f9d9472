// NonMaxSuppression and RoiAlign (detection post-processing).
#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "families.h"

namespace amanda::interp::kernels {

namespace {

void k_nms(KernelContext& c) {
  const Tensor& boxes = c.input(0);
  const Tensor& scores = c.input(1);
  int64_t max_out = c.has_input(2) && c.input(2).numel() ? c.input(2).get_i64(0) : 0;
  double iou_th = c.has_input(3) && c.input(3).numel() ? c.input(3).get_f64(0) : 0;
  bool has_score_th = c.has_input(4) && c.input(4).numel();
  double score_th = has_score_th ? c.input(4).get_f64(0) : 0;
  bool center = c.attr_int("center_point_box", 0);
  int64_t B = scores.dim(0), C = scores.dim(1), N = scores.dim(2);
  std::vector<int64_t> sel;
  auto box = [&](int64_t b, int64_t i, double* o) {  // y1, x1, y2, x2 with y1 <= y2, x1 <= x2
    const int64_t at = (b * N + i) * 4;
    double v[4];
    for (int k = 0; k < 4; ++k) v[k] = boxes.get_f64(at + k);
    if (center) {
      o[0] = v[1] - v[3] / 2, o[1] = v[0] - v[2] / 2, o[2] = v[1] + v[3] / 2, o[3] = v[0] + v[2] / 2;
    } else {
      o[0] = std::min(v[0], v[2]), o[1] = std::min(v[1], v[3]), o[2] = std::max(v[0], v[2]), o[3] = std::max(v[1], v[3]);
    }
  };
  for (int64_t b = 0; b < B; ++b)
    for (int64_t k = 0; k < C; ++k) {
      std::vector<int64_t> order;
      for (int64_t i = 0; i < N; ++i)
        if (!has_score_th || scores.get_f64((b * C + k) * N + i) > score_th) order.push_back(i);
      std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) {
        return scores.get_f64((b * C + k) * N + x) > scores.get_f64((b * C + k) * N + y);
      });
      std::vector<int64_t> kept;
      for (int64_t i : order) {
        if (static_cast<int64_t>(kept.size()) >= max_out) break;
        double a[4];
        box(b, i, a);
        bool ok = true;
        for (int64_t j : kept) {
          double e[4];
          box(b, j, e);
          double ih = std::max(0.0, std::min(a[2], e[2]) - std::max(a[0], e[0]));
          double iw = std::max(0.0, std::min(a[3], e[3]) - std::max(a[1], e[1]));
          double inter = ih * iw;
          double uni = (a[2] - a[0]) * (a[3] - a[1]) + (e[2] - e[0]) * (e[3] - e[1]) - inter;
          if (uni > 0 && inter / uni > iou_th) {
            ok = false;
            break;
          }
        }
        if (ok) kept.push_back(i);
      }
      for (int64_t i : kept) sel.insert(sel.end(), {b, k, i});
    }
  Tensor y = Tensor::uninit(DType::Int64, {static_cast<int64_t>(sel.size() / 3), 3});
  std::copy(sel.begin(), sel.end(), y.mutable_data<int64_t>());
  c.set_output(0, y);
}

void k_roi_align(KernelContext& c) {
  Tensor x = cast_tensor(to_float32(c.input(0)), DType::Float64);
  Tensor rois = cast_tensor(to_float32(c.input(1)), DType::Float64);
  const Tensor& bi = c.input(2);
  std::string mode = c.attr_string("mode", "avg");
  int64_t oh = c.attr_int("output_height", 1), ow = c.attr_int("output_width", 1), sr = c.attr_int("sampling_ratio", 0);
  double scale = c.attr_float("spatial_scale", 1.0f);
  bool half = c.attr_string("coordinate_transformation_mode", c.opset() >= 16 ? "half_pixel" : "output_half_pixel") == "half_pixel";
  int64_t C = x.dim(1), H = x.dim(2), W = x.dim(3), R = rois.dim(0);
  Tensor y(DType::Float64, {R, C, oh, ow});
  double off = half ? 0.5 : 0;
  for (int64_t r = 0; r < R; ++r) {
    const double* roi = rois.data<double>() + r * 4;
    double x1 = roi[0] * scale - off, y1 = roi[1] * scale - off, x2 = roi[2] * scale - off, y2 = roi[3] * scale - off;
    double rw = x2 - x1, rh = y2 - y1;
    if (!half) rw = std::max(rw, 1.0), rh = std::max(rh, 1.0);
    double bh = rh / static_cast<double>(oh), bw = rw / static_cast<double>(ow);
    int64_t gh = sr > 0 ? sr : static_cast<int64_t>(std::ceil(rh / static_cast<double>(oh)));
    int64_t gw = sr > 0 ? sr : static_cast<int64_t>(std::ceil(rw / static_cast<double>(ow)));
    int64_t b = bi.get_i64(r);
    for (int64_t ch = 0; ch < C; ++ch) {
      const double* img = x.data<double>() + (b * C + ch) * H * W;
      for (int64_t ph = 0; ph < oh; ++ph)
        for (int64_t pw = 0; pw < ow; ++pw) {
          double acc = mode == "max" ? -1e300 : 0;
          bool any = false;
          for (int64_t iy = 0; iy < gh; ++iy)
            for (int64_t ix = 0; ix < gw; ++ix) {
              double yy = y1 + static_cast<double>(ph) * bh + (static_cast<double>(iy) + 0.5) * bh / static_cast<double>(gh);
              double xx = x1 + static_cast<double>(pw) * bw + (static_cast<double>(ix) + 0.5) * bw / static_cast<double>(gw);
              double v = 0;
              if (!(yy < -1.0 || yy > static_cast<double>(H) || xx < -1.0 || xx > static_cast<double>(W))) {
                yy = std::max(yy, 0.0);
                xx = std::max(xx, 0.0);
                int64_t y0 = static_cast<int64_t>(yy), x0 = static_cast<int64_t>(xx), y1i, x1i;
                if (y0 >= H - 1) y0 = y1i = H - 1, yy = static_cast<double>(y0);
                else y1i = y0 + 1;
                if (x0 >= W - 1) x0 = x1i = W - 1, xx = static_cast<double>(x0);
                else x1i = x0 + 1;
                double ly = yy - static_cast<double>(y0), lx = xx - static_cast<double>(x0), hy = 1 - ly, hx = 1 - lx;
                double w1 = hy * hx, w2 = hy * lx, w3 = ly * hx, w4 = ly * lx;
                if (mode == "max") {
                  v = std::max({w1 * img[y0 * W + x0], w2 * img[y0 * W + x1i], w3 * img[y1i * W + x0], w4 * img[y1i * W + x1i]});
                } else {
                  v = w1 * img[y0 * W + x0] + w2 * img[y0 * W + x1i] + w3 * img[y1i * W + x0] + w4 * img[y1i * W + x1i];
                }
              }
              if (mode == "max") acc = any ? std::max(acc, v) : v;
              else acc += v;
              any = true;
            }
          if (mode != "max") acc /= static_cast<double>(std::max<int64_t>(gh * gw, 1));
          y.mutable_data<double>()[((r * C + ch) * oh + ph) * ow + pw] = acc;
        }
    }
  }
  c.set_output(0, cast_tensor(y, c.input(0).dtype()));
}

// Random ops: their values cannot match another implementation's generator; they follow the
// distribution and the seed attribute (a fixed seed gives the same values run after run).
template <bool Normal, bool Like>
void k_random(KernelContext& c) {
  Shape s;
  DType t = DType::Float32;
  if constexpr (Like) {
    s = c.input(0).shape();
    t = c.input(0).dtype();
  } else {
    s = c.attr_ints("shape").value_or(std::vector<int64_t>{});
  }
  if (const ir::Value* d = c.attr("dtype"); d && d->is_int())
    if (auto dt = dtype_from_onnx(d->as_int())) t = *dt;
  std::mt19937_64 rng(c.attr("seed") ? static_cast<uint64_t>(c.attr_float("seed", 0)) : std::random_device{}());
  Tensor y = Tensor::uninit(DType::Float64, s);
  double a = c.attr_float(Normal ? "mean" : "low", 0.0f), b = c.attr_float(Normal ? "scale" : "high", 1.0f);
  std::normal_distribution<double> nd(a, b);
  std::uniform_real_distribution<double> ud(a, b);
  for (int64_t i = 0; i < y.numel(); ++i) y.mutable_data<double>()[i] = Normal ? nd(rng) : ud(rng);
  c.set_output(0, cast_tensor(y, t));
}

void k_bernoulli(KernelContext& c) {
  const Tensor& p = c.input(0);
  DType t = p.dtype();
  if (const ir::Value* d = c.attr("dtype"); d && d->is_int())
    if (auto dt = dtype_from_onnx(d->as_int())) t = *dt;
  std::mt19937_64 rng(c.attr("seed") ? static_cast<uint64_t>(c.attr_float("seed", 0)) : std::random_device{}());
  std::uniform_real_distribution<double> ud(0, 1);
  Tensor y = Tensor::uninit(DType::Float64, p.shape());
  for (int64_t i = 0; i < y.numel(); ++i) y.mutable_data<double>()[i] = ud(rng) < p.get_f64(i) ? 1 : 0;
  c.set_output(0, cast_tensor(y, t));
}

}  // namespace

void register_misc(KernelRegistry& r) {
  r.add("RandomUniform", 1, k_random<false, false>);
  r.add("RandomNormal", 1, k_random<true, false>);
  r.add("RandomUniformLike", 1, k_random<false, true>);
  r.add("RandomNormalLike", 1, k_random<true, true>);
  r.add("Bernoulli", 15, k_bernoulli);
  r.add("NonMaxSuppression", 10, k_nms);
  r.add("RoiAlign", 10, k_roi_align);
}

}  // namespace amanda::interp::kernels
