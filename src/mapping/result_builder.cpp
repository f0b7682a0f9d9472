// The result builder (result_builder.h): a match rewritten with its rule's mapper.
#include "result_builder.h"

#include <algorithm>

#include <fmt/format.h>

#include "compact_pattern.h"

namespace amanda::mapping::engine {

// A name no op of the scope has: `base`, else base_1, base_2, ... (interned once, as a symbol;
// a name the graph's symbol table did not hold yet is no op's name, so no lookup then).
Symbol ResultBuilder::unique_op_name(OpId scope, const std::string& base) {
  auto fresh = [&](Symbol& s, const std::string& n) {
    size_t before = g_.symbols().size();
    s = name_sym(n);
    return g_.symbols().size() != before || !g_.find_op(scope, s);
  };
  Symbol s = 0;
  if (fresh(s, base)) return s;
  for (int k = 1;; ++k)
    if (fresh(s, base + "_" + std::to_string(k))) return s;
}

std::vector<PortId> ResultBuilder::consumers(PortId out) {
  std::vector<PortId> c;
  for (EdgeId x = g_.first_out_edge(out); x; x = g_.next_out_edge(x)) c.push_back(g_.edge_dst(x));
  return c;
}

// The src port a dst port spec stands for.
PortId ResultBuilder::source_port(const Match& m, const PortSpec& ps, PortDir dir, bool single, const Bindings& b) {
  if (!ps.ref.empty()) {
    auto p = b.port(ps.ref);
    return p ? *p : PortId();
  }
  if (!single || ps.value) return PortId();
  if (ps.name) {
    Value n = ps.name->eval(b);
    return n.is_string() ? g_.find_port(m.ops[0], dir, sym(n.as_string())) : PortId();
  }
  PortList ports = data_ports(m.ops[0], dir);
  return ps.position < ports.size() ? ports[ps.position] : PortId();
}

std::string ResultBuilder::port_name_for(const PortSpec& ps, PortId src, const schema::OpSchema* s, PortDir dir, const Bindings& b) {
  if (ps.name) {
    Value n = ps.name->eval(b);
    if (n.is_string()) return n.as_string();
    throw EvalError("a port name evaluates to " + value_str(n));
  }
  if (src && !ps.by_position) return std::string(g_.port_name_str(src));
  if (s && ps.by_position) return schema_port_name(dir == PortDir::In ? &s->inputs : &s->outputs, ps.position, "_" + std::to_string(ps.position));
  if (s) {
    const auto& list = dir == PortDir::In ? s->inputs : s->outputs;
    if (ps.position < list.size())
      if (auto n = list[ps.position].expected_name()) return *n;
  }
  return "_" + std::to_string(ps.position);
}

// The name of port #i by the schema: its own name, or NAME.K within a variadic last port.
std::string ResultBuilder::schema_port_name(const std::vector<schema::PortSchema>* ports, size_t i, std::string_view fallback) {
  if (ports && !ports->empty()) {
    size_t last = ports->size() - 1;
    if ((*ports)[last].arity == schema::Arity::Variadic && i >= last)
      if (auto n = (*ports)[last].expected_name()) return *n + "." + std::to_string(i - last);
    if (i < ports->size())
      if (auto n = (*ports)[i].expected_name()) return *n;
  }
  return std::string(fallback);
}

ResultBuilder::Plan ResultBuilder::plan_ports(const Match& m, size_t d, bool single, const std::vector<PortId>& bin, const std::vector<PortId>& bout, bool implicit) {
  const CRule& cr = *m.rule;
  const DstSide& ds = *m.dst;
  const OpSpec& os = ds.pattern->ops[d];
  const schema::OpSchema* s = ds.schema[d];
  Plan p;
  auto in_link = [&](PortId src, const std::string& name) {
    InLink l;
    l.name = sym(name);
    if (src) {
      l.producer = g_.producer(src);
      l.attrs = g_.attrs(src);
    }
    return l;
  };
  auto out_link = [&](PortId src, const std::string& name) {
    OutLink l;
    l.name = sym(name);
    if (src) {
      l.consumers = consumers(src);
      l.attrs = g_.attrs(src);
      l.type = g_.port_type(src);
    }
    return l;
  };
  if (implicit) {  // several src ops -> one dst op without port lists: the boundary, in order
    p.rebuild_in = p.rebuild_out = true;
    for (size_t i = 0; i < bin.size(); ++i) {
      PortSpec tmp;
      tmp.position = i;
      p.ins.push_back(in_link(bin[i], schema_port_name(s ? &s->inputs : nullptr, i, g_.port_name_str(bin[i]))));
    }
    for (size_t i = 0; i < bout.size(); ++i) {
      p.outs.push_back(out_link(bout[i], schema_port_name(s ? &s->outputs : nullptr, i, g_.port_name_str(bout[i]))));
    }
    return p;
  }
  bool primary = d == ds.primary;
  if (!os.inputs_given && single && primary) {
    // Inputs whose constant value the matcher took (`const:`) go away unless the mapper lists ports.
    std::vector<PortId> taken;
    for (const PortSpec& ps : cr.rule->src.ops[0].inputs)
      if (ps.value)
        if (PortId q = locate(m.ops[0], PortDir::In, ps, m.b)) taken.push_back(q);
    if (!taken.empty()) {
      p.rebuild_in = true;
      for (PortId q : data_ports(m.ops[0], PortDir::In))
        if (std::find(taken.begin(), taken.end(), q) == taken.end()) p.ins.push_back(in_link(q, std::string(g_.port_name_str(q))));
    }
  }
  if (os.inputs_given) {
    p.rebuild_in = true;
    for (const PortSpec& ps : os.inputs) {
      PortId src = source_port(m, ps, PortDir::In, single && primary, m.b);
      InLink l = in_link(src, port_name_for(ps, src, s, PortDir::In, m.b));
      if (ps.value) {
        Value v = ps.value->eval(m.b);
        if (!v.is_null() && !v.is_tensor() && !t_.constant.any_value) throw EvalError("const: " + value_str(v) + " is not a tensor (write tensor(x, 'int64'))");
        if (!v.is_null()) l.constant = std::move(v);
      }
      l.droppable = ps.optional;
      p.ins.push_back(std::move(l));
    }
  }
  if (os.outputs_given) {
    p.rebuild_out = true;
    for (const PortSpec& ps : os.outputs) {
      PortId src = source_port(m, ps, PortDir::Out, single && primary, m.b);
      p.outs.push_back(out_link(src, port_name_for(ps, src, s, PortDir::Out, m.b)));
    }
  }
  return p;
}

OpId ResultBuilder::make_constant(OpId scope, const std::string& base, const Value& v) {
  const ConstantSpec& c = t_.constant;
  if (!v.is_tensor() && !c.any_value) throw EvalError("const: " + value_str(v) + " is not a tensor (write tensor(x, 'int64'))");
  OpId op = rw_->create_op(tsym(c.type), unique_op_name(scope, base));
  rw_->set_attr(op, tsym(c.attr), v);
  rw_->add_port(op, PortDir::Out, tsym(c.port));
  return op;
}

void ResultBuilder::build_ports(OpId op, Plan& p, OpId scope, const std::string& base) {
  if (p.rebuild_in) {
    // trailing ports with nothing to connect are left out (ONNX's omitted optional inputs)
    while (!p.ins.empty() && p.ins.back().droppable && !p.ins.back().producer && !p.ins.back().constant) p.ins.pop_back();
    for (PortId old : data_ports(op, PortDir::In)) rw_->erase_port(old);
    for (InLink& l : p.ins) {
      PortId np = rw_->add_port(op, PortDir::In, l.name);
      if (!l.attrs.empty()) rw_->set_attr_list(np, std::move(l.attrs));
      if (l.constant) {
        rw_->set_insertion_point(scope, op);
        OpId c = make_constant(scope, base + "_" + std::string(g_.str(l.name)), *l.constant);
        rw_->connect(g_.outputs(c).back(), np);
      } else if (l.producer) {
        rw_->connect(l.producer, np);
      }
    }
    // move the new data ports before captures (@ ports) and control ports: rebuild order
    reorder_inputs(op);
  }
  if (p.rebuild_out) {
    for (PortId old : data_ports(op, PortDir::Out)) rw_->erase_port(old);
    for (OutLink& l : p.outs) {
      PortId np = rw_->add_port(op, PortDir::Out, l.name);
      if (!l.attrs.empty()) rw_->set_attr_list(np, std::move(l.attrs));
      if (l.type) rw_->set_port_type(np, l.type);
      for (PortId c : l.consumers) rw_->connect(np, c);
    }
  }
}

// Capture ports ("@capture.x") must stay after the data inputs: re-add them at the end.
void ResultBuilder::reorder_inputs(OpId op) {
  std::vector<PortId> specials;
  for (PortId p : g_.inputs(op))
    if (!g_.is_control(p) && g_.port_name_str(p).starts_with("@")) specials.push_back(p);
  if (specials.empty()) return;
  std::vector<PortId> ins(g_.inputs(op).begin(), g_.inputs(op).end());
  size_t first_special = ins.size();
  for (size_t i = 0; i < ins.size(); ++i)
    if (!g_.is_control(ins[i]) && g_.port_name_str(ins[i]).starts_with("@")) {
      first_special = i;
      break;
    }
  bool ok = true;
  for (size_t i = first_special; i < ins.size(); ++i)
    if (!g_.is_control(ins[i]) && !g_.port_name_str(ins[i]).starts_with("@")) ok = false;
  if (ok) return;
  for (PortId sp : specials) {
    PortId np = rw_->add_port(op, PortDir::In, g_.port_name(sp));
    ir::AttrList copy = g_.attrs(sp);
    if (!copy.empty()) rw_->set_attr_list(np, std::move(copy));
    if (PortId src = g_.producer(sp)) rw_->connect(src, np);
    std::vector<PortId> dsts;
    for (EdgeId x = g_.first_out_edge(sp); x; x = g_.next_out_edge(x)) dsts.push_back(g_.edge_dst(x));
    for (PortId d : dsts) rw_->connect(np, d);
    rw_->erase_port(sp);
  }
}

// The attribute values of one dst op, appended to attr_values_ (see result_builder.h).
void ResultBuilder::eval_attrs(const OpSpec& os, const Bindings& b) {
  for (const AttrSpec& a : os.attrs) attr_values_.emplace_back(tsym(a.name), a.expr ? a.expr->eval(b) : Value());
}

// A reused op keeps its `@` attributes, and, when the table carries attributes, the ones the
// dst schema has; then the mapper's values are set.
void ResultBuilder::set_attrs(OpId op, const schema::OpSchema* s, std::span<std::pair<Symbol, Value>> values, bool reused, bool carried) {
  if (reused) {
    auto dropped = [&](Symbol key) {
      std::string_view k = g_.str(key);
      return !k.starts_with("@") && (!carried || (s && !s->attr(k)));
    };
    absl::InlinedVector<Symbol, 4> drop;
    for (const auto& e : g_.attrs(op))
      if (dropped(e.first)) drop.push_back(e.first);
    for (Symbol k : drop) rw_->erase_attr(op, k);
  }
  for (auto& [k, v] : values) {
    if (v.is_null()) rw_->erase_attr(op, k);
    else rw_->set_attr(op, k, std::move(v));
  }
}

// The mapper for this match: the rule's, or, for a template (lists: `xs...`, `for` lines), its
// expansion for the match's lengths and values, compiled once per expanded text.
const DstSide& ResultBuilder::dst_side(const Match& m) {
  const CRule& cr = *m.rule;
  const Rule& r = *cr.rule;
  if (!r.dst_template) return cr.dst;
  const text::Tree* g = r.dst_tree.find("graph");
  std::string text = expand_lists(g->scalar.as_string(), r.name, g->loc, [&](const std::string& e) -> int64_t {
    auto [it, fresh] = impl_.count_exprs.try_emplace(e);
    if (fresh) it->second = parse_expr(e, g->loc);
    Value v = it->second->eval(m.b);
    if (!v.is_int()) throw EvalError("'" + e + "' gives " + value_str(v) + ", not an integer");
    return v.as_int();
  });
  std::string key = fmt::format("{}\x1f{}", static_cast<const void*>(&r), text);
  auto [it, fresh] = impl_.expansions.try_emplace(std::move(key));
  if (fresh) {
    try {
      auto x = std::make_unique<CompiledTable::Impl::Expansion>();
      x->pattern = pattern_from_tree(with_graph_text(r.dst_tree, std::move(text)), r.name);
      x->side.pattern = &x->pattern;
      for (const OpSpec& o : x->pattern.ops) x->side.schema.push_back(resolve_op(impl_.reg, t_, t_.dst, o.type));
      x->side.primary = primary_of(r, x->pattern);
      it->second = std::move(x);
    } catch (...) {
      impl_.expansions.erase(it);
      throw;
    }
  }
  return it->second->side;
}

absl::InlinedVector<OpId, 2> ResultBuilder::rewrite_match(Match& m, OpId scope) {
  const CRule& cr = *m.rule;
  const Rule& r = *cr.rule;
  const DstSide& ds = dst_side(m);
  m.dst = &ds;
  const Pattern& dst = *ds.pattern;
  bool single = r.src.ops.size() == 1;
  OpId last = last_in_body(m);
  std::string base(g_.name_str(single ? m.ops[0] : last));
  // Boundary of a several-op match (for implicit wiring and control edges).
  std::vector<PortId> bin, bout, ctrl_in, ctrl_out;
  auto in_match = [&](OpId op) { return std::find(m.ops.begin(), m.ops.end(), op) != m.ops.end(); };
  // (A single-op match needs none of it: its ports are linked by name or position.)
  for (size_t k = 0; k < (single ? 0 : m.ops.size()); ++k) {
    OpId op = m.ops[k];
    // Inputs whose constant value the matcher took (`const:`) are not part of the boundary.
    std::vector<PortId> taken;
    for (const PortSpec& ps : r.src.ops[k].inputs)
      if (ps.value)
        if (PortId q = locate(op, PortDir::In, ps, m.b)) taken.push_back(q);
    for (PortId p : data_ports(op, PortDir::In)) {
      PortId src = g_.producer(p);
      if (std::find(taken.begin(), taken.end(), p) != taken.end()) continue;
      if (!src || !in_match(g_.port_op(src))) bin.push_back(p);
    }
    for (PortId p : data_ports(op, PortDir::Out)) {
      bool inner = false;
      for (EdgeId x = g_.first_out_edge(p); x; x = g_.next_out_edge(x))
        if (in_match(g_.port_op(g_.edge_dst(x)))) inner = true;
      if (!inner) bout.push_back(p);
    }
    if (!single) {
      if (PortId c = g_.find_control(op, PortDir::In))
        for (EdgeId x = g_.first_in_edge(c); x; x = g_.next_in_edge(x))
          if (!in_match(g_.port_op(g_.edge_src(x)))) ctrl_in.push_back(g_.edge_src(x));
      if (PortId c = g_.find_control(op, PortDir::Out))
        for (EdgeId x = g_.first_out_edge(c); x; x = g_.next_out_edge(x))
          if (!in_match(g_.port_op(g_.edge_dst(x)))) ctrl_out.push_back(g_.edge_dst(x));
    }
  }
  // Plan every dst op's ports while the matched ops still exist.
  size_t n = dst.ops.size();
  absl::InlinedVector<Plan, 1> plans(n);  // (inline: most rules make one op)
  bool implicit = !single && n == 1 && !dst.ops[0].inputs_given && !dst.ops[0].outputs_given;
  for (size_t d = 0; d < n; ++d) plans[d] = plan_ports(m, d, single, bin, bout, implicit);
  // Names and attributes are evaluated before anything changes too.
  absl::InlinedVector<std::string, 1> names(n);
  for (size_t d = 0; d < n; ++d) {
    const OpSpec& os = dst.ops[d];
    if (os.name) {
      Value v = os.name->eval(m.b);
      if (!v.is_string()) throw EvalError("the op name evaluates to " + value_str(v));
      names[d] = v.as_string();
    }
  }
  attr_values_.clear();
  absl::InlinedVector<size_t, 3> attr_at(n + 1);
  for (size_t d = 0; d < n; ++d) {
    attr_at[d] = attr_values_.size();
    eval_attrs(dst.ops[d], m.b);
  }
  attr_at[n] = attr_values_.size();
  // Inner links must not point into ops that go away.
  if (!single)
    for (const Plan& p : plans)
      for (const InLink& l : p.ins)
        if (l.producer && in_match(g_.port_op(l.producer)))
          throw Error("a dst port is linked to a value made inside the match");
  OpId after = g_.next_sibling(last);
  while (after && in_match(after)) after = g_.next_sibling(after);
  absl::InlinedVector<OpId, 2> made(n);
  OpId reuse = single ? m.ops[0] : OpId();
  Symbol keep_name = single ? 0 : g_.name(last);
  bool keep_generated = single ? false : g_.name_generated(last);
  if (!single) {
    // The matched ops go (erased only once nothing uses them: their uses are let go first; an
    // erased op gives up its name at once, so the op that takes over may take it).
    for (OpId op : m.ops) {
      for (PortId p : g_.outputs(op))
        while (EdgeId x = g_.first_out_edge(p)) rw_->disconnect(x);
      if (PortId c = g_.find_control(op, PortDir::Out))
        while (EdgeId x = g_.first_out_edge(c)) rw_->disconnect(x);
    }
    for (OpId op : m.ops) rw_->erase_op(op);
  }
  rw_->set_insertion_point(scope);
  for (size_t d = 0; d < n; ++d) {
    const OpSpec& os = dst.ops[d];
    OpId op;
    bool reused = d == ds.primary && reuse;
    if (reused) {
      op = reuse;
      rw_->set_op_type(op, tsym(os.type));
      if (!names[d].empty()) rw_->set_name(op, unique_op_name(scope, names[d]));
    } else {
      std::string nm = !names[d].empty() ? names[d]
                       : d == ds.primary && keep_name ? std::string(g_.str(keep_name))
                                                      : base + "/" + os.type;
      op = rw_->create_op(tsym(os.type), unique_op_name(scope, nm), false);
      if (d == ds.primary && keep_generated && names[d].empty()) rw_->set_name(op, g_.name(op), true);
    }
    made[d] = op;
    set_attrs(op, ds.schema[d], std::span(attr_values_.data() + attr_at[d], attr_at[d + 1] - attr_at[d]), reused,
              t_.carry_attrs);
  }
  if (o_.on_rewrite)
    for (size_t d = 0; d < n; ++d)
      o_.on_rewrite(made[d], fmt::format("rule '{}' of {} -> {} ({})", r.name, t_.src, t_.dst, r.loc.str()));
  // Order: dst ops in declaration order where the last matched op was.
  for (size_t d = 0; d < n; ++d) rw_->move_before(made[d], after);
  for (size_t d = 0; d < n; ++d) build_ports(made[d], plans[d], scope, std::string(g_.name_str(made[d])));
  // Edges between dst ops.
  for (const EdgeSpec& e : dst.edges) {
    PortId out = dst_port(made[e.src_op], dst.ops[e.src_op], PortDir::Out, e.src_port, m.b);
    PortId in = dst_port(made[e.dst_op], dst.ops[e.dst_op], PortDir::In, e.dst_port, m.b);
    for (EdgeId x = g_.first_in_edge(in); x; x = g_.first_in_edge(in)) rw_->disconnect(x);
    rw_->connect(out, in);
  }
  if (!single && n) {
    OpId p = made[ds.primary];
    for (PortId c : ctrl_in) rw_->connect(c, rw_->control_in(p));
    for (PortId c : ctrl_out) rw_->connect(rw_->control_out(p), c);
  }
  // Constants the matcher read that nothing uses any more.
  for (OpId c : m.const_producers) {
    // (one constant may feed several matched inputs: erased at the first, skipped after)
    if (!g_.valid(c) || g_.parent(c) != scope || rw_->erased(c)) continue;
    bool used = false;
    for (PortId o : g_.outputs(c))
      if (g_.first_out_edge(o)) used = true;
    if (!used) rw_->erase_op(c);
  }
  return made;
}

// The matched op that comes last in its body: by the positions of the one pass; in fixed-point
// mode (ops come and go) by walking the siblings out from the first one.
OpId ResultBuilder::last_in_body(const Match& m) {
  OpId last = m.ops[0];
  if (!fixed_) {
    for (OpId op : m.ops)
      if (pos_[op.value] > pos_[last.value]) last = op;
    return last;
  }
  for (OpId op : m.ops) {
    if (op == last) continue;
    // Is op after last? Walk both ways from last, one step each, until op is found.
    OpId fwd = g_.next_sibling(last), back = g_.prev_sibling(last);
    while (fwd || back) {
      if (fwd == op) {
        last = op;
        break;
      }
      if (back == op) break;
      if (fwd) fwd = g_.next_sibling(fwd);
      if (back) back = g_.prev_sibling(back);
    }
  }
  return last;
}

PortId ResultBuilder::dst_port(OpId op, const OpSpec& os, PortDir dir, const std::string& name, const Bindings& b) {
  std::string n = name;
  if (!n.empty() && n[0] == '#') {
    size_t k = std::stoul(n.substr(1));
    const PortSpec& ps = (n.back() == 'i' ? os.inputs : os.outputs)[k];
    if (!ps.name) {  // a port by position (the compact form): the k-th data port made for it
      PortList ports = data_ports(op, dir);
      if (k < ports.size()) return ports[k];
    }
    n = ps.name ? ps.name->eval(b).as_string() : "_" + std::to_string(k);
  }
  if (PortId p = g_.find_port(op, dir, sym(n))) return p;
  return rw_->add_port(op, dir, sym(n));
}

}  // namespace amanda::mapping::engine
