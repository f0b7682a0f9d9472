// The libtorch-free TorchScript importer (importer.h): run() and the entry points; the parts are
// listed in importer_state.h.
#include "frameworks/torchscript/importer.h"
#include "frameworks/torchscript/importer_state.h"
#include "amanda/support/gate.h"

#include <set>

namespace amanda::torchscript {

void Importer::run() {
  find_prefix();
  std::string_view data = zip_.read(prefix_ + "data.pkl");
  PyRef root = unpickle(data, zip_.path() + ":" + prefix_ + "data.pkl");
  pickles_.push_back(root);
  if (const ZipEntry* c = zip_.find(prefix_ + "constants.pkl")) {
    PyRef consts = unpickle(zip_.data(*c), zip_.path() + ":" + prefix_ + "constants.pkl");
    pickles_.push_back(consts);
    VRef t = convert(consts, "constants/", "CONSTANTS", 0);
    if (t->k != Val::K::Tuple && t->k != Val::K::List) throw Error(zip_.path() + ": constants.pkl does not hold a tuple");
    constants_ = t->items;
    for (size_t k = 0; k < constants_.size(); ++k)
      if (constants_[k]->is_tensor() && constants_[k]->name.empty()) constants_[k]->name = "CONSTANTS.c" + std::to_string(k);
  }
  VRef module = convert(root, "data/", "", 0);
  if (module->k != Val::K::Object) throw Error(zip_.path() + ": data.pkl does not hold a module object");

  for (const auto& op : ns_.ops) {
    const std::string& t = op->type;
    overloads_[t.substr(0, t.find('.'))].push_back(op.get());
  }

  OpId root_graph = g_.root();
  g_.set_graph_namespace(root_graph, g_.sym(ns_.name));
  std::string gname = prefix_.empty() ? "module" : prefix_.substr(0, prefix_.size() - 1);
  g_.set_name(root_graph, g_.sym(gname));
  g_.set_attr(root_graph, g_.sym("producer_name"), Value("amanda"));
  g_.set_attr(root_graph, g_.sym("producer_version"), Value("torchscript import without libtorch"));

  const ClassDef* cls = find_class(module->obj->cls);
  const FunctionDef* fwd = method(*cls, "forward", module->obj->cls);
  if (fwd->params.empty()) throw Error(where_of(*fwd) + ": forward() has no self");
  size_t n_in = fwd->params.size() - 1;
  // Trailing inputs with a default (detection models' `targets: Optional[...] = None`) may be
  // left out: they take their default, as torch.onnx.export's example inputs leave them out.
  while (n_in > o_.input_shapes.size() && fwd->params[n_in].default_value) --n_in;
  if (o_.input_shapes.empty() && n_in > 0)
    throw Unsupported("no --input-shape given (the libtorch-free reader specializes shapes)");
  if (o_.input_shapes.size() != n_in)
    throw Error(zip_.path() + ": forward() takes " + std::to_string(n_in) + " inputs, " +
                std::to_string(o_.input_shapes.size()) + " --input-shape given");
  if (!o_.input_dtypes.empty() && o_.input_dtypes.size() != n_in)
    throw Error(zip_.path() + ": forward() takes " + std::to_string(n_in) + " inputs, " +
                std::to_string(o_.input_dtypes.size()) + " --input-type given (one for all, or one per input)");
  std::vector<VRef> args{module};
  for (size_t k = 0; k < n_in; ++k) {
    const Param& p = fwd->params[k + 1];
    // A List[Tensor] input (detection models' images) takes one --input-shape: a list of one
    // tensor, as torch.onnx.export flattens an example list of one image.
    bool list = p.type == "List[Tensor]";
    if (!p.type.empty() && p.type != "Tensor" && !list)
      throw Unsupported(where_of(*fwd) + ": forward() input " + p.name + " of type " + p.type + " (only tensors and List[Tensor])");
    std::vector<int64_t> in_shape = o_.input_shapes[k];
    for (int64_t& d : in_shape)
      if (d < 0) {  // a symbolic dimension: its stand-in number
        size_t idx = static_cast<size_t>(-1 - d);
        if (idx >= o_.dim_names.size() || idx >= 64) throw Error(zip_.path() + ": --input-shape number " + std::to_string(k + 1) + ": a symbolic dimension without a name");
        d = kSymbolBase + kSymbolStep * static_cast<int64_t>(idx);
        symbolic_ = true;
      }
    for (int64_t d : in_shape)
      if (d < 0 || d > (int64_t(1) << 40)) throw Error(zip_.path() + ": --input-shape number " + std::to_string(k + 1) + ": size " + std::to_string(d) + " is out of range (0 to 2^40)");
    numel(in_shape);  // throws when the element count overflows
    auto dt = ir::dtype_from_name(o_.dtype_of_input(k));
    if (!dt) throw Error("unknown input element type " + o_.dtype_of_input(k));
    VRef v = make_symbolic(*dt, in_shape);
    v->alias = std::make_shared<Alias>();
    PortId port = g_.add_port(root_graph, ir::PortDir::In, g_.sym(unique(p.name)));
    g_.set_attr(port, g_.sym("graph_input"), Value(true));
    set_type(port, *v, true);
    v->port = port;
    v->name = p.name;
    args.push_back(list ? make_list({v}) : v);
  }
  VRef out = call_function(*fwd, cls_file_, args, {}, "forward");
  // Tuples, lists and dicts (their values) of tensors, nested (a detection model's (losses,
  // [{"boxes", "scores", "labels"}])), flattened in order, as torch.onnx.export flattens them
  std::vector<VRef> outs;
  std::function<void(const VRef&, int)> flatten = [&](const VRef& v, int depth) {
    if ((v->k == Val::K::Tuple || v->k == Val::K::List) && depth < 8) {
      for (const VRef& x : v->items) flatten(x, depth + 1);
      return;
    }
    outs.push_back(v);
  };
  flatten(out, 0);
  std::set<std::string> taken;  // a value returned twice (`return (y, y)`) gives two outputs: name.1, ...
  for (size_t k = 0; k < outs.size(); ++k) {
    const VRef& v = outs[k];
    if (!v->is_tensor() || !v->defined) throw Unsupported("forward() returns " + describe(*v) + " (only tensors)");
    // A graph output is named like the value it reads (ONNX names both alike).
    PortId src = port_of(*v);
    const Value* vn = g_.attr(src, g_.sym("@value"));
    std::string base = vn && vn->is_string() ? vn->as_string() : std::string(g_.port_name_str(src));
    std::string name = base;
    for (int j = 1; !taken.insert(name).second; ++j) name = base + "." + std::to_string(j);
    PortId port = g_.add_port(root_graph, ir::PortDir::Out, g_.sym(name));
    set_type(port, *v, true);
    g_.connect(src, port);
  }
}

// The dim_param of a size computed from symbolic dimensions.
Value Importer::dim_value(int64_t d) const {
  if (!is_sym(d)) return Value(d);
  for (size_t k = 0; k < o_.dim_names.size() + scan_dims_.size(); ++k) {
    int64_t sv = kSymbolBase + kSymbolStep * static_cast<int64_t>(k);
    const std::string& n = k < o_.dim_names.size() ? o_.dim_names[k] : scan_dims_[k - o_.dim_names.size()];
    if (d == sv) return Value(n);
    if (d % sv == 0) return Value(std::to_string(d / sv) + "*" + n);
    if (d > sv - 1000 && d < sv + 1000) return Value(n + (d > sv ? "+" : "-") + std::to_string(d > sv ? d - sv : sv - d));
  }
  return Value("sym" + std::to_string(d));
}

bool Importer::has_dyn(const Val& v) const {
  if (v.k == Val::K::Int) return v.dyn != nullptr;
  if (v.k == Val::K::List || v.k == Val::K::Tuple)
    for (const auto& x : v.items)
      if (has_dyn(*x)) return true;
  return false;
}

std::string Importer::sym_name_of(int64_t d) const {
  Value v = dim_value(d);
  return v.is_string() ? v.as_string() : std::to_string(d);
}

// A 0-d int64 tensor of an Int (its run-time value when it has one).
VRef Importer::int_tensor(const Val& v) {
  if (v.k == Val::K::Int && v.dyn) return v.dyn;
  if (v.is_tensor()) return std::make_shared<Val>(v);
  return make_known(DType::Int64, {}, {number_of(v, where_)});
}

// Ops on sizes computed from symbolic dimensions: they stay graph ops (Shape, Gather, Mul, ...),
// as torch.onnx.export with dynamic_axes makes them. nullopt: the ordinary path.
std::optional<VRef> Importer::symbolic_call(const std::string& base, const std::vector<VRef>& args) {
  if (base == "aten::size" && !args.empty() && args[0]->is_tensor() && !args[0]->known && args[0]->shape_known) {
    const Val& x = *args[0];
    auto dim_of = [&](size_t d) -> VRef {
      if (!is_sym(x.shape[d])) return make_int(x.shape[d]);
      in_symbolic_ = true;
      VRef shp = call_op("aten::_shape_as_tensor", {args[0]}, {});
      VRef g = call_op("aten::select", {shp, make_int(0), make_int(static_cast<int64_t>(d))}, {});
      in_symbolic_ = false;
      g->dtype = DType::Int64, g->shape = {}, g->shape_known = true;
      g->has_hint = true, g->hint = x.shape[d];
      set_type(g->port, *g, false);
      VRef r = make_int(x.shape[d]);
      r->dyn = g;
      return r;
    };
    if (args.size() == 2 && args[1]->k == Val::K::Int) {
      int64_t r = static_cast<int64_t>(x.shape.size()), d = args[1]->i < 0 ? args[1]->i + r : args[1]->i;
      if (d < 0 || d >= r) return std::nullopt;
      return dim_of(static_cast<size_t>(d));
    }
    if (args.size() == 1) {
      std::vector<VRef> items;
      for (size_t d = 0; d < x.shape.size(); ++d) items.push_back(dim_of(d));
      return make_list(std::move(items));
    }
    return std::nullopt;
  }
  // numel(x) of a symbolic shape: the product of its sizes
  if (base == "aten::numel" && args.size() == 1 && args[0]->is_tensor() && !args[0]->known && args[0]->shape_known) {
    bool sym = false;
    for (int64_t d : args[0]->shape) sym |= is_sym(d);
    if (!sym) return std::nullopt;
    VRef n = make_int(1);
    for (size_t d = 0; d < args[0]->shape.size(); ++d) {
      VRef s = *symbolic_call("aten::size", {args[0], make_int(static_cast<int64_t>(d))});
      n = n->dyn || s->dyn ? *symbolic_call("aten::mul", {n, s}) : make_int(n->i * s->i);
    }
    return n;
  }
  // min / max of sizes: the graph's Min / Max, the result a new symbolic size (neither stand-in
  // says which one it is at run time)
  if ((base == "prim::min" || base == "prim::max") && args.size() == 2 && args[0]->k == Val::K::Int && args[1]->k == Val::K::Int &&
      (args[0]->dyn || args[1]->dyn)) {
    in_symbolic_ = true;
    VRef t = call_op(base == "prim::min" ? "aten::minimum" : "aten::maximum", {int_tensor(*args[0]), int_tensor(*args[1])}, {});
    in_symbolic_ = false;
    VRef r = make_int(new_run_time_dim());
    t->has_hint = true, t->hint = r->i;
    r->dyn = t;
    return r;
  }
  // Once a size known only at run time exists, comparisons of sizes are graph ops (an `if` on
  // one is an If on data); before, the stand-in numbers decide (see docs/pytorch.md).
  static const std::set<std::string> comparisons{"aten::eq", "aten::ne", "aten::lt", "aten::le", "aten::gt", "aten::ge"};
  if (run_time_dims_ > 0 && comparisons.count(base) && args.size() == 2 && args[0]->k == Val::K::Int && args[1]->k == Val::K::Int &&
      (args[0]->dyn || args[1]->dyn)) {
    std::vector<VRef> nums;
    for (const auto& a : args) {
      VRef n = make_int(a->i);
      if (a->dyn) n->data = a->dyn;
      nums.push_back(n);
    }
    return data_number_op(base, nums);
  }
  if ((base == "aten::Int" || base == "aten::ScalarImplicit") && args.size() == 1 && args[0]->is_tensor() && args[0]->has_hint) {
    VRef r = make_int(args[0]->hint);
    r->dyn = args[0];
    return r;
  }
  static const std::map<std::string, std::string> arith{{"aten::add", "aten::add"}, {"aten::sub", "aten::sub"},
                                                       {"aten::mul", "aten::mul"}, {"aten::floordiv", "aten::floor_divide"},
                                                       {"aten::floor_divide", "aten::floor_divide"}, {"aten::__floordiv__", "aten::floor_divide"}};
  bool dyn = false, hinted = false;
  for (const auto& a : args) {
    dyn |= a->k == Val::K::Int && a->dyn;
    hinted |= a->is_tensor() && a->has_hint;
  }
  if (!dyn && !hinted) return std::nullopt;
  auto it = arith.find(base);
  if (it != arith.end() && args.size() == 2) {
    // the stand-in numbers give the result's stand-in; the graph computes the real one
    std::vector<VRef> nums;
    for (const auto& a : args) {
      if (a->k == Val::K::Int || a->k == Val::K::Float) nums.push_back(a);
      else if (a->is_tensor() && a->has_hint) nums.push_back(make_int(a->hint));
      else if (a->is_known_tensor() && numel(a->shape) == 1 && !is_float_type(a->dtype)) nums.push_back(make_int(to_int64(elements(*a)[0], where_)));
      else return std::nullopt;
    }
    auto num = scalar_op(it->first == "aten::floor_divide" ? "aten::floordiv" : it->first, nums, where_);
    if (!num || (*num)->k != Val::K::Int) throw Unsupported(where_ + ": " + base + " of a size computed from a symbolic dimension (" + sym_name_of(nums[0]->i) + ") that is not an integer; give --input-shape a number");
    in_symbolic_ = true;
    VRef t = call_op(it->second, {int_tensor(*args[0]), int_tensor(*args[1])}, {});
    in_symbolic_ = false;
    t->has_hint = true, t->hint = (*num)->i;
    if (dyn) {
      VRef r = make_int((*num)->i);
      r->dyn = t;
      return r;
    }
    return t;
  }
  return std::nullopt;
}

text::Document import_archive(const std::string& path, const torch_frontend::ImportOptions& o,
                              const schema::NamespaceSchema& ns, std::vector<std::string>* shape_gaps) {
  return import_archive(ReadGate(path).map_model(), path, o, ns, shape_gaps);
}

text::Document import_archive(std::shared_ptr<const Buffer> bytes, const std::string& name,
                              const torch_frontend::ImportOptions& o, const schema::NamespaceSchema& ns,
                              std::vector<std::string>* shape_gaps) {
  ZipArchive zip(std::move(bytes), name);
  text::Document doc;
  Importer imp(zip, ns, o, doc);
  imp.run();
  if (shape_gaps) shape_gaps->assign(imp.gaps_.begin(), imp.gaps_.end());
  return doc;
}

}  // namespace amanda::torchscript
