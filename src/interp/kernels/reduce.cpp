// Reductions (ReduceSum ... ReduceLogSumExp, with axes as an attribute or, from opset 13 for
// ReduceSum and 18 for the rest, as an input), ArgMax/ArgMin, CumSum, Softmax/LogSoftmax/Hardmax
// (before opset 13 they flatten to 2-D at `axis`), TopK. Accumulation is in double.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "families.h"

namespace amanda::interp::kernels {

namespace {

enum class R { Sum, Mean, Max, Min, Prod, L1, L2, LogSum, LogSumExp, SumSquare };

// Splits x around a set of reduced axes: calls acc for every (output index, element value).
template <R K>
void reduce(KernelContext& c, int axes_input_since) {
  Tensor x = to_float32(c.input(0));
  std::vector<int64_t> axes;
  bool from_input = c.opset() >= axes_input_since;
  if (from_input) {
    if (c.has_input(1)) axes = c.input(1).to_i64_vector();
  } else if (auto a = c.attr_ints("axes")) {
    axes = *a;
  }
  bool keep = c.attr_int("keepdims", 1);
  bool noop_empty = c.attr_int("noop_with_empty_axes", 0);
  int64_t r = x.rank();
  std::vector<bool> red(r, false);
  if (axes.empty()) {
    if (noop_empty && from_input) {
      c.set_output(0, c.input(0));
      return;
    }
    std::fill(red.begin(), red.end(), true);
  }
  for (int64_t a : axes) red[norm_axis(c, a, r)] = true;
  Shape out, kept;
  for (int64_t d = 0; d < r; ++d) {
    if (red[d]) {
      if (keep) out.push_back(1);
    } else {
      out.push_back(x.dim(d));
    }
    kept.push_back(red[d] ? 1 : x.dim(d));
  }
  int64_t on = numel(kept);
  // float32 with the reduced axes one contiguous block (LayerNorm's ReduceMean over the last axis,
  // a global pooling written as ReduceMean): plain loops over [outer, reduced, inner].
  if constexpr (K == R::Sum || K == R::Mean || K == R::Max || K == R::Min) {
    int64_t first = -1, last = -1;
    bool block = true;
    for (int64_t d = 0; d < r; ++d)
      if (red[d]) {
        if (first < 0) first = d;
        else if (last != d - 1) block = false;
        last = d;
      }
    if (x.dtype() == DType::Float32 && first >= 0 && block && x.numel() > 0) {
      int64_t outer = 1, mid = 1, in = 1;
      for (int64_t d = 0; d < r; ++d) (d < first ? outer : d <= last ? mid : in) *= x.dim(d);
      const float* px = x.data<float>();
      Tensor y = Tensor::uninit(DType::Float32, out);
      float* py = y.mutable_data<float>();
      parallel_for(outer, 4, [&](int64_t b, int64_t e) {
        std::vector<double> acc(in);
        for (int64_t o = b; o < e; ++o) {
          const float* xo = px + o * mid * in;
          if constexpr (K == R::Sum || K == R::Mean) {
            if (in == 1) {  // a row sum (LayerNorm's mean): four partial sums, not one long chain
              double s4[4] = {0, 0, 0, 0};
              int64_t k = 0;
              for (; k + 4 <= mid; k += 4)
                for (int j = 0; j < 4; ++j) s4[j] += xo[k + j];
              for (; k < mid; ++k) s4[0] += xo[k];
              double sum = (s4[0] + s4[1]) + (s4[2] + s4[3]);
              py[o] = static_cast<float>(K == R::Mean ? sum / static_cast<double>(mid) : sum);
              continue;
            }
          }
          for (int64_t i = 0; i < in; ++i) acc[i] = K == R::Max ? -std::numeric_limits<double>::infinity()
                                                   : K == R::Min ? std::numeric_limits<double>::infinity() : 0.0;
          for (int64_t k = 0; k < mid; ++k)
            for (int64_t i = 0; i < in; ++i) {
              double v = xo[k * in + i];
              double& a = acc[i];
              if constexpr (K == R::Sum || K == R::Mean) a += v;
              else if constexpr (K == R::Max) a = std::isnan(v) || v > a ? v : a;
              else a = std::isnan(v) || v < a ? v : a;
            }
          for (int64_t i = 0; i < in; ++i)
            py[o * in + i] = static_cast<float>(K == R::Mean ? acc[i] / static_cast<double>(mid) : acc[i]);
        }
      });
      c.set_output(0, y);
      return;
    }
  }
  double init = 0;
  if constexpr (K == R::Max) init = -std::numeric_limits<double>::infinity();
  if constexpr (K == R::Min) init = std::numeric_limits<double>::infinity();
  if constexpr (K == R::Prod) init = 1;
  std::vector<double> acc(on, init);
  std::vector<double> mx;
  if constexpr (K == R::LogSumExp) mx.assign(on, -std::numeric_limits<double>::infinity());
  auto ost = broadcast_strides(kept, x.shape());  // reduced axes have stride 0
  std::array<std::vector<int64_t>, 1> st{ost};
  auto visit = [&](auto body) {
    broadcast_loop<1>(x.shape(), st, [&](int64_t i, const std::array<int64_t, 1>& o) { body(o[0], x.get_f64(i)); });
  };
  if constexpr (K == R::LogSumExp) {
    visit([&](int64_t o, double v) { mx[o] = std::max(mx[o], v); });
    visit([&](int64_t o, double v) { acc[o] += std::exp(v - mx[o]); });
  } else {
    visit([&](int64_t o, double v) {
      double& a = acc[o];
      if constexpr (K == R::Sum || K == R::Mean || K == R::LogSum) a += v;
      else if constexpr (K == R::Max) a = std::isnan(v) || v > a ? v : a;
      else if constexpr (K == R::Min) a = std::isnan(v) || v < a ? v : a;
      else if constexpr (K == R::Prod) a *= v;
      else if constexpr (K == R::L1) a += std::fabs(v);
      else a += v * v;  // L2, SumSquare
    });
  }
  int64_t count = on ? x.numel() / on : 0;
  for (int64_t o = 0; o < on; ++o) {
    double& a = acc[o];
    if constexpr (K == R::Mean) a /= static_cast<double>(count);
    if constexpr (K == R::L2) a = std::sqrt(a);
    if constexpr (K == R::LogSum) a = std::log(a);
    if constexpr (K == R::LogSumExp) a = std::log(a) + mx[o];
  }
  Tensor y = Tensor::uninit(x.dtype(), out);
  dispatch(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    for (int64_t o = 0; o < on; ++o) {
      double v = acc[o];
      if constexpr (std::is_integral_v<T>) {
        if (std::isinf(v)) v = v > 0 ? static_cast<double>(std::numeric_limits<T>::max()) : static_cast<double>(std::numeric_limits<T>::lowest());
      }
      y.mutable_data<T>()[o] = static_cast<T>(v);
    }
  });
  c.set_output(0, from_float32(y, c.input(0).dtype()));
}

template <bool Max>
void k_arg(KernelContext& c) {
  Tensor x = to_float32(c.input(0));
  int64_t axis = norm_axis(c, c.attr_int("axis", 0), x.rank());
  bool keep = c.attr_int("keepdims", 1), last = c.attr_int("select_last_index", 0);
  int64_t outer = 1, inner = 1, n = x.dim(axis);
  for (int64_t d = 0; d < axis; ++d) outer *= x.dim(d);
  for (int64_t d = axis + 1; d < x.rank(); ++d) inner *= x.dim(d);
  Shape out = x.shape();
  if (keep) out[axis] = 1;
  else out.erase(out.begin() + axis);
  Tensor y = Tensor::uninit(DType::Int64, out);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      int64_t best = 0;
      double bv = x.get_f64(o * n * inner + i);
      for (int64_t k = 1; k < n; ++k) {
        double v = x.get_f64((o * n + k) * inner + i);
        bool better = Max ? (v > bv || (last && v == bv)) : (v < bv || (last && v == bv));
        if (better) best = k, bv = v;
      }
      y.mutable_data<int64_t>()[o * inner + i] = best;
    }
  c.set_output(0, y);
}

void k_cumsum(KernelContext& c) {
  Tensor x = to_float32(c.input(0));
  int64_t axis = norm_axis(c, c.input(1).get_i64(0), x.rank());
  bool excl = c.attr_int("exclusive", 0), rev = c.attr_int("reverse", 0);
  int64_t outer = 1, inner = 1, n = x.dim(axis);
  for (int64_t d = 0; d < axis; ++d) outer *= x.dim(d);
  for (int64_t d = axis + 1; d < x.rank(); ++d) inner *= x.dim(d);
  Tensor y = Tensor::uninit(x.dtype(), x.shape());
  dispatch(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        T s = 0;
        for (int64_t j = 0; j < n; ++j) {
          int64_t k = rev ? n - 1 - j : j;
          int64_t at = (o * n + k) * inner + i;
          T v = x.data<T>()[at];
          if (excl) {
            y.mutable_data<T>()[at] = s;
            s = static_cast<T>(s + v);
          } else {
            s = static_cast<T>(s + v);
            y.mutable_data<T>()[at] = s;
          }
        }
      }
  });
  c.set_output(0, from_float32(y, c.input(0).dtype()));
}

enum class SM { Softmax, LogSoftmax, Hardmax };

template <SM K>
void k_softmax(KernelContext& c) {
  const Tensor& x0 = c.input(0);
  Tensor x = to_float32(x0);
  int64_t r = x.rank();
  int64_t axis = norm_axis(c, c.attr_int("axis", c.opset() < 13 ? 1 : -1), r);
  int64_t outer = 1, inner = 1, n;
  if (c.opset() < 13) {  // coerced to 2-D: [prod(dims < axis), prod(dims >= axis)]
    for (int64_t d = 0; d < axis; ++d) outer *= x.dim(d);
    n = x.numel() / std::max<int64_t>(outer, 1);
    if (outer == 0) n = 0;
  } else {
    for (int64_t d = 0; d < axis; ++d) outer *= x.dim(d);
    for (int64_t d = axis + 1; d < r; ++d) inner *= x.dim(d);
    n = x.dim(axis);
  }
  Tensor y = Tensor::uninit(x.dtype(), x.shape());
  if constexpr (K != SM::Hardmax) {
    // float32 over the last axis (attention's softmax): exp once per element, rows in parallel.
    if (x.dtype() == DType::Float32 && inner == 1) {
      const float* px = x.data<float>();
      float* py = y.mutable_data<float>();
      parallel_for(outer, 8, [&](int64_t b, int64_t e) {
        for (int64_t o = b; o < e; ++o) {
          const float* xr = px + o * n;
          float* yr = py + o * n;
          float m = -std::numeric_limits<float>::infinity();
          for (int64_t k = 0; k < n; ++k) m = xr[k] > m ? xr[k] : m;
          double sum = 0;
          for (int64_t k = 0; k < n; ++k) {
            float v = std::exp(xr[k] - m);
            if constexpr (K == SM::Softmax) yr[k] = v;
            sum += v;
          }
          if constexpr (K == SM::Softmax) {
            float inv = static_cast<float>(1.0 / sum);
            for (int64_t k = 0; k < n; ++k) yr[k] *= inv;
          } else {
            float ls = static_cast<float>(std::log(sum));
            for (int64_t k = 0; k < n; ++k) yr[k] = xr[k] - m - ls;
          }
        }
      });
      c.set_output(0, y);
      return;
    }
  }
  dispatch(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<T>) {
      const T* px = x.data<T>();
      T* py = y.mutable_data<T>();
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i) {
          auto at = [&](int64_t k) { return (o * n + k) * inner + i; };
          T m = -std::numeric_limits<T>::infinity();
          int64_t arg = 0;
          for (int64_t k = 0; k < n; ++k)
            if (px[at(k)] > m) m = px[at(k)], arg = k;
          if constexpr (K == SM::Hardmax) {
            for (int64_t k = 0; k < n; ++k) py[at(k)] = k == arg ? T(1) : T(0);
          } else {
            double s = 0;
            for (int64_t k = 0; k < n; ++k) s += std::exp(static_cast<double>(px[at(k)] - m));
            for (int64_t k = 0; k < n; ++k) {
              if constexpr (K == SM::Softmax) py[at(k)] = static_cast<T>(std::exp(static_cast<double>(px[at(k)] - m)) / s);
              else py[at(k)] = static_cast<T>(px[at(k)] - m - std::log(s));
            }
          }
        }
    } else {
      c.fail("needs a floating-point input");
    }
  });
  c.set_output(0, from_float32(y, x0.dtype()));
}

void k_topk(KernelContext& c) {
  Tensor x = to_float32(c.input(0));
  int64_t k = c.opset() < 10 ? c.attr_int("k", 1) : c.input(1).get_i64(0);
  int64_t axis = norm_axis(c, c.attr_int("axis", -1), x.rank());
  bool largest = c.attr_int("largest", 1);
  int64_t outer = 1, inner = 1, n = x.dim(axis);
  if (k < 0 || k > n) c.fail("k is out of range");
  for (int64_t d = 0; d < axis; ++d) outer *= x.dim(d);
  for (int64_t d = axis + 1; d < x.rank(); ++d) inner *= x.dim(d);
  Shape out = x.shape();
  out[axis] = k;
  Tensor idx = Tensor::uninit(DType::Int64, out);
  std::vector<int64_t> src;
  std::vector<int64_t> order(n);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      std::iota(order.begin(), order.end(), 0);
      auto val = [&](int64_t j) { return x.get_f64((o * n + j) * inner + i); };
      std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
        double va = val(a), vb = val(b);
        return largest ? va > vb : va < vb;
      });
      for (int64_t j = 0; j < k; ++j) idx.mutable_data<int64_t>()[(o * k + j) * inner + i] = order[j];
    }
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < k; ++j)
      for (int64_t i = 0; i < inner; ++i)
        src.push_back((o * n + idx.data<int64_t>()[(o * k + j) * inner + i]) * inner + i);
  c.set_output(0, take_flat(c.input(0), out, src));
  c.set_output(1, idx);
}

}  // namespace

void register_reduce(KernelRegistry& r) {
  r.add("ReduceSum", 1, [](KernelContext& c) { reduce<R::Sum>(c, 13); });
  r.add("ReduceMean", 1, [](KernelContext& c) { reduce<R::Mean>(c, 18); });
  r.add("ReduceMax", 1, [](KernelContext& c) { reduce<R::Max>(c, 18); });
  r.add("ReduceMin", 1, [](KernelContext& c) { reduce<R::Min>(c, 18); });
  r.add("ReduceProd", 1, [](KernelContext& c) { reduce<R::Prod>(c, 18); });
  r.add("ReduceL1", 1, [](KernelContext& c) { reduce<R::L1>(c, 18); });
  r.add("ReduceL2", 1, [](KernelContext& c) { reduce<R::L2>(c, 18); });
  r.add("ReduceLogSum", 1, [](KernelContext& c) { reduce<R::LogSum>(c, 18); });
  r.add("ReduceLogSumExp", 1, [](KernelContext& c) { reduce<R::LogSumExp>(c, 18); });
  r.add("ReduceSumSquare", 1, [](KernelContext& c) { reduce<R::SumSquare>(c, 18); });
  // amanda/core's reductions: the same code, axes always from the attribute (core.cpp)
  constexpr int kAttrAxes = 1 << 30;
  r.add("amanda/core::ReduceSum", 1, [](KernelContext& c) { reduce<R::Sum>(c, kAttrAxes); });
  r.add("amanda/core::ReduceMean", 1, [](KernelContext& c) { reduce<R::Mean>(c, kAttrAxes); });
  r.add("amanda/core::ReduceMax", 1, [](KernelContext& c) { reduce<R::Max>(c, kAttrAxes); });
  r.add("amanda/core::ReduceMin", 1, [](KernelContext& c) { reduce<R::Min>(c, kAttrAxes); });
  r.add("amanda/core::ReduceProd", 1, [](KernelContext& c) { reduce<R::Prod>(c, kAttrAxes); });
  r.add("ArgMax", 1, k_arg<true>);
  r.add("ArgMin", 1, k_arg<false>);
  r.add("CumSum", 11, k_cumsum);
  r.add("Softmax", 1, k_softmax<SM::Softmax>);
  r.add("LogSoftmax", 1, k_softmax<SM::LogSoftmax>);
  r.add("Hardmax", 1, k_softmax<SM::Hardmax>);
  r.add("TopK", 1, k_topk);
}

}  // namespace amanda::interp::kernels
