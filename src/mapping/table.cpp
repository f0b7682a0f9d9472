#include "amanda/mapping/table.h"

#include "compact_pattern.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

namespace amanda::mapping {

using text::Tree;

namespace {

[[noreturn]] void fail(const SourceLoc& loc, const std::string& rule, const std::string& msg) {
  throw ParseError(loc, rule.empty() ? msg : "rule '" + rule + "': " + msg);
}

const char* kind_name(const Tree& t) { return t.is_map() ? "a map" : t.is_seq() ? "a list" : "a scalar"; }

std::string scalar_text(const Tree& t, const std::string& rule, const char* what) {
  if (!t.is_scalar() || t.scalar.is_null()) fail(t.loc, rule, std::string(what) + " must be a string, not " + kind_name(t));
  return t.scalar.is_string() ? t.scalar.as_string() : t.text;
}

// Pushdown (amanda-design.md): a map whose keys are only `src` and/or `dst` splits the rule there.
// Returns false when the side has nothing at this place.
// `skip` (the top level only): keys that are not part of either side (a rule's own keys).
bool split(const Tree& t, bool src_side, Tree& out, const std::set<std::string, std::less<>>* skip = nullptr) {
  auto kept = [skip](const std::string& k) { return !skip || !skip->contains(k); };
  if (t.is_map() && std::any_of(t.entries.begin(), t.entries.end(), [&](const auto& e) { return kept(e.first); }) &&
      std::all_of(t.entries.begin(), t.entries.end(),
                  [&](const auto& e) { return !kept(e.first) || e.first == "src" || e.first == "dst"; })) {
    const Tree* side = t.find(src_side ? "src" : "dst");
    if (!side) return false;
    out = *side;
    return true;
  }
  out = Tree();
  out.kind = t.kind;
  out.loc = t.loc;
  out.tag = t.tag;
  if (t.is_map()) {
    for (size_t i = 0; i < t.entries.size(); ++i) {
      if (!kept(t.entries[i].first)) continue;
      Tree v;
      if (split(t.entries[i].second, src_side, v)) {
        out.entries.emplace_back(t.entries[i].first, std::move(v));
        out.key_locs.push_back(t.key_locs[i]);
      }
    }
    return true;
  }
  if (t.is_seq()) {
    for (const Tree& item : t.items) {
      Tree v;
      if (split(item, src_side, v)) out.items.push_back(std::move(v));
    }
    return true;
  }
  out = t;
  return true;
}

// A value written in a table: `{ref: x}` / `{ref: x, default: v}`, a "{template}", `null`, or a
// literal.
std::unique_ptr<Expr> value_expr(const Tree& t, const std::string& rule) {
  if (t.is_map()) {
    if (const Tree* r = t.find("ref")) {
      for (const auto& [k, v] : t.entries)
        if (k != "ref" && k != "default") fail(t.loc, rule, "unknown key '" + k + "' in a {ref: ...} (ref, default)");
      auto e = std::make_unique<Expr>();
      e->kind = Expr::Kind::Ref;
      e->name = scalar_text(*r, rule, "ref");
      if (const Tree* d = t.find("default")) e->ref_default = d->to_value();
      return e;
    }
  }
  if (t.is_scalar() && t.scalar.is_string() && !t.quoted && is_template(t.scalar.as_string())) {
    SourceLoc loc = t.loc;
    if (loc.column) loc.column += 1;
    return parse_template(t.scalar.as_string(), loc);
  }
  if (t.is_scalar() && t.scalar.is_string() && t.quoted && is_template(t.scalar.as_string())) {
    SourceLoc loc = t.loc;
    if (loc.column) loc.column += 1;
    return parse_template(t.scalar.as_string(), loc);
  }
  if (t.is_scalar() && t.scalar.is_null()) return nullptr;
  auto e = std::make_unique<Expr>();
  try {
    e->literal = t.to_value();
  } catch (const ParseError& err) {
    fail(t.loc, rule, err.message());
  }
  return e;
}

void attrs_of(const Tree& t, const std::string& rule, std::vector<AttrSpec>& out) {
  if (!t.is_map()) fail(t.loc, rule, std::string("attrs must be a map, not ") + kind_name(t));
  for (size_t i = 0; i < t.entries.size(); ++i) {
    AttrSpec a;
    a.name = t.entries[i].first;
    a.loc = t.key_locs[i];
    a.expr = value_expr(t.entries[i].second, rule);
    out.push_back(std::move(a));
  }
}

void ports_of(const Tree& t, const std::string& rule, std::vector<PortSpec>& out) {
  if (!t.is_seq()) fail(t.loc, rule, std::string("ports must be a list, not ") + kind_name(t));
  for (size_t i = 0; i < t.items.size(); ++i) {
    const Tree& p = t.items[i];
    PortSpec s;
    s.position = i;
    s.loc = p.loc;
    if (p.is_scalar() && !p.scalar.is_null()) {  // shorthand: a port name
      s.name = value_expr(p, rule);
      out.push_back(std::move(s));
      continue;
    }
    if (!p.is_map()) fail(p.loc, rule, std::string("a port must be a map or a name, not ") + kind_name(p));
    for (const auto& [k, v] : p.entries) {
      if (k == "name") s.name = value_expr(v, rule);
      else if (k == "ref") {
        s.ref = scalar_text(v, rule, "ref");
        if (s.ref.ends_with("...")) {  // a list capture: every port NAME.0, NAME.1, ...
          s.ref.resize(s.ref.size() - 3);
          s.variadic = true;
          if (s.ref.empty()) fail(v.loc, rule, "ref: ... needs a name (ref: xs...)");
        }
      }
      else if (k == "const") {
        s.value = value_expr(v, rule);
        if (!s.value) fail(v.loc, rule, "const: needs a value");
      } else if (k == "optional") {
        if (!v.scalar.is_bool()) fail(v.loc, rule, "optional must be true or false");
        s.optional = v.scalar.as_bool();
      } else if (k == "attrs") {
        attrs_of(v, rule, s.attrs);
      } else {
        fail(p.loc, rule, "unknown port key '" + k + "' (name, ref, const, optional, attrs)");
      }
    }
    if (s.name && s.name->kind == Expr::Kind::Ref && s.ref.empty()) s.ref = s.name->name;  // name: {ref: x} captures the port too
    if (s.variadic && (!s.name || s.name->kind != Expr::Kind::Literal || !s.name->literal.is_string()))
      fail(p.loc, rule, "a list capture (ref: " + s.ref + "...) needs the port's name: {name: inputs, ref: " + s.ref + "...}");
    if (s.variadic && s.value) fail(p.loc, rule, "a list capture (ref: " + s.ref + "...) cannot take const:");
    out.push_back(std::move(s));
  }
}

OpSpec op_of(const Tree& t, const std::string& rule) {
  if (!t.is_map()) fail(t.loc, rule, std::string("an op must be a map, not ") + kind_name(t));
  OpSpec op;
  op.loc = t.loc;
  for (const auto& [k, v] : t.entries) {
    if (k == "type") op.type = scalar_text(v, rule, "type");
    else if (k == "name") op.name = value_expr(v, rule);
    else if (k == "id") op.id = scalar_text(v, rule, "id");
    else if (k == "attrs") attrs_of(v, rule, op.attrs);
    else if (k == "input_ports") {
      ports_of(v, rule, op.inputs);
      op.inputs_given = true;
    } else if (k == "output_ports") {
      ports_of(v, rule, op.outputs);
      op.outputs_given = true;
    } else if (k == "primary") {
      if (!v.scalar.is_bool()) fail(v.loc, rule, "primary must be true or false");
      op.primary = v.scalar.as_bool();
    } else {
      fail(t.loc, rule, "unknown op key '" + k + "' (type, name, id, attrs, input_ports, output_ports, primary)");
    }
  }
  if (op.type.empty()) fail(t.loc, rule, "an op needs a type");
  return op;
}

// An edge endpoint: {op: NAME-or-id, port: NAME}. Ops are found by id, by literal name, or by the
// ref their name captures ("{t_name}"); ports by literal name or by the ref of a port's name.
void endpoint(const Tree& t, const Pattern& p, const std::string& rule, size_t& op, std::string& port) {
  if (!t.is_map()) fail(t.loc, rule, "an edge end must be a map {op, port}");
  const Tree* o = t.find("op");
  const Tree* q = t.find("port");
  if (!o || !q) fail(t.loc, rule, "an edge end needs op and port");
  std::string on = scalar_text(*o, rule, "op"), pn = scalar_text(*q, rule, "port");
  auto ref_of = [](const std::string& s) -> std::string {
    if (s.size() > 2 && s.front() == '{' && s.back() == '}') return s.substr(1, s.size() - 2);
    return {};
  };
  std::string oref = ref_of(on), pref = ref_of(pn);
  op = p.ops.size();
  for (size_t i = 0; i < p.ops.size(); ++i) {
    const OpSpec& s = p.ops[i];
    bool hit = s.id == on || (s.name && s.name->kind == Expr::Kind::Literal && s.name->literal.is_string() &&
                              s.name->literal.as_string() == on) ||
               (!oref.empty() && s.name && s.name->kind == Expr::Kind::Ref && s.name->name == oref);
    if (hit) {
      op = i;
      break;
    }
  }
  if (op == p.ops.size()) fail(o->loc, rule, "edge: no op '" + on + "' in this pattern (give ops an id or a name)");
  port = pn;
  if (!pref.empty()) {
    // a port whose name captures that ref
    const OpSpec& s = p.ops[op];
    for (const auto* list : {&s.inputs, &s.outputs})
      for (const PortSpec& ps : *list)
        if (ps.name && ps.name->kind == Expr::Kind::Ref && ps.name->name == pref) port = "#" + std::to_string(ps.position) + (list == &s.inputs ? "i" : "o");
    if (port == pn) fail(q->loc, rule, "edge: no port of op '" + on + "' has its name captured as '" + pref + "'");
  }
}

Pattern pattern_of(const Tree& t, const std::string& rule, bool matcher = false) {
  Pattern p;
  if (t.is_map() && t.find("graph")) {
    for (const auto& [k, v] : t.entries)
      if (k != "graph") fail(t.loc, rule, "a compact pattern has only graph, not '" + k + "'");
    if (const Tree& g = *t.find("graph"); matcher && g.is_scalar() && g.scalar.is_string() && uses_lists(g.scalar.as_string()))
      fail(g.loc, rule, "a matcher's graph: text has no lists (capture one in a port list: {name: inputs, ref: xs...})");
    return compact_pattern(*t.find("graph"), rule, [&](const Tree& a, std::vector<AttrSpec>& out) { attrs_of(a, rule, out); });
  }
  if (t.is_map() && t.find("ops")) {
    for (const auto& [k, v] : t.entries)
      if (k != "ops" && k != "edges") fail(t.loc, rule, "a subgraph pattern has ops and edges, not '" + k + "'");
    const Tree& ops = *t.find("ops");
    if (!ops.is_seq() || ops.items.empty()) fail(ops.loc, rule, "ops must be a non-empty list");
    for (const Tree& o : ops.items) p.ops.push_back(op_of(o, rule));
    if (const Tree* edges = t.find("edges")) {
      if (!edges->is_seq()) fail(edges->loc, rule, "edges must be a list");
      for (const Tree& e : edges->items) {
        if (!e.is_map()) fail(e.loc, rule, "an edge must be a map {output_port, input_port}");
        const Tree* out = e.find("output_port");
        if (!out) out = e.find("output_ports");
        const Tree* in = e.find("input_port");
        if (!in) in = e.find("input_ports");
        if (!out || !in) fail(e.loc, rule, "an edge needs output_port and input_port");
        std::vector<const Tree*> ins;
        if (in->is_seq())
          for (const Tree& x : in->items) ins.push_back(&x);
        else
          ins.push_back(in);
        for (const Tree* x : ins) {
          EdgeSpec es;
          es.loc = e.loc;
          endpoint(*out, p, rule, es.src_op, es.src_port);
          endpoint(*x, p, rule, es.dst_op, es.dst_port);
          p.edges.push_back(std::move(es));
        }
      }
    }
  } else {
    p.ops.push_back(op_of(t, rule));
  }
  return p;
}

const std::set<std::string, std::less<>> kRuleKeys = {"rule_name", "tags", "when", "priority", "unsupported", "types_unchecked", "doc"};

Rule rule_of(const Tree& t, size_t order) {
  if (!t.is_map()) throw ParseError(t.loc, std::string("a rule must be a map, not ") + kind_name(t));
  Rule r;
  r.order = order;
  r.loc = t.loc;
  const Tree* n = t.find("rule_name");
  if (!n) throw ParseError(t.loc, "a rule needs a rule_name");
  r.name = scalar_text(*n, "", "rule_name");
  bool has_body = false;  // (the matcher and mapper keys stay in t: split() skips the rule's own keys)
  for (size_t i = 0; i < t.entries.size(); ++i) {
    const auto& [k, v] = t.entries[i];
    if (k == "rule_name") {
    } else if (k == "tags") {
      if (v.is_scalar()) r.tags.push_back(scalar_text(v, r.name, "tags"));
      else if (v.is_seq())
        for (const Tree& x : v.items) r.tags.push_back(scalar_text(x, r.name, "a tag"));
      else fail(v.loc, r.name, "tags must be a list of names");
    } else if (k == "when") {
      SourceLoc loc = v.loc;
      std::string s = scalar_text(v, r.name, "when");
      if (loc.column && v.quoted) loc.column += 1;
      if (s.size() > 1 && s.front() == '{' && s.back() == '}') r.when = parse_template(s, loc);
      else r.when = parse_expr(s, loc);
    } else if (k == "priority") {
      if (!v.scalar.is_int()) fail(v.loc, r.name, "priority must be an integer");
      r.priority = int(v.scalar.as_int());
    } else if (k == "unsupported") {
      r.unsupported = scalar_text(v, r.name, "unsupported");
    } else if (k == "types_unchecked") {
      r.types_unchecked = scalar_text(v, r.name, "types_unchecked");
    } else if (k == "doc") {
    } else {
      has_body = true;
    }
  }
  if (!has_body) fail(t.loc, r.name, "a rule needs a matcher (src, or type with src/dst pushdown)");
  Tree s, d;
  if (!split(t, true, s, &kRuleKeys) || (s.is_map() && s.entries.empty())) fail(t.loc, r.name, "the rule has no src side");
  bool has_dst = split(t, false, d, &kRuleKeys) && !(d.is_map() && d.entries.empty());
  r.src = pattern_of(s, r.name, /*matcher=*/true);
  r.src_tree = std::move(s);
  if (r.unsupported) {
    if (has_dst && t.find("dst")) fail(t.loc, r.name, "an unsupported rule has no dst");
    return r;
  }
  if (!has_dst) fail(t.loc, r.name, "the rule has no dst side (or write unsupported: REASON)");
  if (const Tree* g = d.is_map() ? d.find("graph") : nullptr; g && g->is_scalar() && g->scalar.is_string() && uses_lists(g->scalar.as_string())) {
    // A template: expanded per match (engine); here with every list kSampleListLength long, so
    // that the checker sees its ops, ports and refs.
    r.dst_template = true;
    Bindings sample;
    for (const OpSpec& o : r.src.ops)
      for (const auto* list : {&o.inputs, &o.outputs})
        for (const PortSpec& ps : *list)
          if (ps.variadic) sample.set(ps.ref, ir::Value(ir::Value::List(kSampleListLength)));
    std::string text = expand_lists(g->scalar.as_string(), r.name, g->loc, [&](const std::string& e) -> int64_t {
      try {
        ir::Value v = parse_expr(e, g->loc)->eval(sample);
        if (v.is_int()) return std::max<int64_t>(v.as_int(), 0);  // (a match may give more; the sample only needs valid text)
      } catch (const EvalError&) {
      }
      return kSampleListLength;  // (a capture only a match has: `range(g)` with the group count)
    });
    r.dst = pattern_from_tree(with_graph_text(d, std::move(text)), r.name);
  } else {
    r.dst = pattern_of(d, r.name);
  }
  r.dst_tree = std::move(d);
  size_t primaries = 0;
  for (const OpSpec& o : r.dst.ops) primaries += o.primary;
  if (primaries > 1) fail(t.loc, r.name, "at most one dst op can be primary");
  return r;
}

// A matcher type may be a list (`type: {src: [aten::relu, aten::relu_], dst: Relu}` or
// `src: {type: [...], ...}`): the rule is written once and stands for one rule per type, all with
// its name (in-place variants, overloads that map alike). Returns the rule itself when no matcher
// type is a list.
std::vector<Tree> type_variants(const Tree& r) {
  if (!r.is_map()) return {r};
  // (Most rules have no list: found without copying the rule.)
  auto const_seq = [](const Tree* t) { return t && t->is_seq(); };
  const Tree* ty = r.find("type");
  const Tree* src = r.find("src");
  bool listed = ty ? (ty->is_map() ? const_seq(ty->find("src")) : const_seq(ty)) : false;
  if (!listed && src && src->is_map()) listed = const_seq(src->find("type"));
  if (!listed) return {};
  // where the list is: the rule's `type` (split by src/dst, or not), or `src`'s `type`
  Tree* list = nullptr;
  Tree copy = r;
  auto seq_at = [](Tree* t) -> Tree* { return t && t->is_seq() ? t : nullptr; };
  auto find = [](Tree& t, const char* k) -> Tree* {
    for (auto& e : t.entries)
      if (e.first == k) return &e.second;
    return nullptr;
  };
  if (Tree* ty = find(copy, "type")) {
    if (ty->is_map()) list = seq_at(find(*ty, "src"));
    else list = seq_at(ty);
  }
  if (!list)
    if (Tree* src = find(copy, "src"); src && src->is_map()) list = seq_at(find(*src, "type"));
  if (!list) return {r};
  if (list->items.empty()) throw ParseError(list->loc, "a list of matcher types must not be empty");
  std::vector<Tree> items = list->items;
  std::vector<Tree> out;
  for (const Tree& item : items) {
    if (!item.is_scalar() || item.scalar.is_null()) throw ParseError(item.loc, "a matcher type in a list must be a name");
    *list = item;
    out.push_back(copy);
  }
  return out;
}

ConstantSpec constant_of(const Tree& t) {
  ConstantSpec c;
  if (!t.is_map()) throw ParseError(t.loc, "constant must be a map {type, attr, port}");
  for (const auto& [k, v] : t.entries) {
    if (k == "type") c.type = scalar_text(v, "", "constant type");
    else if (k == "attr") c.attr = scalar_text(v, "", "constant attr");
    else if (k == "port") c.port = scalar_text(v, "", "constant port");
    else if (k == "values") {
      std::string w = scalar_text(v, "", "constant values");
      if (w != "any" && w != "tensors") throw ParseError(v.loc, "constant values: 'any' or 'tensors'");
      c.any_value = w == "any";
    } else throw ParseError(v.loc, "unknown key '" + k + "' in constant (type, attr, port, values)");
  }
  return c;
}

}  // namespace

std::unique_ptr<Table> parse_table(const Tree& doc) {
  const Tree* t = doc.is_map() ? doc.find("table") : nullptr;
  if (!t) throw ParseError(doc.loc, "a mapping table file has one top-level key, table");
  if (!t->is_map()) throw ParseError(t->loc, "table must be a map");
  for (const auto& [k, v] : doc.entries)
    if (k != "table") throw ParseError(v.loc, "unknown top-level key '" + k + "' (a table file has only table)");
  auto out = std::make_unique<Table>();
  out->loc = t->loc;
  out->file = t->loc.file;
  const Tree* rules = nullptr;
  for (const auto& [k, v] : t->entries) {
    if (k == "src") out->src = scalar_text(v, "", "src");
    else if (k == "dst") out->dst = scalar_text(v, "", "dst");
    else if (k == "rules") rules = &v;
    else if (k == "reversible") {
      if (!v.scalar.is_bool()) throw ParseError(v.loc, "reversible must be true or false");
      out->reversible = v.scalar.as_bool();
    } else if (k == "fixed_point") {
      if (!v.scalar.is_bool()) throw ParseError(v.loc, "fixed_point must be true or false");
      out->fixed_point = v.scalar.as_bool();
    } else if (k == "carry_attrs") {
      if (!v.scalar.is_bool()) throw ParseError(v.loc, "carry_attrs must be true or false");
      out->carry_attrs = v.scalar.as_bool();
    } else if (k == "constant") {
      Tree s, d;
      if (split(v, true, s) && v.find("src")) out->reverse_constant = constant_of(s);
      if (split(v, false, d)) out->constant = constant_of(d);
    } else if (k == "only_for") {
      if (!v.is_seq() || v.items.empty()) throw ParseError(v.loc, "only_for must be a list of op types");
      for (const Tree& x : v.items) out->only_for.push_back(scalar_text(x, "", "only_for"));
    } else if (k == "imports") {
      if (!v.is_map()) throw ParseError(v.loc, "imports must be a map of prefix: namespace");
      for (const auto& [pk, pv] : v.entries) out->imports[pk] = scalar_text(pv, "", "imports");
    } else if (k == "over") {
      out->over = scalar_text(v, "", "over");
    } else if (k == "doc") {
    } else {
      throw ParseError(v.loc, "unknown table key '" + k + "' (src, dst, rules, reversible, fixed_point, carry_attrs, constant, only_for, imports, over, doc)");
    }
  }
  if (out->src.empty() || out->dst.empty()) throw ParseError(t->loc, "a table needs src and dst namespaces");
  std::string why;
  if (!schema::valid_namespace_name(out->src, &why)) throw ParseError(t->loc, "src: " + why);
  if (!schema::valid_namespace_name(out->dst, &why)) throw ParseError(t->loc, "dst: " + why);
  if (!rules || !rules->is_seq()) throw ParseError(t->loc, "a table needs a list of rules");
  std::set<std::string> names;
  for (const Tree& r : rules->items) {
    std::vector<Tree> variants = type_variants(r);  // (empty: the rule has no list of types)
    if (variants.empty()) out->rules.push_back(rule_of(r, out->rules.size()));
    for (const Tree& v : variants) out->rules.push_back(rule_of(v, out->rules.size()));
    if (!names.insert(out->rules.back().name).second) throw ParseError(r.loc, "rule '" + out->rules.back().name + "' is declared twice");
  }
  // A fixed point re-matches the table's results with its src patterns: they must be ops of the
  // src namespace, so the table maps a namespace to itself (a rewriting or fusion table).
  if (out->fixed_point && out->src != out->dst)
    throw ParseError(t->loc, "fixed_point: true needs a table from a namespace to itself (src " + out->src + ", dst " + out->dst +
                                 "): the rules' results are matched again by the src patterns");
  if (out->fixed_point && out->reversible) throw ParseError(t->loc, "a fixed_point table cannot be reversible");
  if (!out->over.empty()) {
    if (!schema::valid_namespace_name(out->over, &why)) throw ParseError(t->loc, "over: " + why);
    if (out->reversible || out->fixed_point || out->src == out->dst || out->over == out->dst || out->over == out->src)
      throw ParseError(t->loc, "a layer table (over: " + out->over + ") maps src to a later dst than over, and is neither reversible nor fixed_point");
  }
  // only_for is a promise the loader relies on (it skips the file for graphs without these
  // types): every rule must match an op of one of them.
  if (!out->only_for.empty()) {
    if (out->reversible) throw ParseError(t->loc, "a reversible table cannot be only_for some op types");
    for (const Rule& r : out->rules) {
      bool ok = std::any_of(r.src.ops.begin(), r.src.ops.end(), [&](const OpSpec& o) {
        return std::find(out->only_for.begin(), out->only_for.end(), o.type) != out->only_for.end();
      });
      if (!ok) throw ParseError(r.loc, "rule '" + r.name + "' matches no op type of the table's only_for list");
    }
  }
  return out;
}

std::vector<std::string> matcher_types(const Table& t) {
  std::vector<std::string> out;
  for (const Rule& r : t.rules)
    for (const OpSpec& o : r.src.ops) out.push_back(o.type);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

Pattern pattern_from_tree(const Tree& side, const std::string& rule) { return pattern_of(side, rule); }

Tree with_graph_text(const Tree& d, std::string text) {
  Tree out = d;
  for (auto& [k, v] : out.entries)
    if (k == "graph") v.scalar = ir::Value(std::move(text));
  return out;
}

const schema::OpSchema* resolve_op(schema::Registry& reg, const Table& t, const std::string& ns, const std::string& type) {
  if (size_t c = type.find("::"); c != std::string::npos)
    if (auto it = t.imports.find(type.substr(0, c)); it != t.imports.end()) return reg.resolve(it->second, type.substr(c + 2));
  return reg.resolve(ns, type);
}

std::unique_ptr<Table> read_table(const std::string& path) {
  Tree doc = text::read_tree(path);
  return parse_table(doc);
}

std::unique_ptr<Table> reverse_table(const Table& t) {
  auto out = std::make_unique<Table>();
  out->src = t.dst;
  out->dst = t.src;
  out->file = t.file;
  out->loc = t.loc;
  out->carry_attrs = t.carry_attrs;
  out->constant = t.reverse_constant;
  out->reverse_constant = t.constant;
  for (const Rule& r : t.rules) {
    if (r.when) throw Error(fmt::format("{}: rule '{}' has a condition and cannot be reversed", r.loc.str(), r.name));
    bool lists = r.dst_template;
    for (const OpSpec& o : r.src.ops)
      for (const auto* l : {&o.inputs, &o.outputs})
        for (const PortSpec& ps : *l) lists = lists || ps.variadic;
    if (lists) throw Error(fmt::format("{}: rule '{}' has lists (xs...) and cannot be reversed", r.loc.str(), r.name));
    if (r.unsupported) continue;
    Rule x;
    x.name = r.name;
    x.tags = r.tags;
    x.priority = r.priority;
    x.types_unchecked = r.types_unchecked;
    x.order = r.order;
    x.loc = r.loc;
    x.src = pattern_of(r.dst_tree, r.name);
    x.dst = pattern_of(r.src_tree, r.name);
    x.src_tree = r.dst_tree;
    x.dst_tree = r.src_tree;
    // A mapper expression becomes a matcher: it must be invertible.
    for (const OpSpec& o : x.src.ops)
      for (const AttrSpec& a : o.attrs)
        if (a.expr && !a.expr->invertible())
          throw Error(fmt::format("{}: rule '{}': '{}' has no inverse, so the table cannot be reversed", a.loc.str(), r.name, a.expr->str()));
    out->rules.push_back(std::move(x));
  }
  return out;
}

}  // namespace amanda::mapping
