// Advanced indexing the single-tensor rules do not take (issue 33): x[i0, :, i1] with several
// index tensors, and x[mask] = v with a mask and a one-element value. Both are decomposed here
// into ops the reader already has rules for, so both readers' shape and type machinery apply:
//
//   * index(x, [.., i0, .., i1, ..]) (integer tensors, broadcast together to B): the indexed
//     dims are moved first and flattened into one, the indices combined into one linear index
//     (row-major over the indexed dims, negatives wrapped as torch wraps them), and that one
//     index gathers: [B, the other dims]. torch puts B where the indexed dims were when they are
//     adjacent, first otherwise (numpy's rule): a final permute does the first.
//   * index_put_(x, [mask], v) (mask over x's leading dims, v one element): where(mask, v, x)
//     (accumulate: x + where(mask, v, 0)), written into x with copy_ (so views of x are handled
//     as any in-place write is).
#include "frameworks/torchscript/importer_state.h"
#include "frameworks/torchscript/promotion.h"

#include <algorithm>

namespace amanda::torchscript {

std::optional<VRef> Importer::advanced_index_call(const std::string& base, const std::vector<VRef>& args,
                                                  const std::vector<std::pair<std::string, VRef>>& kwargs) {
  bool get = base == "aten::index", put = base == "aten::index_put_" || base == "aten::index_put";
  if ((!get && !put) || !kwargs.empty() || args.size() < 2) return std::nullopt;
  const VRef& x = args[0];
  if (!x->is_tensor() || !x->shape_known || args[1]->k != Val::K::List) return std::nullopt;
  for (int64_t d : x->shape)
    if (is_sym(d)) return std::nullopt;
  const auto& items = args[1]->items;
  size_t r = x->shape.size();
  std::vector<size_t> dims;
  for (size_t k = 0; k < items.size(); ++k) {
    if (items[k]->k == Val::K::None) continue;
    if (!items[k]->is_tensor() || !items[k]->shape_known) return std::nullopt;
    dims.push_back(k);
  }
  if (items.size() > r || dims.empty()) return std::nullopt;
  auto cast = [&](const VRef& v, DType t) {
    return v->dtype == t ? v : call_op("aten::to", {v, make_int(scalar_type_code(t)), make_bool(false), make_bool(false)}, {});
  };

  if (put) {
    // x[mask] = v: one bool mask over x's leading dims, a one-element value
    if (dims.size() != 1 || dims[0] != 0 || args.size() < 3) return std::nullopt;
    const VRef& m = items[0];
    const VRef& v = args[2];
    if (m->dtype != DType::Bool && m->dtype != DType::UInt8) return std::nullopt;
    if (!v->is_tensor() || !v->shape_known || numel(v->shape) != 1) return std::nullopt;
    if (m->shape.size() > r || !std::equal(m->shape.begin(), m->shape.end(), x->shape.begin())) return std::nullopt;
    bool accumulate = args.size() > 3 && args[3]->k == Val::K::Bool && args[3]->b;
    if (args.size() > 3 && args[3]->k != Val::K::Bool && args[3]->k != Val::K::None) return std::nullopt;
    std::vector<VRef> mshape;
    for (int64_t d : m->shape) mshape.push_back(make_int(d));
    for (size_t k = m->shape.size(); k < r; ++k) mshape.push_back(make_int(1));
    VRef mb = call_op("aten::reshape", {cast(m, DType::Bool), make_list(mshape)}, {});
    VRef val = call_op("aten::reshape", {cast(v, x->dtype), make_list({})}, {});
    VRef now = accumulate ? call_op("aten::add", {x, call_op("aten::where", {mb, val, make_known(x->dtype, {}, {0})}, {})}, {})
                          : call_op("aten::where", {mb, val, x}, {});
    if (base == "aten::index_put") return now;
    return call_op("aten::copy_", {x, now, make_bool(false)}, {});
  }

  // x[i0, .., i1]: several integer index tensors
  if (dims.size() < 2) return std::nullopt;
  for (size_t d : dims)
    if (is_float_type(items[d]->dtype) || items[d]->dtype == DType::Bool || items[d]->dtype == DType::UInt8) return std::nullopt;
  std::vector<size_t> rest;
  for (size_t k = 0; k < r; ++k)
    if (std::find(dims.begin(), dims.end(), k) == dims.end()) rest.push_back(k);
  std::vector<VRef> perm;
  bool identity = true;
  size_t pos = 0;
  for (size_t d : dims) perm.push_back(make_int(static_cast<int64_t>(d))), identity &= d == pos++;
  for (size_t d : rest) perm.push_back(make_int(static_cast<int64_t>(d))), identity &= d == pos++;
  VRef xt = identity ? x : call_op("aten::permute", {x, make_list(perm)}, {});
  int64_t flat = 1;
  for (size_t d : dims) flat = checked_mul(flat, x->shape[d], where_);
  std::vector<VRef> fshape{make_int(flat)};
  for (size_t d : rest) fshape.push_back(make_int(x->shape[d]));
  VRef xf = call_op("aten::reshape", {xt, make_list(fshape)}, {});
  VRef lin;
  int64_t stride = 1;
  for (size_t k = dims.size(); k-- > 0;) {
    int64_t size = x->shape[dims[k]];
    VRef i = cast(items[dims[k]], DType::Int64);
    // (a negative index counts from the end, as torch's; out of range is torch's error)
    VRef neg = call_op("aten::lt", {i, make_known(DType::Int64, {}, {0})}, {});
    i = call_op("aten::where", {neg, call_op("aten::add", {i, make_known(DType::Int64, {}, {static_cast<double>(size)})}, {}), i}, {});
    VRef term = stride == 1 ? i : call_op("aten::mul", {i, make_known(DType::Int64, {}, {static_cast<double>(stride)})}, {});
    lin = lin ? call_op("aten::add", {term, lin}, {}) : term;
    stride = checked_mul(stride, size, where_);
  }
  VRef y = call_op("aten::index", {xf, make_list({lin})}, {});
  bool adjacent = dims.back() - dims.front() + 1 == dims.size();
  if (!adjacent || dims.front() == 0) return y;
  if (!y->is_tensor() || !y->shape_known) throw Unsupported(where_ + ": aten::index with several index tensors: the gathered shape is unknown");
  size_t nb = y->shape.size() - rest.size(), before = dims.front();
  std::vector<VRef> back;
  for (size_t k = 0; k < before; ++k) back.push_back(make_int(static_cast<int64_t>(nb + k)));
  for (size_t k = 0; k < nb; ++k) back.push_back(make_int(static_cast<int64_t>(k)));
  for (size_t k = nb + before; k < y->shape.size(); ++k) back.push_back(make_int(static_cast<int64_t>(k)));
  return call_op("aten::permute", {y, make_list(back)}, {});
}

}  // namespace amanda::torchscript
