// Decompositions of layout ops into ops with rules (decompose.h's decompose_layout): movedim /
// moveaxis as one permute, roll as slices and a cat per rolled dimension. Exact rearrangements:
// no arithmetic, so the values are torch's.
#include "frameworks/torchscript/decompose.h"

#include <cstdlib>
#include <unordered_map>

namespace amanda::torchscript {

namespace {

const Val* shaped(const Args& a, size_t i) {
  return i < a.size() && a[i] && a[i]->is_tensor() && a[i]->shape_known && a[i]->defined ? a[i].get() : nullptr;
}
// an int or a list of ints (movedim.int / movedim.intlist)
std::optional<std::vector<int64_t>> int_or_ints(const Args& a, size_t i) {
  if (i >= a.size() || !a[i]) return std::nullopt;
  if (a[i]->k == Val::K::Int && !a[i]->data && !a[i]->dyn) return std::vector<int64_t>{a[i]->i};
  if (a[i]->k != Val::K::List && a[i]->k != Val::K::Tuple) return std::nullopt;
  std::vector<int64_t> out;
  for (const auto& x : a[i]->items) {
    if (x->k != Val::K::Int || x->data || x->dyn) return std::nullopt;
    out.push_back(x->i);
  }
  return out;
}

// torch.movedim(x, src, dst): dims src[i] go to dst[i]; the others keep their order in the
// places left (torch's movedim, TensorShape.cpp).
std::optional<VRef> movedim(const Args& a, const CallOp& call) {
  const Val* x = shaped(a, 0);
  auto src = int_or_ints(a, 1), dst = int_or_ints(a, 2);
  if (!x || !src || !dst || src->size() != dst->size()) return std::nullopt;
  size_t r = x->shape.size();
  std::vector<int64_t> perm(r, -1);
  std::vector<bool> used(r, false);
  for (size_t i = 0; i < src->size(); ++i) {
    auto s = wrap_dim((*src)[i], r), d = wrap_dim((*dst)[i], r);
    if (!s || !d || perm[*d] != -1 || used[*s]) return std::nullopt;  // repeated dims: torch's error
    perm[*d] = static_cast<int64_t>(*s);
    used[*s] = true;
  }
  size_t next = 0;
  for (auto& p : perm) {
    if (p != -1) continue;
    while (used[next]) ++next;
    p = static_cast<int64_t>(next);
    used[next] = true;
  }
  return call("aten::permute", {a[0], int_list_value(perm)});
}

// torch.roll(x, shifts, dims): along each dim d, x[size - s:] then x[:size - s] (s = shift mod
// size); without dims, the flattened tensor rolled, then reshaped back.
std::optional<VRef> roll(const Args& a, const CallOp& call, bool force = false) {
  const Val* x = shaped(a, 0);
  auto shifts = int_or_ints(a, 1);
  auto dims = a.size() > 2 && a[2] && a[2]->k != Val::K::None ? int_or_ints(a, 2) : std::optional<std::vector<int64_t>>(std::vector<int64_t>{});
  if (!x || !shifts || !dims) return std::nullopt;
  for (int64_t d : x->shape)
    if (d < 0 || d >= 500000) return std::nullopt;  // (a symbolic size: the stand-in number would be folded)
  if (dims->empty()) {
    if (shifts->size() != 1) return std::nullopt;
    int64_t n = numel(x->shape);  // (throws when the count overflows)
    VRef flat = call("aten::reshape", {a[0], int_list_value({n})});
    auto rolled = roll({flat, int_list_value(*shifts), int_list_value({0})}, call, true);
    if (!rolled) return std::nullopt;
    return call("aten::reshape", {*rolled, int_list_value(x->shape)});
  }
  if (shifts->size() != dims->size()) return std::nullopt;
  // One or two shifts, each nonzero and smaller than its size: aten::roll stays one op (the
  // table's roll_1d / roll_2d take it, as a model's graph has it); the others are decomposed.
  bool rule_takes = dims->size() <= 2;
  for (size_t k = 0; k < dims->size() && rule_takes; ++k) {
    auto d = wrap_dim((*dims)[k], x->shape.size());
    rule_takes = d && (*shifts)[k] != 0 && std::abs((*shifts)[k]) < x->shape[*d];
  }
  if (rule_takes && !force) return std::nullopt;
  VRef y = a[0];
  for (size_t k = 0; k < dims->size(); ++k) {
    auto d = wrap_dim((*dims)[k], x->shape.size());
    if (!d) return std::nullopt;
    int64_t size = x->shape[*d];
    if (size == 0) continue;
    int64_t s = (((*shifts)[k] % size) + size) % size;
    if (s == 0) continue;
    VRef dim = make_int(static_cast<int64_t>(*d));
    VRef tail = call("aten::slice", {y, dim, make_int(size - s), make_int(size), make_int(1)});
    VRef head = call("aten::slice", {y, dim, make_int(0), make_int(size - s), make_int(1)});
    y = call("aten::cat", {make_list({tail, head}), dim});
  }
  // (every shift a multiple of its size: x itself, as a new tensor as torch's roll gives)
  return y == a[0] ? call("aten::clone", {a[0], make_none()}) : y;
}

}  // namespace

std::optional<VRef> decompose_layout(const std::string& op_type, const Args& a, const CallOp& call) {
  std::string base = op_type.substr(0, op_type.find('.'));
  if (base == "aten::movedim" || base == "aten::moveaxis") return movedim(a, call);
  if (base == "aten::roll") return roll(a, call);
  return decompose_norms(op_type, a, call);
}

}  // namespace amanda::torchscript
