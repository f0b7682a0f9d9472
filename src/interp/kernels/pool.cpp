// Pooling: MaxPool (with its Indices output), AveragePool, GlobalAveragePool, GlobalMaxPool,
// LpPool, LRN, MaxUnpool. One generic N-D window walk; the geometry (pads, auto_pad, ceil_mode)
// is shared with Conv (window_geometry).
#include <algorithm>
#include <cmath>
#include <limits>

#include "families.h"

namespace amanda::interp::kernels {

namespace {

enum class P { Max, Avg, Lp };

// The common case, float32 2-D Max/AveragePool without the Indices output, in float directly
// (the generic walk below converts to double and decodes every window index): resnet18's one
// MaxPool took 3.8 ms that way, 0.1 ms this way. Same results: max is exact, and the average sums
// in double like the generic path.
template <P PK>
bool pool2d_f32(KernelContext& c, const Tensor& x, const Window& w, bool include_pad, Tensor& y) {
  int64_t N = x.dim(0), C = x.dim(1), H = w.in[0], W = w.in[1], OH = w.out[0], OW = w.out[1];
  auto ks = *c.attr_ints("kernel_shape");
  int64_t KH = ks[0], KW = ks[1];
  const float* px = x.data<float>();
  float* py = y.mutable_data<float>();
  parallel_for(N * C, 4, [&](int64_t b, int64_t e) {
    for (int64_t nc = b; nc < e; ++nc) {
      const float* xc = px + nc * H * W;
      float* yc = py + nc * OH * OW;
      for (int64_t oh = 0; oh < OH; ++oh) {
        int64_t h0 = oh * w.strides[0] - w.pad_begin[0];
        for (int64_t ow = 0; ow < OW; ++ow) {
          int64_t w0 = ow * w.strides[1] - w.pad_begin[1];
          float m = -std::numeric_limits<float>::infinity();
          double sum = 0;
          int64_t count = 0, padded = 0;
          for (int64_t kh = 0; kh < KH; ++kh) {
            int64_t h = h0 + kh * w.dilations[0];
            bool hin = h >= 0 && h < H, hpad = h >= -w.pad_begin[0] && h < H + w.pad_end[0];
            for (int64_t kw = 0; kw < KW; ++kw) {
              int64_t ww = w0 + kw * w.dilations[1];
              padded += hpad && ww >= -w.pad_begin[1] && ww < W + w.pad_end[1];
              if (!hin || ww < 0 || ww >= W) continue;
              float v = xc[h * W + ww];
              ++count;
              if constexpr (PK == P::Max) {
                if (count == 1 || v > m) m = v;  // as the generic walk: the first, then greater
              } else {
                sum += v;
              }
            }
          }
          if constexpr (PK == P::Max) {
            yc[oh * OW + ow] = m;
          } else {
            yc[oh * OW + ow] = static_cast<float>(sum / static_cast<double>(include_pad ? padded : std::max<int64_t>(count, 1)));
          }
        }
      }
    }
  });
  return true;
}

template <P PK>
void pool(KernelContext& c) {
  const Tensor& x0 = c.input(0);
  if constexpr (PK != P::Lp) {
    auto ks0 = c.attr_ints("kernel_shape");
    if (x0.dtype() == DType::Float32 && ks0 && ks0->size() == 2 && x0.rank() == 4 &&
        (PK != P::Max || !c.output_used(1)) && c.attr_int("storage_order", 0) == 0) {
      Window w = window_geometry(c, x0.shape(), *ks0, c.attr_int("ceil_mode", 0));
      Tensor y = Tensor::uninit(DType::Float32, {x0.dim(0), x0.dim(1), w.out[0], w.out[1]});
      pool2d_f32<PK>(c, x0, w, c.attr_int("count_include_pad", 0), y);
      c.set_output(0, y);
      return;
    }
  }
  Tensor x = cast_tensor(to_float32(x0), DType::Float64);
  auto ks = c.attr_ints("kernel_shape");
  if (!ks) c.fail("kernel_shape is required");
  Window w = window_geometry(c, x.shape(), *ks, c.attr_int("ceil_mode", 0));
  bool include_pad = c.attr_int("count_include_pad", 0);
  int64_t p = c.attr_int("p", 2);
  int64_t N = x.dim(0), C = x.dim(1);
  size_t n = ks->size();
  Shape out{N, C};
  out.insert(out.end(), w.out.begin(), w.out.end());
  Tensor y = Tensor::uninit(DType::Float64, out);
  Tensor ind = Tensor::uninit(DType::Int64, out);
  int64_t I = numel(w.in), O = numel(w.out), K = numel(*ks);
  bool col_major = c.attr_int("storage_order", 0) == 1;
  std::vector<int64_t> oi(n), ki(n), pos(n);
  for (int64_t nc = 0; nc < N * C; ++nc) {
    const double* xc = x.data<double>() + nc * I;
    for (int64_t o = 0; o < O; ++o) {
      for (int64_t rem = o, i = static_cast<int64_t>(n); i-- > 0;) oi[i] = rem % w.out[i], rem /= w.out[i];
      double acc = PK == P::Max ? -std::numeric_limits<double>::infinity() : 0;
      int64_t arg = -1, count = 0, padded = 0;
      for (int64_t k = 0; k < K; ++k) {
        for (int64_t rem = k, i = static_cast<int64_t>(n); i-- > 0;) ki[i] = rem % (*ks)[i], rem /= (*ks)[i];
        bool inside = true, in_padded = true;
        int64_t at = 0;
        for (size_t i = 0; i < n; ++i) {
          pos[i] = oi[i] * w.strides[i] - w.pad_begin[i] + ki[i] * w.dilations[i];
          if (pos[i] < 0 || pos[i] >= w.in[i]) inside = false;
          if (pos[i] < -w.pad_begin[i] || pos[i] >= w.in[i] + w.pad_end[i]) in_padded = false;
          at = at * w.in[i] + pos[i];
        }
        padded += in_padded;
        if (!inside) continue;
        double v = xc[at];
        ++count;
        if constexpr (PK == P::Max) {
          if (v > acc || arg < 0) {
            acc = v;
            if (col_major) {
              int64_t cm = 0;
              for (size_t i = n; i-- > 0;) cm = cm * w.in[i] + pos[i];
              arg = cm;
            } else {
              arg = at;
            }
          }
        } else if constexpr (PK == P::Avg) {
          acc += v;
        } else {
          acc += std::pow(std::fabs(v), static_cast<double>(p));
        }
      }
      if constexpr (PK == P::Avg) acc /= static_cast<double>(include_pad ? padded : std::max<int64_t>(count, 1));
      if constexpr (PK == P::Lp) acc = std::pow(acc, 1.0 / static_cast<double>(p));
      y.mutable_data<double>()[nc * O + o] = acc;
      ind.mutable_data<int64_t>()[nc * O + o] = nc * I + arg;
    }
  }
  c.set_output(0, cast_tensor(y, x0.dtype()));
  if constexpr (PK == P::Max)
    if (c.output_used(1)) c.set_output(1, ind);
}

template <bool Max>
void global_pool(KernelContext& c) {
  const Tensor& x0 = c.input(0);
  Tensor x = to_float32(x0);
  int64_t N = x.dim(0), C = x.dim(1), I = x.numel() / std::max<int64_t>(N * C, 1);
  Shape out{N, C};
  for (int64_t d = 2; d < x.rank(); ++d) out.push_back(1);
  Tensor y = Tensor::uninit(x.dtype(), out);
  dispatch(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<T>) {
      for (int64_t nc = 0; nc < N * C; ++nc) {
        const T* p = x.data<T>() + nc * I;
        double acc = Max ? -std::numeric_limits<double>::infinity() : 0;
        for (int64_t i = 0; i < I; ++i) acc = Max ? std::max<double>(acc, p[i]) : acc + p[i];
        y.mutable_data<T>()[nc] = static_cast<T>(Max ? acc : acc / static_cast<double>(I));
      }
    } else {
      c.fail("needs a floating-point input");
    }
  });
  c.set_output(0, from_float32(y, x0.dtype()));
}

void k_lrn(KernelContext& c) {
  Tensor x = cast_tensor(to_float32(c.input(0)), DType::Float64);
  double alpha = c.attr_float("alpha", 0.0001f), beta = c.attr_float("beta", 0.75f), bias = c.attr_float("bias", 1.0f);
  int64_t size = c.attr_int("size", 1);
  int64_t N = x.dim(0), C = x.dim(1), I = x.numel() / std::max<int64_t>(N * C, 1);
  Tensor y = Tensor::uninit(DType::Float64, x.shape());
  int64_t lo = (size - 1) / 2, hi = (size - 1) - lo;  // floor and ceil halves
  for (int64_t n = 0; n < N; ++n)
    for (int64_t ch = 0; ch < C; ++ch)
      for (int64_t i = 0; i < I; ++i) {
        double s = 0;
        for (int64_t k = std::max<int64_t>(0, ch - lo); k <= std::min(C - 1, ch + hi); ++k) {
          double v = x.data<double>()[(n * C + k) * I + i];
          s += v * v;
        }
        int64_t at = (n * C + ch) * I + i;
        y.mutable_data<double>()[at] = x.data<double>()[at] / std::pow(bias + alpha / static_cast<double>(size) * s, beta);
      }
  c.set_output(0, cast_tensor(y, c.input(0).dtype()));
}

void k_max_unpool(KernelContext& c) {
  const Tensor& x = c.input(0);
  const Tensor& ind = c.input(1);
  auto ks = c.attr_ints("kernel_shape");
  if (!ks) c.fail("kernel_shape is required");
  size_t n = ks->size();
  auto strides = c.attr_ints("strides").value_or(std::vector<int64_t>(n, 1));
  auto pads = c.attr_ints("pads").value_or(std::vector<int64_t>(2 * n, 0));
  // Indices are flat positions in the shape the pooling input had (the default output shape);
  // with an explicit output_shape they are placed at the same coordinates there.
  Shape dflt{x.dim(0), x.dim(1)};
  for (size_t i = 0; i < n; ++i)
    dflt.push_back((x.dim(static_cast<int64_t>(i) + 2) - 1) * strides[i] + (*ks)[i] - pads[i] - pads[i + n]);
  Shape out = c.has_input(2) ? c.input(2).to_i64_vector() : dflt;
  if (out.size() != dflt.size()) c.fail("output_shape has the wrong rank");
  auto dst = strides_of(dflt), ost = strides_of(out);
  Tensor y(x.dtype(), out);
  size_t es = ir::dtype_size(x.dtype());
  for (int64_t i = 0; i < x.numel(); ++i) {
    int64_t at = 0;
    for (int64_t rem = ind.get_i64(i), d = 0; d < static_cast<int64_t>(out.size()); ++d) {
      at += (rem / dst[d]) * ost[d];
      rem %= dst[d];
    }
    if (at < 0 || at >= y.numel()) c.fail("index " + std::to_string(at) + " is out of range");
    std::memcpy(y.mutable_raw() + at * es, x.raw() + i * es, es);
  }
  c.set_output(0, y);
}

}  // namespace

void register_pool(KernelRegistry& r) {
  r.add("MaxPool", 1, pool<P::Max>);
  r.add("AveragePool", 1, pool<P::Avg>);
  r.add("LpPool", 1, pool<P::Lp>);
  r.add("GlobalAveragePool", 1, global_pool<false>);
  r.add("GlobalMaxPool", 1, global_pool<true>);
  r.add("LRN", 1, k_lrn);
  r.add("MaxUnpool", 9, k_max_unpool);
}

}  // namespace amanda::interp::kernels
