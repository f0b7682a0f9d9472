// Elementwise ops: unary math and activations, binary arithmetic, comparisons and logic with
// ONNX multidirectional broadcasting, the variadic Max/Min/Sum/Mean, Where, Clip.
// float16/bfloat16 are computed in float32 and rounded back, as ONNX's reference does.
#include <algorithm>
#include <cmath>
#include <limits>

#include "families.h"

namespace amanda::interp::kernels {

namespace {

template <class T>
constexpr bool is_fp = std::is_floating_point_v<T>;

// Applies f to every element; f is called with float or double for floating types and with
// double for integer ones (results are converted back to the element type).
template <class F>
void unary_math(KernelContext& c, F f) {
  const Tensor& x0 = c.input(0);
  Tensor x = to_float32(x0);
  Tensor y = Tensor::uninit(x.dtype(), x.shape());
  dispatch(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* a = x.data<T>();
    T* o = y.mutable_data<T>();
    int64_t n = x.numel();
    if constexpr (is_fp<T>) {
      parallel_for(n, 1 << 14, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) o[i] = static_cast<T>(f(a[i]));
      });
    } else {
      for (int64_t i = 0; i < n; ++i) o[i] = static_cast<T>(f(static_cast<double>(a[i])));
    }
  });
  c.set_output(0, from_float32(y, x0.dtype()));
}

// Unary ops that only make sense on floating types still go through unary_math.
#define UNARY(NAME, EXPR)                                       \
  void NAME(KernelContext& c) {                                 \
    unary_math(c, [](auto x) -> decltype(x) { return EXPR; }); \
  }

UNARY(k_abs, x < 0 ? -x : x)
UNARY(k_neg, -x)
UNARY(k_exp, std::exp(x))
UNARY(k_log, std::log(x))
UNARY(k_sqrt, std::sqrt(x))
UNARY(k_reciprocal, decltype(x)(1) / x)
UNARY(k_floor, std::floor(x))
UNARY(k_ceil, std::ceil(x))
UNARY(k_round, std::nearbyint(x))  // half to even in the default rounding mode
UNARY(k_sin, std::sin(x))
UNARY(k_cos, std::cos(x))
UNARY(k_tan, std::tan(x))
UNARY(k_asin, std::asin(x))
UNARY(k_acos, std::acos(x))
UNARY(k_atan, std::atan(x))
UNARY(k_sinh, std::sinh(x))
UNARY(k_cosh, std::cosh(x))
UNARY(k_asinh, std::asinh(x))
UNARY(k_acosh, std::acosh(x))
UNARY(k_atanh, std::atanh(x))
UNARY(k_tanh, std::tanh(x))
UNARY(k_erf, std::erf(x))
UNARY(k_sign, decltype(x)(x > 0 ? 1 : (x < 0 ? -1 : 0)))
UNARY(k_relu_plain, x > 0 ? x : decltype(x)(0))
UNARY(k_softsign, x / (decltype(x)(1) + (x < 0 ? -x : x)))
UNARY(k_softplus, x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)))
UNARY(k_sigmoid, x >= 0 ? decltype(x)(1) / (decltype(x)(1) + std::exp(-x)) : std::exp(x) / (decltype(x)(1) + std::exp(x)))
#undef UNARY

// Relu between convolutions (resnet's Add -> Relu -> Conv) keeps oneDNN's layout: the padding of
// a blocked layout is zeros, and stays zeros.
void k_relu(KernelContext& c) {
  const Tensor& x = c.input(0);
  if (!x.layout()) return k_relu_plain(c);
  Tensor y = Tensor::native(x.dtype(), x.shape(), x.layout_ptr());
  const float* px = x.data<float>();
  float* py = y.mutable_data<float>();
  parallel_for(static_cast<int64_t>(y.nbytes() / 4), 1 << 15, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) py[i] = px[i] > 0 ? px[i] : 0.0f;
  });
  c.set_output(0, c.native_output_ok() ? y : y.plain());
}

void k_elu(KernelContext& c) {
  double a = c.attr_float("alpha", 1.0f);
  unary_math(c, [a](auto x) -> decltype(x) { return x >= 0 ? x : decltype(x)(a * (std::exp(double(x)) - 1)); });
}
void k_celu(KernelContext& c) {
  double a = c.attr_float("alpha", 1.0f);
  unary_math(c, [a](auto x) -> decltype(x) {
    return decltype(x)(std::max(0.0, double(x)) + std::min(0.0, a * (std::exp(double(x) / a) - 1)));
  });
}
void k_selu(KernelContext& c) {
  double a = c.attr_float("alpha", 1.67326319217681884765625f), g = c.attr_float("gamma", 1.05070102214813232421875f);
  unary_math(c, [a, g](auto x) -> decltype(x) { return decltype(x)(x > 0 ? g * x : g * (a * std::exp(double(x)) - a)); });
}
void k_leaky_relu(KernelContext& c) {
  double a = c.attr_float("alpha", 0.01f);
  unary_math(c, [a](auto x) -> decltype(x) { return x >= 0 ? x : decltype(x)(a * x); });
}
void k_thresholded_relu(KernelContext& c) {
  double a = c.attr_float("alpha", 1.0f);
  unary_math(c, [a](auto x) -> decltype(x) { return x > a ? x : decltype(x)(0); });
}
void k_hard_sigmoid(KernelContext& c) {
  double a = c.attr_float("alpha", 0.2f), b = c.attr_float("beta", 0.5f);
  unary_math(c, [a, b](auto x) -> decltype(x) { return decltype(x)(std::max(0.0, std::min(1.0, a * x + b))); });
}
void k_hard_swish(KernelContext& c) {
  unary_math(c, [](auto x) -> decltype(x) { return decltype(x)(x * std::max(0.0, std::min(1.0, x / 6.0 + 0.5))); });
}
void k_shrink(KernelContext& c) {
  double l = c.attr_float("lambd", 0.5f), b = c.attr_float("bias", 0.0f);
  unary_math(c, [l, b](auto x) -> decltype(x) { return decltype(x)(x < -l ? x + b : (x > l ? x - b : 0)); });
}

// Predicates with a bool output.
template <class F>
void unary_pred(KernelContext& c, F f) {
  Tensor x = to_float32(c.input(0));
  Tensor y = Tensor::uninit(DType::Bool, x.shape());
  dispatch(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* a = x.data<T>();
    bool* o = y.mutable_data<bool>();
    for (int64_t i = 0; i < x.numel(); ++i) o[i] = f(static_cast<double>(a[i]));
  });
  c.set_output(0, y);
}
void k_isnan(KernelContext& c) { unary_pred(c, [](double x) { return std::isnan(x); }); }
void k_isinf(KernelContext& c) {
  bool pos = c.attr_int("detect_positive", 1), neg = c.attr_int("detect_negative", 1);
  unary_pred(c, [pos, neg](double x) { return std::isinf(x) && ((x > 0 && pos) || (x < 0 && neg)); });
}
void k_not(KernelContext& c) {
  const Tensor& x = c.input(0);
  Tensor y = Tensor::uninit(DType::Bool, x.shape());
  for (int64_t i = 0; i < x.numel(); ++i) y.mutable_data<bool>()[i] = !x.data<bool>()[i];
  c.set_output(0, y);
}

// ---- binary ops with broadcasting. R is the output element type (T, or bool for comparisons).
template <class T, class R, class F>
void binary_loop(const Tensor& a, const Tensor& b, Tensor& out, F f) {
  const T* pa = a.data<T>();
  const T* pb = b.data<T>();
  R* po = out.mutable_data<R>();
  int64_t n = out.numel();
  // Floating-point ops cannot fail, so they may run on several threads; integer ones may throw
  // (division by zero) and stay on the caller's.
  auto run = [&](auto body) {
    if constexpr (is_fp<T>) parallel_for(n, 1 << 15, body);
    else body(int64_t{0}, n);
  };
  // The operand that does not have the output's shape repeats it in one of two simple ways in
  // most models: a trailing block ([197, 768] + [768]) or one value per leading row
  // ([197, 768] * [197, 1]). Both are plain loops; everything else takes the general walk.
  auto repeats = [&](const Shape& small, int64_t& block, int64_t& inner) {
    const Shape& os = out.shape();
    if (small.size() > os.size()) return false;
    size_t off = os.size() - small.size();
    size_t lead = 0;  // leading dims of `small` that are 1 (or missing)
    while (lead < os.size() && (lead < off || small[lead - off] == 1)) ++lead;
    bool suffix = true;
    for (size_t d = lead; d < os.size(); ++d) suffix = suffix && small[d - off] == os[d];
    if (suffix) {
      block = numel(Shape(os.begin() + static_cast<std::ptrdiff_t>(lead), os.end()));
      inner = 1;
      return block > 0;
    }
    size_t trail = os.size();  // trailing dims of `small` that are 1
    while (trail > off && small[trail - 1 - off] == 1) --trail;
    for (size_t d = 0; d < trail; ++d)
      if (d < off || small[d - off] != os[d]) return false;
    block = 0;
    inner = numel(Shape(os.begin() + static_cast<std::ptrdiff_t>(trail), os.end()));
    return inner > 0;
  };
  int64_t block = 0, inner = 0;
  if (a.shape() == b.shape()) {
    run([&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) po[i] = f(pa[i], pb[i]);
    });
  } else if (b.numel() == 1 && a.numel() == n) {
    T s = pb[0];
    run([&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) po[i] = f(pa[i], s);
    });
  } else if (a.numel() == 1 && b.numel() == n) {
    T s = pa[0];
    run([&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) po[i] = f(s, pb[i]);
    });
  } else if (bool a_full = a.shape() == out.shape();
             (a_full && repeats(b.shape(), block, inner)) || (b.shape() == out.shape() && repeats(a.shape(), block, inner))) {
    // Rows of `len` elements: the small operand is the same row every time (block) or one value
    // per row (inner). No division per element.
    int64_t len = block ? block : inner, rows = n / len;
    auto body = [&](int64_t lo, int64_t hi) {
      for (int64_t r = lo; r < hi; ++r) {
        const T* full = (a_full ? pa : pb) + r * len;
        R* o = po + r * len;
        if (block) {
          const T* row = a_full ? pb : pa;
          if (a_full) for (int64_t j = 0; j < len; ++j) o[j] = f(full[j], row[j]);
          else for (int64_t j = 0; j < len; ++j) o[j] = f(row[j], full[j]);
        } else {
          T v = (a_full ? pb : pa)[r];
          if (a_full) for (int64_t j = 0; j < len; ++j) o[j] = f(full[j], v);
          else for (int64_t j = 0; j < len; ++j) o[j] = f(v, full[j]);
        }
      }
    };
    if constexpr (is_fp<T>) parallel_for(rows, std::max<int64_t>(1, (1 << 15) / std::max<int64_t>(len, 1)), body);
    else body(0, rows);
  } else {
    std::array<std::vector<int64_t>, 2> st{broadcast_strides(a.shape(), out.shape()), broadcast_strides(b.shape(), out.shape())};
    broadcast_loop<2>(out.shape(), st, [&](int64_t o, const std::array<int64_t, 2>& i) { po[o] = f(pa[i[0]], pb[i[1]]); });
  }
}

enum class Out { Same, Bool };

template <Out O, class F>
Tensor binary(KernelContext& c, const Tensor& a0, const Tensor& b0, F f) {
  if (a0.dtype() != b0.dtype())
    c.fail("inputs have different element types (" + std::string(ir::dtype_name(a0.dtype())) + ", " +
           std::string(ir::dtype_name(b0.dtype())) + ")");
  Tensor a = to_float32(a0), b = to_float32(b0);
  Shape os = broadcast_shapes(c, {a.shape(), b.shape()});
  Tensor out = Tensor::uninit(O == Out::Bool ? DType::Bool : a.dtype(), os);
  dispatch(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (O == Out::Bool) binary_loop<T, bool>(a, b, out, [&](T x, T y) { return f(x, y); });
    else binary_loop<T, T>(a, b, out, [&](T x, T y) { return static_cast<T>(f(x, y)); });
  });
  return O == Out::Bool ? out : from_float32(out, a0.dtype());
}

template <Out O, class F>
void binary_op(KernelContext& c, F f) {
  c.set_output(0, binary<O>(c, c.input(0), c.input(1), f));
}

void k_add(KernelContext& c) {
  const Tensor &a = c.input(0), &b = c.input(1);
  if (a.layout() || b.layout()) {  // between convolutions (Executor: Add takes native layouts)
    Tensor y;
    if (add_native_f32(a, b, c.native_output_ok(), y)) {
      c.set_output(0, y);
      return;
    }
    c.set_output(0, binary<Out::Same>(c, a.plain(), b.plain(), [](auto x, auto y) { return x + y; }));
    return;
  }
  binary_op<Out::Same>(c, [](auto x, auto y) { return x + y; });
}
void k_sub(KernelContext& c) { binary_op<Out::Same>(c, [](auto x, auto y) { return x - y; }); }
void k_mul(KernelContext& c) { binary_op<Out::Same>(c, [](auto x, auto y) { return x * y; }); }
void k_div(KernelContext& c) {
  binary_op<Out::Same>(c, [&c](auto x, auto y) {
    using T = decltype(x);
    if constexpr (!is_fp<T>) {
      if (y == 0) c.fail("integer division by zero");
      // INT_MIN / -1 traps (SIGFPE); numpy and ONNX Runtime give INT_MIN (wrapped negation).
      if constexpr (std::is_signed_v<T> && !std::is_same_v<T, bool>)
        if (y == -1) return static_cast<T>(static_cast<std::make_unsigned_t<T>>(0) - static_cast<std::make_unsigned_t<T>>(x));
    }
    return static_cast<T>(x / y);
  });
}
void k_pow(KernelContext& c) {
  const Tensor& a = c.input(0);
  Tensor b = c.input(1);
  if (b.dtype() != a.dtype()) b = cast_tensor(b, a.dtype());
  // x ** 2 (LayerNorm's variance as exported) is x * x: the exactly rounded square, which is
  // what a correctly rounded pow returns too, without pow's cost.
  if (a.dtype() == DType::Float32 && b.numel() == 1 && b.data<float>()[0] == 2.0f && b.rank() <= a.rank()) {
    Tensor y = Tensor::uninit(DType::Float32, a.shape());
    const float* px = a.data<float>();
    float* py = y.mutable_data<float>();
    parallel_for(a.numel(), 1 << 15, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) py[i] = px[i] * px[i];
    });
    c.set_output(0, y);
    return;
  }
  c.set_output(0, binary<Out::Same>(c, a, b, [](auto x, auto y) {
    using T = decltype(x);
    if constexpr (is_fp<T>) return static_cast<T>(std::pow(x, y));
    else return static_cast<T>(std::pow(static_cast<double>(x), static_cast<double>(y)));
  }));
}
void k_mod(KernelContext& c) {
  bool fmod = c.attr_int("fmod", 0);
  binary_op<Out::Same>(c, [&c, fmod](auto x, auto y) {
    using T = decltype(x);
    if constexpr (is_fp<T>) {
      if (fmod) return static_cast<T>(std::fmod(x, y));
      T r = std::fmod(x, y);
      if (r != 0 && ((r < 0) != (y < 0))) r += y;
      return r;
    } else if constexpr (std::is_same_v<T, bool>) {
      c.fail("Mod of bool");
      return x;
    } else {
      if (y == 0) c.fail("integer modulo by zero");
      if constexpr (std::is_signed_v<T>)
        if (y == -1) return T(0);  // (INT_MIN % -1 traps; every x % -1 is 0)
      T r = static_cast<T>(x % y);
      if constexpr (std::is_signed_v<T>)
        if (!fmod && r != 0 && ((r < 0) != (y < 0))) r = static_cast<T>(r + y);
      return r;
    }
  });
}
void k_bitshift(KernelContext& c) {
  bool left = c.attr_string("direction") == "LEFT";
  binary_op<Out::Same>(c, [left](auto x, auto y) {
    using T = decltype(x);
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      if (y >= static_cast<T>(sizeof(T) * 8)) return T(0);
      return static_cast<T>(left ? x << y : x >> y);
    } else {
      return x;
    }
  });
}
void k_and(KernelContext& c) { binary_op<Out::Bool>(c, [](auto x, auto y) { return bool(x) && bool(y); }); }
void k_or(KernelContext& c) { binary_op<Out::Bool>(c, [](auto x, auto y) { return bool(x) || bool(y); }); }
void k_xor(KernelContext& c) { binary_op<Out::Bool>(c, [](auto x, auto y) { return bool(x) != bool(y); }); }
void k_equal(KernelContext& c) {
  if (c.input(0).dtype() == DType::String) {
    const Tensor &a = c.input(0), &b = c.input(1);
    Shape os = broadcast_shapes(c, {a.shape(), b.shape()});
    Tensor out = Tensor::uninit(DType::Bool, os);
    std::array<std::vector<int64_t>, 2> st{broadcast_strides(a.shape(), os), broadcast_strides(b.shape(), os)};
    broadcast_loop<2>(os, st, [&](int64_t o, const std::array<int64_t, 2>& i) {
      out.mutable_data<bool>()[o] = a.strings()[i[0]] == b.strings()[i[1]];
    });
    c.set_output(0, out);
    return;
  }
  binary_op<Out::Bool>(c, [](auto x, auto y) { return x == y; });
}
void k_less(KernelContext& c) { binary_op<Out::Bool>(c, [](auto x, auto y) { return x < y; }); }
void k_greater(KernelContext& c) { binary_op<Out::Bool>(c, [](auto x, auto y) { return x > y; }); }
void k_less_equal(KernelContext& c) { binary_op<Out::Bool>(c, [](auto x, auto y) { return x <= y; }); }
void k_greater_equal(KernelContext& c) { binary_op<Out::Bool>(c, [](auto x, auto y) { return x >= y; }); }
void k_prelu(KernelContext& c) {
  binary_op<Out::Same>(c, [](auto x, auto s) { return x < 0 ? x * s : x; });
}

// Variadic ops fold pairwise (broadcasting as they go).
template <class F>
Tensor fold(KernelContext& c, F f) {
  Tensor acc = c.input(0);
  for (size_t i = 1; i < c.input_count(); ++i) acc = binary<Out::Same>(c, acc, c.input(i), f);
  return acc;
}
template <class T>
T nan_max(T x, T y) {
  if constexpr (is_fp<T>)
    if (std::isnan(x) || std::isnan(y)) return std::numeric_limits<T>::quiet_NaN();
  return x > y ? x : y;
}
template <class T>
T nan_min(T x, T y) {
  if constexpr (is_fp<T>)
    if (std::isnan(x) || std::isnan(y)) return std::numeric_limits<T>::quiet_NaN();
  return x < y ? x : y;
}
void k_max(KernelContext& c) { c.set_output(0, fold(c, [](auto x, auto y) { return nan_max(x, y); })); }
void k_min(KernelContext& c) { c.set_output(0, fold(c, [](auto x, auto y) { return nan_min(x, y); })); }
void k_sum(KernelContext& c) { c.set_output(0, fold(c, [](auto x, auto y) { return x + y; })); }
void k_mean(KernelContext& c) {
  Tensor s = to_float32(fold(c, [](auto x, auto y) { return x + y; }));
  Tensor out = Tensor::uninit(s.dtype(), s.shape());
  double n = static_cast<double>(c.input_count());
  dispatch(s.dtype(), [&](auto tag) {
    using T = decltype(tag);
    for (int64_t i = 0; i < s.numel(); ++i) out.mutable_data<T>()[i] = static_cast<T>(s.data<T>()[i] / n);
  });
  c.set_output(0, from_float32(out, c.input(0).dtype()));
}

void k_where(KernelContext& c) {
  const Tensor& cond = c.input(0);
  const Tensor &x = c.input(1), &y = c.input(2);
  if (x.dtype() != y.dtype()) c.fail("X and Y have different element types");
  Shape os = broadcast_shapes(c, {cond.shape(), x.shape(), y.shape()});
  Tensor out = Tensor::uninit(x.dtype(), os);
  std::array<std::vector<int64_t>, 3> st{broadcast_strides(cond.shape(), os), broadcast_strides(x.shape(), os),
                                         broadcast_strides(y.shape(), os)};
  const bool* pc = cond.data<bool>();
  if (x.dtype() == DType::String) {
    broadcast_loop<3>(os, st, [&](int64_t o, const std::array<int64_t, 3>& i) {
      out.strings()[o] = pc[i[0]] ? x.strings()[i[1]] : y.strings()[i[2]];
    });
  } else {
    dispatch_bytes(x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* px = x.data<T>();
      const T* py = y.data<T>();
      T* po = out.mutable_data<T>();
      broadcast_loop<3>(os, st, [&](int64_t o, const std::array<int64_t, 3>& i) { po[o] = pc[i[0]] ? px[i[1]] : py[i[2]]; });
    });
  }
  c.set_output(0, out);
}

void k_clip(KernelContext& c) {
  const Tensor& x0 = c.input(0);
  Tensor x = to_float32(x0);
  double lo = -std::numeric_limits<double>::infinity(), hi = std::numeric_limits<double>::infinity();
  if (c.opset() < 11) {
    lo = c.attr_float("min", -std::numeric_limits<float>::max());
    hi = c.attr_float("max", std::numeric_limits<float>::max());
  } else {
    if (c.has_input(1)) lo = c.input(1).get_f64(0);
    if (c.has_input(2)) hi = c.input(2).get_f64(0);
  }
  Tensor y = Tensor::uninit(x.dtype(), x.shape());
  dispatch(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, bool>) {
      T l = std::isinf(lo) ? std::numeric_limits<T>::lowest() : static_cast<T>(lo);
      T h = std::isinf(hi) ? std::numeric_limits<T>::max() : static_cast<T>(hi);
      const T* px = x.data<T>();
      T* py = y.mutable_data<T>();
      parallel_for(x.numel(), 1 << 15, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) {
          T v = px[i];
          py[i] = v < l ? l : (v > h ? h : v);
        }
      });
    }
  });
  c.set_output(0, from_float32(y, x0.dtype()));
}

}  // namespace

void register_elementwise(KernelRegistry& r) {
  struct E {
    const char* name;
    KernelFn fn;
  };
  for (auto [n, f] : std::initializer_list<E>{
           {"Abs", k_abs}, {"Neg", k_neg}, {"Exp", k_exp}, {"Log", k_log}, {"Sqrt", k_sqrt},
           {"Reciprocal", k_reciprocal}, {"Floor", k_floor}, {"Ceil", k_ceil}, {"Round", k_round},
           {"Sin", k_sin}, {"Cos", k_cos}, {"Tan", k_tan}, {"Asin", k_asin}, {"Acos", k_acos},
           {"Atan", k_atan}, {"Sinh", k_sinh}, {"Cosh", k_cosh}, {"Asinh", k_asinh}, {"Acosh", k_acosh},
           {"Atanh", k_atanh}, {"Tanh", k_tanh}, {"Erf", k_erf}, {"Sign", k_sign}, {"Relu", k_relu},
           {"Softsign", k_softsign}, {"Softplus", k_softplus}, {"Sigmoid", k_sigmoid}, {"Elu", k_elu},
           {"Celu", k_celu}, {"Selu", k_selu}, {"LeakyRelu", k_leaky_relu}, {"ThresholdedRelu", k_thresholded_relu},
           {"HardSigmoid", k_hard_sigmoid}, {"HardSwish", k_hard_swish}, {"Shrink", k_shrink},
           {"IsNaN", k_isnan}, {"IsInf", k_isinf}, {"Not", k_not},
           {"Add", k_add}, {"Sub", k_sub}, {"Mul", k_mul}, {"Div", k_div}, {"Pow", k_pow}, {"Mod", k_mod},
           {"BitShift", k_bitshift}, {"And", k_and}, {"Or", k_or}, {"Xor", k_xor}, {"Equal", k_equal},
           {"Less", k_less}, {"Greater", k_greater}, {"LessOrEqual", k_less_equal},
           {"GreaterOrEqual", k_greater_equal}, {"PRelu", k_prelu}, {"Max", k_max}, {"Min", k_min},
           {"Sum", k_sum}, {"Mean", k_mean}, {"Where", k_where}, {"Clip", k_clip}})
    r.add(n, 1, f);
}

}  // namespace amanda::interp::kernels
