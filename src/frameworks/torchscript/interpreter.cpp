// The interpreter of the serialized Python: classes and methods, statements, expressions, calls.
#include "frameworks/torchscript/importer_state.h"

namespace amanda::torchscript {

// __torch__.torch.nn.modules.conv.___torch_mangle_0.Conv2d -> code/__torch__/torch/nn/modules/conv/___torch_mangle_0.py
const SourceFile* Importer::file_of(const std::string& module) {
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

const ClassDef* Importer::find_class(const std::string& qualname) {
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

const FunctionDef* Importer::method(const ClassDef& c, std::string_view name, const std::string& qualname) {
  for (const FunctionDef& f : c.methods)
    if (f.name == name) return &f;
  throw Error(zip_.path() + ": class " + qualname + " has no method " + std::string(name));
}

VRef Importer::call_function(const FunctionDef& f, const SourceFile* file, const std::vector<VRef>& args,
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

Flow Importer::exec(const std::vector<StmtPtr>& body, Frame& fr, VRef& ret) {
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

VRef Importer::eval(const Expr& e, Frame& fr) {
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

VRef Importer::attribute(const Val& o, const std::string& name) {
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
VRef Importer::arith(const std::string& op, const VRef& a, const VRef& b) {
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

VRef Importer::compare(const std::string& op, const VRef& a, const VRef& b) {
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

VRef Importer::call(const Expr& e, Frame& fr) {
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

double Importer::number_of(const Val& v, const std::string& where) {
  if (v.data) throw Unsupported(where + ": a number computed from the input's values used where a constant is needed");
  if (v.k == Val::K::Int) return static_cast<double>(v.i);
  if (v.k == Val::K::Float) return v.f;
  if (v.k == Val::K::Bool) return v.b;
  if (v.is_known_tensor() && numel(v.shape) == 1) return elements(v)[0];
  if (v.is_tensor()) throw Unsupported(where + ": a number from a tensor that depends on the input's values");
  throw Error(where + ": " + describe(v) + " is not a number");
}

VRef Importer::call_path(const std::string& path, const std::vector<VRef>& args,
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

}  // namespace amanda::torchscript
