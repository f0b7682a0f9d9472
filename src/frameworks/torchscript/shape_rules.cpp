// Shape rules of the libtorch-free reader for the vocabulary of torch.onnx.export beyond what
// torchvision's classification models use (shape_rules.h). A registry keyed by op type (with
// overload) or base name; each rule reads the schema-ordered arguments. Reductions, comparisons,
// casts, *_as, where, topk/sort, index_select/gather/scatter, embedding, stack, repeat, ...
#include "frameworks/torchscript/shape_rules.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <unordered_map>

#include "frameworks/torchscript/promotion.h"

namespace amanda::torchscript {

using ir::DType;

namespace {

using Outs = std::vector<OutInfo>;
using Rule = std::function<std::optional<Outs>(const Args&, const std::string&)>;

[[noreturn]] void bad(const std::string& where, const std::string& msg) { throw Error(where + ": " + msg); }

const Val* tensor(const Args& a, size_t i) { return i < a.size() && a[i] && a[i]->is_tensor() && a[i]->shape_known ? a[i].get() : nullptr; }
bool is_none(const Args& a, size_t i) { return i >= a.size() || !a[i] || a[i]->k == Val::K::None; }
Outs one(DType t, std::vector<int64_t> s) { return Outs{OutInfo{t, std::move(s), true, true}}; }

int64_t wrap(int64_t d, size_t rank, const std::string& where) {
  int64_t r = std::max<int64_t>(static_cast<int64_t>(rank), 1);
  if (d < -r || d >= r) bad(where, "dimension " + std::to_string(d) + " out of range for rank " + std::to_string(rank));
  return d < 0 ? d + r : d;
}

// The dims an argument names: an int, a list of ints, or None / [] (all).
std::optional<std::vector<int64_t>> dims_of(const Args& a, size_t i, size_t rank, const std::string& where) {
  std::vector<int64_t> out;
  if (is_none(a, i)) return out;
  const Val& v = *a[i];
  if (v.k == Val::K::Int) out.push_back(wrap(v.i, rank, where));
  else if (v.k == Val::K::List || v.k == Val::K::Tuple) {
    for (const auto& x : v.items) {
      if (x->k != Val::K::Int) return std::nullopt;
      out.push_back(wrap(x->i, rank, where));
    }
  } else {
    return std::nullopt;
  }
  return out;
}

bool flag(const Args& a, size_t i) { return i < a.size() && a[i] && a[i]->k == Val::K::Bool && a[i]->b; }

std::vector<int64_t> reduced(const std::vector<int64_t>& s, std::vector<int64_t> dims, bool keep) {
  if (dims.empty())
    for (size_t k = 0; k < s.size(); ++k) dims.push_back(static_cast<int64_t>(k));
  std::vector<int64_t> out;
  for (size_t k = 0; k < s.size(); ++k) {
    bool r = std::find(dims.begin(), dims.end(), static_cast<int64_t>(k)) != dims.end();
    if (!r) out.push_back(s[k]);
    else if (keep) out.push_back(1);
  }
  return out;
}

std::vector<int64_t> broadcast(const std::vector<int64_t>& a, const std::vector<int64_t>& b, const std::string& where) {
  size_t n = std::max(a.size(), b.size());
  std::vector<int64_t> out(n);
  for (size_t k = 0; k < n; ++k) {
    int64_t x = k < n - a.size() ? 1 : a[k - (n - a.size())];
    int64_t y = k < n - b.size() ? 1 : b[k - (n - b.size())];
    if (x != y && x != 1 && y != 1) bad(where, "shapes do not broadcast");
    out[k] = x == 1 ? y : x;
  }
  return out;
}

std::vector<int64_t> shape_or_scalar(const Args& a, size_t i) {
  const Val* t = tensor(a, i);
  return t ? t->shape : std::vector<int64_t>{};
}

// dtype argument of a reduction (None: the input's; integers and bools sum as int64)
DType reduce_type(const Val& x, const Args& a, size_t i, bool widen_ints, const std::string& where) {
  if (!is_none(a, i) && a[i]->k == Val::K::Int) return dtype_from_scalar_type(a[i]->i, where);
  if (widen_ints && !is_float_type(x.dtype)) return DType::Int64;
  return x.dtype;
}

std::unordered_map<std::string, Rule> make_rules() {
  std::unordered_map<std::string, Rule> r;
  auto same = [](const Args& a, const std::string&) -> std::optional<Outs> {
    const Val* x = tensor(a, 0);
    if (!x) return std::nullopt;
    return one(x->dtype, x->shape);
  };
  for (const char* n : {"abs", "neg", "exp", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "reciprocal", "sin", "cos", "tan",
                        "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "erf", "erfc", "floor", "ceil",
                        "round", "trunc", "frac", "sign", "square", "selu", "celu", "softplus", "hardshrink", "softshrink",
                        "tanhshrink", "mish", "log_sigmoid", "threshold", "prelu", "rrelu", "nan_to_num", "bitwise_not",
                        "alias", "lift", "lift_fresh", "conj_physical", "resolve_conj", "resolve_neg", "flip", "tril", "triu",
                        "_softmax", "_log_softmax", "alpha_dropout", "feature_alpha_dropout", "native_dropout", "cumsum_",
                        "fill", "zero_", "sort_", "index_fill", "index_copy", "index_add", "index_put", "scatter",
                        "scatter_add", "scatter_reduce", "masked_scatter", "logit", "sigmoid", "hardtanh"}) {
    r[std::string("aten::") + n] = same;
    r[std::string("aten::") + n + "_"] = same;
  }
  // integers and bools compute as the default float type (promotion_table.h: the same ops)
  auto to_float = [](const Args& a, const std::string&) -> std::optional<Outs> {
    const Val* x = tensor(a, 0);
    if (!x) return std::nullopt;
    return one(is_float_type(x->dtype) ? x->dtype : DType::Float32, x->shape);
  };
  for (const char* n : {"reciprocal", "sqrt", "rsqrt", "exp", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan", "asin",
                        "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "sigmoid", "erf", "erfc"})
    r[std::string("aten::") + n] = to_float;
  auto boolean = [](const Args& a, const std::string&) -> std::optional<Outs> {
    const Val* x = tensor(a, 0);
    if (!x) return std::nullopt;
    return one(DType::Bool, x->shape);
  };
  for (const char* n : {"isnan", "isinf", "isfinite", "isneginf", "isposinf", "logical_not", "signbit"}) r[std::string("aten::") + n] = boolean;
  auto binary = [](bool to_bool) {
    return [to_bool](const Args& a, const std::string& where) -> std::optional<Outs> {
      if (a.size() < 2 || !a[0] || !a[1]) return std::nullopt;
      if ((a[0]->is_tensor() && !a[0]->shape_known) || (a[1]->is_tensor() && !a[1]->shape_known)) return std::nullopt;
      DType t = to_bool ? DType::Bool : promoted_type({a[0].get(), a[1].get()});
      return one(t, broadcast(shape_or_scalar(a, 0), shape_or_scalar(a, 1), where));
    };
  };
  for (const char* n : {"logical_and", "logical_or", "logical_xor"}) r[std::string("aten::") + n] = binary(true);
  for (const char* n : {"__and__", "__or__", "__xor__", "bitwise_and", "bitwise_or", "bitwise_xor", "fmod", "atan2", "__lshift__",
                        "__rshift__", "bitwise_left_shift", "bitwise_right_shift", "max.other", "min.other", "hypot", "xlogy"})
    r[std::string("aten::") + n] = binary(false);
  auto ternary = [](const Args& a, const std::string& where) -> std::optional<Outs> {
    for (size_t k = 0; k < 3; ++k)
      if (k >= a.size() || !a[k] || (a[k]->is_tensor() && !a[k]->shape_known)) return std::nullopt;
    DType t = promoted_type({a[0].get(), a[1].get(), a[2].get()});
    return one(t, broadcast(broadcast(shape_or_scalar(a, 0), shape_or_scalar(a, 1), where), shape_or_scalar(a, 2), where));
  };
  for (const char* n : {"lerp", "addcmul", "addcdiv"}) r[std::string("aten::") + n] = ternary;
  r["aten::where"] = [](const Args& a, const std::string& where) -> std::optional<Outs> {
    for (size_t k = 0; k < 3; ++k)
      if (k >= a.size() || !a[k] || (a[k]->is_tensor() && !a[k]->shape_known)) return std::nullopt;
    DType t = promoted_type({a[1].get(), a[2].get()});
    return one(t, broadcast(broadcast(shape_or_scalar(a, 0), shape_or_scalar(a, 1), where), shape_or_scalar(a, 2), where));
  };
  // casts
  r["aten::to.dtype"] = [](const Args& a, const std::string& where) -> std::optional<Outs> {
    const Val* x = tensor(a, 0);
    if (!x || is_none(a, 1) || a[1]->k != Val::K::Int) return std::nullopt;
    return one(dtype_from_scalar_type(a[1]->i, where), x->shape);
  };
  r["aten::to.device"] = [](const Args& a, const std::string& where) -> std::optional<Outs> {
    const Val* x = tensor(a, 0);
    if (!x) return std::nullopt;
    DType t = !is_none(a, 2) && a[2]->k == Val::K::Int ? dtype_from_scalar_type(a[2]->i, where) : x->dtype;
    return one(t, x->shape);
  };
  auto like_other = [](bool shape_of_other, bool type_of_other) {
    return [=](const Args& a, const std::string&) -> std::optional<Outs> {
      const Val* x = tensor(a, 0);
      const Val* o = tensor(a, 1);
      if (!x || !o) return std::nullopt;
      return one(type_of_other ? o->dtype : x->dtype, shape_of_other ? o->shape : x->shape);
    };
  };
  r["aten::to.other"] = like_other(false, true);
  r["aten::type_as"] = like_other(false, true);
  r["aten::view_as"] = like_other(true, false);
  r["aten::reshape_as"] = like_other(true, false);
  r["aten::expand_as"] = like_other(true, false);
  // reductions
  auto reduce = [](size_t dim_arg, size_t keep_arg, size_t dtype_arg, bool widen_ints, std::optional<DType> fixed) {
    return [=](const Args& a, const std::string& where) -> std::optional<Outs> {
      const Val* x = tensor(a, 0);
      if (!x) return std::nullopt;
      std::vector<int64_t> dims;
      if (dim_arg != SIZE_MAX) {
        auto d = dims_of(a, dim_arg, x->shape.size(), where);
        if (!d) return std::nullopt;
        dims = *d;
      }
      bool keep = keep_arg != SIZE_MAX && flag(a, keep_arg);
      DType t = fixed ? *fixed : dtype_arg != SIZE_MAX ? reduce_type(*x, a, dtype_arg, widen_ints, where) : x->dtype;
      if (fixed && *fixed == DType::Undefined) t = x->dtype;
      return one(t, reduced(x->shape, dims, keep));
    };
  };
  constexpr size_t N = SIZE_MAX;
  r["aten::sum"] = reduce(N, N, 1, true, std::nullopt);
  r["aten::sum.dim_IntList"] = reduce(1, 2, 3, true, std::nullopt);
  r["aten::mean"] = reduce(N, N, 1, false, std::nullopt);
  r["aten::prod"] = reduce(N, N, 1, true, std::nullopt);
  r["aten::prod.dim_int"] = reduce(1, 2, 3, true, std::nullopt);
  r["aten::amax"] = reduce(1, 2, N, false, std::nullopt);
  r["aten::amin"] = reduce(1, 2, N, false, std::nullopt);
  r["aten::max"] = reduce(N, N, N, false, std::nullopt);
  r["aten::min"] = reduce(N, N, N, false, std::nullopt);
  r["aten::argmax"] = reduce(1, 2, N, false, DType::Int64);
  r["aten::argmin"] = reduce(1, 2, N, false, DType::Int64);
  r["aten::all"] = reduce(N, N, N, false, DType::Bool);
  r["aten::any"] = reduce(N, N, N, false, DType::Bool);
  r["aten::all.dim"] = reduce(1, 2, N, false, DType::Bool);
  r["aten::any.dim"] = reduce(1, 2, N, false, DType::Bool);
  r["aten::logsumexp"] = reduce(1, 2, N, false, std::nullopt);
  r["aten::std"] = reduce(N, N, N, false, std::nullopt);
  r["aten::var"] = reduce(N, N, N, false, std::nullopt);
  r["aten::std.dim"] = reduce(1, 3, N, false, std::nullopt);
  r["aten::var.dim"] = reduce(1, 3, N, false, std::nullopt);
  r["aten::std.correction"] = reduce(1, 3, N, false, std::nullopt);
  r["aten::var.correction"] = reduce(1, 3, N, false, std::nullopt);
  r["aten::norm.ScalarOpt_dim"] = reduce(2, 3, N, false, std::nullopt);
  r["aten::norm.Scalar"] = reduce(N, N, N, false, std::nullopt);
  r["aten::frobenius_norm.dim"] = reduce(1, 2, N, false, std::nullopt);
  r["aten::linalg_vector_norm"] = reduce(2, 3, 4, false, std::nullopt);
  auto two = [](Outs a, DType second) {
    Outs o = a;
    o.push_back(a[0]);
    o[1].dtype = second;
    return o;
  };
  auto reduce_pair = [=](DType second) {
    return [=](const Args& a, const std::string& where) -> std::optional<Outs> {
      auto v = reduce(1, 2, N, false, std::nullopt)(a, where);
      if (!v) return std::nullopt;
      return two(*v, second);
    };
  };
  r["aten::max.dim"] = reduce_pair(DType::Int64);
  r["aten::min.dim"] = reduce_pair(DType::Int64);
  r["aten::std_mean.correction"] = [=](const Args& a, const std::string& where) -> std::optional<Outs> {
    auto v = reduce(1, 3, N, false, std::nullopt)(a, where);
    if (!v) return std::nullopt;
    return two(*v, (*v)[0].dtype);
  };
  r["aten::var_mean.correction"] = r["aten::std_mean.correction"];
  r["aten::cumsum"] = [](const Args& a, const std::string& where) -> std::optional<Outs> {
    const Val* x = tensor(a, 0);
    if (!x) return std::nullopt;
    return one(reduce_type(*x, a, 2, true, where), x->shape);
  };
  r["aten::topk"] = [](const Args& a, const std::string& where) -> std::optional<Outs> {
    const Val* x = tensor(a, 0);
    if (!x || is_none(a, 1) || a[1]->k != Val::K::Int || is_none(a, 2) || a[2]->k != Val::K::Int) return std::nullopt;
    std::vector<int64_t> s = x->shape;
    if (s.empty()) return std::nullopt;
    s[static_cast<size_t>(wrap(a[2]->i, s.size(), where))] = a[1]->i;
    return Outs{OutInfo{x->dtype, s}, OutInfo{DType::Int64, s}};
  };
  r["aten::sort"] = [](const Args& a, const std::string&) -> std::optional<Outs> {
    const Val* x = tensor(a, 0);
    if (!x) return std::nullopt;
    return Outs{OutInfo{x->dtype, x->shape}, OutInfo{DType::Int64, x->shape}};
  };
  r["aten::argsort"] = [](const Args& a, const std::string&) -> std::optional<Outs> {
    const Val* x = tensor(a, 0);
    if (!x) return std::nullopt;
    return one(DType::Int64, x->shape);
  };
  // products
  r["aten::mv"] = [](const Args& a, const std::string&) -> std::optional<Outs> {
    const Val* x = tensor(a, 0);
    if (!x || x->shape.size() != 2) return std::nullopt;
    return one(x->dtype, {x->shape[0]});
  };
  r["aten::dot"] = [](const Args& a, const std::string&) -> std::optional<Outs> {
    const Val* x = tensor(a, 0);
    if (!x) return std::nullopt;
    return one(x->dtype, {});
  };
  r["aten::outer"] = [](const Args& a, const std::string&) -> std::optional<Outs> {
    const Val* x = tensor(a, 0);
    const Val* y = tensor(a, 1);
    if (!x || !y || x->shape.size() != 1 || y->shape.size() != 1) return std::nullopt;
    return one(promoted_type({x, y}), {x->shape[0], y->shape[0]});
  };
  r["aten::addmm"] = [](const Args& a, const std::string& where) -> std::optional<Outs> {
    const Val* c = tensor(a, 0);
    const Val* x = tensor(a, 1);
    const Val* y = tensor(a, 2);
    if (!c || !x || !y || x->shape.size() != 2 || y->shape.size() != 2) return std::nullopt;
    return one(x->dtype, broadcast(c->shape, {x->shape[0], y->shape[1]}, where));
  };
  r["aten::baddbmm"] = [](const Args& a, const std::string& where) -> std::optional<Outs> {
    const Val* c = tensor(a, 0);
    const Val* x = tensor(a, 1);
    const Val* y = tensor(a, 2);
    if (!c || !x || !y || x->shape.size() != 3 || y->shape.size() != 3) return std::nullopt;
    return one(x->dtype, broadcast(c->shape, {x->shape[0], x->shape[1], y->shape[2]}, where));
  };
  // layout
  r["aten::squeeze"] = [](const Args& a, const std::string&) -> std::optional<Outs> {
    const Val* x = tensor(a, 0);
    if (!x) return std::nullopt;
    std::vector<int64_t> s;
    for (int64_t d : x->shape)
      if (d != 1) s.push_back(d);
    return one(x->dtype, s);
  };
  r["aten::squeeze_"] = r["aten::squeeze"];
  r["aten::repeat"] = [](const Args& a, const std::string&) -> std::optional<Outs> {
    const Val* x = tensor(a, 0);
    if (!x || is_none(a, 1) || a[1]->k != Val::K::List) return std::nullopt;
    std::vector<int64_t> rep;
    for (const auto& v : a[1]->items) {
      if (v->k != Val::K::Int) return std::nullopt;
      rep.push_back(v->i);
    }
    if (rep.size() < x->shape.size()) return std::nullopt;
    std::vector<int64_t> s(rep.size() - x->shape.size(), 1);
    s.insert(s.end(), x->shape.begin(), x->shape.end());
    for (size_t k = 0; k < s.size(); ++k) s[k] *= rep[k];
    return one(x->dtype, s);
  };
  r["aten::stack"] = [](const Args& a, const std::string& where) -> std::optional<Outs> {
    if (is_none(a, 0) || a[0]->k != Val::K::List || a[0]->items.empty() || is_none(a, 1) || a[1]->k != Val::K::Int) return std::nullopt;
    std::vector<const Val*> ts;
    for (const auto& v : a[0]->items) {
      if (!v->is_tensor() || !v->shape_known) return std::nullopt;
      ts.push_back(v.get());
    }
    std::vector<int64_t> s = ts[0]->shape;
    int64_t d = wrap(a[1]->i, s.size() + 1, where);
    s.insert(s.begin() + d, static_cast<int64_t>(ts.size()));
    return one(promoted_type(ts), s);
  };
  r["aten::glu"] = [](const Args& a, const std::string& where) -> std::optional<Outs> {
    const Val* x = tensor(a, 0);
    if (!x || is_none(a, 1) || a[1]->k != Val::K::Int || x->shape.empty()) return std::nullopt;
    std::vector<int64_t> s = x->shape;
    s[static_cast<size_t>(wrap(a[1]->i, s.size(), where))] /= 2;
    return one(x->dtype, s);
  };
  r["aten::pixel_shuffle"] = [](const Args& a, const std::string&) -> std::optional<Outs> {
    const Val* x = tensor(a, 0);
    if (!x || x->shape.size() != 4 || is_none(a, 1) || a[1]->k != Val::K::Int) return std::nullopt;
    int64_t f = a[1]->i;
    return one(x->dtype, {x->shape[0], x->shape[1] / (f * f), x->shape[2] * f, x->shape[3] * f});
  };
  r["aten::pixel_unshuffle"] = [](const Args& a, const std::string&) -> std::optional<Outs> {
    const Val* x = tensor(a, 0);
    if (!x || x->shape.size() != 4 || is_none(a, 1) || a[1]->k != Val::K::Int || a[1]->i <= 0) return std::nullopt;
    int64_t f = a[1]->i;
    return one(x->dtype, {x->shape[0], x->shape[1] * f * f, x->shape[2] / f, x->shape[3] / f});
  };
  // indexing
  r["aten::index_select"] = [](const Args& a, const std::string& where) -> std::optional<Outs> {
    const Val* x = tensor(a, 0);
    const Val* i = tensor(a, 2);
    if (!x || !i || is_none(a, 1) || a[1]->k != Val::K::Int) return std::nullopt;
    std::vector<int64_t> s = x->shape;
    if (s.empty()) return std::nullopt;
    s[static_cast<size_t>(wrap(a[1]->i, s.size(), where))] = numel(i->shape);
    return one(x->dtype, s);
  };
  r["aten::gather"] = [](const Args& a, const std::string&) -> std::optional<Outs> {
    const Val* x = tensor(a, 0);
    const Val* i = tensor(a, 2);
    if (!x || !i) return std::nullopt;
    return one(x->dtype, i->shape);
  };
  r["aten::embedding"] = [](const Args& a, const std::string&) -> std::optional<Outs> {
    const Val* w = tensor(a, 0);
    const Val* i = tensor(a, 1);
    if (!w || !i || w->shape.size() != 2) return std::nullopt;
    std::vector<int64_t> s = i->shape;
    s.push_back(w->shape[1]);
    return one(w->dtype, s);
  };
  r["aten::one_hot"] = [](const Args& a, const std::string&) -> std::optional<Outs> {
    const Val* x = tensor(a, 0);
    if (!x || is_none(a, 1) || a[1]->k != Val::K::Int || a[1]->i < 0) return std::nullopt;
    std::vector<int64_t> s = x->shape;
    s.push_back(a[1]->i);
    return one(DType::Int64, s);
  };
  // interpolation: output_size, or floor(input size * scale factor)
  auto upsample = [](size_t scales_arg) {
    return [=](const Args& a, const std::string&) -> std::optional<Outs> {
      const Val* x = tensor(a, 0);
      if (!x || x->shape.size() < 3) return std::nullopt;
      size_t n = x->shape.size() - 2;
      std::vector<int64_t> s(x->shape.begin(), x->shape.begin() + 2);
      if (!is_none(a, 1) && a[1]->k == Val::K::List && a[1]->items.size() == n) {
        for (const auto& v : a[1]->items) {
          if (v->k != Val::K::Int) return std::nullopt;
          s.push_back(v->i);
        }
      } else if (scales_arg < a.size() && !is_none(a, scales_arg) && a[scales_arg]->k == Val::K::List && a[scales_arg]->items.size() == n) {
        for (size_t k = 0; k < n; ++k) {
          const Val& f = *a[scales_arg]->items[k];
          double sc = f.k == Val::K::Float ? f.f : f.k == Val::K::Int ? static_cast<double>(f.i) : -1;
          if (sc <= 0) return std::nullopt;
          s.push_back(static_cast<int64_t>(std::floor(static_cast<double>(x->shape[k + 2]) * sc)));
        }
      } else {
        return std::nullopt;
      }
      return one(x->dtype, s);
    };
  };
  for (const char* n : {"aten::upsample_nearest1d.vec", "aten::upsample_nearest2d.vec", "aten::upsample_nearest3d.vec"}) r[n] = upsample(2);
  for (const char* n : {"aten::upsample_linear1d.vec", "aten::upsample_bilinear2d.vec", "aten::upsample_trilinear3d.vec",
                        "aten::upsample_bicubic2d.vec"})
    r[n] = upsample(3);
  // the overloads with an output size (and per-dimension scales that do not matter then)
  for (const char* n : {"aten::upsample_nearest1d", "aten::upsample_nearest2d", "aten::upsample_nearest3d", "aten::upsample_linear1d",
                        "aten::upsample_bilinear2d", "aten::upsample_trilinear3d", "aten::upsample_bicubic2d"})
    r[n] = upsample(SIZE_MAX - 1);
  // sampling (graph ops: RandomUniform/RandomNormal...); the *_like ones and bernoulli keep the input's type and shape
  // rand_like(x, dtype=...): the dtype argument when given (torch.rand_like(x, dtype=torch.double))
  for (const char* n : {"aten::rand_like", "aten::randn_like"})
    r[n] = [](const Args& a, const std::string& where) -> std::optional<Outs> {
      const Val* x = tensor(a, 0);
      if (!x) return std::nullopt;
      DType t = a.size() > 1 && !is_none(a, 1) && a[1]->k == Val::K::Int ? dtype_from_scalar_type(a[1]->i, where) : x->dtype;
      return one(t, x->shape);
    };
  for (const char* n : {"aten::bernoulli", "aten::bernoulli.p", "aten::bernoulli_.float",
                        "aten::normal.Tensor_float", "aten::fake_quantize_per_tensor_affine",
                        "aten::fake_quantize_per_channel_affine", "aten::embedding_renorm", "aten::embedding_renorm_"})
    r[n] = same;
  auto sampled = [](size_t dtype_arg) {
    return [=](const Args& a, const std::string& where) -> std::optional<Outs> {
      if (a.empty() || !a[0] || (a[0]->k != Val::K::List && a[0]->k != Val::K::Tuple)) return std::nullopt;
      std::vector<int64_t> s;
      for (const auto& x : a[0]->items) {
        if (x->k != Val::K::Int || x->i < 0) return std::nullopt;
        s.push_back(x->i);
      }
      DType t = !is_none(a, dtype_arg) && a[dtype_arg]->k == Val::K::Int ? dtype_from_scalar_type(a[dtype_arg]->i, where) : DType::Float32;
      return one(t, s);
    };
  };
  r["aten::rand"] = sampled(1);
  r["aten::randn"] = sampled(1);
  r["aten::rand.generator"] = sampled(2);
  r["aten::randn.generator"] = sampled(2);
  r["aten::multinomial"] = [](const Args& a, const std::string&) -> std::optional<Outs> {
    const Val* x = tensor(a, 0);
    if (!x || x->shape.empty() || is_none(a, 1) || a[1]->k != Val::K::Int) return std::nullopt;
    std::vector<int64_t> s = x->shape;
    s.back() = a[1]->i;
    return one(DType::Int64, s);
  };
  // conv_tbc(input [T, B, C], weight [K, C, O], bias [O], pad) -> [T + 2 pad - K + 1, B, O]
  r["aten::conv_tbc"] = [](const Args& a, const std::string&) -> std::optional<Outs> {
    const Val* x = tensor(a, 0);
    const Val* w = tensor(a, 1);
    if (!x || !w || x->shape.size() != 3 || w->shape.size() != 3 || is_none(a, 3) || a[3]->k != Val::K::Int) return std::nullopt;
    return one(x->dtype, {x->shape[0] + 2 * a[3]->i - w->shape[0] + 1, x->shape[1], w->shape[2]});
  };
  // quantize_per_tensor: the quantized tensor is typed by its storage (quint8 -> uint8, qint8 -> int8, qint32 -> int32)
  r["aten::quantize_per_tensor"] = [](const Args& a, const std::string&) -> std::optional<Outs> {
    const Val* x = tensor(a, 0);
    if (!x || is_none(a, 3) || a[3]->k != Val::K::Int) return std::nullopt;
    int64_t c = a[3]->i;
    DType t = c == 13 ? DType::UInt8 : c == 12 ? DType::Int8 : c == 14 ? DType::Int32 : DType::Undefined;
    if (t == DType::Undefined) return std::nullopt;
    return one(t, x->shape);
  };
  r["aten::dequantize.self"] = [](const Args& a, const std::string&) -> std::optional<Outs> {
    const Val* x = tensor(a, 0);
    if (!x) return std::nullopt;
    return one(DType::Float32, x->shape);
  };
  // the _cast_* ops libtorch 1.13 has
  for (auto [n, t] : std::vector<std::pair<const char*, DType>>{{"aten::_cast_Byte", DType::UInt8}, {"aten::_cast_Char", DType::Int8},
                                                                {"aten::_cast_Short", DType::Int16}, {"aten::_cast_Int", DType::Int32},
                                                                {"aten::_cast_Long", DType::Int64}, {"aten::_cast_Half", DType::Float16},
                                                                {"aten::_cast_Float", DType::Float32}, {"aten::_cast_Double", DType::Float64}})
    r[n] = [t = t](const Args& a, const std::string&) -> std::optional<Outs> {
      const Val* x = tensor(a, 0);
      if (!x) return std::nullopt;
      return one(t, x->shape);
    };
  // x.item() of a one-element tensor computed in the graph: a 0-d tensor of its type (torch.onnx.export does the same)
  r["aten::item"] = [](const Args& a, const std::string&) -> std::optional<Outs> {
    const Val* x = tensor(a, 0);
    if (!x) return std::nullopt;
    int64_t n = 1;
    for (int64_t d : x->shape) n *= d;
    if (n != 1) return std::nullopt;
    return one(x->dtype, {});
  };
  // lstm_cell(input, [h, c], w_ih, w_hh, b_ih, b_hh) -> h', c' (the shapes of h and c)
  r["aten::lstm_cell"] = [](const Args& a, const std::string&) -> std::optional<Outs> {
    if (a.size() < 2 || !a[1] || a[1]->k != Val::K::List || a[1]->items.size() != 2) return std::nullopt;
    const Val& h = *a[1]->items[0];
    const Val& c = *a[1]->items[1];
    if (!h.is_tensor() || !h.shape_known || !c.is_tensor() || !c.shape_known) return std::nullopt;
    return Outs{OutInfo{h.dtype, h.shape, true, true}, OutInfo{c.dtype, c.shape, true, true}};
  };
  // embedding_bag(weight, indices, offsets, ..., include_last_offset at 7) -> [bags, D], offset2bag, bag_size, max_indices
  r["aten::embedding_bag"] = [](const Args& a, const std::string&) -> std::optional<Outs> {
    const Val* w = tensor(a, 0);
    const Val* i = tensor(a, 1);
    const Val* o = tensor(a, 2);
    if (!w || !i || !o || w->shape.size() != 2 || i->shape.size() != 1 || o->shape.size() != 1) return std::nullopt;
    int64_t b = o->shape[0] - (flag(a, 7) ? 1 : 0);
    return Outs{OutInfo{w->dtype, {b, w->shape[1]}, true, true}, OutInfo{DType::Int64, i->shape, true, true},
                OutInfo{DType::Int64, {b}, true, true}, OutInfo{DType::Int64, {b}, true, true}};
  };
  // grid_sampler(input [N, C, H, W], grid [N, Ho, Wo, 2]) -> [N, C, Ho, Wo]
  r["aten::grid_sampler"] = [](const Args& a, const std::string&) -> std::optional<Outs> {
    const Val* x = tensor(a, 0);
    const Val* g = tensor(a, 1);
    if (!x || !g || x->shape.size() != 4 || g->shape.size() != 4) return std::nullopt;
    return one(x->dtype, {x->shape[0], x->shape[1], g->shape[1], g->shape[2]});
  };
  // _pack_padded_sequence(input, lengths, batch_first): the packed data's length is the sum of the
  // lengths (run time: untyped); batch_sizes has one entry per step of the longest sequence, which
  // is taken to be the input's length, as torch.onnx.export's LSTM with sequence_lens assumes
  r["aten::_pack_padded_sequence"] = [](const Args& a, const std::string&) -> std::optional<Outs> {
    const Val* x = tensor(a, 0);
    if (!x || x->shape.size() < 2) return std::nullopt;
    OutInfo data;
    data.shape_known = false;
    return Outs{data, OutInfo{DType::Int64, {x->shape[flag(a, 2) ? 1 : 0]}, true, true}};
  };
  // to(dtype=, layout=, device=, ...) (traced torch.nn.utils.rnn code)
  r["aten::to.dtype_layout"] = [](const Args& a, const std::string& where) -> std::optional<Outs> {
    const Val* x = tensor(a, 0);
    if (!x) return std::nullopt;
    return one(!is_none(a, 1) && a[1]->k == Val::K::Int ? dtype_from_scalar_type(a[1]->i, where) : x->dtype, x->shape);
  };
  // eval-mode native_dropout: the input and a mask
  r["aten::native_dropout"] = [](const Args& a, const std::string&) -> std::optional<Outs> {
    const Val* x = tensor(a, 0);
    if (!x) return std::nullopt;
    return Outs{OutInfo{x->dtype, x->shape, true, true}, OutInfo{DType::Bool, x->shape, true, true}};
  };
  r["aten::bucketize.Tensor"] = [](const Args& a, const std::string&) -> std::optional<Outs> {
    const Val* x = tensor(a, 0);
    if (!x) return std::nullopt;
    return one(flag(a, 2) ? DType::Int32 : DType::Int64, x->shape);
  };
  r["aten::linalg_matrix_norm"] = reduce(2, 3, 4, false, std::nullopt);
  r["aten::linalg_matrix_norm.str_ord"] = reduce(2, 3, 4, false, std::nullopt);
  r["aten::_weight_norm"] = same;
  r["aten::kl_div"] = [](const Args& a, const std::string& where) -> std::optional<Outs> {
    const Val* x = tensor(a, 0);
    const Val* t = tensor(a, 1);
    if (!x || !t || is_none(a, 2) || a[2]->k != Val::K::Int) return std::nullopt;
    if (a[2]->i == 0) return one(x->dtype, broadcast(x->shape, t->shape, where));
    return one(x->dtype, {});
  };
  // as_strided(x, size, stride, offset): a tensor of the given size
  r["aten::as_strided"] = [](const Args& a, const std::string&) -> std::optional<Outs> {
    const Val* x = tensor(a, 0);
    if (!x || is_none(a, 1) || a[1]->k != Val::K::List) return std::nullopt;
    std::vector<int64_t> s;
    for (const auto& v : a[1]->items) {
      if (v->k != Val::K::Int) return std::nullopt;
      s.push_back(v->i);
    }
    return one(x->dtype, s);
  };
  // im2col (F.unfold): [N, C, H, W] -> [N, C kh kw, L]
  r["aten::im2col"] = [](const Args& a, const std::string&) -> std::optional<Outs> {
    const Val* x = tensor(a, 0);
    if (!x || (x->shape.size() != 4 && x->shape.size() != 3)) return std::nullopt;
    std::vector<int64_t> v[4];
    for (size_t k = 0; k < 4; ++k) {
      if (is_none(a, k + 1) || a[k + 1]->k != Val::K::List || a[k + 1]->items.size() != 2) return std::nullopt;
      for (const auto& e : a[k + 1]->items) {
        if (e->k != Val::K::Int) return std::nullopt;
        v[k].push_back(e->i);
      }
    }
    size_t r = x->shape.size();
    int64_t l = 1;
    for (size_t i = 0; i < 2; ++i) {
      int64_t n = (x->shape[r - 2 + i] + 2 * v[2][i] - v[1][i] * (v[0][i] - 1) - 1) / v[3][i] + 1;
      if (n <= 0) return std::nullopt;
      l *= n;
    }
    std::vector<int64_t> s;
    if (r == 4) s.push_back(x->shape[0]);
    s.push_back(x->shape[r - 3] * v[0][0] * v[0][1]);
    s.push_back(l);
    return one(x->dtype, s);
  };
  // swapaxes / swapdims: transpose's two dims
  auto swap = [](const Args& a, const std::string& where) -> std::optional<Outs> {
    const Val* x = tensor(a, 0);
    if (!x || a.size() < 3 || a[1]->k != Val::K::Int || a[2]->k != Val::K::Int) return std::nullopt;
    std::vector<int64_t> s = x->shape;
    if (s.empty()) return one(x->dtype, s);
    std::swap(s[static_cast<size_t>(wrap(a[1]->i, s.size(), where))], s[static_cast<size_t>(wrap(a[2]->i, s.size(), where))]);
    return one(x->dtype, s);
  };
  r["aten::swapaxes"] = swap;
  r["aten::swapdims"] = swap;
  r["aten::swapaxes_"] = swap;
  r["aten::swapdims_"] = swap;
  // einsum: each letter's size from the operands (1 broadcasts), "..." right-aligned and
  // broadcast; without "->", the letters used once, in alphabetical order, after the ellipsis.
  r["aten::einsum"] = [](const Args& a, const std::string& where) -> std::optional<Outs> {
    if (a.size() < 2 || a[0]->k != Val::K::Str || a[1]->k != Val::K::List) return std::nullopt;
    std::string eq;
    for (char c : a[0]->s)
      if (c != ' ') eq += c;
    size_t arrow = eq.find("->");
    std::string lhs = eq.substr(0, arrow);
    std::vector<std::string> terms;
    size_t st = 0;
    for (;;) {
      size_t c = lhs.find(',', st);
      terms.push_back(lhs.substr(st, c == std::string::npos ? std::string::npos : c - st));
      if (c == std::string::npos) break;
      st = c + 1;
    }
    const auto& ts = a[1]->items;
    if (terms.size() != ts.size()) bad(where, "einsum: " + std::to_string(terms.size()) + " operands in the equation, " + std::to_string(ts.size()) + " given");
    std::map<char, int64_t> size;
    std::map<char, int> count;
    std::vector<int64_t> ell;
    DType t = DType::Undefined;
    for (size_t k = 0; k < ts.size(); ++k) {
      const Val& x = *ts[k];
      if (!x.is_tensor() || !x.shape_known) return std::nullopt;
      if (t == DType::Undefined) t = x.dtype;
      std::string term = terms[k];
      size_t e = term.find("...");
      size_t letters = term.size() - (e == std::string::npos ? 0 : 3);
      if (x.shape.size() < letters || (e == std::string::npos && x.shape.size() != letters))
        bad(where, "einsum: operand " + std::to_string(k) + " has rank " + std::to_string(x.shape.size()) + " for '" + term + "'");
      size_t ne = x.shape.size() - letters, d = 0;
      for (size_t i = 0; i < term.size();) {
        if (term.compare(i, 3, "...") == 0) {
          std::vector<int64_t> es(x.shape.begin() + static_cast<long>(d), x.shape.begin() + static_cast<long>(d + ne));
          if (es.size() > ell.size()) ell.insert(ell.begin(), es.size() - ell.size(), 1);
          for (size_t j = 0; j < es.size(); ++j) {
            int64_t& o = ell[ell.size() - es.size() + j];
            if (o == 1) o = es[j];
          }
          d += ne;
          i += 3;
          continue;
        }
        char c = term[i++];
        int64_t n = x.shape[d++];
        auto it = size.find(c);
        if (it == size.end() || it->second == 1) size[c] = n;
        ++count[c];
      }
    }
    std::vector<int64_t> out;
    if (arrow != std::string::npos) {
      std::string rhs = eq.substr(arrow + 2);
      for (size_t i = 0; i < rhs.size();) {
        if (rhs.compare(i, 3, "...") == 0) {
          out.insert(out.end(), ell.begin(), ell.end());
          i += 3;
          continue;
        }
        auto it = size.find(rhs[i]);
        if (it == size.end()) bad(where, std::string("einsum: output letter ") + rhs[i] + " is in no operand");
        out.push_back(it->second);
        ++i;
      }
    } else {
      out = ell;
      for (const auto& [c, n] : size)
        if (count[c] == 1) out.push_back(n);
    }
    return one(t, out);
  };
  // lstm / gru / rnn over a padded (not packed) batch: output [T, B, D*H] ([B, T, D*H] batch
  // first), final states as the given ones (lstm: h and c).
  auto rnn = [](const Args& a, const std::string& where) -> std::optional<Outs> {
    (void)where;
    const Val* x = tensor(a, 0);
    if (!x || x->shape.size() != 3 || a.size() < 9) return std::nullopt;
    std::vector<const Val*> hs;
    if (a[1]->is_tensor()) hs.push_back(tensor(a, 1));
    else if (a[1]->k == Val::K::List)
      for (const auto& h : a[1]->items) hs.push_back(h->is_tensor() && h->shape_known ? h.get() : nullptr);
    if (hs.empty() || !hs[0] || hs[0]->shape.size() != 3) return std::nullopt;
    for (const Val* h : hs)
      if (!h) return std::nullopt;
    bool bidir = a[7]->k == Val::K::Bool && a[7]->b, batch_first = a[8]->k == Val::K::Bool && a[8]->b;
    int64_t t = x->shape[batch_first ? 1 : 0], b = x->shape[batch_first ? 0 : 1], h = hs[0]->shape[2] * (bidir ? 2 : 1);
    Outs o = one(x->dtype, batch_first ? std::vector<int64_t>{b, t, h} : std::vector<int64_t>{t, b, h});
    for (const Val* hv : hs) o.push_back(OutInfo{hv->dtype, hv->shape, true, true});
    return o;
  };
  r["aten::copy_"] = [](const Args& a, const std::string&) -> std::optional<Outs> {
    const Val* x = tensor(a, 0);
    if (!x || !tensor(a, 1)) return std::nullopt;
    return one(x->dtype, x->shape);
  };
  r["aten::_shape_as_tensor"] = [](const Args& a, const std::string&) -> std::optional<Outs> {
    const Val* x = tensor(a, 0);
    if (!x) return std::nullopt;
    return one(DType::Int64, {static_cast<int64_t>(x->shape.size())});
  };
  // diagonal(x, offset, dim1, dim2): the other dims, then the diagonal's length (known only when
  // the model runs if dim1 or dim2 is a symbolic dimension: 500,000 and above, as the importer's
  // stand-ins)
  r["aten::diagonal"] = [](const Args& a, const std::string& where) -> std::optional<Outs> {
    const Val* x = tensor(a, 0);
    if (!x || x->shape.size() < 2 || a.size() < 4) return std::nullopt;
    for (size_t k = 1; k < 4; ++k)
      if (!a[k] || a[k]->k != Val::K::Int) return std::nullopt;
    const size_t n = x->shape.size();
    int64_t d1 = wrap(a[2]->i, n, where), d2 = wrap(a[3]->i, n, where), o = a[1]->i;
    if (d1 == d2) return std::nullopt;
    std::vector<int64_t> out;
    for (size_t k = 0; k < n; ++k)
      if (static_cast<int64_t>(k) != d1 && static_cast<int64_t>(k) != d2) out.push_back(x->shape[k]);
    int64_t h = x->shape[static_cast<size_t>(d1)], w = x->shape[static_cast<size_t>(d2)];
    auto run_time = [](int64_t d) { return d < 0 || d >= 500000; };
    if (run_time(h) || run_time(w)) out.push_back(kRunTimeDim);
    else out.push_back(std::max<int64_t>(0, std::min(h, w - o) - std::max<int64_t>(0, -o)));
    return one(x->dtype, out);
  };
  // Outputs whose length depends on the input's values (kRunTimeDim: a new symbolic dimension).
  r["aten::nonzero"] = [](const Args& a, const std::string&) -> std::optional<Outs> {
    const Val* x = tensor(a, 0);
    if (!x) return std::nullopt;
    return one(DType::Int64, {kRunTimeDim, static_cast<int64_t>(x->shape.size())});
  };
  r["aten::masked_select"] = [](const Args& a, const std::string&) -> std::optional<Outs> {
    const Val* x = tensor(a, 0);
    if (!x || !tensor(a, 1)) return std::nullopt;
    return one(x->dtype, {kRunTimeDim});
  };
  // torch.unique(x, sorted, return_inverse, return_counts): the distinct values (flattened), the
  // index of each element's value (x's shape) and the counts; the ones not asked for are empty
  r["aten::_unique2"] = [](const Args& a, const std::string&) -> std::optional<Outs> {
    const Val* x = tensor(a, 0);
    if (!x || is_none(a, 2) || is_none(a, 3) || a[2]->k != Val::K::Bool || a[3]->k != Val::K::Bool) return std::nullopt;
    return Outs{OutInfo{x->dtype, {kRunTimeDim}}, OutInfo{DType::Int64, a[2]->b ? x->shape : std::vector<int64_t>{0}},
                OutInfo{DType::Int64, a[3]->b ? std::vector<int64_t>{kRunTimeDim} : std::vector<int64_t>{0}}};
  };
  // torchvision::nms(dets [N, 4], scores [N], iou_threshold): the indices kept, by score descending
  r["torchvision::nms"] = [](const Args& a, const std::string& where) -> std::optional<Outs> {
    const Val *b = tensor(a, 0), *sc = tensor(a, 1);
    if (!b || !sc) return std::nullopt;
    // (sizes known only at run time may be equal without being the same symbol: not compared)
    if (b->shape.size() != 2 || b->shape[1] != 4 || sc->shape.size() != 1 || (sc->shape[0] < 500000 && b->shape[0] < 500000 && sc->shape[0] != b->shape[0]))
      bad(where, "nms takes boxes [N, 4] and scores [N]");
    return one(DType::Int64, {kRunTimeDim});
  };
  // zeros / ones / empty / full of a size the graph computes (a size read from an input's values;
  // known sizes fold before): the sizes as given, the element type from dtype= or the default
  auto filled = [](size_t dtype_arg, bool from_value) {
    return [dtype_arg, from_value](const Args& a, const std::string& where) -> std::optional<Outs> {
      if (a.empty() || a[0]->k != Val::K::List) return std::nullopt;
      std::vector<int64_t> s;
      for (const auto& x : a[0]->items) {
        if (x->k != Val::K::Int) return std::nullopt;
        s.push_back(x->i);
      }
      DType t = DType::Float32;
      if (dtype_arg < a.size() && !is_none(a, dtype_arg)) {
        if (a[dtype_arg]->k != Val::K::Int) return std::nullopt;
        t = dtype_from_scalar_type(a[dtype_arg]->i, where);
      } else if (from_value) {
        if (a.size() < 2 || !(a[1]->k == Val::K::Int || a[1]->k == Val::K::Float || a[1]->k == Val::K::Bool)) return std::nullopt;
        t = a[1]->k == Val::K::Int ? DType::Int64 : a[1]->k == Val::K::Bool ? DType::Bool : DType::Float32;
      }
      return one(t, s);
    };
  };
  r["aten::zeros"] = filled(1, false);
  r["aten::ones"] = filled(1, false);
  r["aten::empty.memory_format"] = filled(1, false);
  r["aten::full"] = filled(2, true);
  r["aten::lstm.input"] = rnn;
  r["aten::gru.input"] = rnn;
  r["aten::rnn_tanh.input"] = rnn;
  r["aten::rnn_relu.input"] = rnn;
  return r;
}

}  // namespace

std::optional<std::vector<OutInfo>> infer_more(const std::string& op_type, const Args& a, const std::string& where) {
  static const std::unordered_map<std::string, Rule> rules = make_rules();
  auto it = rules.find(op_type);
  if (it == rules.end()) it = rules.find(op_type.substr(0, op_type.find('.')));
  if (it == rules.end()) return std::nullopt;
  return it->second(a, where);
}

}  // namespace amanda::torchscript
