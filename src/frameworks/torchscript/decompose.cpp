// Decompositions of list-valued ops (decompose.h): a registry keyed by op type (with overload)
// or base name.
#include "frameworks/torchscript/decompose.h"

#include <algorithm>
#include <unordered_map>

namespace amanda::torchscript {

namespace {

using Rule = std::function<std::optional<VRef>(const Args&, const CallOp&)>;

const Val* typed(const Args& a, size_t i) {
  return i < a.size() && a[i] && a[i]->is_tensor() && a[i]->shape_known && a[i]->defined ? a[i].get() : nullptr;
}
std::optional<int64_t> int_at(const Args& a, size_t i) {
  if (i < a.size() && a[i] && a[i]->k == Val::K::Int) return a[i]->i;
  return std::nullopt;
}
std::optional<std::vector<int64_t>> ints_at(const Args& a, size_t i) {
  if (i >= a.size() || !a[i] || (a[i]->k != Val::K::List && a[i]->k != Val::K::Tuple)) return std::nullopt;
  std::vector<int64_t> out;
  for (const auto& x : a[i]->items) {
    if (x->k != Val::K::Int) return std::nullopt;
    out.push_back(x->i);
  }
  return out;
}

// Pieces of the given sizes along dim, as aten::slice ops.
std::optional<VRef> slices(const Args& a, size_t dim, const std::vector<int64_t>& sizes, const CallOp& call) {
  std::vector<VRef> out;
  int64_t start = 0;
  for (int64_t s : sizes) {
    if (s < 0) return std::nullopt;
    out.push_back(call("aten::slice", {a[0], make_int(static_cast<int64_t>(dim)), make_int(start), make_int(start + s), make_int(1)}));
    start += s;
  }
  return make_list(out);
}

// torch.chunk: pieces of ceil(n / chunks), the last smaller (fewer pieces when they run out).
std::vector<int64_t> chunk_sizes(int64_t n, int64_t chunks) {
  std::vector<int64_t> s;
  int64_t each = (n + chunks - 1) / chunks;
  for (int64_t start = 0; start < n; start += each) s.push_back(std::min(each, n - start));
  if (s.empty()) s.push_back(0);
  return s;
}

std::unordered_map<std::string, Rule> make_rules() {
  std::unordered_map<std::string, Rule> r;
  auto chunk = [](const Args& a, const CallOp& call) -> std::optional<VRef> {
    const Val* x = typed(a, 0);
    auto c = int_at(a, 1), d = int_at(a, 2);
    if (!x || !c || !d || *c <= 0) return std::nullopt;
    auto dim = wrap_dim(*d, x->shape.size());
    if (!dim) return std::nullopt;
    return slices(a, *dim, chunk_sizes(x->shape[*dim], *c), call);
  };
  r["aten::chunk"] = chunk;
  r["aten::unsafe_chunk"] = chunk;
  // split with one size: pieces of that size; with a list: those sizes
  auto split = [](const Args& a, const CallOp& call) -> std::optional<VRef> {
    const Val* x = typed(a, 0);
    auto d = int_at(a, 2);
    if (!x || !d) return std::nullopt;
    auto dim = wrap_dim(*d, x->shape.size());
    if (!dim) return std::nullopt;
    int64_t n = x->shape[*dim];
    if (auto each = int_at(a, 1)) {
      if (*each <= 0) return std::nullopt;
      std::vector<int64_t> s;
      for (int64_t start = 0; start < n; start += *each) s.push_back(std::min(*each, n - start));
      return slices(a, *dim, s, call);
    }
    if (auto sizes = ints_at(a, 1)) {
      int64_t total = 0;
      for (int64_t s : *sizes) total += s;
      if (total != n) return std::nullopt;
      return slices(a, *dim, *sizes, call);
    }
    return std::nullopt;
  };
  for (const char* n : {"aten::split", "aten::split.Tensor", "aten::split_with_sizes", "aten::unsafe_split",
                        "aten::unsafe_split.Tensor", "aten::unsafe_split_with_sizes", "aten::split.sizes"})
    r[n] = split;
  Rule sections = [](const Args& a, const CallOp& call) -> std::optional<VRef> {
    const Val* x = typed(a, 0);
    auto k = int_at(a, 1), d = int_at(a, 2);
    if (!x || !k || !d || *k <= 0) return std::nullopt;
    auto dim = wrap_dim(*d, x->shape.size());
    if (!dim) return std::nullopt;
    int64_t n = x->shape[*dim];
    std::vector<int64_t> s;  // the first n % k pieces one longer
    for (int64_t i = 0; i < *k; ++i) s.push_back(n / *k + (i < n % *k ? 1 : 0));
    return slices(a, *dim, s, call);
  };
  // tensor_split at indices: x[0:i0], x[i0:i1], ..., x[ik:], each bound clamped to [0, n] and an
  // end below its start giving an empty piece (as torch; a negative index counts from the end)
  r["aten::tensor_split.sections"] = sections;
  Rule indices = [](const Args& a, const CallOp& call) -> std::optional<VRef> {
    const Val* x = typed(a, 0);
    auto idx = ints_at(a, 1);
    auto d = int_at(a, 2);
    if (!x || !idx || !d) return std::nullopt;
    auto dim = wrap_dim(*d, x->shape.size());
    if (!dim) return std::nullopt;
    const int64_t n = x->shape[*dim];
    if (n < 0) return std::nullopt;  // (a symbolic size: the bounds are not numbers)
    auto clamp = [n](int64_t i) { return std::clamp(i < 0 ? i + n : i, int64_t{0}, n); };
    std::vector<VRef> out;
    int64_t start = 0;
    for (size_t j = 0; j <= idx->size(); ++j) {
      int64_t end = j < idx->size() ? clamp((*idx)[j]) : n;
      out.push_back(call("aten::slice", {a[0], make_int(static_cast<int64_t>(*dim)), make_int(start), make_int(std::max(start, end)),
                                         make_int(1)}));
      start = end;  // (the next piece starts at this index even when this piece was empty)
    }
    return make_list(out);
  };
  r["aten::tensor_split.indices"] = indices;
  // a known int64 tensor: 0-d, the number of sections; 1-D, the indices (a size read from a
  // symbolic dimension is not known: refused)
  r["aten::tensor_split.tensor_indices_or_sections"] = [sections, indices](const Args& a, const CallOp& call) -> std::optional<VRef> {
    if (a.size() < 3 || !a[1] || !a[1]->is_tensor() || !a[1]->known || a[1]->dtype != ir::DType::Int64 || a[1]->shape.size() > 1)
      return std::nullopt;
    std::vector<VRef> items;
    for (double v : elements(*a[1])) items.push_back(make_int(static_cast<int64_t>(v)));
    Args b = a;
    if (a[1]->shape.empty()) {
      b[1] = items.at(0);
      return sections(b, call);
    }
    b[1] = make_list(std::move(items));
    return indices(b, call);
  };
  r["aten::unbind"] = [](const Args& a, const CallOp& call) -> std::optional<VRef> {
    const Val* x = typed(a, 0);
    auto d = int_at(a, 1);
    if (!x || !d) return std::nullopt;
    auto dim = wrap_dim(*d, x->shape.size());
    if (!dim) return std::nullopt;
    std::vector<VRef> out;
    for (int64_t i = 0; i < x->shape[*dim]; ++i)
      out.push_back(call("aten::select", {a[0], make_int(static_cast<int64_t>(*dim)), make_int(i)}));
    return make_list(out);
  };
  r["aten::stack"] = [](const Args& a, const CallOp& call) -> std::optional<VRef> {
    auto d = int_at(a, 1);
    if (a.empty() || !a[0] || a[0]->k != Val::K::List || a[0]->items.empty() || !d) return std::nullopt;
    const Val& first = *a[0]->items[0];
    if (!first.is_tensor() || !first.shape_known) return std::nullopt;
    auto dim = wrap_dim(*d, first.shape.size() + 1);
    if (!dim) return std::nullopt;
    std::vector<VRef> parts;
    for (const auto& t : a[0]->items) {
      if (!t->is_tensor() || !t->shape_known) return std::nullopt;
      parts.push_back(call("aten::unsqueeze", {t, make_int(static_cast<int64_t>(*dim))}));
    }
    return call("aten::cat", {make_list(parts), make_int(static_cast<int64_t>(*dim))});
  };
  r["aten::broadcast_tensors"] = [](const Args& a, const CallOp& call) -> std::optional<VRef> {
    if (a.empty() || !a[0] || a[0]->k != Val::K::List) return std::nullopt;
    std::vector<int64_t> shape;
    for (const auto& t : a[0]->items) {
      if (!t->is_tensor() || !t->shape_known) return std::nullopt;
      size_t n = std::max(shape.size(), t->shape.size());
      std::vector<int64_t> s(n, 1);
      for (size_t k = 0; k < n; ++k) {
        int64_t x = k < n - shape.size() ? 1 : shape[k - (n - shape.size())];
        int64_t y = k < n - t->shape.size() ? 1 : t->shape[k - (n - t->shape.size())];
        if (x != y && x != 1 && y != 1) return std::nullopt;
        s[k] = x == 1 ? y : x;
      }
      shape = s;
    }
    std::vector<VRef> out;
    for (const auto& t : a[0]->items) {
      std::vector<VRef> dims;
      for (int64_t d : shape) dims.push_back(make_int(d));
      out.push_back(call("aten::expand", {t, make_list(dims)}));
    }
    return make_list(out);
  };
  // meshgrid (indexing 'ij' or 'xy'): each 1-D (or 0-d) input viewed along its axis and expanded to the grid
  auto meshgrid = [](const Args& a, const CallOp& call, bool xy) -> std::optional<VRef> {
    if (a.empty() || !a[0] || a[0]->k != Val::K::List || a[0]->items.empty()) return std::nullopt;
    std::vector<int64_t> sizes;
    for (const auto& t : a[0]->items) {
      if (!t->is_tensor() || !t->shape_known || t->shape.size() > 1) return std::nullopt;
      sizes.push_back(t->shape.empty() ? 1 : t->shape[0]);
    }
    size_t n = sizes.size();
    std::vector<size_t> axis(n);
    for (size_t i = 0; i < n; ++i) axis[i] = i;
    if (xy && n >= 2) std::swap(axis[0], axis[1]);
    std::vector<int64_t> grid(n);
    for (size_t i = 0; i < n; ++i) grid[axis[i]] = sizes[i];
    std::vector<VRef> out;
    for (size_t i = 0; i < n; ++i) {
      std::vector<VRef> view, full;
      for (size_t k = 0; k < n; ++k) {
        view.push_back(make_int(k == axis[i] ? sizes[i] : 1));
        full.push_back(make_int(grid[k]));
      }
      out.push_back(call("aten::expand", {call("aten::reshape", {a[0]->items[i], make_list(view)}), make_list(full)}));
    }
    return make_list(out);
  };
  r["aten::meshgrid"] = [meshgrid](const Args& a, const CallOp& call) { return meshgrid(a, call, false); };
  r["aten::meshgrid.indexing"] = [meshgrid](const Args& a, const CallOp& call) -> std::optional<VRef> {
    if (a.size() < 2 || !a[1] || a[1]->k != Val::K::Str || (a[1]->s != "ij" && a[1]->s != "xy")) return std::nullopt;
    return meshgrid(a, call, a[1]->s == "xy");
  };
  // nonzero(x, as_tuple=True): the columns of nonzero(x)
  r["aten::nonzero_numpy"] = [](const Args& a, const CallOp& call) -> std::optional<VRef> {
    const Val* x = typed(a, 0);
    if (!x) return std::nullopt;
    VRef nz = call("aten::nonzero", {a[0]});
    std::vector<VRef> out;
    for (size_t k = 0; k < std::max<size_t>(x->shape.size(), 1); ++k) out.push_back(call("aten::select", {nz, make_int(1), make_int(static_cast<int64_t>(k))}));
    return make_list(out);
  };
  // torch.where(cond) (the one-argument overload, not where.self & co.): the same columns
  r["aten::where"] = [nz = r["aten::nonzero_numpy"]](const Args& a, const CallOp& call) -> std::optional<VRef> {
    return a.size() == 1 ? nz(a, call) : std::nullopt;
  };
  return r;
}

}  // namespace

std::optional<VRef> decompose(const std::string& op_type, const Args& a, const CallOp& call) {
  static const std::unordered_map<std::string, Rule> rules = make_rules();
  auto it = rules.find(op_type);
  if (it == rules.end()) it = rules.find(op_type.substr(0, op_type.find('.')));
  if (it == rules.end()) return decompose_layout(op_type, a, call);
  return it->second(a, call);
}

}  // namespace amanda::torchscript
