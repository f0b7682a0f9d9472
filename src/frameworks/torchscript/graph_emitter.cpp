// Op calls: the schema overload the arguments fit, folding, and the typed graph op.
#include "frameworks/torchscript/importer_state.h"

namespace amanda::torchscript {

namespace {

std::string strip_alias(std::string_view t) {
  std::string out;
  int depth = 0;
  for (char c : t) {
    if (c == '(') ++depth;
    else if (c == ')') --depth;
    else if (depth == 0) out += c;
  }
  return out;
}

// How well a value fits a schema type: 0 = not at all, higher = more exactly.
int fits(const Val& v, std::string_view type) {
  if (type.empty()) return 0;
  if (type.back() == '?') {
    if (v.k == Val::K::None) return 2;
    return fits(v, type.substr(0, type.size() - 1));
  }
  if (v.k == Val::K::None) return 0;
  if (type.back() == ']') {
    size_t open = type.rfind('[');
    if (open == std::string_view::npos) return 0;
    std::string_view elem = type.substr(0, open);
    bool fixed = open + 2 < type.size();  // int[2]: a single int is repeated
    if (fixed && v.k == Val::K::Int && (elem == "int" || elem == "SymInt")) return 1;
    if (v.k != Val::K::List && v.k != Val::K::Tuple) return 0;
    int worst = 3;
    for (const auto& x : v.items) worst = std::min(worst, fits(*x, elem));
    return worst;
  }
  if (type == "Tensor") return v.is_tensor() ? 3 : 0;
  if (type == "Scalar") return v.k == Val::K::Int || v.k == Val::K::Float || v.k == Val::K::Bool ? 1 : 0;
  if (type == "int" || type == "SymInt") return v.k == Val::K::Int ? 3 : v.k == Val::K::Bool ? 1 : 0;
  if (type == "float") return v.k == Val::K::Float ? 3 : v.k == Val::K::Int ? 1 : 0;
  if (type == "bool") return v.k == Val::K::Bool ? 3 : 0;
  if (type == "number") return v.k == Val::K::Int || v.k == Val::K::Float ? 2 : 0;
  if (type == "str") return v.k == Val::K::Str ? 3 : 0;
  if (type == "Device") return v.k == Val::K::Device ? 3 : v.k == Val::K::Str ? 1 : 0;
  if (type == "ScalarType" || type == "Layout" || type == "MemoryFormat") return v.k == Val::K::Int ? 2 : 0;
  if (type == "Any" || type == "t") return 1;
  return 0;
}

VRef from_value(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::Null: return make_none();
    case Value::Kind::Bool: return make_bool(v.as_bool());
    case Value::Kind::Int: return make_int(v.as_int());
    case Value::Kind::Float: return make_float(v.as_float());
    case Value::Kind::String: return make_str(v.as_string());
    case Value::Kind::List: {
      std::vector<VRef> items;
      for (const Value& x : v.as_list()) items.push_back(from_value(x));
      return make_list(std::move(items));
    }
    default: throw Unsupported("a schema default of an unexpected kind");
  }
}

// A constant argument as an attribute value (prim::Constant's `value`).
Value to_value(const Val& v, const std::string& where) {
  switch (v.k) {
    case Val::K::None: return Value();
    case Val::K::Bool: return Value(v.b);
    case Val::K::Int: return Value(v.i);
    case Val::K::Float: return Value(v.f);
    case Val::K::Str:
    case Val::K::Device: return Value(v.s);
    case Val::K::List:
    case Val::K::Tuple: {
      Value::List l;
      for (const auto& x : v.items) l.push_back(to_value(*x, where));
      return Value(std::move(l));
    }
    default: throw Unsupported(where + ": a constant argument of kind " + kind_name(v));
  }
}

std::string torch_type_of(const Val& v) {
  switch (v.k) {
    case Val::K::None: return "NoneType";
    case Val::K::Bool: return "bool";
    case Val::K::Int: return "int";
    case Val::K::Float: return "float";
    case Val::K::Str: return "str";
    case Val::K::Device: return "Device";
    case Val::K::List: {
      if (v.items.empty()) return "List[int]";
      std::string e = torch_type_of(*v.items[0]);
      return "List[" + e + "]";
    }
    case Val::K::Tuple: {
      std::string s = "Tuple[";
      for (size_t k = 0; k < v.items.size(); ++k) s += (k ? ", " : "") + torch_type_of(*v.items[k]);
      return s + "]";
    }
    case Val::K::Tensor: return "Tensor";
    default: return "Any";
  }
}

}  // namespace

VRef Importer::call_op(const std::string& base, const std::vector<VRef>& args,
             const std::vector<std::pair<std::string, VRef>>& kwargs) {
  // x.select(dim, i) with i a number the graph computes (a loop's iteration number): index_select
  // of [i], the dimension squeezed
  if (base == "aten::select" && args.size() == 3 && args[0]->is_tensor() && args[1]->k == Val::K::Int && !args[1]->data &&
      args[2]->k == Val::K::Int && args[2]->data) {
    VRef i = call_op("aten::unsqueeze", {args[2]->data, make_int(0)}, {});
    VRef y = call_op("aten::index_select", {args[0], args[1], i}, {});
    VRef r = call_op("aten::squeeze", {y, args[1]}, {});
    // A gather, not a view, in the graph: a write through it (`x[i] = v`) would be lost, so it
    // shares the tensor's alias record and such a write makes later reads of the tensor refused.
    if (!args[0]->alias) args[0]->alias = std::make_shared<Alias>();
    r->alias = args[0]->alias;
    r->version = r->alias->version;
    r->seen_piece_writes = r->alias->piece_writes;
    r->piece = args[0]->piece;
    r->piece_version = args[0]->piece_version;
    return r;
  }
  if (auto r = run_time_size_call(base, args, kwargs)) return *r;
  if (auto r = advanced_index_call(base, args, kwargs)) return *r;
  for (const VRef& a : args)
    if (a->data) return data_number_op(base, args);
  if (!scanned_.empty())
    for (const VRef& a : args)
      if (auto it = scanned_.find(a.get()); it != scanned_.end()) {
        // torch.stack(l) / torch.stack(l, 0) is the scan output; torch.cat(l) / cat(l, 0) merges its first two axes.
        int64_t dim = args.size() > 1 && args[1]->k == Val::K::Int && !args[1]->data ? args[1]->i : args.size() > 1 ? -1 : 0;
        for (const auto& [n, v] : kwargs)
          if (n == "dim") dim = v->k == Val::K::Int && !v->data ? v->i : -1;
        if (a == args[0] && dim == 0 && base == "aten::stack") return it->second;
        if (a == args[0] && dim == 0 && base == "aten::cat" && it->second->shape.size() >= 2)
        {
          std::vector<VRef> shape{make_int(-1)};
          for (size_t k = 2; k < it->second->shape.size(); ++k) shape.push_back(make_int(it->second->shape[k]));
          return call_op("aten::reshape", {it->second, make_list(shape)}, {});
        }
        throw Unsupported(where_ + ": " + base + " of a list a loop on the input's values appended to (only torch.stack(l) and torch.cat(l) along dim 0)");
      }
  if (auto b = builtin(base, args)) return *b;
  if (symbolic_ && !in_symbolic_)
    if (auto r = symbolic_call(base, args)) return *r;
  auto it = overloads_.find(base);
  if (it == overloads_.end()) throw Unsupported(where_ + ": " + base + " is not an op of " + ns_.name);
  Match best;
  for (const schema::OpSchema* s : it->second) {
    Match m = match(*s, args, kwargs);
    if (m.op && (!best.op || m.score > best.score)) best = std::move(m);
  }
  if (!best.op) {
    // A traced graph passes sizes as 0-d tensors (prim::NumToTensor) where the schema takes a
    // number (torch.arange(x.size(1)) traced): known ones are read as their number.
    std::vector<VRef> nums = args;
    bool changed = false;
    for (auto& v : nums)
      if (v->is_tensor() && v->known && v->shape_known && v->shape.empty()) {
        double d = elements(*v).at(0);
        v = is_float_type(v->dtype) ? make_float(d) : v->dtype == ir::DType::Bool ? make_bool(d != 0) : make_int(to_int64(d, where_));
        changed = true;
      }
    if (changed)
      for (const schema::OpSchema* s : it->second) {
        Match m = match(*s, nums, kwargs);
        if (m.op && (!best.op || m.score > best.score)) best = std::move(m);
      }
  }
  if (!best.op) {
    std::string got;
    for (const auto& a : args) got += (got.empty() ? "" : ", ") + describe(*a);
    for (const auto& [n, a] : kwargs) got += (got.empty() ? "" : ", ") + n + "=" + describe(*a);
    throw Unsupported(where_ + ": no overload of " + base + " takes (" + got + ")");
  }
  const std::string& type = best.op->type;
  bool unknown = false;  // an input of unknown shape: the outputs' shapes are unknown too
  for (const auto& a : best.args) {
    if (a->is_tensor() && !a->shape_known) unknown = true;
    if (a->k == Val::K::List)
      for (const auto& x : a->items) unknown |= x->is_tensor() && !x->shape_known;
  }
  // Sizes computed from a symbolic dimension: only ops that take their list as a graph tensor
  // (reshape, view, expand) may have them, and nothing folds.
  bool dyn_args = false;
  for (const auto& a : best.args) dyn_args |= has_dyn(*a);
  if (dyn_args) {
    // (topk's k: a run-time k, TopK's K input)
    static const std::set<std::string> shape_takers{"aten::reshape", "aten::view", "aten::expand", "aten::topk",
                                                   "aten::zeros", "aten::ones", "aten::empty", "aten::full"};
    std::string b = type.substr(0, type.find('.'));
    if (!shape_takers.count(b))
      throw Unsupported(where_ + ": " + type + " takes a size computed from a symbolic dimension as a number (not supported for this op); give --input-shape a number for it");
  }
  std::optional<std::vector<OutInfo>> outs;
  // A folded result must not have a symbolic dimension (zeros_like(x) of a symbolic x): the
  // graph makes it instead.
  auto sym_result = [&](const std::vector<VRef>& r) {
    for (const auto& v : r)
      if (v->is_tensor())
        for (int64_t d : v->shape)
          if (is_sym(d)) return true;
    return false;
  };
  std::optional<std::vector<VRef>> folded;
  // (an op reading only the shape of a tensor with a symbolic dimension would fold a tensor of
  // the stand-in sizes: only the meta ops that give a number run)
  bool sym_arg = false;
  for (const auto& a : best.args)
    if (a->is_tensor() && a->shape_known)
      for (int64_t d : a->shape) sym_arg |= is_sym(d);
  static const std::set<std::string> meta{"aten::dim", "aten::is_floating_point", "aten::is_complex", "aten::size", "aten::numel", "aten::len"};
  if (!unknown && !dyn_args && (!sym_arg || meta.count(type.substr(0, type.find('.'))))) {
    folded = evaluate(type, best.args, where_ + ": " + type);
    if (folded && sym_result(*folded)) folded.reset();
  }
  if (!unknown && !dyn_args) {
    if (auto& r = folded) {
      // A folded view shares the memory of the known tensor it reads: an in-place write to it
      // cannot be made (the known tensor would keep its old values), so it stays refused.
      static const std::set<std::string> view_ops{
          "aten::slice", "aten::select", "aten::view", "aten::reshape", "aten::permute", "aten::transpose", "aten::unsqueeze",
          "aten::squeeze", "aten::expand", "aten::flatten", "aten::narrow", "aten::t", "aten::view_as", "aten::expand_as",
          "aten::reshape_as", "aten::unflatten", "aten::diagonal", "aten::as_strided", "aten::unfold", "aten::split",
          "aten::chunk", "aten::unbind", "aten::movedim", "aten::swapaxes", "aten::swapdims", "aten::split_with_sizes",
          "aten::unsafe_split", "aten::unsafe_chunk", "aten::tensor_split", "aten::squeeze_", "aten::unsqueeze_", "aten::index_select"};
      if (view_ops.count(type.substr(0, type.find('.')))) {
        const VRef& in = best.args[0];
        std::weak_ptr<Val> root;
        if (in->is_tensor() && in->known) root = in->folded_view && !in->view_root.expired() ? in->view_root : std::weak_ptr<Val>(in);
        for (auto& v : *r) {
          if (v->is_tensor()) v->folded_view = true, v->view_root = root;
          if (v->k == Val::K::List || v->k == Val::K::Tuple)
            for (auto& e : v->items)
              if (e->is_tensor()) e->folded_view = true, e->view_root = root;
        }
      }
      return pack(*r);
    }
    if (auto r = sym_arg ? std::nullopt : evaluate_creation(type, best.args, where_ + ": " + type); r && !sym_result(*r)) return pack(*r);
    if (auto d = decompose(type, best.args, [&](const std::string& b, std::vector<VRef> a) { return call_op(b, a, {}); })) {
      // chunk / split / unbind pieces do not overlap: each is a piece of the input's alias
      std::string b = type.substr(0, type.find('.'));
      static const std::set<std::string> disjoint{"aten::chunk", "aten::unsafe_chunk", "aten::split", "aten::unsafe_split",
                                                  "aten::split_with_sizes", "aten::unsafe_split_with_sizes", "aten::tensor_split", "aten::unbind"};
      if (disjoint.count(b) && ((*d)->k == Val::K::List || (*d)->k == Val::K::Tuple))
        for (auto& p : (*d)->items)
          if (p->is_tensor() && p->alias && !p->piece) {
            p->piece = std::make_shared<Alias>();
            p->piece_version = 0;
          }
      return *d;
    }
    outs = infer(type, best.args, where_ + ": " + type);
    if (!outs) outs = infer_more(type, best.args, where_ + ": " + type);
  } else if (!unknown) {
    outs = infer(type, best.args, where_ + ": " + type);
    if (!outs) outs = infer_more(type, best.args, where_ + ": " + type);
  }
  if (outs) {
    PortId mask;
    if (type == "aten::index.Tensor" && best.args[1]->k == Val::K::List && best.args[1]->items.size() == 1 &&
        best.args[1]->items[0]->is_tensor() && best.args[1]->items[0]->port &&
        (best.args[1]->items[0]->dtype == DType::Bool || best.args[1]->items[0]->dtype == DType::UInt8) &&
        !(*outs)[0].shape.empty() && (*outs)[0].shape[0] == kRunTimeDim) {
      mask = best.args[1]->items[0]->port;
      if (auto it = mask_dims_.find(mask); it != mask_dims_.end()) (*outs)[0].shape[0] = it->second;
    }
    resolve_run_time_dims(*outs);
    if (mask) mask_dims_[mask] = (*outs)[0].shape[0];
    // x[a:b] along a symbolic dimension with bounds that are numbers (keep[:300]): Slice clamps,
    // so the length is min(b, n) - a, known only at run time
    if (type == "aten::slice.Tensor" && outs->size() == 1 && best.args[0]->is_tensor() && best.args[1]->k == Val::K::Int) {
      const Val& x = *best.args[0];
      if (!x.shape.empty()) {
        size_t d = static_cast<size_t>(best.args[1]->i < 0 ? best.args[1]->i + static_cast<int64_t>(x.shape.size()) : best.args[1]->i);
        if (d < x.shape.size() && is_sym(x.shape[d]) && !is_sym((*outs)[0].shape[d])) (*outs)[0].shape[d] = new_run_time_dim();
      }
    }
  }
  if (!outs) {
    // No shape rule: the op still becomes a graph op (a conversion's report names it like any
    // other), its tensor outputs untyped; whatever needs their shapes later is Unsupported.
    for (const auto& p : best.op->outputs)
      if (strip_alias(p.type) != "Tensor")
        throw Unsupported(where_ + ": " + type + " has no shape rule in the libtorch-free reader");
    if (!unknown) gaps_.insert(type);
    outs.emplace(best.op->outputs.size(), OutInfo{});
    for (auto& o : *outs) o.shape_known = false;
  }
  if (!unknown)
    make_promotion_explicit(type, best.args, [&](const VRef& v, ir::DType t) {
      return call_op("aten::to", {v, make_int(scalar_type_code(t)), make_bool(false), make_bool(false)}, {});
    });
  return emit(*best.op, best.args, *outs);
}

Importer::Match Importer::match(const schema::OpSchema& s, const std::vector<VRef>& args,
            const std::vector<std::pair<std::string, VRef>>& kwargs) {
  Match m;
  const auto& ins = s.inputs;
  for (const auto& p : ins) {
    if (p.arity == schema::Arity::Variadic) return m;
    if (p.type.find('!') != std::string::npos && p.expected_name().value_or("") != "self") return m;  // out= variants
  }
  if (args.size() > ins.size()) return m;
  m.args.assign(ins.size(), nullptr);
  int score = 0;
  for (size_t k = 0; k < args.size(); ++k) m.args[k] = args[k];
  // aten's dtype/layout/device/pin_memory/memory_format arguments are keyword-only in most
  // schemas (`prod(Tensor self, *, ScalarType? dtype)`), which the namespace file does not
  // record: a positional number landing on one makes the overload a worse fit than one that
  // takes it positionally (`torch.prod(x, 1)` is prod.dim_int, `torch.eye(3, 4)` eye.m). So is
  // an `int? output_size` (repeat_interleave's: `torch.repeat_interleave(x, 3)` is .self_int, not
  // the indices form .Tensor(repeats, *, output_size); pooling's and upsampling's output_size
  // lists are positional).
  int keyword_only_penalty = 0;
  for (size_t k = 0; k < args.size(); ++k) {
    std::string n = ins[k].expected_name().value_or("");
    if (n == "dtype" || n == "layout" || n == "device" || n == "pin_memory" || n == "memory_format" ||
        (n == "output_size" && strip_alias(ins[k].type) == "int?"))
      keyword_only_penalty += 100;
  }
  for (const auto& [n, v] : kwargs) {
    size_t k = 0;
    while (k < ins.size() && ins[k].expected_name().value_or("") != n) ++k;
    if (k == ins.size() || m.args[k]) return m;
    m.args[k] = v;
  }
  for (size_t k = 0; k < ins.size(); ++k) {
    std::string t = strip_alias(ins[k].type);
    if (!m.args[k]) {
      const schema::AttrSchema* d = ins[k].attr("default");
      if (d) m.args[k] = from_value(d->type.value);
      else if (!t.empty() && t.back() == '?') m.args[k] = make_none();
      else return Match{};
      continue;
    }
    int f = fits(*m.args[k], t);
    if (!f) return Match{};
    score += f;
  }
  m.op = &s;
  m.score = score - keyword_only_penalty;
  return m;
}

std::string Importer::unique(std::string name) {
  if (name.empty()) name = "v";
  auto [it, fresh] = taken_.try_emplace(name, 0);
  if (fresh) return name;
  for (;;) {
    std::string n = name + "." + std::to_string(++it->second);
    if (taken_.try_emplace(n, 0).second) return n;
  }
}

// The port's TypeId is its type (a symbolic size is one of the graph's symbols, so `N` means
// one size throughout); write_type_attrs spells it as the `@type`/`@shape` (graph ports:
// `type`/`shape`) attributes that the text forms and the exporters show.
void Importer::set_type(PortId p, const Val& v, bool /*graph_port: write_type_attrs asks the graph*/) {
  if (!v.defined || !v.shape_known) return;
  std::vector<ir::Dim> dims;
  dims.reserve(v.shape.size());
  for (int64_t d : v.shape) {
    Value n = dim_value(d);
    dims.push_back(n.is_string() ? ir::Dim::symbol(g_.sym(n.as_string())) : d < 0 ? ir::Dim::unknown() : ir::Dim::known(d));
  }
  ir::write_type_attrs(g_, p, g_.types().tensor(v.dtype, dims));
}

PortId Importer::port_of(Val& v) {
  if (v.alias && (v.version != v.alias->version || (v.piece ? v.piece_version != v.piece->version : v.seen_piece_writes != v.alias->piece_writes)))
    throw Unsupported(where_ + ": a tensor read after an in-place op" + (v.alias->writer.empty() ? std::string() : " (" + v.alias->writer + ")") +
                      " wrote a tensor it shares memory with (a view): not supported");
  if (v.port) return v.port;
  if (!v.known) throw Error(where_ + ": internal: a tensor with no graph value");
  OpId root = g_.root();
  PortId p = g_.add_port(root, ir::PortDir::In, g_.sym(unique(v.name.empty() ? "constant" : v.name)));
  g_.set_attr(p, g_.sym("graph_input"), Value(false));
  g_.set_attr(p, g_.sym("initializer"), Value(to_ir_tensor(v)));
  v.port = p;
  return p;
}

// A number that stands in for a symbolic dimension must not become a constant.
void Importer::check_no_symbol(const Val& v, const std::string& op) const {
  if (!symbolic_) return;
  if (v.k == Val::K::Int && is_sym(v.i))
    throw Unsupported(where_ + ": " + op + " takes the size " + sym_name_of(v.i) + " (from a symbolic dimension) as a constant; give --input-shape a number for it");
  if (v.k == Val::K::List || v.k == Val::K::Tuple)
    for (const auto& x : v.items) check_no_symbol(*x, op);
}

PortId Importer::constant(const Val& v) {
  Budget::run().charge(BudgetKind::Ops, 1, where_);
  OpId op = new_op(g_.sym("prim::Constant"));
  g_.set_attr(op, g_.sym("value"), to_value(v, where_));
  PortId out = g_.add_output(op, g_.sym("output"));
  g_.set_attr(out, g_.sym("@value"), Value(unique("const")));
  g_.set_attr(out, g_.sym("@torch_type"), Value(torch_type_of(v)));
  return out;
}

VRef Importer::emit(const schema::OpSchema& s, const Args& args, const std::vector<OutInfo>& outs) {
  Budget::run().charge(BudgetKind::Ops, 1, where_);
  OpId op = new_op(g_.sym(s.type));
  for (size_t k = 0; k < s.inputs.size(); ++k) {
    PortId in = g_.add_input(op, g_.sym(s.inputs[k].expected_name().value_or("input." + std::to_string(k))));
    Val& a = *args[k];
    if (a.k == Val::K::None) continue;
    if (a.is_tensor()) {
      if (!a.defined) throw Unsupported(where_ + ": an undefined tensor as an input of " + s.type);
      g_.connect(visible(port_of(a)), in);
      continue;
    }
    if (a.data) {  // a number the graph computes (an op with a const: rule will be reported)
      g_.connect(visible(port_of(*a.data)), in);
      continue;
    }
    if (a.k == Val::K::Int && a.dyn) {  // a size known at run time (topk's k): its 0-d int64 graph value
      g_.connect(visible(port_of(*a.dyn)), in);
      continue;
    }
    if (a.k == Val::K::List && has_dyn(a)) {
      // sizes computed from symbolic dimensions: an int64 tensor made in the graph
      bool expand = s.type.rfind("aten::expand", 0) == 0;
      std::vector<VRef> parts;
      in_symbolic_ = true;
      for (const auto& x : a.items) {
        if (x->k == Val::K::Int && x->dyn) parts.push_back(call_op("aten::unsqueeze", {x->dyn, make_int(0)}, {}));
        else if (x->k == Val::K::Int) parts.push_back(make_known(DType::Int64, {1}, {static_cast<double>(expand && x->i == -1 ? 1 : x->i)}));  // Expand keeps a dimension where the shape has 1
        else throw Unsupported(where_ + ": " + s.type + ": a size list with " + describe(*x));
      }
      VRef t = call_op("aten::cat", {make_list(parts), make_int(0)}, {});
      in_symbolic_ = false;
      g_.connect(visible(port_of(*t)), in);
      continue;
    }
    bool tensors = false;
    if (a.k == Val::K::List)
      for (const auto& x : a.items) tensors |= x->is_tensor();
    if (tensors) {
      Budget::run().charge(BudgetKind::Ops, 1, where_);
      OpId list = new_op(g_.sym("prim::ListConstruct"));
      for (size_t e = 0; e < a.items.size(); ++e) {
        PortId ep = g_.add_input(list, g_.sym("elements." + std::to_string(e)));
        if (a.items[e]->is_tensor()) g_.connect(visible(port_of(*a.items[e])), ep);
        else if (a.items[e]->k != Val::K::None) throw Unsupported(where_ + ": a list of tensors and " + describe(*a.items[e]));
      }
      PortId lo = g_.add_output(list, g_.sym("output"));
      g_.set_attr(lo, g_.sym("@value"), Value(unique("list")));
      g_.set_attr(lo, g_.sym("@torch_type"), Value("List[Tensor]"));
      g_.connect(lo, in);
      continue;
    }
    if (a.k == Val::K::List || a.k == Val::K::Tuple)
      for (const auto& x : a.items)
        if (x && x->data)  // e.g. pad sizes read from input tensors: a constant would hold the stand-in
          throw Unsupported(where_ + ": " + s.type + " takes a list holding a number computed from the inputs' values (not supported)");
    check_no_symbol(a, s.type);
    g_.connect(constant(a), in);
  }
  if (s.outputs.size() != outs.size()) throw Error(where_ + ": " + s.type + ": the shape rule gives the wrong number of outputs");
  std::vector<VRef> results;
  std::string base = hint_.empty() ? s.type.substr(s.type.find("::") + 2, s.type.find('.') - s.type.find("::") - 2) : hint_;
  // In place: the name ends with '_' (`add_`, `add_.Tensor`); the dunder ops (`__and__`,
  // `__xor__`, `__lshift__`) are not, except their `__i..__` forms (`__iand__`).
  std::string op_name = s.type.substr(s.type.find("::") == std::string::npos ? 0 : s.type.find("::") + 2);
  op_name = op_name.substr(0, op_name.find('.'));
  bool dunder = op_name.size() > 4 && op_name.starts_with("__") && op_name.ends_with("__");
  bool in_place = dunder ? op_name.starts_with("__i") && op_name != "__is__" && op_name != "__isnot__"
                         : !op_name.empty() && op_name.back() == '_';
  // Ops whose result may share the input's memory (views; dropout in eval mode returns its input).
  static const std::set<std::string> views{
      "aten::slice", "aten::select", "aten::view", "aten::reshape", "aten::permute", "aten::transpose",
      "aten::unsqueeze", "aten::squeeze", "aten::expand", "aten::flatten", "aten::narrow", "aten::t",
      "aten::contiguous", "aten::detach", "aten::alias", "aten::view_as", "aten::expand_as",
      "aten::reshape_as", "aten::unflatten", "aten::dropout", "aten::feature_dropout", "aten::alpha_dropout",
      "aten::diagonal", "aten::as_strided", "aten::unfold", "aten::split", "aten::chunk", "aten::unbind"};
  bool view = views.count(s.type.substr(0, s.type.find('.'))) && !args.empty() && args[0]->is_tensor() && !args[0]->known;
  for (size_t k = 0; k < outs.size(); ++k) {
    PortId out = g_.add_output(op, g_.sym(s.outputs[k].expected_name().value_or("result" + std::to_string(k))));
    VRef v = make_symbolic(outs[k].dtype, outs[k].shape);
    v->defined = outs[k].defined;
    v->shape_known = outs[k].shape_known;
    // A view of a tensor that had no alias record yet (a graph input) starts one, so that a write
    // through the view makes later reads of the tensor refused (`x[i] = v` with a computed i:
    // the write was lost, a wrong number).
    if (view && !args[0]->alias) args[0]->alias = std::make_shared<Alias>();
    if (view && args[0]->alias) {
      v->alias = args[0]->alias;
      v->version = v->alias->version;
      v->seen_piece_writes = v->alias->piece_writes;
      v->piece = args[0]->piece;
      v->piece_version = args[0]->piece_version;
    } else {
      v->alias = std::make_shared<Alias>();
    }
    g_.set_attr(out, g_.sym("@value"), Value(unique(outs.size() == 1 ? base : base + "." + std::to_string(k))));
    set_type(out, *v, false);
    v->port = out;
    results.push_back(v);
  }
  if (in_place && !args.empty() && args[0]->is_tensor() && results.size() == 1) {
    // The op wrote its first argument: every later use of that tensor reads the op's output.
    Val& self = *args[0];
    // A known tensor written with graph values (embedding's max_norm renormalises the weight's
    // rows that the indices read): from here on it is the op's output; the op read the value
    // before the write as its input.
    if (self.known && self.folded_view) {
      // A write that replaces every element of the tensor the view reads, in its order (a
      // select/slice chain covering it, batch_images' copy into the padded batch of one image):
      // that tensor becomes the op's result, reshaped. Any other write through a view is refused.
      VRef root = self.view_root.lock();
      bool whole = root && root->known && root->known->st == self.known->st && !root->folded_view &&
                   root->known->offset == 0 && root->known->strides == contiguous_strides(root->shape) &&
                   static_cast<size_t>(numel(root->shape)) == root->known->st->count && self.known->offset == 0 &&
                   self.known->strides == contiguous_strides(self.shape) && numel(self.shape) == numel(root->shape) &&
                   bodies_.empty();
      if (!whole) throw Unsupported(where_ + ": " + s.type + " writes a view of a folded tensor (the write would not reach it)");
      std::vector<VRef> dims;
      for (int64_t d : root->shape) dims.push_back(make_int(d));
      VRef whole_value = call_op("aten::reshape", {results[0], make_list(dims)}, {});
      self.known->st->overwritten = true;
      self.known->st->overwritten_by = s.type;
      auto alias = std::make_shared<Alias>();
      for (Val* v : {root.get(), &self}) {
        v->known = nullptr;
        v->folded_view = false;
        v->view_root.reset();
        v->alias = alias;
        v->version = alias->version;
      }
      root->port = whole_value->port;
      self.port = results[0]->port;
      self.dtype = results[0]->dtype;
      // (self and root share memory in torch; here a later in-place write to one is refused as for views)
      self.alias = std::make_shared<Alias>();
      return args[0];
    }
    if (self.known) {
      // Other known tensors may share its storage (views folded before the write: `z = x[0];
      // x.add_(u)`): they would keep the old numbers, so reading them is refused from here on.
      self.known->st->overwritten = true;
      self.known->st->overwritten_by = s.type;
      self.known = nullptr;
    }
    if (!bodies_.empty() && (!self.port || scope_of(self.port) != scope()))
      throw Unsupported(where_ + ": " + s.type + " inside an if or loop on data writes a tensor from outside it (not supported)");
    self.port = results[0]->port;
    self.dtype = results[0]->dtype;
    self.shape = results[0]->shape;
    self.shape_known = results[0]->shape_known;
    if (!self.alias) self.alias = std::make_shared<Alias>();
    self.alias->writer = s.type;
    if (self.piece) {
      self.piece_version = ++self.piece->version;
      ++self.alias->piece_writes;
    } else {
      self.version = ++self.alias->version;
      self.seen_piece_writes = self.alias->piece_writes;
    }
    return args[0];
  }
  return pack(results);
}

}  // namespace amanda::torchscript
