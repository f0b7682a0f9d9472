// torch.linalg's norms as reductions with rules (decompose.h's decompose_norms): vector norms of
// any order (2: sqrt of the sum of squares; inf / -inf: the largest / smallest magnitude; 0: the
// count of nonzeros; p: (sum |x|^p)^(1/p)), matrix norms that need no decomposition ('fro', 1, -1,
// inf, -inf: the largest / smallest column or row sum of magnitudes), and linalg.norm choosing
// between them as torch does. The 2-norm, -2 and 'nuc' of a matrix need singular values: nullopt
// (the op is refused, named).
#include "frameworks/torchscript/decompose.h"
#include "frameworks/torchscript/promotion.h"

#include <algorithm>
#include <cmath>

namespace amanda::torchscript {

namespace {

struct NormArgs {
  VRef x;
  std::vector<int64_t> dims;  // wrapped, sorted as given; all dims when none given
  bool keep = false;
};

std::optional<NormArgs> norm_args(const Args& a, size_t dim_arg, std::optional<std::vector<int64_t>> dflt, const CallOp& call) {
  if (a.empty() || !a[0]->is_tensor() || !a[0]->shape_known || !is_float_type(a[0]->dtype)) return std::nullopt;
  NormArgs n;
  n.x = a[0];
  int64_t r = static_cast<int64_t>(a[0]->shape.size());
  std::vector<int64_t> dims;
  if (dim_arg < a.size() && a[dim_arg]->k == Val::K::List) {
    for (const auto& d : a[dim_arg]->items) {
      if (d->k != Val::K::Int || d->data || d->dyn || d->i < -r || d->i >= r) return std::nullopt;
      dims.push_back(d->i < 0 ? d->i + r : d->i);
    }
  } else if (dim_arg < a.size() && a[dim_arg]->k == Val::K::Int && !a[dim_arg]->data && !a[dim_arg]->dyn) {
    if (a[dim_arg]->i < -r || a[dim_arg]->i >= r) return std::nullopt;
    dims.push_back(a[dim_arg]->i < 0 ? a[dim_arg]->i + r : a[dim_arg]->i);
  } else if (dim_arg >= a.size() || a[dim_arg]->k == Val::K::None) {
    if (dflt) {
      for (int64_t d : *dflt) dims.push_back(d < 0 ? d + r : d);
    } else {
      for (int64_t d = 0; d < r; ++d) dims.push_back(d);
    }
  } else {
    return std::nullopt;
  }
  n.dims = dims;
  if (dim_arg + 1 < a.size()) {
    if (a[dim_arg + 1]->k == Val::K::Bool) n.keep = a[dim_arg + 1]->b;
    else if (a[dim_arg + 1]->k != Val::K::None) return std::nullopt;
  }
  if (dim_arg + 2 < a.size() && a[dim_arg + 2]->k != Val::K::None) {
    if (a[dim_arg + 2]->k != Val::K::Int) return std::nullopt;
    n.x = call("aten::to", {n.x, a[dim_arg + 2], make_bool(false), make_bool(false)});  // dtype=: the input cast first
  }
  return n;
}

std::optional<double> number(const VRef& v) {
  if (v->k == Val::K::Int && !v->data && !v->dyn) return static_cast<double>(v->i);
  if (v->k == Val::K::Float) return v->f;
  return std::nullopt;
}

VRef vector_norm(const NormArgs& n, double p, const CallOp& call) {
  VRef dims = int_list_value(n.dims), keep = make_bool(n.keep);
  if (p == 0) {
    VRef nz = call("aten::ne", {n.x, make_int(0)});
    return call("aten::sum", {call("aten::to", {nz, make_int(scalar_type_code(n.x->dtype)), make_bool(false), make_bool(false)}), dims, keep, make_none()});
  }
  VRef a = call("aten::abs", {n.x});
  if (std::isinf(p)) return call(p > 0 ? "aten::amax" : "aten::amin", {a, dims, keep});
  if (p == 1) return call("aten::sum", {a, dims, keep, make_none()});
  if (p == 2) return call("aten::sqrt", {call("aten::sum", {call("aten::mul", {a, a}), dims, keep, make_none()})});
  VRef s = call("aten::sum", {call("aten::pow", {a, make_float(p)}), dims, keep, make_none()});
  return call("aten::pow", {s, make_float(1.0 / p)});
}

std::optional<VRef> matrix_norm(const NormArgs& n, const VRef& ord, const CallOp& call) {
  if (n.dims.size() != 2 || n.dims[0] == n.dims[1]) return std::nullopt;
  if (ord->k == Val::K::Str) {
    if (ord->s != "fro") return std::nullopt;  // 'nuc': singular values
    return vector_norm(n, 2, call);
  }
  auto p = number(ord);
  if (!p || !(std::isinf(*p) || *p == 1 || *p == -1)) return std::nullopt;  // 2, -2: singular values
  // inf: the largest sum over dim 1 (rows), 1: the largest sum over dim 0 (columns); negative: smallest
  int64_t sum_dim = std::isinf(*p) ? n.dims[1] : n.dims[0], pick_dim = std::isinf(*p) ? n.dims[0] : n.dims[1];
  VRef s = call("aten::sum", {call("aten::abs", {n.x}), int_list_value({sum_dim}), make_bool(true), make_none()});
  VRef m = call(*p > 0 ? "aten::amax" : "aten::amin", {s, int_list_value({pick_dim}), make_bool(true)});
  if (n.keep) return m;
  int64_t hi = std::max(sum_dim, pick_dim), lo = std::min(sum_dim, pick_dim);
  return call("aten::squeeze", {call("aten::squeeze", {m, make_int(hi)}), make_int(lo)});
}

}  // namespace

std::optional<VRef> decompose_norms(const std::string& op_type, const Args& a, const CallOp& call) {
  if (op_type == "aten::linalg_vector_norm") {
    auto n = norm_args(a, 2, std::nullopt, call);
    auto p = a.size() > 1 ? number(a[1]) : std::optional<double>(2.0);
    if (!n || !p) return std::nullopt;
    return vector_norm(*n, *p, call);
  }
  if (op_type == "aten::linalg_matrix_norm" || op_type == "aten::linalg_matrix_norm.str_ord") {
    auto n = norm_args(a, 2, std::vector<int64_t>{-2, -1}, call);
    if (!n || a.size() < 2) return std::nullopt;
    return matrix_norm(*n, a[1], call);
  }
  if (op_type == "aten::linalg_norm" || op_type == "aten::linalg_norm.ord_str") {
    if (a.empty() || !a[0]->is_tensor() || !a[0]->shape_known) return std::nullopt;
    bool no_dim = a.size() < 3 || a[2]->k == Val::K::None;
    VRef ord = a.size() > 1 ? a[1] : make_none();
    auto n = norm_args(a, 2, std::nullopt, call);
    if (!n) return std::nullopt;
    if (ord->k == Val::K::None) return vector_norm(*n, 2, call);  // the 2-norm of the (flattened) values
    // an order: the dims (or the input's rank, without dims) say vector or matrix
    size_t k = no_dim ? a[0]->shape.size() : n->dims.size();
    if (k == 1 && ord->k != Val::K::Str) {
      auto p = number(ord);
      return p ? std::optional<VRef>(vector_norm(*n, *p, call)) : std::nullopt;
    }
    if (k == 2) return matrix_norm(*n, ord, call);
    return std::nullopt;  // torch's error
  }
  return std::nullopt;
}

}  // namespace amanda::torchscript
