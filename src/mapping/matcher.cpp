// The matcher (matcher.h): a rule's pattern against the graph at an op.
#include "matcher.h"

#include <algorithm>

#include <fmt/format.h>

#include "amanda/ir/conventions.h"

namespace amanda::mapping::engine {

Matcher::Matcher(ApplyContext& c) : ContextUser(c) {
  for (const auto& [type, list] : impl_.by_type) dispatch_[g_.sym(type)] = &list;
}

bool Matcher::find_match(OpId op, Match& m) {
  auto it = dispatch_.find(g_.type(op));
  if (it == dispatch_.end()) {
    if (why_) note("no rule matches an op of type '" + std::string(g_.type_str(op)) + "'");
    return false;
  }
  for (const Candidate& c : *it->second) {
    m.rule = c.rule;
    m.ops.assign(c.rule->rule->src.ops.size(), OpId());
    m.b.clear();
    m.b.graph = &g_;
    m.const_producers.clear();
    std::string why;
    bool ok = false;
    try {
      ok = match_op(*c.rule, c.start, op, m, why) && extend(*c.rule, c.rule->plans[c.start], 0, m, why);
    } catch (const EvalError& e) {
      why = e.what();
    }
    if (ok) {
      if (why_) note("rule '" + c.rule->rule->name + "': matches");
      return true;
    }
    if (why_) note("rule '" + c.rule->rule->name + "': " + why);
  }
  return false;
}

bool Matcher::extend(const CRule& cr, const std::vector<Step>& plan, size_t k, Match& m, std::string& why) {
  const Rule& r = *cr.rule;
  if (k == plan.size()) return finish(cr, m, why);
  const Step& st = plan[k];
  const EdgeSpec& e = r.src.edges[st.edge];
  std::vector<OpId> cands;
  if (st.forward) {
    PortId out = find_spec_port(cr, e.src_op, m.ops[e.src_op], PortDir::Out, e.src_port, m.b);
    if (!out) {
      why = "op '" + std::string(g_.name_str(m.ops[e.src_op])) + "' has no output '" + e.src_port + "'";
      return false;
    }
    for (EdgeId x = g_.first_out_edge(out); x; x = g_.next_out_edge(x)) cands.push_back(g_.port_op(g_.edge_dst(x)));
  } else {
    PortId in = find_spec_port(cr, e.dst_op, m.ops[e.dst_op], PortDir::In, e.dst_port, m.b);
    PortId src = in ? g_.producer(in) : PortId();
    if (src) cands.push_back(g_.port_op(src));
  }
  std::string last;
  for (OpId c : cands) {
    if (g_.type_str(c) != r.src.ops[st.spec].type || claimed(c) ||
        std::find(m.ops.begin(), m.ops.end(), c) != m.ops.end() || g_.parent(c) != g_.parent(m.ops[0] ? m.ops[0] : c))
      continue;
    Bindings saved = m.b;
    size_t consts = m.const_producers.size();
    std::string w;
    if (match_op(cr, st.spec, c, m, w) && extend(cr, plan, k + 1, m, w)) return true;
    m.b = std::move(saved);
    m.const_producers.resize(consts);
    m.ops[st.spec] = OpId();
    last = w;
  }
  why = !last.empty() || !why_ ? last : "no op of type '" + r.src.ops[st.spec].type + "' is connected there";
  return false;
}

// All pattern ops are matched: check every pattern edge, refuse inner values used outside,
// then the condition.
bool Matcher::finish(const CRule& cr, Match& m, std::string& why) {
  const Rule& r = *cr.rule;
  for (const EdgeSpec& e : r.src.edges) {
    PortId out = find_spec_port(cr, e.src_op, m.ops[e.src_op], PortDir::Out, e.src_port, m.b);
    PortId in = find_spec_port(cr, e.dst_op, m.ops[e.dst_op], PortDir::In, e.dst_port, m.b);
    if (!out || !in || g_.producer(in) != out) {
      why = fmt::format("the edge {}.{} -> {}.{} is not there", r.src.ops[e.src_op].type, e.src_port, r.src.ops[e.dst_op].type, e.dst_port);
      return false;
    }
  }
  for (size_t s = 0; s < m.ops.size(); ++s)
    for (const std::string& pn : cr.inner_outputs[s]) {
      PortId out = find_spec_port(cr, s, m.ops[s], PortDir::Out, pn, m.b);
      for (EdgeId x = g_.first_out_edge(out); x; x = g_.next_out_edge(x)) {
        OpId user = g_.port_op(g_.edge_dst(x));
        if (std::find(m.ops.begin(), m.ops.end(), user) == m.ops.end()) {
          why = fmt::format("refused: the value {} is used outside the match (by {})", g_.path(out), g_.path(user));
          return false;
        }
      }
    }
  if (r.when) {
    Value v = r.when->eval(m.b);
    if (!v.is_bool() || !v.as_bool()) {
      why = why_ ? "condition '" + r.when->str() + "' does not hold" + describe_refs(*r.when, m.b) : "condition does not hold";
      return false;
    }
  }
  return true;
}

std::string Matcher::describe_refs(const Expr& e, const Bindings& b) {
  std::vector<std::string> refs;
  e.refs(refs);
  std::string s;
  for (const auto& r : refs)
    if (const Value* v = b.get(r)) s += (s.empty() ? " (" : ", ") + r + " = " + value_str(*v);
  return s.empty() ? s : s + ")";
}

// The port a pattern names: "#k[io]" = the k-th PortSpec of that op; else a port name.
PortId Matcher::find_spec_port(const CRule& cr, size_t spec, OpId op, PortDir dir, const std::string& name, const Bindings& b) {
  if (!op) return PortId();
  if (!name.empty() && name[0] == '#') {
    size_t k = std::stoul(name.substr(1));
    bool in = name.back() == 'i';
    const PortSpec& ps = (in ? cr.rule->src.ops[spec].inputs : cr.rule->src.ops[spec].outputs)[k];
    if (!ps.ref.empty())
      if (auto p = b.port(ps.ref)) return *p;
    return locate(op, in ? PortDir::In : PortDir::Out, ps, b);
  }
  return g_.find_port(op, dir, tsym(name));
}

const Value* Matcher::attr_or_default(OpId op, const schema::OpSchema* s, const std::string& name) {
  if (const Value* v = g_.attr(op, tsym(name))) return v;
  if (s)
    if (const schema::AttrSchema* a = s->attr(name)) return a->type.default_value();
  return nullptr;
}

template <class Get>
bool Matcher::match_attrs(const std::vector<AttrSpec>& specs, const Get& get, Match& m,
                 std::string& why, const std::string& where) {
  for (const AttrSpec& a : specs) {
    const Value* v = get(a.name);
    if (!a.expr) {
      if (v) {
        why = where + "attribute " + a.name + " is present (" + value_str(*v) + ")";
        return false;
      }
      continue;
    }
    if (a.expr->kind == Expr::Kind::Ref) {
      if (const Value* bound = m.b.get(a.expr->name)) {
        const Value& want = bound->is_null() && a.expr->ref_default ? *a.expr->ref_default : *bound;
        if (!v ? !want.is_null() : *v != want) {
          why = where + "attribute " + a.name + " differs from " + a.expr->name;
          return false;
        }
      } else {
        m.b.set(a.expr->name, v ? *v : (a.expr->ref_default ? *a.expr->ref_default : Value()));
      }
      continue;
    }
    if (!v) {
      why = where + "attribute " + a.name + " is missing";
      return false;
    }
    if (!a.expr->bind(*v, m.b)) {
      why = where + "attribute " + a.name + " = " + value_str(*v) + ", not " + a.expr->str();
      return false;
    }
  }
  return true;
}

// The constant an input reads: a constant op's value, or an initializer that is not a graph input.
std::optional<Value> Matcher::constant_of(PortId in, OpId* producer) {
  PortId src = g_.producer(in);
  if (!src) return std::nullopt;
  OpId op = g_.port_op(src);
  if (op == g_.root() || g_.is_graph(op)) {
    if (const Value* init = ir::fixed_initializer(g_, src)) return *init;
    return std::nullopt;
  }
  const ConstantSpec& c = t_.reverse_constant;
  if (g_.type_str(op) != c.type) return std::nullopt;
  const Value* v = g_.attr(op, tsym(c.attr));
  if (!v) return std::nullopt;
  *producer = op;
  return *v;
}

bool Matcher::match_ports(const CRule& cr, size_t spec, OpId op, PortDir dir, Match& m, std::string& why) {
  const OpSpec& os = cr.rule->src.ops[spec];
  const auto& specs = dir == PortDir::In ? os.inputs : os.outputs;
  const char* side = dir == PortDir::In ? "input" : "output";
  for (const PortSpec& ps : specs) {
    if (ps.variadic) {
      if (!match_list(op, dir, ps, m, why)) return false;
      continue;
    }
    PortId p = locate(op, dir, ps, m.b);
    std::string label = ps.name && ps.name->kind == Expr::Kind::Literal ? ps.name->str() : "#" + std::to_string(ps.position);
    bool connected = p && (dir == PortDir::Out || g_.producer(p));
    if (!p || (ps.value && !connected)) {
      if (!ps.optional) {
        why = fmt::format("{} {} is {}", side, label, p ? "not connected" : "missing");
        return false;
      }
      if (ps.value && ps.value->kind == Expr::Kind::Ref && !m.b.has(ps.value->name)) m.b.set(ps.value->name, Value());
      if (!ps.ref.empty()) m.b.set(ps.ref, Value());
      continue;
    }
    if (ps.name && ps.name->kind == Expr::Kind::Ref) m.b.set(ps.name->name, Value(std::string(g_.port_name_str(p))));
    if (!ps.ref.empty()) m.b.set_port(ps.ref, p);
    if (ps.value) {
      OpId producer;
      std::optional<Value> c = constant_of(p, &producer);
      if (!c) {
        why = fmt::format("{} {} does not come from a constant", side, label);
        return false;
      }
      if (!ps.value->bind(*c, m.b)) {
        why = fmt::format("{} {} = {}, not {}", side, label, value_str(*c), ps.value->str());
        return false;
      }
      if (producer) m.const_producers.push_back(producer);
    }
    if (!ps.attrs.empty() &&
        !match_attrs(ps.attrs, [&](const std::string& n) { return g_.attr(p, tsym(n)); }, m, why, std::string(side) + " " + label + ": "))
      return false;
  }
  return true;
}

// A list capture (ref: xs...): the ports NAME.0, NAME.1, ... as long as they go on; each bound
// as "xs[k]", xs itself to the list of their names (len(xs)).
bool Matcher::match_list(OpId op, PortDir dir, const PortSpec& ps, Match& m, std::string& why) {
  const std::string& base = ps.name->literal.as_string();
  Value::List names;
  for (size_t k = 0;; ++k) {
    std::string n = base + "." + std::to_string(k);
    PortId p = g_.find_port(op, dir, sym(n));
    if (!p) break;
    m.b.set_port(ps.ref + "[" + std::to_string(k) + "]", p);
    names.emplace_back(std::move(n));
  }
  if (names.empty() && !ps.optional) {
    why = fmt::format("{} {} has no ports {}.0, {}.1, ...", dir == PortDir::In ? "input" : "output", base, base, base);
    return false;
  }
  m.b.set(ps.ref, Value(std::move(names)));
  return true;
}

bool Matcher::match_op(const CRule& cr, size_t spec, OpId op, Match& m, std::string& why) {
  const OpSpec& os = cr.rule->src.ops[spec];
  if (g_.type_str(op) != os.type) {
    why = "type is " + std::string(g_.type_str(op));
    return false;
  }
  if (claimed(op)) {
    why = "the op is already taken by another match";
    return false;
  }
  m.ops[spec] = op;
  if (os.name && !os.name->bind(Value(std::string(g_.name_str(op))), m.b)) {
    why = "name is " + std::string(g_.name_str(op));
    return false;
  }
  const schema::OpSchema* s = cr.src_schema[spec];
  if (!match_attrs(os.attrs, [&](const std::string& n) { return attr_or_default(op, s, n); }, m, why, "")) return false;
  return match_ports(cr, spec, op, PortDir::In, m, why) && match_ports(cr, spec, op, PortDir::Out, m, why);
}

}  // namespace amanda::mapping::engine
