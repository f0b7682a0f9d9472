// TorchScript's builtins on lists, strings and None.
#include "frameworks/torchscript/importer_state.h"

namespace amanda::torchscript {

// TorchScript's builtins on lists, strings and None (scripted code calls them as torch.X).
std::optional<VRef> Importer::builtin(const std::string& base, const std::vector<VRef>& args) {
  auto is_seq = [](const Val& v) { return v.k == Val::K::List || v.k == Val::K::Tuple; };
  if ((base == "aten::__is__" || base == "aten::__isnot__") && args.size() == 2) {
    const Val &a = *args[0], &b = *args[1];
    bool same = a.k == Val::K::None || b.k == Val::K::None ? a.k == b.k : args[0] == args[1];
    return make_bool(base == "aten::__is__" ? same : !same);
  }
  // detach / alias / contiguous of a known tensor are that tensor (the same storage: a later
  // in-place write through one is seen through the other, as embedding's max_norm relies on)
  if ((base == "aten::detach" || base == "aten::alias" || base == "aten::contiguous") && !args.empty() && args.size() <= 2 &&
      args[0]->is_tensor() && args[0]->known)
    return args[0];
  // t.to(device): everything is on the CPU; torch returns t itself
  if (base == "aten::to" && args.size() == 2 && args[0]->is_tensor() && args[1]->k == Val::K::Device) return args[0];
  if (base == "aten::len" && args.size() == 1) {
    const Val& a = *args[0];
    if (is_seq(a)) return make_int(static_cast<int64_t>(a.items.size()));
    if (a.k == Val::K::Str) return make_int(static_cast<int64_t>(a.s.size()));
    if (a.is_tensor() && a.shape_known && !a.shape.empty() && is_sym(a.shape[0]) && !a.known)
      return *symbolic_call("aten::size", {args[0], make_int(0)});
    if (a.is_tensor() && a.shape_known && !a.shape.empty()) return make_int(a.shape[0]);
    return std::nullopt;
  }
  if (base == "aten::__getitem__" && args.size() == 2 && is_seq(*args[0]) && args[1]->k == Val::K::Int) {
    int64_t n = static_cast<int64_t>(args[0]->items.size()), k = args[1]->i < 0 ? args[1]->i + n : args[1]->i;
    if (k < 0 || k >= n) throw Error(where_ + ": list index " + std::to_string(args[1]->i) + " out of range");
    return args[0]->items[static_cast<size_t>(k)];
  }
  if (base == "aten::append" && args.size() == 2 && args[0]->k == Val::K::List) {
    if (scanned_.count(args[0].get())) throw Unsupported(where_ + ": appending to a list a loop on data filled (not supported)");
    if (!bodies_.empty() && bodies_.back().outer_lists.count(args[0].get())) {
      // One tensor appended once per trip to a list empty before the loop: a scan output.
      Body& b = bodies_.back();
      bool again = false;
      for (const auto& [l, t] : b.scans) again |= l == args[0];
      if (b.loop && args[0]->items.empty() && !again && args[1]->is_tensor() && args[1]->defined && args[1]->shape_known) {
        b.scans.emplace_back(args[0], args[1]);
        return args[0];
      }
      throw Unsupported(where_ + ": a list appended to inside an if or loop on data (aten::append in a prim::If/prim::Loop body; "
                        "only one tensor appended once per trip of a loop to a list empty before it is supported)");
    }
    // Lists of lists could be made to contain themselves (a cycle of shared pointers).
    // (a tuple of numbers and tensors, detection models' image sizes, cannot hold the list)
    // (nor can a list of numbers: image_sizes.append(img.shape[-2:]))
    bool flat_tuple = args[1]->k == Val::K::Tuple || args[1]->k == Val::K::List;
    for (const VRef& x : args[1]->items) flat_tuple &= !is_seq(*x) && x->k != Val::K::Object;
    if ((is_seq(*args[1]) && !flat_tuple) || args[1]->k == Val::K::Object) throw Unsupported(where_ + ": appending a list or an object to a list");
    if (args[0]->items.size() >= static_cast<size_t>(kMaxLoopTrips)) throw Unsupported(where_ + ": a list grown past " + std::to_string(kMaxLoopTrips));
    args[0]->items.push_back(args[1]);
    return args[0];
  }
  // l.insert(i, v), l.pop(i = -1), del l[i]: Python's index rules (insert clamps, pop and del check)
  if (base == "aten::insert" && args.size() == 3 && args[0]->k == Val::K::List && args[1]->k == Val::K::Int) {
    if (is_seq(*args[2]) || args[2]->k == Val::K::Object) throw Unsupported(where_ + ": inserting a list or an object into a list");
    if (args[0]->items.size() >= static_cast<size_t>(kMaxLoopTrips)) throw Unsupported(where_ + ": a list grown past " + std::to_string(kMaxLoopTrips));
    int64_t n = static_cast<int64_t>(args[0]->items.size()), k = args[1]->i < 0 ? std::max<int64_t>(args[1]->i + n, 0) : std::min(args[1]->i, n);
    args[0]->items.insert(args[0]->items.begin() + k, args[2]);
    return make_none();
  }
  // d[k] = v on a dict with string keys (transform.postprocess rescales each detection's boxes)
  if (base == "aten::_set_item" && args.size() == 3 && args[0]->k == Val::K::Tuple && args[0]->keys.size() == args[0]->items.size() &&
      args[1]->k == Val::K::Str) {
    if (is_seq(*args[2]) || args[2]->k == Val::K::Object) throw Unsupported(where_ + ": storing a list or an object in a dict");
    auto it = std::find(args[0]->keys.begin(), args[0]->keys.end(), args[1]->s);
    if (it != args[0]->keys.end()) args[0]->items[static_cast<size_t>(it - args[0]->keys.begin())] = args[2];
    else args[0]->keys.push_back(args[1]->s), args[0]->items.push_back(args[2]);
    return make_none();
  }
  // l[i] = v (scripted code: aten::_set_item.t)
  if (base == "aten::_set_item" && args.size() == 3 && args[0]->k == Val::K::List && args[1]->k == Val::K::Int) {
    if (is_seq(*args[2]) || args[2]->k == Val::K::Object) throw Unsupported(where_ + ": storing a list or an object in a list");
    int64_t n = static_cast<int64_t>(args[0]->items.size()), k = args[1]->i < 0 ? args[1]->i + n : args[1]->i;
    if (k < 0 || k >= n) throw Error(where_ + ": list index " + std::to_string(args[1]->i) + " out of range");
    args[0]->items[static_cast<size_t>(k)] = args[2];
    return args[0];
  }
  if ((base == "aten::pop" || base == "aten::Delete") && (args.size() == 1 || args.size() == 2) && args[0]->k == Val::K::List &&
      (args.size() == 1 || args[1]->k == Val::K::Int)) {
    int64_t n = static_cast<int64_t>(args[0]->items.size()), i = args.size() == 2 ? args[1]->i : -1, k = i < 0 ? i + n : i;
    if (k < 0 || k >= n) throw Error(where_ + ": list index " + std::to_string(i) + " out of range");
    VRef v = args[0]->items[static_cast<size_t>(k)];
    args[0]->items.erase(args[0]->items.begin() + k);
    return base == "aten::pop" ? v : make_none();
  }
  if (base == "aten::list" && args.size() == 1 && is_seq(*args[0])) return make_list(args[0]->items);
  // list * n (aten::mul.left_t: torchvision's anchors repeat [shift_x, shift_y] per box shape)
  if (base == "aten::mul" && args.size() == 2 && args[0]->k == Val::K::List && args[1]->k == Val::K::Int && !args[1]->data && !args[1]->dyn) {
    int64_t n = std::max<int64_t>(args[1]->i, 0);
    if (static_cast<int64_t>(args[0]->items.size()) * n > kMaxLoopTrips) throw Unsupported(where_ + ": a list grown past " + std::to_string(kMaxLoopTrips));
    std::vector<VRef> items;
    for (int64_t k = 0; k < n; ++k) items.insert(items.end(), args[0]->items.begin(), args[0]->items.end());
    return make_list(std::move(items));
  }
  // list + list (aten::add.t, as scripted code calls it: torch.add(a, b))
  if (base == "aten::add" && args.size() == 2 && args[0]->k == Val::K::List && args[1]->k == Val::K::List) {
    if (args[0]->items.size() + args[1]->items.size() > static_cast<size_t>(kMaxLoopTrips))
      throw Unsupported(where_ + ": a list grown past " + std::to_string(kMaxLoopTrips));
    std::vector<VRef> items = args[0]->items;
    items.insert(items.end(), args[1]->items.begin(), args[1]->items.end());
    return make_list(std::move(items));
  }
  // list[start:end:step] (aten::slice.t): Python's slice rules, None for an end
  if (base == "aten::slice" && !args.empty() && args.size() <= 4 && args[0]->k == Val::K::List) {
    auto int_or = [&](size_t k, int64_t d) -> std::optional<int64_t> {
      if (k >= args.size() || args[k]->k == Val::K::None) return d;
      if (args[k]->k != Val::K::Int) return std::nullopt;
      return args[k]->i;
    };
    int64_t n = static_cast<int64_t>(args[0]->items.size());
    auto start = int_or(1, 0), end = int_or(2, n), step = int_or(3, 1);
    if (!start || !end || !step) return std::nullopt;
    if (*step <= 0) throw Unsupported(where_ + ": a list slice with step " + std::to_string(*step));
    auto clamp = [n](int64_t i) { return i < 0 ? std::max<int64_t>(i + n, 0) : std::min(i, n); };
    std::vector<VRef> items;
    for (int64_t i = clamp(*start); i < clamp(*end); i += *step) items.push_back(args[0]->items[static_cast<size_t>(i)]);
    return make_list(std::move(items));
  }
  // range(lo, hi, step)'s length (scripted for-loops over ranges)
  if (base == "aten::__range_length" && args.size() == 3 && args[0]->k == Val::K::Int && args[1]->k == Val::K::Int &&
      args[2]->k == Val::K::Int) {
    int64_t lo = args[0]->i, hi = args[1]->i, st = args[2]->i;
    if (st == 0) throw Error(where_ + ": range() with step 0");
    int64_t len = 0, span = 0;
    if ((st > 0 && lo < hi) || (st < 0 && lo > hi)) {
      if (st > 0 ? __builtin_sub_overflow(hi, lo, &span) : __builtin_sub_overflow(lo, hi, &span))
        throw Error(where_ + ": range() longer than int64");
      uint64_t step = st > 0 ? static_cast<uint64_t>(st) : 0 - static_cast<uint64_t>(st);
      len = static_cast<int64_t>((static_cast<uint64_t>(span) - 1) / step + 1);
    }
    return make_int(len);
  }
  if (base == "aten::__derive_index" && args.size() == 3 && args[0]->k == Val::K::Int && args[1]->k == Val::K::Int &&
      args[2]->k == Val::K::Int) {
    int64_t r = 0;
    if (__builtin_mul_overflow(args[0]->i, args[2]->i, &r) || __builtin_add_overflow(r, args[1]->i, &r))
      throw Error(where_ + ": range index overflows int64");
    return make_int(r);  // start + index * step
  }
  if (base == "aten::__contains__" && args.size() == 2 && args[0]->k == Val::K::Tuple && !args[0]->keys.empty() && args[1]->k == Val::K::Str)
    return make_bool(std::find(args[0]->keys.begin(), args[0]->keys.end(), args[1]->s) != args[0]->keys.end());  // k in dict
  if (base == "aten::__contains__" && args.size() == 2 && is_seq(*args[0])) {
    const Val& x = *args[1];
    for (const auto& e : args[0]->items) {
      if (e->k != x.k) continue;
      if ((x.k == Val::K::Str && e->s == x.s) || (x.k == Val::K::Int && e->i == x.i) ||
          (x.k == Val::K::Float && e->f == x.f) || (x.k == Val::K::Bool && e->b == x.b))
        return make_bool(true);
    }
    return make_bool(false);
  }
  if (base == "aten::format" && !args.empty() && args[0]->k == Val::K::Str) return make_str(args[0]->s);
  // string (in)equality: torch.nn.functional's scripted code tests its mode arguments
  if ((base == "aten::eq" || base == "aten::ne") && args.size() == 2 && args[0]->k == Val::K::Str && args[1]->k == Val::K::Str)
    return make_bool((args[0]->s == args[1]->s) == (base == "aten::eq"));
  // list (in)equality of numbers (aten::eq.int_list: scripted size checks such as target.size() == input.size())
  if ((base == "aten::eq" || base == "aten::ne") && args.size() == 2 && is_seq(*args[0]) && is_seq(*args[1])) {
    bool same = args[0]->items.size() == args[1]->items.size();
    for (size_t i = 0; same && i < args[0]->items.size(); ++i) {
      const Val &p = *args[0]->items[i], &q = *args[1]->items[i];
      if (p.k == Val::K::Int && q.k == Val::K::Int) same = p.i == q.i;
      else if (p.k == Val::K::Float && q.k == Val::K::Float) same = p.f == q.f;
      else if (p.k == Val::K::Bool && q.k == Val::K::Bool) same = p.b == q.b;
      else if (p.k == Val::K::Str && q.k == Val::K::Str) same = p.s == q.s;
      else return std::nullopt;  // tensors, nested lists: not a builtin comparison
    }
    return make_bool(same == (base == "aten::eq"));
  }
  if (base == "aten::warn") return make_none();
  // dict(list of (key, value) pairs) with string keys (torchvision's backbones: an OrderedDict of
  // the feature maps), d.values(), d.keys()
  if (base == "aten::dict" && args.size() == 1 && is_seq(*args[0])) {
    std::vector<VRef> items;
    std::vector<std::string> keys;
    for (const VRef& p : args[0]->items) {
      if (!is_seq(*p) || p->items.size() != 2 || p->items[0]->k != Val::K::Str) throw Unsupported(where_ + ": dict() of " + describe(*p));
      auto it = std::find(keys.begin(), keys.end(), p->items[0]->s);
      if (it != keys.end()) {
        items[static_cast<size_t>(it - keys.begin())] = p->items[1];
        continue;
      }
      keys.push_back(p->items[0]->s);
      items.push_back(p->items[1]);
    }
    VRef d = make_list(std::move(items), Val::K::Tuple);
    d->keys = std::move(keys);
    return d;
  }
  if (base == "aten::values" && args.size() == 1 && args[0]->k == Val::K::Tuple && args[0]->keys.size() == args[0]->items.size())
    return make_list(args[0]->items);
  if (base == "aten::keys" && args.size() == 1 && args[0]->k == Val::K::Tuple && args[0]->keys.size() == args[0]->items.size()) {
    std::vector<VRef> ks;
    for (const auto& k : args[0]->keys) ks.push_back(make_str(k));
    return make_list(std::move(ks));
  }
  return std::nullopt;
}

}  // namespace amanda::torchscript
