// Creation ops of the libtorch-free reader (creation_ops.h): one registry entry per op, each
// reading the schema-ordered arguments (sizes, fill value, dtype, ...).
#include "frameworks/torchscript/creation_ops.h"

#include <cmath>
#include <functional>
#include <unordered_map>

namespace amanda::torchscript {

using ir::DType;

namespace {

using Rule = std::function<std::optional<std::vector<VRef>>(const Args&, const std::string&)>;
using Result = std::optional<std::vector<VRef>>;

bool none(const Args& a, size_t i) { return i >= a.size() || !a[i] || a[i]->k == Val::K::None; }
std::optional<double> num(const Args& a, size_t i) {
  if (i >= a.size() || !a[i]) return std::nullopt;
  const Val& v = *a[i];
  if (v.k == Val::K::Int) return static_cast<double>(v.i);
  if (v.k == Val::K::Float) return v.f;
  if (v.k == Val::K::Bool) return v.b ? 1.0 : 0.0;
  return std::nullopt;
}
bool is_float_number(const Args& a, size_t i) { return i < a.size() && a[i] && a[i]->k == Val::K::Float; }
std::optional<std::vector<int64_t>> sizes(const Args& a, size_t i) {
  if (i >= a.size() || !a[i] || (a[i]->k != Val::K::List && a[i]->k != Val::K::Tuple)) return std::nullopt;
  std::vector<int64_t> s;
  for (const auto& x : a[i]->items) {
    // a size the graph computes (from an input's values or a symbolic dimension) is not a constant
    if (x->k != Val::K::Int || x->i < 0 || x->dyn || x->data) return std::nullopt;
    s.push_back(x->i);
  }
  return s;
}
// the dtype argument, or the default: float32 for floats, int64 for integers, bool for bools
DType dtype_or(const Args& a, size_t i, DType dflt, const std::string& where) {
  if (!none(a, i) && a[i]->k == Val::K::Int) return dtype_from_scalar_type(a[i]->i, where);
  return dflt;
}
DType number_type(const Args& a, size_t i) {
  if (i < a.size() && a[i] && a[i]->k == Val::K::Bool) return DType::Bool;
  return is_float_number(a, i) ? DType::Float32 : DType::Int64;
}
Result one(VRef v) { return std::vector<VRef>{std::move(v)}; }
Result filled(DType t, const std::vector<int64_t>& s, double v) {
  int64_t n = numel(s);
  if (n > (int64_t(1) << 24)) return std::nullopt;  // a big constant is better made by the graph
  return one(make_known(t, s, std::vector<double>(static_cast<size_t>(n), v)));
}
const Val* typed(const Args& a, size_t i) {
  return i < a.size() && a[i] && a[i]->is_tensor() && a[i]->shape_known ? a[i].get() : nullptr;
}

std::unordered_map<std::string, Rule> make_rules() {
  std::unordered_map<std::string, Rule> r;
  r["aten::zeros"] = [](const Args& a, const std::string& w) -> Result {
    auto s = sizes(a, 0);
    return s ? filled(dtype_or(a, 1, DType::Float32, w), *s, 0) : std::nullopt;
  };
  r["aten::ones"] = [](const Args& a, const std::string& w) -> Result {
    auto s = sizes(a, 0);
    return s ? filled(dtype_or(a, 1, DType::Float32, w), *s, 1) : std::nullopt;
  };
  r["aten::full"] = [](const Args& a, const std::string& w) -> Result {
    auto s = sizes(a, 0);
    auto v = num(a, 1);
    return s && v ? filled(dtype_or(a, 2, number_type(a, 1), w), *s, *v) : std::nullopt;
  };
  r["aten::full_like"] = [](const Args& a, const std::string& w) -> Result {
    const Val* x = typed(a, 0);
    auto v = num(a, 1);
    return x && v ? filled(dtype_or(a, 2, x->dtype, w), x->shape, *v) : std::nullopt;
  };
  r["aten::new_full"] = [](const Args& a, const std::string& w) -> Result {
    const Val* x = typed(a, 0);
    auto s = sizes(a, 1);
    auto v = num(a, 2);
    return x && s && v ? filled(dtype_or(a, 3, x->dtype, w), *s, *v) : std::nullopt;
  };
  r["aten::scalar_tensor"] = [](const Args& a, const std::string& w) -> Result {
    auto v = num(a, 0);
    return v ? filled(dtype_or(a, 1, DType::Float32, w), {}, *v) : std::nullopt;
  };
  auto eye = [](const Args& a, const std::string& w, int64_t n, int64_t m, size_t dtype_arg) -> Result {
    if (n < 0 || m < 0 || n * m > (int64_t(1) << 24)) return std::nullopt;
    std::vector<double> v(static_cast<size_t>(n * m), 0.0);
    for (int64_t i = 0; i < std::min(n, m); ++i) v[static_cast<size_t>(i * m + i)] = 1;
    return one(make_known(dtype_or(a, dtype_arg, DType::Float32, w), {n, m}, std::move(v)));
  };
  r["aten::eye"] = [eye](const Args& a, const std::string& w) -> Result {
    auto n = num(a, 0);
    return n ? eye(a, w, static_cast<int64_t>(*n), static_cast<int64_t>(*n), 1) : std::nullopt;
  };
  r["aten::eye.m"] = [eye](const Args& a, const std::string& w) -> Result {
    auto n = num(a, 0), m = num(a, 1);
    return n && m ? eye(a, w, static_cast<int64_t>(*n), static_cast<int64_t>(*m), 2) : std::nullopt;
  };
  // torch's arange (RangeFactories.cpp, CPU): for an integer dtype start, end and step are first
  // truncated to int64 (the accumulate type) and the elements are start + i * step in int64; the
  // count is ceil((end - start) / step), from the truncated numbers for int64 and from the numbers
  // as given for the other integer types; for float dtypes everything is in double. So
  // arange(2, 8.5, 1.5, dtype=int64) is 2..7 (6 elements, step 1), not 5 elements.
  auto arange = [](const Args& a, const std::string& w, double start, double end, double step, bool floats, size_t dtype_arg) -> Result {
    if (!std::isfinite(start) || !std::isfinite(end) || !std::isfinite(step)) return std::nullopt;
    DType t = dtype_or(a, dtype_arg, floats ? DType::Float32 : DType::Int64, w);
    bool integral = !is_float_type(t);
    double xs = start, xe = end, xk = step;
    if (integral) {
      if (std::fabs(start) > 9e15 || std::fabs(end) > 9e15 || std::fabs(step) > 9e15) return std::nullopt;
      xs = std::trunc(start), xe = std::trunc(end), xk = std::trunc(step);
    }
    if (xk == 0) throw Error(w + ": arange's step must be nonzero (" + std::to_string(step) + " as " + std::string(ir::dtype_name(t)) + ")");
    if ((xk > 0 && xe < xs) || (xk < 0 && xe > xs)) throw Error(w + ": arange's bounds are inconsistent with the step's sign");
    double n = t == DType::Int64 ? std::ceil((xe - xs) / xk) : std::ceil((end - start) / step);
    if (n < 0) n = 0;
    if (n > double(int64_t(1) << 24)) return std::nullopt;
    std::vector<double> v;
    for (int64_t i = 0; i < static_cast<int64_t>(n); ++i) v.push_back(xs + static_cast<double>(i) * xk);
    int64_t count = static_cast<int64_t>(v.size());  // (not in the call: the argument order is unspecified)
    return one(make_known(t, {count}, std::move(v)));
  };
  r["aten::arange"] = [arange](const Args& a, const std::string& w) -> Result {
    auto e = num(a, 0);
    return e ? arange(a, w, 0, *e, 1, is_float_number(a, 0), 1) : std::nullopt;
  };
  r["aten::arange.start"] = [arange](const Args& a, const std::string& w) -> Result {
    auto s = num(a, 0), e = num(a, 1);
    return s && e ? arange(a, w, *s, *e, 1, is_float_number(a, 0) || is_float_number(a, 1), 2) : std::nullopt;
  };
  r["aten::arange.start_step"] = [arange](const Args& a, const std::string& w) -> Result {
    auto s = num(a, 0), e = num(a, 1), k = num(a, 2);
    return s && e && k ? arange(a, w, *s, *e, *k, is_float_number(a, 0) || is_float_number(a, 1) || is_float_number(a, 2), 3)
                       : std::nullopt;
  };
  r["aten::linspace"] = [](const Args& a, const std::string& w) -> Result {
    auto s = num(a, 0), e = num(a, 1), n = num(a, 2);
    if (!s || !e || !n || *n < 0 || *n > double(int64_t(1) << 24)) return std::nullopt;
    int64_t steps = static_cast<int64_t>(*n);
    std::vector<double> v;
    for (int64_t i = 0; i < steps; ++i) v.push_back(steps == 1 ? *s : *s + (*e - *s) * static_cast<double>(i) / static_cast<double>(steps - 1));
    return one(make_known(dtype_or(a, 3, DType::Float32, w), {steps}, std::move(v)));
  };
  // torch.tensor(data): a number or a rectangular nested list of numbers; the default element type
  // is float32 when any number is a float, bool when all are bools, else int64 (as torch infers it)
  auto tensor = [](const Args& a, const std::string& w) -> Result {
    if (a.empty() || !a[0]) return std::nullopt;
    std::vector<double> v;
    std::vector<int64_t> shape;
    bool any_float = false, all_bool = true;
    std::function<bool(const Val&, size_t)> walk = [&](const Val& x, size_t depth) -> bool {
      if (depth > 32) return false;
      if (x.k == Val::K::List || x.k == Val::K::Tuple) {
        int64_t n = static_cast<int64_t>(x.items.size());
        if (depth == shape.size()) shape.push_back(n);
        else if (shape[depth] != n) return false;  // ragged
        for (const auto& e : x.items)
          if (!e || !walk(*e, depth + 1)) return false;
        return true;
      }
      if (depth != shape.size()) return false;  // a number where a list was, or the other way round
      if (x.k == Val::K::Int) v.push_back(static_cast<double>(x.i)), all_bool = false;
      else if (x.k == Val::K::Float) v.push_back(x.f), any_float = true, all_bool = false;
      else if (x.k == Val::K::Bool) v.push_back(x.b ? 1.0 : 0.0);
      else return false;
      return v.size() <= (size_t(1) << 24);
    };
    if (!walk(*a[0], 0)) return std::nullopt;
    if (numel(shape) != static_cast<int64_t>(v.size())) return std::nullopt;  // an empty inner list
    DType dflt = any_float || v.empty() ? DType::Float32 : all_bool ? DType::Bool : DType::Int64;
    DType t = dtype_or(a, 1, dflt, w);
    for (double& x : v) {
      if (t == DType::Bool) x = x != 0;
      else if (t == DType::Float32) x = static_cast<double>(static_cast<float>(x));
      else if (t != DType::Float64 && t != DType::Float16 && t != DType::BFloat16) x = std::trunc(x);
    }
    return one(make_known(t, shape, std::move(v)));
  };
  // torch.empty: the values are unspecified, and zeros are as good as any (as empty_like's)
  r["aten::empty.memory_format"] = r["aten::zeros"];
  r["aten::empty"] = r["aten::zeros"];
  // torch._dim_arange(like, dim) = arange(like.size(dim)): only the shape is read
  r["aten::_dim_arange"] = [](const Args& a, const std::string& w) -> Result {
    const Val* x = typed(a, 0);
    auto d = num(a, 1);
    if (!x || !d) return std::nullopt;
    int64_t r = static_cast<int64_t>(x->shape.size()), k = static_cast<int64_t>(*d);
    if (k < -r || k >= r) throw Error(w + ": dimension " + std::to_string(k) + " out of range");
    int64_t n = x->shape[static_cast<size_t>(k < 0 ? k + r : k)];
    std::vector<double> v;
    for (int64_t i = 0; i < n; ++i) v.push_back(static_cast<double>(i));
    return one(make_known(DType::Int64, {n}, std::move(v)));
  };
  // torch.hann_window(N, periodic=True): 0.5 - 0.5 cos(2 pi k / M), M = N (periodic) or N - 1
  auto hann = [](const Args& a, const std::string& w, bool periodic, size_t dtype_arg) -> Result {
    auto n = num(a, 0);
    if (!n || *n < 0 || *n > double(int64_t(1) << 24)) return std::nullopt;
    int64_t len = static_cast<int64_t>(*n);
    DType t = dtype_or(a, dtype_arg, DType::Float32, w);
    std::vector<double> v;
    if (len == 1) v.push_back(1.0);
    else {
      double m = static_cast<double>(periodic ? len : len - 1);
      for (int64_t k = 0; k < len; ++k) v.push_back(0.5 - 0.5 * std::cos(2.0 * M_PI * static_cast<double>(k) / m));
    }
    if (t == DType::Float32)
      for (double& x : v) x = static_cast<double>(static_cast<float>(x));
    return one(make_known(t, {len}, std::move(v)));
  };
  r["aten::hann_window"] = [hann](const Args& a, const std::string& w) -> Result { return hann(a, w, true, 1); };
  r["aten::hann_window.periodic"] = [hann](const Args& a, const std::string& w) -> Result {
    if (none(a, 1) || a[1]->k != Val::K::Bool) return std::nullopt;
    return hann(a, w, a[1]->b, 2);
  };
  r["aten::tensor"] = tensor;
  r["aten::tensor.float"] = tensor;
  r["aten::tensor.int"] = tensor;
  r["aten::tensor.bool"] = tensor;
  // torch.as_tensor(list or number, dtype=, device=): as torch.tensor (a copy of Python numbers)
  r["aten::as_tensor.list"] = tensor;
  r["aten::as_tensor.float"] = tensor;
  r["aten::as_tensor.int"] = tensor;
  r["aten::as_tensor.bool"] = tensor;
  return r;
}

}  // namespace

std::optional<std::vector<VRef>> evaluate_creation(const std::string& op_type, const Args& a, const std::string& where) {
  static const std::unordered_map<std::string, Rule> rules = make_rules();
  auto it = rules.find(op_type);
  if (it == rules.end()) return std::nullopt;
  return it->second(a, where);
}

}  // namespace amanda::torchscript
