// Control flow on data: an `if` or a loop whose condition or count the graph computes becomes a
// prim::If / prim::Loop op with its bodies as graph attributes.
#include "frameworks/torchscript/importer_state.h"

namespace amanda::torchscript {

int64_t Importer::new_run_time_dim() {
  size_t idx = o_.dim_names.size() + scan_dims_.size();
  if (idx >= kMaxSymbols) throw Unsupported(where_ + ": more than " + std::to_string(kMaxSymbols) + " symbolic sizes (sizes known only at run time)");
  scan_dims_.push_back("dyn" + std::to_string(run_time_dims_++));
  symbolic_ = true;
  return kSymbolBase + kSymbolStep * static_cast<int64_t>(idx);
}

// (one symbol per op: unique's values and counts have one length)
void Importer::resolve_run_time_dims(std::vector<OutInfo>& outs) {
  int64_t sym = 0;
  for (auto& o : outs)
    for (auto& d : o.shape)
      if (d == kRunTimeDim) d = sym ? sym : (sym = new_run_time_dim());
}

OpId Importer::new_op(amanda::Symbol type) {
  OpId op = g_.create_op(scope(), type, amanda::Symbol());
  if (!bodies_.empty()) g_.set_name(op, g_.sym(bodies_.back().prefix + std::to_string(bodies_.back().next++)));
  return op;
}

OpId Importer::scope_of(PortId p) const {
  OpId o = g_.port_op(p);
  return g_.is_graph(o) ? o : g_.parent(o);
}

std::string Importer::value_name(PortId p) const {
  if (const Value* v = ir::get_attr(g_, p, "@value"); v && v->is_string()) return v->as_string();
  return std::string(g_.port_name_str(p));
}

PortId Importer::visible_at(PortId src, size_t depth) {
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

VRef Importer::number_op(const std::string& type, const std::vector<VRef>& args) {
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
VRef Importer::data_number_op(const std::string& base, const std::vector<VRef>& args) {
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
PortId Importer::body_result(const VRef& v, const std::string& name) {
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
VRef Importer::like(const Val& v, PortId port) {
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

void Importer::type_port(PortId p, const Val& v, bool graph_port) {
  if (v.is_tensor()) return set_type(p, v, graph_port);
  ir::write_type_attrs(g_, p, g_.types().tensor(v.k == Val::K::Bool ? DType::Bool : DType::Int64, {}));
  if (!graph_port) g_.set_attr(p, g_.sym("@torch_type"), Value(std::string(v.k == Val::K::Bool ? "bool" : "int")));
}

// Whether two values of one variable can be the same output (the kinds, a tensor's type and shape).
// `sizes`: tensors may differ in their sizes (not their rank)
bool Importer::same_kind(const Val& a, const Val& b, bool sizes) {
  if (a.is_tensor() != b.is_tensor()) return false;
  if (a.is_tensor())
    return a.defined && b.defined && a.shape_known && b.shape_known && a.dtype == b.dtype &&
           (sizes ? a.shape.size() == b.shape.size() : a.shape == b.shape);
  return a.k == b.k && (a.k == Val::K::Int || a.k == Val::K::Bool);
}

bool Importer::same_number(const Val& a, const Val& b) {
  return !a.data && !b.data && a.k == b.k &&
         ((a.k == Val::K::Int && a.i == b.i) || (a.k == Val::K::Bool && a.b == b.b));
}

std::unordered_set<const Val*> Importer::lists_of(const Frame& fr) const {
  std::unordered_set<const Val*> l;
  for (const auto& [n, v] : fr.vars)
    if (v->k == Val::K::List) l.insert(v.get());
  return l;
}

void Importer::assigned_names(const std::vector<StmtPtr>& body, std::set<std::string>& out) {
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
void Importer::written_in_place(const std::vector<StmtPtr>& body, std::set<std::string>& out) {
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

void Importer::data_if(const Stmt& s, Frame& fr, const VRef& cv) {
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

void Importer::data_loop(const Stmt& s, Frame& fr, const VRef& count, const VRef& cond0) {
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

void Importer::assign(const Expr& t, const VRef& v, Frame& fr) {
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

bool Importer::truth(const Val& v, const char* what) {
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

}  // namespace amanda::torchscript
