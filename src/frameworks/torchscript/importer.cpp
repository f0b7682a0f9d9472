// The libtorch-free TorchScript importer (see importer.h). Three parts:
//   1. the archive: <name>/data.pkl (the module objects: class, attributes, parameters as
//      torch._utils._rebuild_tensor_v2 calls on storages <name>/data/<key>), <name>/constants.pkl
//      (the CONSTANTS.cN tensors), <name>/code/**.py (each class's methods);
//   2. an interpreter of the serialized Python over values (runtime.h) that are known (numbers,
//      lists, parameters, folded tensors) or symbolic (graph values with known shapes);
//   3. op calls: torch.X(...) resolves to the schema of aten::X whose overload the arguments fit,
//      then folds (all inputs known, a kernel exists) or becomes a graph op.
#include "frameworks/torchscript/importer.h"

#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "amanda/support/gate.h"
#include "amanda/support/budget.h"
#include "amanda/support/file.h"
#include "frameworks/torchscript/ast.h"
#include "frameworks/torchscript/pickle.h"
#include "frameworks/torchscript/creation_ops.h"
#include "frameworks/torchscript/decompose.h"
#include "frameworks/torchscript/promotion.h"
#include "frameworks/torchscript/shape_rules.h"
#include "frameworks/torchscript/zip.h"

namespace amanda::torchscript {

using ir::DType;
using ir::OpId;
using ir::PortId;
using ir::Value;

struct Obj {
  std::string cls;   // __torch__.torchvision.models.resnet.ResNet
  std::string path;  // attribute path from the root module ("layer1.0.conv1"), "" for the root
  std::vector<std::pair<std::string, VRef>> attrs;
  VRef find(std::string_view name) const {
    for (const auto& [k, v] : attrs)
      if (k == name) return v;
    return nullptr;
  }
};

namespace {

constexpr int kMaxCallDepth = 200;
constexpr int kMaxConvertDepth = 1000;
constexpr int64_t kMaxLoopTrips = 100000;

std::optional<DType> storage_dtype(std::string_view cls) {
  static const std::pair<const char*, DType> table[] = {
      {"torch.FloatStorage", DType::Float32}, {"torch.DoubleStorage", DType::Float64},
      {"torch.HalfStorage", DType::Float16},  {"torch.BFloat16Storage", DType::BFloat16},
      {"torch.LongStorage", DType::Int64},    {"torch.IntStorage", DType::Int32},
      {"torch.ShortStorage", DType::Int16},   {"torch.CharStorage", DType::Int8},
      {"torch.ByteStorage", DType::UInt8},    {"torch.BoolStorage", DType::Bool}};
  for (const auto& [n, t] : table)
    if (cls == n) return t;
  return std::nullopt;
}

// "Tensor(a!)" -> "Tensor", "Tensor(a)[]" -> "Tensor[]".
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

struct Frame {
  std::unordered_map<std::string, VRef> vars;
  const SourceFile* file = nullptr;
};

enum class Flow { Normal, Return, Break, Continue };

class Importer {
 public:
  Importer(const ZipArchive& zip, const schema::NamespaceSchema& ns, const torch_frontend::ImportOptions& o,
           text::Document& doc)
      : zip_(zip), ns_(ns), o_(o), g_(doc.graph) {}
  Importer(const Importer&) = delete;
  Importer& operator=(const Importer&) = delete;
  ~Importer() {
    // A pickle can make objects that refer to each other (a module holding itself): break every
    // link between converted values so that they are freed.
    for (auto& [p, v] : converted_) {
      v->items.clear();
      if (v->obj) v->obj->attrs.clear();
    }
    for (PyRef& p : pickles_) dismantle(std::move(p));
  }

  void run() {
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
    for (size_t k = 0; k < outs.size(); ++k) {
      const VRef& v = outs[k];
      if (!v->is_tensor() || !v->defined) throw Unsupported("forward() returns " + describe(*v) + " (only tensors)");
      // A graph output is named like the value it reads (ONNX names both alike).
      PortId src = port_of(*v);
      const Value* vn = g_.attr(src, g_.sym("@value"));
      std::string name = vn && vn->is_string() ? vn->as_string() : std::string(g_.port_name_str(src));
      PortId port = g_.add_port(root_graph, ir::PortDir::Out, g_.sym(name));
      set_type(port, *v, true);
      g_.connect(src, port);
    }
  }

 private:
  const ZipArchive& zip_;
  const schema::NamespaceSchema& ns_;
  const torch_frontend::ImportOptions& o_;
  ir::Graph& g_;
  std::string prefix_;
  std::unordered_map<std::string, std::shared_ptr<Storage>> storages_;
  std::unordered_map<const PyObject*, VRef> converted_;
  std::vector<PyRef> pickles_;  // dismantled at the end (they may be cyclic)
  std::vector<VRef> constants_;
  std::map<std::string, std::unique_ptr<SourceFile>> files_;
  const SourceFile* cls_file_ = nullptr;  // the file of the class find_class found last
  std::unordered_map<std::string, std::vector<const schema::OpSchema*>> overloads_;
  std::unordered_map<std::string, int> taken_;
 public:
  std::set<std::string> gaps_;  // op types that had no shape rule
 private:
  std::string hint_;   // the name the statement being run assigns to
  std::string where_;  // file:line of the statement being run
  int depth_ = 0;
  // Symbolic dimensions: dimension k of --input-shape's names runs as the number
  // kSymbolBase + kSymbolStep * k; every size at or above kSymbolFloor is taken to be computed from
  // one (N, 197*N, N-1, ...): it is written as a dim_param and never folded into a constant.
  static constexpr int64_t kSymbolBase = 1000003, kSymbolStep = 4099, kSymbolFloor = 500000;
  bool symbolic_ = false;
  bool in_symbolic_ = false;
  bool is_sym(int64_t d) const { return symbolic_ && d >= kSymbolFloor && d < (int64_t(1) << 50); }  // not INT64_MAX (slice to the end)
  // The dim_param of a size computed from symbolic dimensions.
  Value dim_value(int64_t d) const {
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
  bool has_dyn(const Val& v) const {
    if (v.k == Val::K::Int) return v.dyn != nullptr;
    if (v.k == Val::K::List || v.k == Val::K::Tuple)
      for (const auto& x : v.items)
        if (has_dyn(*x)) return true;
    return false;
  }
  std::string sym_name_of(int64_t d) const {
    Value v = dim_value(d);
    return v.is_string() ? v.as_string() : std::to_string(d);
  }
  // A 0-d int64 tensor of an Int (its run-time value when it has one).
  VRef int_tensor(const Val& v) {
    if (v.k == Val::K::Int && v.dyn) return v.dyn;
    if (v.is_tensor()) return std::make_shared<Val>(v);
    return make_known(DType::Int64, {}, {number_of(v, where_)});
  }
  // Ops on sizes computed from symbolic dimensions: they stay graph ops (Shape, Gather, Mul, ...),
  // as torch.onnx.export with dynamic_axes makes them. nullopt: the ordinary path.
  std::optional<VRef> symbolic_call(const std::string& base, const std::vector<VRef>& args) {
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

  // ------------------------------------------------------------ the archive

  void find_prefix() {
    for (const ZipEntry& e : zip_.entries()) {
      const std::string& n = e.name;
      if (n.size() >= 8 && n.compare(n.size() - 8, 8, "data.pkl") == 0) {
        std::string p = n.substr(0, n.size() - 8);
        if (p.empty() || (p.back() == '/' && p.find('/') == p.size() - 1)) {
          prefix_ = p;
          return;
        }
      }
    }
    if (zip_.find("model.json") || zip_.find("archive/model.json"))
      throw Unsupported(zip_.path() + ": an archive of the old (model.json) format");
    throw Error(zip_.path() + ": not a TorchScript archive (no data.pkl in the zip)");
  }

  std::shared_ptr<Storage> storage(const PyObject& pid, const std::string& folder) {
    // ('storage', torch.FloatStorage, key, location, numel)
    if (pid.kind != PyObject::Kind::Tuple || pid.items.size() < 5 || pid.items[0]->kind != PyObject::Kind::Str ||
        pid.items[0]->str != "storage" || pid.items[1]->kind != PyObject::Kind::Global ||
        pid.items[2]->kind != PyObject::Kind::Str || pid.items[4]->kind != PyObject::Kind::Int)
      throw Error(zip_.path() + ": byte " + std::to_string(pid.offset) + " of a pickle: a persistent id that is not a storage: " +
                  torchscript::describe(pid));
    auto dt = storage_dtype(pid.items[1]->str);
    if (!dt) throw Unsupported(zip_.path() + ": storage class " + pid.items[1]->str);
    std::string key = folder + pid.items[2]->str;
    if (auto it = storages_.find(key); it != storages_.end()) return it->second;
    const ZipEntry* e = zip_.find(prefix_ + key);
    if (!e) throw Error(zip_.path() + ": no entry " + prefix_ + key + " for a tensor's storage");
    std::string_view bytes = zip_.data(*e);
    int64_t n = pid.items[4]->i;
    size_t es = ir::dtype_size(*dt);
    if (n < 0 || static_cast<uint64_t>(n) > bytes.size() / es)
      throw Error(zip_.path() + ": storage " + prefix_ + key + " holds " + std::to_string(bytes.size()) + " bytes, not " +
                  std::to_string(n) + " elements");
    auto st = std::make_shared<Storage>();
    st->dtype = *dt;
    st->raw = reinterpret_cast<const uint8_t*>(bytes.data());
    st->count = static_cast<size_t>(n);
    if (zip_.borrowable(*e)) {
      st->owner = zip_.buffer();
    } else {
      Budget::run().charge(BudgetKind::Memory, bytes.size(), zip_.path() + ": storage " + prefix_ + key);
      st->owner = make_buffer(std::string(bytes));
      st->raw = st->owner->data();
    }
    storages_[key] = st;
    return st;
  }

  VRef rebuild_tensor(const PyObject& args, const std::string& folder, const std::string& path) {
    // _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks[, metadata])
    auto fail = [&](const std::string& m) -> VRef {
      throw Error(zip_.path() + ": byte " + std::to_string(args.offset) + " of a pickle: _rebuild_tensor_v2: " + m);
    };
    if (args.kind != PyObject::Kind::Tuple || args.items.size() < 4) return fail("expects (storage, offset, size, stride, ...)");
    const PyObject& pid = *args.items[0];
    if (pid.kind != PyObject::Kind::PersistentId || pid.items.empty()) return fail("the storage is not a persistent id");
    std::shared_ptr<Storage> st = storage(*pid.items[0], folder);
    if (args.items[1]->kind != PyObject::Kind::Int) return fail("the offset is not an int");
    auto ints = [&](const PyObject& t) {
      std::vector<int64_t> v;
      if (t.kind != PyObject::Kind::Tuple && t.kind != PyObject::Kind::List) fail("size and stride must be tuples");
      for (const auto& x : t.items) {
        if (x->kind != PyObject::Kind::Int || x->i < 0) fail("size and stride hold non-negative ints");
        v.push_back(x->i);
      }
      return v;
    };
    std::vector<int64_t> size = ints(*args.items[2]), stride = ints(*args.items[3]);
    if (size.size() != stride.size()) return fail("size and stride differ in length");
    int64_t offset = args.items[1]->i;
    // The furthest element must lie inside the storage.
    int64_t last = offset;
    for (size_t k = 0; k < size.size(); ++k) {
      if (size[k] == 0) {
        last = -1;
        break;
      }
      if (size[k] > (int64_t(1) << 40) || stride[k] > (int64_t(1) << 40)) return fail("size or stride too large");
      last += (size[k] - 1) * stride[k];
    }
    if (offset < 0 || (last >= 0 && static_cast<uint64_t>(last) >= st->count)) return fail("the tensor lies outside its storage");
    auto v = std::make_shared<Val>();
    v->k = Val::K::Tensor;
    v->dtype = st->dtype;
    v->shape = size;
    v->known = std::make_shared<Known>();
    v->known->st = st;
    v->known->strides = stride;
    v->known->offset = offset;
    v->name = path;
    return v;
  }

  // The pickled object tree -> values. Module objects become Obj with their attributes.
  VRef convert(const PyRef& p, const std::string& folder, const std::string& path, int depth) {
    if (depth > kMaxConvertDepth) throw Error(zip_.path() + ": pickled objects nested too deeply");
    if (auto it = converted_.find(p.get()); it != converted_.end()) return it->second;
    const PyObject& o = *p;
    VRef v;
    auto sub = [&](const PyRef& x, const std::string& name) {
      return convert(x, folder, path.empty() ? name : path + "." + name, depth + 1);
    };
    switch (o.kind) {
      case PyObject::Kind::None: v = make_none(); break;
      case PyObject::Kind::Bool: v = make_bool(o.b); break;
      case PyObject::Kind::Int: v = make_int(o.i); break;
      case PyObject::Kind::Float: v = make_float(o.f); break;
      case PyObject::Kind::Str: v = make_str(o.str); break;
      case PyObject::Kind::Bytes: v = make_str(o.str); break;
      case PyObject::Kind::Tuple:
      case PyObject::Kind::List: {
        std::vector<VRef> items;
        for (size_t k = 0; k < o.items.size(); ++k) items.push_back(sub(o.items[k], std::to_string(k)));
        v = make_list(std::move(items), o.kind == PyObject::Kind::Tuple ? Val::K::Tuple : Val::K::List);
        break;
      }
      case PyObject::Kind::Dict:
        v = make_none();  // dictionaries only appear as empty backward-hook dicts in what we read
        if (!o.dict.empty()) throw Unsupported(zip_.path() + ": a pickled dictionary as a value");
        break;
      case PyObject::Kind::Global:
      case PyObject::Kind::PersistentId:
        throw Error(zip_.path() + ": byte " + std::to_string(o.offset) + " of a pickle: a bare " +
                    torchscript::describe(o) + " where a value belongs");
      case PyObject::Kind::Call: {
        const PyObject& callee = *o.items.at(0);
        const PyObject& args = *o.items.at(1);
        if (callee.kind != PyObject::Kind::Global)
          throw Error(zip_.path() + ": byte " + std::to_string(o.offset) + ": a call of something that is not a global");
        const std::string& fn = callee.str;
        auto arg0 = [&]() -> const PyRef& {
          if (args.kind != PyObject::Kind::Tuple || args.items.empty())
            throw Error(zip_.path() + ": byte " + std::to_string(o.offset) + ": " + fn + " without arguments");
          return args.items[0];
        };
        if (fn == "torch._utils._rebuild_tensor_v2") {
          v = rebuild_tensor(args, folder, path);
        } else if (fn == "torch._utils._rebuild_parameter") {
          v = convert(arg0(), folder, path, depth + 1);
        } else if (fn == "collections.OrderedDict") {
          v = make_none();
        } else if (fn == "torch.jit._pickle.build_intlist" || fn == "torch.jit._pickle.build_doublelist" ||
                   fn == "torch.jit._pickle.build_boollist" || fn == "torch.jit._pickle.build_tensorlist" ||
                   fn == "torch.jit._pickle.restore_type_tag") {
          v = convert(arg0(), folder, path, depth + 1);
        } else if (fn.rfind("__torch__.", 0) == 0 && o.new_object) {
          auto obj = std::make_shared<Obj>();
          obj->cls = fn;
          obj->path = path;
          v = std::make_shared<Val>();
          v->k = Val::K::Object;
          v->obj = obj;
          converted_[p.get()] = v;  // before the state: it may refer back
          if (o.state) {
            if (o.state->kind != PyObject::Kind::Dict)
              throw Unsupported(zip_.path() + ": object of " + fn + " with a custom __getstate__");
            for (const auto& [k, x] : o.state->dict) {
              if (k->kind != PyObject::Kind::Str) throw Error(zip_.path() + ": an attribute name that is not a string in " + fn);
              obj->attrs.emplace_back(k->str, sub(x, k->str));
            }
          }
          return v;
        } else {
          throw Unsupported(zip_.path() + ": pickled call of " + fn);
        }
        break;
      }
    }
    converted_[p.get()] = v;
    return v;
  }

  // ------------------------------------------------------------ code

  // __torch__.torch.nn.modules.conv.___torch_mangle_0.Conv2d -> code/__torch__/torch/nn/modules/conv/___torch_mangle_0.py
  const SourceFile* file_of(const std::string& module) {
    if (auto it = files_.find(module); it != files_.end()) return it->second.get();
    std::string rel = module;
    for (char& c : rel)
      if (c == '.') c = '/';
    std::string entry = prefix_ + "code/" + rel + ".py";
    const ZipEntry* e = zip_.find(entry);
    if (!e) {
      files_[module] = nullptr;
      return nullptr;
    }
    auto f = std::make_unique<SourceFile>(parse_source(zip_.data(*e), zip_.path() + ":" + entry));
    const SourceFile* r = f.get();
    files_[module] = std::move(f);
    return r;
  }

  const ClassDef* find_class(const std::string& qualname) {
    size_t dot = qualname.rfind('.');
    if (dot == std::string::npos) throw Error(zip_.path() + ": class name " + qualname + " has no module");
    const SourceFile* f = file_of(qualname.substr(0, dot));
    std::string name = qualname.substr(dot + 1);
    if (f)
      for (const ClassDef& c : f->classes)
        if (c.name == name) {
          cls_file_ = f;
          return &c;
        }
    throw Error(zip_.path() + ": the code of class " + qualname + " is not in the archive");
  }

  const FunctionDef* method(const ClassDef& c, std::string_view name, const std::string& qualname) {
    for (const FunctionDef& f : c.methods)
      if (f.name == name) return &f;
    throw Error(zip_.path() + ": class " + qualname + " has no method " + std::string(name));
  }

  std::string where_of(const FunctionDef& f) const {
    return (cls_file_ ? cls_file_->path : zip_.path()) + ":" + std::to_string(f.pos.line);
  }

  VRef call_function(const FunctionDef& f, const SourceFile* file, const std::vector<VRef>& args,
                     const std::vector<std::pair<std::string, VRef>>& kwargs, const std::string& what) {
    if (++depth_ > kMaxCallDepth) throw Error(where_ + ": calls nested more than " + std::to_string(kMaxCallDepth) + " deep");
    Frame fr;
    fr.file = file;
    if (args.size() > f.params.size())
      throw Error(where_ + ": " + what + "() takes " + std::to_string(f.params.size()) + " arguments, " +
                  std::to_string(args.size()) + " given");
    for (size_t k = 0; k < f.params.size(); ++k) {
      const Param& p = f.params[k];
      VRef v = k < args.size() ? args[k] : nullptr;
      for (const auto& [n, x] : kwargs)
        if (n == p.name) v = x;
      if (!v) {
        if (!p.default_value) throw Error(where_ + ": " + what + "() misses argument " + p.name);
        v = eval(*p.default_value, fr);
      }
      fr.vars[p.name] = v;
    }
    std::string saved_where = where_;
    VRef ret;
    Flow fl = exec(f.body, fr, ret);
    where_ = saved_where;
    --depth_;
    if (fl == Flow::Break || fl == Flow::Continue) throw Error(where_ + ": break or continue outside a loop");
    return ret ? ret : make_none();
  }

  std::string loc(const SourceFile* f, Pos p) const {
    return (f ? f->path : zip_.path()) + ":" + std::to_string(p.line) + ":" + std::to_string(p.column);
  }

  Flow exec(const std::vector<StmtPtr>& body, Frame& fr, VRef& ret) {
    for (const StmtPtr& sp : body) {
      const Stmt& s = *sp;
      where_ = loc(fr.file, s.pos);
      // One budget for the whole run: nested loops and recursion each stay under their own limits.
      Budget::run().charge(BudgetKind::Steps, 1, where_);
      switch (s.kind) {
        case Stmt::Kind::Assign: {
          hint_ = s.targets.size() == 1 && s.targets[0]->kind == Expr::Kind::Name ? s.targets[0]->text : "";
          VRef v = eval(*s.value, fr);
          hint_.clear();
          for (const ExprPtr& t : s.targets) assign(*t, v, fr);
          break;
        }
        case Stmt::Kind::AugAssign: {
          const Expr& t = *s.targets[0];
          if (t.kind != Expr::Kind::Name) throw Unsupported(where_ + ": augmented assignment to " + to_source(t));
          VRef a = eval(t, fr), b = eval(*s.value, fr);
          fr.vars[t.text] = arith(s.text, a, b);
          break;
        }
        case Stmt::Kind::AnnAssign:
          if (s.value) assign(*s.targets[0], eval(*s.value, fr), fr);
          break;
        case Stmt::Kind::Expr: eval(*s.value, fr); break;
        case Stmt::Kind::Return:
          hint_.clear();
          ret = s.value ? eval(*s.value, fr) : make_none();
          return Flow::Return;
        case Stmt::Kind::Pass: break;
        case Stmt::Kind::Break: return Flow::Break;
        case Stmt::Kind::Continue: return Flow::Continue;
        case Stmt::Kind::If: {
          VRef cv = eval(*s.value, fr);
          if (cv->data) {
            data_if(s, fr, cv);
            break;
          }
          bool c = truth(*cv, "if");
          Flow f = exec(c ? s.body : s.orelse, fr, ret);
          if (f != Flow::Normal) return f;
          break;
        }
        case Stmt::Kind::While: {
          if (VRef c0 = eval(*s.value, fr); c0->data) {
            data_loop(s, fr, nullptr, c0);
            break;
          }
          for (int64_t trips = 0;; ++trips) {
            if (trips > kMaxLoopTrips) throw Unsupported(where_ + ": a loop of more than " + std::to_string(kMaxLoopTrips) + " trips");
            if (!truth(*eval(*s.value, fr), "while")) break;
            Flow f = exec(s.body, fr, ret);
            if (f == Flow::Return) return f;
            if (f == Flow::Break) break;
          }
          break;
        }
        case Stmt::Kind::For: {
          VRef it = eval(*s.value, fr);
          if (it->data) {
            data_loop(s, fr, it->data, nullptr);
            break;
          }
          if (scanned_.count(it.get())) throw Unsupported(where_ + ": a for loop over a list a loop on the input's values appended to");
          std::vector<VRef> items;
          if (it->k == Val::K::List || it->k == Val::K::Tuple) items = it->items;
          else throw Unsupported(where_ + ": a for loop over " + describe(*it));
          for (const VRef& x : items) {
            assign(*s.targets[0], x, fr);
            Flow f = exec(s.body, fr, ret);
            if (f == Flow::Return) return f;
            if (f == Flow::Break) break;
          }
          break;
        }
        case Stmt::Kind::Raise: throw Error(where_ + ": the model raises an exception here");
        case Stmt::Kind::Assert:
          if (!truth(*eval(*s.value, fr), "assert")) throw Error(where_ + ": an assertion of the model fails for these input shapes");
          break;
        case Stmt::Kind::Del:
          for (const ExprPtr& t : s.targets)
            if (t->kind == Expr::Kind::Name) fr.vars.erase(t->text);
          break;
      }
    }
    return Flow::Normal;
  }

  // ------------------------------------------------------------ control flow on data
  // An `if` whose condition, or a loop whose count or condition, the graph computes becomes a
  // prim::If / prim::Loop op with its bodies as graph attributes (block0, block1), as the
  // libtorch reader imports them: the branches run into their own graphs, the variables they
  // (re)assign become the op's outputs; a loop's carried values are the variables its body
  // assigns, its body takes (iteration number, condition, carried...) and gives (condition,
  // carried...). A body reads an outer value through a capture port of its op (`@capture.x`).

  struct Body {
    OpId graph;
    OpId owner;
    std::unordered_set<const Val*> outer_lists;  // lists made outside: appending to them is refused
    std::string prefix;  // its ops are named <owner>.<block>.<k>: ONNX names values once across bodies,
    int next = 0;        // and a rule names the constants it makes after the op (_1_B)
    bool loop = false;
    std::vector<std::pair<VRef, VRef>> scans;  // (list made empty before the loop, the tensor the body appends)
  };
  // Lists a loop on data appended to: after the loop, the Loop's scan output of the appended
  // tensors (stacked, its length a new symbolic dimension); only stack/cat read them.
  std::unordered_map<const Val*, VRef> scanned_;
  std::vector<VRef> scanned_lists_;  // keeps the keys of scanned_ alive (a freed list's address could be reused)
  std::vector<std::string> scan_dims_;
  // Sizes known only at run time (kRunTimeDim: the rows a mask selects, the boxes NMS keeps, k =
  // min(k, n) of such a size): each a new symbolic dimension `dyn<k>`. Once one exists, comparisons
  // of sizes computed from symbolic dimensions are graph ops (an `if` on one is an If on data), not
  // decided on the stand-in numbers.
  static constexpr size_t kMaxSymbols = 1024;
  int run_time_dims_ = 0;
  std::map<PortId, int64_t> mask_dims_;  // x[m], y[m] with one mask m: one size (nms(x[m], y[m]) checks it)
  int64_t new_run_time_dim() {
    size_t idx = o_.dim_names.size() + scan_dims_.size();
    if (idx >= kMaxSymbols) throw Unsupported(where_ + ": more than " + std::to_string(kMaxSymbols) + " symbolic sizes (sizes known only at run time)");
    scan_dims_.push_back("dyn" + std::to_string(run_time_dims_++));
    symbolic_ = true;
    return kSymbolBase + kSymbolStep * static_cast<int64_t>(idx);
  }
  // (one symbol per op: unique's values and counts have one length)
  void resolve_run_time_dims(std::vector<OutInfo>& outs) {
    int64_t sym = 0;
    for (auto& o : outs)
      for (auto& d : o.shape)
        if (d == kRunTimeDim) d = sym ? sym : (sym = new_run_time_dim());
  }
  OpId new_op(amanda::Symbol type) {
    OpId op = g_.create_op(scope(), type, amanda::Symbol());
    if (!bodies_.empty()) g_.set_name(op, g_.sym(bodies_.back().prefix + std::to_string(bodies_.back().next++)));
    return op;
  }
  std::vector<Body> bodies_;
  std::map<std::pair<uint64_t, uint64_t>, PortId> caps_;  // (owner op, outer port) -> capture port: an If's two branches share them

  OpId scope() const { return bodies_.empty() ? g_.root() : bodies_.back().graph; }
  OpId scope_of(PortId p) const {
    OpId o = g_.port_op(p);
    return g_.is_graph(o) ? o : g_.parent(o);
  }
  std::string value_name(PortId p) const {
    if (const Value* v = g_.attr(p, const_cast<ir::Graph&>(g_).sym("@value")); v && v->is_string()) return v->as_string();
    return std::string(g_.port_name_str(p));
  }
  // The port through which the current body reads `src` (captures through every body between).
  PortId visible(PortId src) { return visible_at(src, bodies_.size()); }
  PortId visible_at(PortId src, size_t depth) {
    if (depth == 0 || scope_of(src) == bodies_[depth - 1].graph) return src;
    std::pair<uint64_t, uint64_t> key{bodies_[depth - 1].owner.value, src.value};
    if (auto it = caps_.find(key); it != caps_.end()) return it->second;
    PortId outer = visible_at(src, depth - 1);
    Body& b = bodies_[depth - 1];
    std::string name = value_name(src);
    PortId cap = g_.add_input(b.owner, g_.sym("@capture." + name));
    g_.set_port_role(cap, ir::PortRole::Capture);
    g_.set_attr(cap, g_.sym("@value"), Value(name));
    g_.connect(outer, cap);
    caps_[key] = cap;
    return cap;
  }

  VRef number_op(const std::string& type, const std::vector<VRef>& args) {
    const schema::OpSchema* s = ns_.find(type);
    if (!s || s->inputs.size() != args.size() || s->outputs.size() != 1) throw Error(where_ + ": internal: " + type);
    Budget::run().charge(BudgetKind::Ops, 1, where_);
    OpId op = new_op(g_.sym(type));
    for (size_t k = 0; k < args.size(); ++k) {
      PortId in = g_.add_input(op, g_.sym(s->inputs[k].expected_name().value_or("input." + std::to_string(k))));
      Val& a = *args[k];
      g_.connect(a.is_tensor() ? visible(port_of(a)) : a.data ? visible(port_of(*a.data)) : constant(a), in);
    }
    bool is_bool = s->outputs[0].type == "bool";
    PortId out = g_.add_output(op, g_.sym(s->outputs[0].expected_name().value_or("result")));
    VRef t = make_symbolic(is_bool ? DType::Bool : DType::Int64, {});
    t->alias = std::make_shared<Alias>();
    t->port = out;
    g_.set_attr(out, g_.sym("@value"), Value(unique(hint_.empty() ? (is_bool ? "cond" : "n") : hint_)));
    g_.set_attr(out, g_.sym("@torch_type"), Value(std::string(is_bool ? "bool" : "int")));
    set_type(out, *t, false);
    VRef r = is_bool ? make_bool(false) : make_int(0);
    r->data = t;
    return r;
  }

  // aten::add / lt / eq ... of numbers one of which the graph computes: the .int / .bool overload as a graph op.
  VRef data_number_op(const std::string& base, const std::vector<VRef>& args) {
    bool ints = true, bools = true;
    for (const VRef& a : args) {
      ints &= a->k == Val::K::Int;
      bools &= a->k == Val::K::Bool;
    }
    std::string type = base + (ints ? ".int" : bools ? ".bool" : "");
    if ((!ints && !bools) || !ns_.find(type))
      throw Unsupported(where_ + ": " + base + " of a number computed from the input's values (control flow on data) and " +
                        describe(*args.back()) + " (not supported)");
    return number_op(type, args);
  }

  // A value as the result of the current body: made in it (a value from outside is copied by
  // an op of the body: ONNX names a body's outputs after values of the body).
  PortId body_result(const VRef& v, const std::string& name) {
    PortId p;
    if (v->is_tensor()) p = port_of(*v);
    else if (v->data) p = port_of(*v->data);
    else if (v->k == Val::K::Int || v->k == Val::K::Bool) return constant(*v);
    else throw Unsupported(where_ + ": " + name + " is " + describe(*v) + " after an if or loop on data (only tensors, ints and bools)");
    if (scope_of(p) == scope()) return p;
    if (v->is_tensor() && v->known) {
      // a known tensor (an initializer of the top graph): copied by a clone op in the body, not folded
      const schema::OpSchema* c = ns_.find("aten::clone");
      if (!c) throw Error(where_ + ": internal: aten::clone");
      return port_of(*emit(*c, {v, make_none()}, {OutInfo{v->dtype, v->shape}}));
    }
    if (v->is_tensor()) return port_of(*call_op("aten::clone", {v, make_none()}, {}));
    return port_of(*(v->k == Val::K::Int ? data_number_op("aten::add", {v, make_int(0)}) : number_op("aten::eq.bool", {v, make_bool(true)}))->data);
  }

  // A fresh value of v's kind (tensor: its type and shape) read from `port`.
  VRef like(const Val& v, PortId port) {
    VRef t;
    if (v.is_tensor()) t = make_symbolic(v.dtype, v.shape);
    else t = make_symbolic(v.k == Val::K::Bool ? DType::Bool : DType::Int64, {});
    t->alias = std::make_shared<Alias>();
    t->port = port;
    if (v.is_tensor()) return t;
    VRef r = v.k == Val::K::Bool ? make_bool(false) : make_int(0);
    r->data = t;
    return r;
  }
  void type_port(PortId p, const Val& v, bool graph_port) {
    if (v.is_tensor()) return set_type(p, v, graph_port);
    g_.set_attr(p, g_.sym(graph_port ? "type" : "@type"), Value(std::string(v.k == Val::K::Bool ? "bool" : "int64")));
    g_.set_attr(p, g_.sym(graph_port ? "shape" : "@shape"), Value(Value::List{}));
    if (!graph_port) g_.set_attr(p, g_.sym("@torch_type"), Value(std::string(v.k == Val::K::Bool ? "bool" : "int")));
  }
  // Whether two values of one variable can be the same output (the kinds, a tensor's type and shape).
  // `sizes`: tensors may differ in their sizes (not their rank)
  static bool same_kind(const Val& a, const Val& b, bool sizes = false) {
    if (a.is_tensor() != b.is_tensor()) return false;
    if (a.is_tensor())
      return a.defined && b.defined && a.shape_known && b.shape_known && a.dtype == b.dtype &&
             (sizes ? a.shape.size() == b.shape.size() : a.shape == b.shape);
    return a.k == b.k && (a.k == Val::K::Int || a.k == Val::K::Bool);
  }
  static bool same_number(const Val& a, const Val& b) {
    return !a.data && !b.data && a.k == b.k &&
           ((a.k == Val::K::Int && a.i == b.i) || (a.k == Val::K::Bool && a.b == b.b));
  }
  std::unordered_set<const Val*> lists_of(const Frame& fr) const {
    std::unordered_set<const Val*> l;
    for (const auto& [n, v] : fr.vars)
      if (v->k == Val::K::List) l.insert(v.get());
    return l;
  }
  static void assigned_names(const std::vector<StmtPtr>& body, std::set<std::string>& out) {
    std::function<void(const Expr&)> target = [&](const Expr& t) {
      if (t.kind == Expr::Kind::Name) out.insert(t.text);
      if (t.kind == Expr::Kind::Tuple || t.kind == Expr::Kind::List)
        for (const ExprPtr& x : t.args) target(*x);
    };
    for (const StmtPtr& sp : body) {
      const Stmt& s = *sp;
      if (s.kind == Stmt::Kind::Assign || s.kind == Stmt::Kind::AugAssign || s.kind == Stmt::Kind::AnnAssign || s.kind == Stmt::Kind::For)
        for (const ExprPtr& t : s.targets) target(*t);
      assigned_names(s.body, out);
      assigned_names(s.orelse, out);
    }
  }

  // Names an in-place op writes in the body (`torch.index_put_(keep, [i], v)`, `torch.add_(x, y)`):
  // a loop on data carries them like the names it assigns.
  static void written_in_place(const std::vector<StmtPtr>& body, std::set<std::string>& out) {
    std::function<void(const Expr*)> walk = [&](const Expr* e) {
      if (!e) return;
      if (e->kind == Expr::Kind::Call && e->args.size() >= 2 && e->args[0]->kind == Expr::Kind::Attribute &&
          e->args[0]->args[0]->kind == Expr::Kind::Name && e->args[0]->args[0]->text == "torch" && !e->args[0]->text.empty() &&
          e->args[0]->text.back() == '_' && e->args[0]->text.front() != '_' && e->args[1]->kind == Expr::Kind::Name)
        out.insert(e->args[1]->text);
      for (const ExprPtr& a : e->args) walk(a.get());
      for (const auto& [n, a] : e->keywords) walk(a.get());
    };
    for (const StmtPtr& sp : body) {
      walk(sp->value.get());
      for (const ExprPtr& t : sp->targets) walk(t.get());
      written_in_place(sp->body, out);
      written_in_place(sp->orelse, out);
    }
  }

  void data_if(const Stmt& s, Frame& fr, const VRef& cv) {
    const std::string where = where_;
    if (cv->k != Val::K::Bool) throw Unsupported(where + ": an if on " + describe(*cv) + " computed from the input's values (a bool is needed)");
    Budget::run().charge(BudgetKind::Ops, 1, where_);
    OpId op = new_op(g_.sym("prim::If"));
    g_.connect(visible(port_of(*cv->data)), g_.add_input(op, g_.sym("cond")));
    Frame br[2] = {fr, fr};
    Body done[2];
    OpId gn[2];
    const std::vector<StmtPtr>* code[2] = {&s.body, &s.orelse};
    for (int k = 0; k < 2; ++k) {
      gn[k] = g_.create_attr_graph(op, g_.sym("block" + std::to_string(k)));
      g_.set_attr(op, g_.sym("block" + std::to_string(k)), Value::graph(gn[k]));
      bodies_.push_back(Body{gn[k], op, lists_of(fr), std::string(g_.name_str(op)) + "." + std::to_string(k) + "."});
      VRef ret;
      Flow f = exec(*code[k], br[k], ret);
      done[k] = std::move(bodies_.back());
      bodies_.pop_back();
      where_ = where;
      if (f != Flow::Normal) throw Unsupported(where + ": return, break or continue inside an if on the input's values (not supported)");
    }
    std::set<std::string> names;
    for (const Frame& b : br)
      for (const auto& [n, v] : b.vars)
        if (auto it = fr.vars.find(n); it == fr.vars.end() || it->second != v) names.insert(n);
    int idx = 0;
    for (const std::string& n : names) {
      auto a = br[0].vars.find(n), b = br[1].vars.find(n);
      if (a == br[0].vars.end() || b == br[1].vars.end()) continue;  // made by one branch only: not readable after
      const VRef va = a->second, vb = b->second;
      if (va == vb || same_number(*va, *vb)) {
        fr.vars[n] = va;
        continue;
      }
      if (!same_kind(*va, *vb, true))
        throw Unsupported(where + ": the branches of an if on the input's values give " + n + " as " + describe(*va) + " and " +
                          describe(*vb) + " (they must agree in kind, element type and rank)");
      // tensors of different sizes (an empty result in one branch): the sizes that differ are
      // known only at run time
      VRef merged = va;
      if (va->is_tensor() && va->shape != vb->shape) {
        merged = make_symbolic(va->dtype, va->shape);
        for (size_t d = 0; d < va->shape.size(); ++d)
          if (va->shape[d] != vb->shape[d]) merged->shape[d] = new_run_time_dim();
      }
      for (int k = 0; k < 2; ++k) {
        bodies_.push_back(std::move(done[k]));
        PortId src = body_result(k == 0 ? va : vb, n);
        done[k] = std::move(bodies_.back());
        bodies_.pop_back();
        PortId bo = g_.add_port(gn[k], ir::PortDir::Out, g_.sym("_" + std::to_string(idx)));
        type_port(bo, k == 0 ? *va : *vb, true);
        g_.set_attr(bo, g_.sym("@value"), Value(value_name(src)));
        g_.connect(src, bo);
      }
      PortId out = g_.add_output(op, g_.sym("outputs." + std::to_string(idx++)));
      g_.set_attr(out, g_.sym("@value"), Value(unique(n)));
      type_port(out, *merged, false);
      fr.vars[n] = like(*merged, out);
    }
  }

  void data_loop(const Stmt& s, Frame& fr, const VRef& count, const VRef& cond0) {
    const std::string where = where_;
    if (cond0 && cond0->k != Val::K::Bool) throw Unsupported(where + ": a while loop on " + describe(*cond0) + " computed from the input's values (a bool is needed)");
    std::set<std::string> names;
    assigned_names(s.body, names);
    written_in_place(s.body, names);
    std::string target;
    if (s.kind == Stmt::Kind::For) {
      if (s.targets[0]->kind != Expr::Kind::Name) throw Unsupported(where + ": a for loop on the input's values with target " + to_source(*s.targets[0]));
      target = s.targets[0]->text;
      names.erase(target);
    }
    std::vector<std::string> carried;
    for (const std::string& n : names)
      if (fr.vars.count(n)) carried.push_back(n);
    Budget::run().charge(BudgetKind::Ops, 1, where_);
    OpId op = new_op(g_.sym("prim::Loop"));
    PortId m = g_.add_input(op, g_.sym("max_trip_count")), c = g_.add_input(op, g_.sym("start_condition"));
    g_.connect(count ? visible(port_of(*count->data)) : constant(*make_int(INT64_MAX)), m);
    g_.connect(cond0 ? visible(port_of(*cond0->data)) : constant(*make_bool(true)), c);
    std::vector<VRef> init;
    for (size_t k = 0; k < carried.size(); ++k) {
      VRef v = fr.vars[carried[k]];
      bool ok = v->is_tensor() ? v->defined && v->shape_known : v->k == Val::K::Int || v->k == Val::K::Bool;
      if (!ok)
        throw Unsupported(where + ": a loop on the input's values carries " + carried[k] + ", " + describe(*v) +
                          " (only tensors, ints and bools)");
      PortId ip = g_.add_input(op, g_.sym("carried." + std::to_string(k)));
      g_.connect(v->is_tensor() ? visible(port_of(*v)) : v->data ? visible(port_of(*v->data)) : constant(*v), ip);
      init.push_back(v);
    }
    OpId gn = g_.create_attr_graph(op, g_.sym("block0"));
    g_.set_attr(op, g_.sym("block0"), Value::graph(gn));
    Frame fb = fr;
    bodies_.push_back(Body{gn, op, lists_of(fr), std::string(g_.name_str(op)) + ".0."});
    bodies_.back().loop = true;
    PortId it = g_.add_port(gn, ir::PortDir::In, g_.sym(unique(target.empty() ? "i" : target)));
    type_port(it, *make_int(0), true);
    PortId bc = g_.add_port(gn, ir::PortDir::In, g_.sym(unique("cond")));
    type_port(bc, *make_bool(false), true);
    if (!target.empty()) fb.vars[target] = like(*make_int(0), it);
    for (size_t k = 0; k < carried.size(); ++k) {
      PortId bp = g_.add_port(gn, ir::PortDir::In, g_.sym(unique(carried[k])));
      type_port(bp, *init[k], true);
      fb.vars[carried[k]] = like(*init[k], bp);
    }
    VRef ret;
    Flow f = exec(s.body, fb, ret);
    where_ = where;
    if (f != Flow::Normal) throw Unsupported(where + ": return, break or continue inside a loop on the input's values (not supported)");
    std::vector<std::pair<VRef, std::string>> results;
    results.emplace_back(s.kind == Stmt::Kind::For ? make_bool(true) : eval(*s.value, fb), "the loop's condition");
    if (!results[0].first->data && results[0].first->k != Val::K::Bool)
      throw Unsupported(where + ": a while loop on the input's values whose condition is " + describe(*results[0].first));
    for (size_t k = 0; k < carried.size(); ++k) {
      VRef v = fb.vars[carried[k]];
      if (!same_kind(*v, *init[k]))
        throw Unsupported(where + ": a loop on the input's values changes " + carried[k] + " from " + describe(*init[k]) + " to " +
                          describe(*v) + " (the kind, element type and shape must stay)");
      results.emplace_back(v, carried[k]);
    }
    std::vector<std::pair<VRef, VRef>> scans = bodies_.back().scans;
    for (const auto& [l, t] : scans) results.emplace_back(t, "a tensor appended to a list");
    for (size_t k = 0; k < results.size(); ++k) {
      PortId src = body_result(results[k].first, results[k].second);
      PortId bo = g_.add_port(gn, ir::PortDir::Out, g_.sym("_" + std::to_string(k)));
      type_port(bo, k == 0 ? *make_bool(false) : k <= init.size() ? *init[k - 1] : *results[k].first, true);
      g_.set_attr(bo, g_.sym("@value"), Value(value_name(src)));
      g_.connect(src, bo);
    }
    bodies_.pop_back();
    for (size_t k = 0; k < carried.size(); ++k) {
      PortId out = g_.add_output(op, g_.sym("outputs." + std::to_string(k)));
      g_.set_attr(out, g_.sym("@value"), Value(unique(carried[k])));
      type_port(out, *init[k], false);
      fr.vars[carried[k]] = like(*init[k], out);
    }
    for (size_t j = 0; j < scans.size(); ++j) {
      // the number of trips: a new symbolic dimension (a dim_param of the output)
      size_t idx = o_.dim_names.size() + scan_dims_.size();
      if (idx >= kMaxSymbols) throw Unsupported(where + ": too many lists filled by loops on the input's values");
      scan_dims_.push_back("trips" + std::to_string(scan_dims_.size()));
      symbolic_ = true;
      const Val& t = *scans[j].second;
      std::vector<int64_t> shape{kSymbolBase + kSymbolStep * static_cast<int64_t>(idx)};
      shape.insert(shape.end(), t.shape.begin(), t.shape.end());
      PortId out = g_.add_output(op, g_.sym("outputs." + std::to_string(carried.size() + j)));
      VRef v = make_symbolic(t.dtype, shape);
      v->alias = std::make_shared<Alias>();
      v->port = out;
      g_.set_attr(out, g_.sym("@value"), Value(unique("stacked")));
      set_type(out, *v, false);
      scanned_[scans[j].first.get()] = v;
      scanned_lists_.push_back(scans[j].first);
    }
  }

  void assign(const Expr& t, const VRef& v, Frame& fr) {
    if (t.kind == Expr::Kind::Name) {
      fr.vars[t.text] = v;
      return;
    }
    if (t.kind == Expr::Kind::Tuple || t.kind == Expr::Kind::List) {
      if ((v->k != Val::K::Tuple && v->k != Val::K::List) || v->items.size() != t.args.size())
        throw Error(where_ + ": cannot unpack " + describe(*v) + " into " + std::to_string(t.args.size()) + " names");
      for (size_t k = 0; k < t.args.size(); ++k) assign(*t.args[k], v->items[k], fr);
      return;
    }
    // self.tensors = tensors in a scripted class's __init__; self._has_warned = True in a module's
    // forward (the object's attribute from here on, for this run)
    if (t.kind == Expr::Kind::Attribute) {
      VRef o = eval(*t.args[0], fr);
      if (o->k == Val::K::Object) {
        for (auto& [k, x] : o->obj->attrs)
          if (k == t.text) {
            x = v;
            return;
          }
        o->obj->attrs.emplace_back(t.text, v);
        return;
      }
    }
    throw Unsupported(where_ + ": assignment to " + to_source(t));
  }

  bool truth(const Val& v, const char* what) {
    if (v.data) throw Unsupported(where_ + ": " + what + " of a value computed from the input's values (control flow on data) here");
    switch (v.k) {
      case Val::K::Bool: return v.b;
      case Val::K::Int: return v.i != 0;
      case Val::K::Float: return v.f != 0;
      case Val::K::None: return false;
      case Val::K::List:
      case Val::K::Tuple: return !v.items.empty();
      case Val::K::Str: return !v.s.empty();
      case Val::K::Tensor:
        if (v.known && numel(v.shape) == 1) return elements(v)[0] != 0;
        throw Unsupported(where_ + ": the condition of an " + what + " depends on the input's values (control flow on data)");
      default: return true;
    }
  }

  // ------------------------------------------------------------ expressions

  VRef eval(const Expr& e, Frame& fr) {
    switch (e.kind) {
      case Expr::Kind::Name: {
        if (auto it = fr.vars.find(e.text); it != fr.vars.end()) return it->second;
        if (e.text == "inf") return make_float(INFINITY);
        if (e.text == "nan") return make_float(NAN);
        return make_str(e.text, Val::K::Path);
      }
      case Expr::Kind::Int: return make_int(e.i);
      case Expr::Kind::Float: return make_float(e.f);
      case Expr::Kind::Str: return make_str(e.text);
      case Expr::Kind::None: return make_none();
      case Expr::Kind::True: return make_bool(true);
      case Expr::Kind::False: return make_bool(false);
      case Expr::Kind::Attribute: {
        VRef o = eval(*e.args[0], fr);
        return attribute(*o, e.text);
      }
      case Expr::Kind::Call: return call(e, fr);
      case Expr::Kind::Subscript: {
        VRef o = eval(*e.args[0], fr);
        if (o->k == Val::K::Path) return o;  // a type: List[int]
        VRef i = eval(*e.args[1], fr);
        if ((o->k == Val::K::List || o->k == Val::K::Tuple) && i->k == Val::K::Int) {
          int64_t n = static_cast<int64_t>(o->items.size()), k = i->i < 0 ? i->i + n : i->i;
          if (k < 0 || k >= n) throw Error(where_ + ": index " + std::to_string(i->i) + " out of range");
          return o->items[static_cast<size_t>(k)];
        }
        if (o->k == Val::K::Tuple && !o->keys.empty() && i->k == Val::K::Str) {
          for (size_t k = 0; k < o->keys.size(); ++k)
            if (o->keys[k] == i->s) return o->items[k];
          throw Error(where_ + ": no key '" + i->s + "' in the dict");
        }
        throw Unsupported(where_ + ": subscript of " + describe(*o));
      }
      case Expr::Kind::Dict: {  // string keys only: a Tuple of the values with their keys
        std::vector<VRef> items;
        std::vector<std::string> keys;
        for (size_t k = 0; k + 1 < e.args.size(); k += 2) {
          VRef key = eval(*e.args[k], fr);
          if (key->k != Val::K::Str) throw Unsupported(where_ + ": a dict with keys of " + describe(*key));
          if (std::find(keys.begin(), keys.end(), key->s) != keys.end()) throw Unsupported(where_ + ": a dict display repeating key '" + key->s + "'");
          keys.push_back(key->s);
          items.push_back(eval(*e.args[k + 1], fr));
        }
        VRef d = make_list(std::move(items), Val::K::Tuple);
        d->keys = std::move(keys);
        return d;
      }
      case Expr::Kind::List:
      case Expr::Kind::Tuple: {
        std::vector<VRef> items;
        for (const ExprPtr& x : e.args) items.push_back(eval(*x, fr));
        return make_list(std::move(items), e.kind == Expr::Kind::List ? Val::K::List : Val::K::Tuple);
      }
      case Expr::Kind::Unary: {
        VRef a = eval(*e.args[0], fr);
        if (e.text == "-" && a->k == Val::K::Int) return a->i == INT64_MIN ? throw Error(where_ + ": integer overflow") : make_int(-a->i);
        if (e.text == "-" && a->k == Val::K::Float) return make_float(-a->f);
        if (e.text == "+" && (a->k == Val::K::Int || a->k == Val::K::Float)) return a;
        if (e.text == "not" && a->data && a->k == Val::K::Bool) return number_op("aten::__not__", {a});
        if (e.text == "not") return make_bool(!truth(*a, "not"));
        if (e.text == "-" && a->is_tensor()) return call_op("aten::neg", {a}, {});
        throw Unsupported(where_ + ": " + e.text + " of " + describe(*a));
      }
      case Expr::Kind::Binary: {
        VRef a = eval(*e.args[0], fr), b = eval(*e.args[1], fr);
        return arith(e.text, a, b);
      }
      case Expr::Kind::Compare: {
        VRef a = eval(*e.args[0], fr), b = eval(*e.args[1], fr);
        return compare(e.text, a, b);
      }
      case Expr::Kind::BoolOp: {
        VRef a = eval(*e.args[0], fr);
        bool t = truth(*a, e.text.c_str());
        if (e.text == "and" ? !t : t) return a;
        return eval(*e.args[1], fr);
      }
      case Expr::Kind::IfExp: {
        bool c = truth(*eval(*e.args[0], fr), "if");
        return eval(*e.args[c ? 1 : 2], fr);
      }
      default: throw Unsupported(where_ + ": expression " + to_source(e));
    }
  }

  VRef attribute(const Val& o, const std::string& name) {
    if (o.k == Val::K::Path) {
      if (o.s == "CONSTANTS" && name.size() > 1 && name[0] == 'c') {
        size_t k = 0;
        for (size_t i = 1; i < name.size(); ++i) {
          if (name[i] < '0' || name[i] > '9' || k > 1'000'000) throw Error(where_ + ": no constant " + name);
          k = k * 10 + static_cast<size_t>(name[i] - '0');
        }
        if (k >= constants_.size()) throw Error(where_ + ": no constant " + name + " in constants.pkl");
        return constants_[k];
      }
      return make_str(o.s + "." + name, Val::K::Path);
    }
    if (o.k == Val::K::Object) {
      if (VRef v = o.obj->find(name)) return v;
      // A class constant: `in_features : Final[int] = 8`.
      const ClassDef* c = find_class(o.obj->cls);
      for (const ClassAttr& a : c->attributes)
        if (a.name == name && a.value) {
          Frame empty;
          return eval(*a.value, empty);
        }
      throw Error(where_ + ": object of " + o.obj->cls + " has no attribute " + name);
    }
    throw Unsupported(where_ + ": attribute " + name + " of " + describe(o));
  }

  // Python operators in the code: on tensors the aten op, on numbers the same scalar ops that
  // torch.add(a, b) & co. run (tensor_ops.cpp), on lists concatenation.
  VRef arith(const std::string& op, const VRef& a, const VRef& b) {
    static const std::map<std::string, std::string> data_ops{{"+", "aten::add"}, {"-", "aten::sub"}, {"*", "aten::mul"}};
    if (a->data || b->data) {
      if (auto it = data_ops.find(op); it != data_ops.end()) return data_number_op(it->second, {a, b});
      throw Unsupported(where_ + ": operator " + op + " on a number computed from the input's values");
    }
    static const std::map<std::string, std::string> tensor_ops{
        {"+", "aten::add"}, {"-", "aten::sub"}, {"*", "aten::mul"}, {"/", "aten::div"},
        {"//", "aten::floor_divide"}, {"%", "aten::remainder"}, {"**", "aten::pow"}, {"@", "aten::matmul"}};
    static const std::map<std::string, std::string> number_ops{
        {"+", "aten::add"}, {"-", "aten::sub"}, {"*", "aten::mul"}, {"/", "aten::div"},
        {"//", "aten::floordiv"}, {"%", "aten::remainder"}, {"**", "aten::pow"}};
    if (a->is_tensor() || b->is_tensor()) {
      auto it = tensor_ops.find(op);
      if (it == tensor_ops.end() || !a->is_tensor())
        throw Unsupported(where_ + ": operator " + op + " on " + describe(*a) + " and " + describe(*b));
      return call_op(it->second, {a, b}, {});
    }
    if (op == "+" && (a->k == Val::K::List || a->k == Val::K::Tuple) && a->k == b->k) {
      // The same bound as append: a list doubled 34 times would otherwise take the machine.
      if (a->items.size() + b->items.size() > static_cast<size_t>(kMaxLoopTrips))
        throw Unsupported(where_ + ": a list grown past " + std::to_string(kMaxLoopTrips));
      Budget::run().charge(BudgetKind::Steps, a->items.size() + b->items.size(), where_);  // the copying
      std::vector<VRef> items = a->items;
      items.insert(items.end(), b->items.begin(), b->items.end());
      return make_list(std::move(items), a->k);
    }
    auto it = number_ops.find(op);
    if (it != number_ops.end() && symbolic_ && ((a->k == Val::K::Int && a->dyn) || (b->k == Val::K::Int && b->dyn))) {
      if (auto r = symbolic_call(it->second, {a, b})) return *r;
      throw Unsupported(where_ + ": operator " + op + " on a size computed from a symbolic dimension; give --input-shape a number for it");
    }
    if (it != number_ops.end())
      if (auto r = scalar_op(it->second, {a, b}, where_)) return *r;
    throw Unsupported(where_ + ": operator " + op + " on " + describe(*a) + " and " + describe(*b));
  }

  VRef compare(const std::string& op, const VRef& a, const VRef& b) {
    if (op == "is" || op == "is not") return *builtin(op == "is" ? "aten::__is__" : "aten::__isnot__", {a, b});
    if (a->is_tensor() || b->is_tensor()) throw Unsupported(where_ + ": comparison " + op + " of tensors in the code");
    if (a->data || b->data) {
      static const std::map<std::string, std::string> dops{{"==", "aten::eq"}, {"!=", "aten::ne"}, {"<", "aten::lt"},
                                                          {"<=", "aten::le"}, {">", "aten::gt"}, {">=", "aten::ge"}};
      if (auto it = dops.find(op); it != dops.end()) return data_number_op(it->second, {a, b});
      throw Unsupported(where_ + ": comparison " + op + " of a number computed from the input's values");
    }
    if (a->k == Val::K::Str && b->k == Val::K::Str && (op == "==" || op == "!="))
      return make_bool((a->s == b->s) == (op == "=="));
    static const std::map<std::string, std::string> ops{{"==", "aten::eq"}, {"!=", "aten::ne"}, {"<", "aten::lt"},
                                                       {"<=", "aten::le"}, {">", "aten::gt"}, {">=", "aten::ge"}};
    auto it = ops.find(op);
    if (it != ops.end())
      if (auto r = scalar_op(it->second, {a, b}, where_)) return *r;
    throw Unsupported(where_ + ": comparison " + op + " of " + describe(*a) + " and " + describe(*b));
  }

  VRef call(const Expr& e, Frame& fr) {
    const Expr& callee = *e.args[0];
    std::vector<VRef> args;
    std::vector<std::pair<std::string, VRef>> kwargs;
    auto eval_args = [&] {
      for (size_t k = 1; k < e.args.size(); ++k) args.push_back(eval(*e.args[k], fr));
      for (const auto& [n, x] : e.keywords) kwargs.emplace_back(n, eval(*x, fr));
    };
    if (callee.kind == Expr::Kind::Attribute) {
      VRef o = eval(*callee.args[0], fr);
      if (o->k == Val::K::Object) {
        std::string saved = hint_;
        eval_args();
        hint_ = saved;
        const ClassDef* c = find_class(o->obj->cls);
        const SourceFile* f = cls_file_;
        const FunctionDef* m = method(*c, callee.text, o->obj->cls);
        std::vector<VRef> all{o};
        all.insert(all.end(), args.begin(), args.end());
        return call_function(*m, f, all, kwargs, o->obj->cls + "." + callee.text);
      }
      if (o->k != Val::K::Path) throw Unsupported(where_ + ": method " + callee.text + " of " + describe(*o));
      std::string path = o->s + "." + callee.text;
      std::string saved = hint_;
      eval_args();
      hint_ = saved;
      return call_path(path, args, kwargs);
    }
    VRef c = eval(callee, fr);
    if (c->k != Val::K::Path) throw Unsupported(where_ + ": a call of " + describe(*c));
    std::string saved = hint_;
    eval_args();
    hint_ = saved;
    return call_path(c->s, args, kwargs);
  }

  static double number_of(const Val& v, const std::string& where) {
    if (v.data) throw Unsupported(where + ": a number computed from the input's values used where a constant is needed");
    if (v.k == Val::K::Int) return static_cast<double>(v.i);
    if (v.k == Val::K::Float) return v.f;
    if (v.k == Val::K::Bool) return v.b;
    if (v.is_known_tensor() && numel(v.shape) == 1) return elements(v)[0];
    if (v.is_tensor()) throw Unsupported(where + ": a number from a tensor that depends on the input's values");
    throw Error(where + ": " + describe(v) + " is not a number");
  }

  VRef call_path(const std::string& path, const std::vector<VRef>& args,
                 const std::vector<std::pair<std::string, VRef>>& kwargs) {
    auto need = [&](size_t n) {
      if (args.size() < n) throw Error(where_ + ": " + path + "() needs " + std::to_string(n) + " arguments");
    };
    if (path == "torch.device") {
      need(1);
      return make_str(args[0]->s, Val::K::Device);
    }
    if (path.rfind("torch.", 0) == 0) return call_op("aten::" + path.substr(6), args, kwargs);
    if (path.rfind("ops.aten.", 0) == 0) return call_op("aten::" + path.substr(9), args, kwargs);
    // torchvision's operators (namespaces/pytorch/1.13.d/torchvision.ops)
    if (path.rfind("ops.torchvision.", 0) == 0) return call_op("torchvision::" + path.substr(16), args, kwargs);
    // min(a, b) / max(a, b) / min(list) of numbers (prim::min / prim::max)
    if (path == "ops.prim.min" || path == "ops.prim.max") {
      std::vector<VRef> xs = args.size() == 1 && (args[0]->k == Val::K::List || args[0]->k == Val::K::Tuple) ? args[0]->items : args;
      if (xs.empty()) throw Error(where_ + ": " + path + " of an empty list");
      std::string b = path == "ops.prim.min" ? "prim::min" : "prim::max";
      VRef r = xs[0];
      for (size_t k = 1; k < xs.size(); ++k) {
        if (symbolic_)
          if (auto v = symbolic_call(b, {r, xs[k]})) {
            r = *v;
            continue;
          }
        for (const VRef& v : {r, xs[k]})
          if (v->data || v->dyn || (v->k != Val::K::Int && v->k != Val::K::Float)) throw Unsupported(where_ + ": " + path + " of " + describe(*v));
        auto v = scalar_op(b == "prim::min" ? "aten::min" : "aten::max", {r, xs[k]}, where_);
        if (!v) throw Unsupported(where_ + ": " + path + " of " + describe(*r) + " and " + describe(*xs[k]));
        r = *v;
      }
      return r;
    }
    if (path == "ops.prim.NumToTensor") {
      need(1);
      const Val& a = *args[0];
      if (a.k == Val::K::Int && a.dyn) return a.dyn;
      if (a.k == Val::K::Int) return make_known(DType::Int64, {}, {static_cast<double>(a.i)});
      if (a.k == Val::K::Float) return make_known(DType::Float64, {}, {a.f});
      if (a.k == Val::K::Bool) return make_known(DType::Bool, {}, {static_cast<double>(a.b)});
      throw Unsupported(where_ + ": NumToTensor of " + describe(a));
    }
    if (path == "ops.prim.dtype") {  // a tensor's element type as torch numbers it (ScalarType)
      need(1);
      const Val& a = *args[0];
      if (!a.is_tensor() || a.dtype == DType::Undefined) throw Unsupported(where_ + ": prim.dtype of " + describe(a));
      return make_int(scalar_type_code(a.dtype));
    }
    if (path == "ops.prim.device") {  // everything is on the CPU here
      need(1);
      return make_str("cpu", Val::K::Device);
    }
    if (path == "ops.prim.type") {  // a device's type ("cpu": device.type == "cpu" in torchvision's batched_nms)
      need(1);
      if (args[0]->k != Val::K::Device) throw Unsupported(where_ + ": prim.type of " + describe(*args[0]));
      std::string t = args[0]->s.substr(0, args[0]->s.find(':'));
      return make_str(t);
    }
    if (path == "ops.prim.RaiseException") throw Error(where_ + ": the model raises an exception here");
    if (path == "ops.prim.unchecked_cast") {
      need(1);
      return args[0];
    }
    if (path == "unchecked_cast") {  // unchecked_cast(List[int], x)
      need(2);
      return args[1];
    }
    if (path == "int" || path == "float" || path == "bool") {
      need(1);
      if (path != "float" && args[0]->data && (path == "int") == (args[0]->k == Val::K::Int)) return args[0];
      if (path != "float" && args[0]->is_tensor() && !args[0]->known && !args[0]->has_hint && args[0]->shape_known &&
          numel(args[0]->shape) == 1)
        return number_op(path == "int" ? "aten::Int.Tensor" : "aten::Bool.Tensor", {args[0]});
      if (path == "int" && ((args[0]->is_tensor() && args[0]->has_hint) || (args[0]->k == Val::K::Int && args[0]->dyn))) {
        if (args[0]->k == Val::K::Int) return args[0];
        VRef r = make_int(args[0]->hint);
        r->dyn = args[0];
        return r;
      }
      double x = number_of(*args[0], where_);
      if (path == "int") return make_int(to_int64(x, where_));
      if (path == "float") return make_float(x);
      return make_bool(x != 0);
    }
    if (path == "str" && args.size() == 1 && (args[0]->k == Val::K::Str || (args[0]->k == Val::K::Int && !args[0]->data && !args[0]->dyn)))
      return args[0]->k == Val::K::Str ? args[0] : make_str(std::to_string(args[0]->i));
    if (path == "len") {
      need(1);
      if (scanned_.count(args[0].get())) throw Unsupported(where_ + ": len() of a list a loop on the input's values appended to");
      if (args[0]->k == Val::K::List || args[0]->k == Val::K::Tuple) return make_int(static_cast<int64_t>(args[0]->items.size()));
      if (args[0]->is_tensor() && !args[0]->shape.empty() && args[0]->shape_known && is_sym(args[0]->shape[0]) && !args[0]->known)
        return *symbolic_call("aten::size", {args[0], make_int(0)});
      if (args[0]->is_tensor() && !args[0]->shape.empty()) return make_int(args[0]->shape[0]);
      throw Error(where_ + ": len() of " + describe(*args[0]));
    }
    if (path == "getattr") {
      need(2);
      if (args[1]->k != Val::K::Str) throw Error(where_ + ": getattr() with a name that is not a string");
      return attribute(*args[0], args[1]->s);
    }
    if (path == "annotate") {
      need(2);
      return args[1];
    }
    if (path == "uninitialized") return make_none();
    if (path == "range") {
      need(1);
      if (args.size() == 1 && args[0]->k == Val::K::Int && args[0]->data) {  // a loop on data (data_loop)
        VRef r = make_list({});
        r->data = args[0];
        return r;
      }
      if (args.size() == 1 && args[0]->k == Val::K::Int && args[0]->dyn && is_sym(args[0]->i)) {
        // range(n) of a symbolic size (len(torch.unique(x))): a loop on data too
        VRef n = make_int(0);
        n->data = args[0]->dyn;
        VRef r = make_list({});
        r->data = n;
        return r;
      }
      for (const VRef& a : args)
        if (a->data) throw Unsupported(where_ + ": range() with a start or step computed from the input's values");
      int64_t lo = 0, hi = 0, step = 1;
      auto as_int = [&](const Val& v) {
        if (v.k != Val::K::Int) throw Unsupported(where_ + ": range() of " + describe(v));
        return v.i;
      };
      if (args.size() == 1) hi = as_int(*args[0]);
      else {
        lo = as_int(*args[0]);
        hi = as_int(*args[1]);
        if (args.size() > 2) step = as_int(*args[2]);
      }
      if (step == 0) throw Error(where_ + ": range() step is zero");
      std::vector<VRef> items;
      for (int64_t i = lo; step > 0 ? i < hi : i > hi; i += step) {
        if (static_cast<int64_t>(items.size()) >= kMaxLoopTrips) throw Unsupported(where_ + ": a range longer than " + std::to_string(kMaxLoopTrips));
        items.push_back(make_int(i));
      }
      return make_list(std::move(items));
    }
    // Cls.__new__(Cls) of a scripted class (torchvision's ImageList): an object without attributes;
    // its __init__ (a method call) sets them
    if (path.rfind("__torch__.", 0) == 0 && path.size() > 8 && path.compare(path.size() - 8, 8, ".__new__") == 0) {
      std::string cls = path.substr(0, path.size() - 8);
      find_class(cls);  // an error when its code is not in the archive
      auto v = std::make_shared<Val>();
      v->k = Val::K::Object;
      v->obj = std::make_shared<Obj>();
      v->obj->cls = cls;
      v->obj->path = "<a new " + cls + ">";
      return v;
    }
    if (path.rfind("__torch__.", 0) == 0) {
      size_t dot = path.rfind('.');
      const SourceFile* f = file_of(path.substr(0, dot));
      std::string name = path.substr(dot + 1);
      if (f)
        for (const FunctionDef& fn : f->functions)
          if (fn.name == name) return call_function(fn, f, args, kwargs, path);
      throw Error(where_ + ": function " + path + " is not in the archive");
    }
    throw Unsupported(where_ + ": a call of " + path);
  }

  // ------------------------------------------------------------ ops

  struct Match {
    const schema::OpSchema* op = nullptr;
    int score = -1;
    Args args;
  };

  // TorchScript's builtins on lists, strings and None (scripted code calls them as torch.X).
  std::optional<VRef> builtin(const std::string& base, const std::vector<VRef>& args) {
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

  VRef call_op(const std::string& base, const std::vector<VRef>& args,
               const std::vector<std::pair<std::string, VRef>>& kwargs) {
    // x.select(dim, i) with i a number the graph computes (a loop's iteration number): index_select
    // of [i], the dimension squeezed
    if (base == "aten::select" && args.size() == 3 && args[0]->is_tensor() && args[1]->k == Val::K::Int && !args[1]->data &&
        args[2]->k == Val::K::Int && args[2]->data) {
      VRef i = call_op("aten::unsqueeze", {args[2]->data, make_int(0)}, {});
      VRef y = call_op("aten::index_select", {args[0], args[1], i}, {});
      return call_op("aten::squeeze", {y, args[1]}, {});
    }
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
      static const std::set<std::string> shape_takers{"aten::reshape", "aten::view", "aten::expand", "aten::topk"};
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

  static VRef pack(const std::vector<VRef>& r) { return r.size() == 1 ? r[0] : make_list(r, Val::K::Tuple); }

  Match match(const schema::OpSchema& s, const std::vector<VRef>& args,
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
    // takes it positionally (`torch.prod(x, 1)` is prod.dim_int, `torch.eye(3, 4)` eye.m).
    int keyword_only_penalty = 0;
    for (size_t k = 0; k < args.size(); ++k) {
      std::string n = ins[k].expected_name().value_or("");
      if (n == "dtype" || n == "layout" || n == "device" || n == "pin_memory" || n == "memory_format") keyword_only_penalty += 100;
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

  std::string unique(std::string name) {
    if (name.empty()) name = "v";
    auto [it, fresh] = taken_.try_emplace(name, 0);
    if (fresh) return name;
    for (;;) {
      std::string n = name + "." + std::to_string(++it->second);
      if (taken_.try_emplace(n, 0).second) return n;
    }
  }

  void set_type(PortId p, const Val& v, bool graph_port) {
    if (!v.defined || !v.shape_known) return;
    g_.set_attr(p, g_.sym(graph_port ? "type" : "@type"), Value(std::string(ir::dtype_name(v.dtype))));
    Value::List l;
    for (int64_t d : v.shape) l.push_back(dim_value(d));
    g_.set_attr(p, g_.sym(graph_port ? "shape" : "@shape"), Value(std::move(l)));
  }

  PortId port_of(Val& v) {
    if (v.alias && (v.version != v.alias->version || (v.piece ? v.piece_version != v.piece->version : v.seen_piece_writes != v.alias->piece_writes)))
      throw Unsupported(where_ + ": a tensor read after an in-place op wrote a tensor it shares memory with (a view)");
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
  void check_no_symbol(const Val& v, const std::string& op) const {
    if (!symbolic_) return;
    if (v.k == Val::K::Int && is_sym(v.i))
      throw Unsupported(where_ + ": " + op + " takes the size " + sym_name_of(v.i) + " (from a symbolic dimension) as a constant; give --input-shape a number for it");
    if (v.k == Val::K::List || v.k == Val::K::Tuple)
      for (const auto& x : v.items) check_no_symbol(*x, op);
  }

  PortId constant(const Val& v) {
    Budget::run().charge(BudgetKind::Ops, 1, where_);
    OpId op = new_op(g_.sym("prim::Constant"));
    g_.set_attr(op, g_.sym("value"), to_value(v, where_));
    PortId out = g_.add_output(op, g_.sym("output"));
    g_.set_attr(out, g_.sym("@value"), Value(unique("const")));
    g_.set_attr(out, g_.sym("@torch_type"), Value(torch_type_of(v)));
    return out;
  }

  VRef emit(const schema::OpSchema& s, const Args& args, const std::vector<OutInfo>& outs) {
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
      check_no_symbol(a, s.type);
      g_.connect(constant(a), in);
    }
    if (s.outputs.size() != outs.size()) throw Error(where_ + ": " + s.type + ": the shape rule gives the wrong number of outputs");
    std::vector<VRef> results;
    std::string base = hint_.empty() ? s.type.substr(s.type.find("::") + 2, s.type.find('.') - s.type.find("::") - 2) : hint_;
    bool in_place = s.type.find("_.") != std::string::npos || (!s.type.empty() && s.type.back() == '_');
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
      if (self.known) self.known = nullptr;
      if (!bodies_.empty() && (!self.port || scope_of(self.port) != scope()))
        throw Unsupported(where_ + ": " + s.type + " inside an if or loop on data writes a tensor from outside it (not supported)");
      self.port = results[0]->port;
      self.dtype = results[0]->dtype;
      self.shape = results[0]->shape;
      self.shape_known = results[0]->shape_known;
      if (!self.alias) self.alias = std::make_shared<Alias>();
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
};

}  // namespace

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
