#include "amanda/mapping/engine.h"

#include "amanda/mapping/schema_step.h"

#include "compact_pattern.h"

#include <algorithm>
#include <deque>
#include <span>

#include <absl/container/flat_hash_map.h>
#include <absl/container/node_hash_map.h>
#include <absl/container/inlined_vector.h>
#include <fmt/format.h>

#include "amanda/ir/conventions.h"
#include "amanda/support/progress.h"

namespace amanda::mapping {

using ir::EdgeId;
using ir::OpId;
using ir::PortDir;
using ir::PortId;
using amanda::Symbol;
using ir::Value;

namespace {

// One step of a match plan: match pattern op `spec` through pattern edge `edge`, from the end that
// is already matched (`forward`: the edge's source is matched; look among its consumers).
struct Step {
  size_t spec, edge;
  bool forward;
};

// A rule's mapper, compiled: the pattern, its ops' schemas, and the op that takes over.
struct DstSide {
  const Pattern* pattern = nullptr;
  std::vector<const schema::OpSchema*> schema;
  size_t primary = 0;  // dst op that takes over (and, for 1-op matchers, reuses) the op
};

struct CRule {
  const Rule* rule = nullptr;
  std::vector<std::vector<Step>> plans;                   // per start op of the pattern
  std::vector<const schema::OpSchema*> src_schema;
  std::vector<std::vector<std::string>> inner_outputs;    // per src op: output ports that feed other pattern ops
  DstSide dst;                                            // (a template's is expanded per match: dst_template)
};

// By default the dst op of the matched type takes over, unless another dst op reads its outputs
// (Softmax between Transposes, Shape before a Slice): the op that makes the rule's result takes
// over then, so the matched op's ports are not linked to an inner value.
size_t primary_of(const Rule& r, const Pattern& dst) {
  if (dst.ops.empty()) return 0;
  size_t primary = dst.ops.size() - 1;
  bool explicit_primary = false;
  for (size_t i = 0; i < dst.ops.size(); ++i)
    if (dst.ops[i].primary) primary = i, explicit_primary = true;
  if (!explicit_primary && r.src.ops.size() == 1)
    for (size_t i = 0; i < dst.ops.size(); ++i)
      if (dst.ops[i].type == r.src.ops[0].type &&
          std::none_of(dst.edges.begin(), dst.edges.end(), [&](const EdgeSpec& e) { return e.src_op == i; }))
        return i;
  return primary;
}

struct Candidate {
  const CRule* rule;
  size_t start;
};

bool pattern_connected_plan(const Pattern& p, size_t start, std::vector<Step>& plan) {
  std::vector<bool> seen(p.ops.size(), false);
  seen[start] = true;
  std::deque<size_t> q{start};
  while (!q.empty()) {
    size_t s = q.front();
    q.pop_front();
    for (size_t e = 0; e < p.edges.size(); ++e) {
      const EdgeSpec& es = p.edges[e];
      if (es.src_op == s && !seen[es.dst_op]) {
        seen[es.dst_op] = true;
        plan.push_back({es.dst_op, e, true});
        q.push_back(es.dst_op);
      } else if (es.dst_op == s && !seen[es.src_op]) {
        seen[es.src_op] = true;
        plan.push_back({es.src_op, e, false});
        q.push_back(es.src_op);
      }
    }
  }
  return std::all_of(seen.begin(), seen.end(), [](bool b) { return b; });
}

std::string json_str(std::string_view s) {
  std::string o = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\', o += c;
    else if (static_cast<unsigned char>(c) < 0x20) o += fmt::format("\\u{:04x}", int(c));
    else o += c;
  }
  return o + "\"";
}

}  // namespace

struct CompiledTable::Impl {
  const Table& table;
  schema::Registry& reg;
  std::vector<CRule> rules;
  absl::flat_hash_map<std::string, std::vector<Candidate>> by_type;
  // Mappers that are templates (Rule::dst_template), expanded per match: one compiled expansion
  // per (rule, expanded text), and the count expressions the expansions evaluate, parsed once.
  struct Expansion {
    Pattern pattern;
    DstSide side;
  };
  mutable absl::node_hash_map<std::string, std::unique_ptr<Expansion>> expansions;
  mutable absl::node_hash_map<std::string, std::unique_ptr<Expr>> count_exprs;
  Impl(const Table& t, schema::Registry& r) : table(t), reg(r) {}
};

CompiledTable::CompiledTable(const Table& t, schema::Registry& reg, const std::vector<std::string>& tags)
    : impl_(std::make_unique<Impl>(t, reg)) {
  auto& rules = impl_->rules;
  // (A big table names the same few op types thousands of times: each resolved once.)
  absl::flat_hash_map<std::string, const schema::OpSchema*> src_schemas, dst_schemas;
  auto resolve = [&reg, &t](absl::flat_hash_map<std::string, const schema::OpSchema*>& cache, const std::string& ns,
                            const std::string& type) {
    auto it = cache.find(type);
    if (it == cache.end()) it = cache.emplace(type, resolve_op(reg, t, ns, type)).first;
    return it->second;
  };
  for (const Rule& r : t.rules) {
    if (!r.tags.empty() &&
        std::none_of(r.tags.begin(), r.tags.end(), [&](const std::string& x) { return std::find(tags.begin(), tags.end(), x) != tags.end(); }))
      continue;
    CRule c;
    c.rule = &r;
    for (size_t s = 0; s < r.src.ops.size(); ++s) {
      std::vector<Step> plan;
      if (!pattern_connected_plan(r.src, s, plan))
        throw ParseError(r.loc, "rule '" + r.name + "': the src ops are not all connected by edges");
      c.plans.push_back(std::move(plan));
      c.src_schema.push_back(resolve(src_schemas, t.src, r.src.ops[s].type));
      std::vector<std::string> inner;
      for (const EdgeSpec& e : r.src.edges)
        if (e.src_op == s) inner.push_back(e.src_port);
      c.inner_outputs.push_back(std::move(inner));
    }
    c.dst.pattern = &r.dst;
    for (const OpSpec& o : r.dst.ops) c.dst.schema.push_back(resolve(dst_schemas, t.dst, o.type));
    c.dst.primary = primary_of(r, r.dst);
    rules.push_back(std::move(c));
  }
  for (const CRule& c : rules)
    for (size_t s = 0; s < c.rule->src.ops.size(); ++s) impl_->by_type[c.rule->src.ops[s].type].push_back({&c, s});
  // Bigger patterns first, then priority, then declaration order.
  for (auto& [type, list] : impl_->by_type)
    std::stable_sort(list.begin(), list.end(), [](const Candidate& a, const Candidate& b) {
      const Rule &x = *a.rule->rule, &y = *b.rule->rule;
      if (x.src.ops.size() != y.src.ops.size()) return x.src.ops.size() > y.src.ops.size();
      if (x.priority != y.priority) return x.priority > y.priority;
      return x.order < y.order;
    });
}

CompiledTable::~CompiledTable() = default;
const Table& CompiledTable::table() const { return impl_->table; }

namespace {

struct Match {
  const CRule* rule = nullptr;
  const DstSide* dst = nullptr;  // the mapper used (a template's expansion), set by rewrite_match
  absl::InlinedVector<OpId, 2> ops;  // (no allocation for the usual one- or two-op match)
  Bindings b;
  std::vector<OpId> const_producers;
};

class Applier {
 public:
  Applier(ir::Graph& g, const CompiledTable::Impl& impl, const ConvertOptions& o, Report& rep, Drive drive)
      : drive_(drive), g_(g), impl_(impl), t_(impl.table), o_(o), rep_(rep), progress_("converting " + impl.table.name(), g.op_count()),
        own_rw_(g, o.listener), rw_(&own_rw_) {
    for (const auto& [type, list] : impl.by_type) dispatch_[g.sym(type)] = &list;
    src_sym_ = g.sym(t_.src);
    dst_sym_ = g.sym(t_.dst);
    same_family_ = schema::split_version(t_.src).first == schema::split_version(t_.dst).first;
  }

  void run() {
    claimed_.assign(g_.id_bound(), 0);
    if (const Value* imp = g_.attr(g_.root(), g_.sym("imports")); imp && imp->is_map())
      for (const auto& e : imp->as_map()) foreign_prefixes_.push_back(e.key + "::");
    if (t_.fixed_point || drive_ == Drive::FixedPoint) fixed_scope(g_.root());
    else scope(g_.root());
    for (const auto& [r, n] : hits_) rep_.by_rule[r->name] += n;
    for (auto& [k, c] : unmapped_) rep_.unmapped.push_back(std::move(c));
    for (auto& [k, c] : unsupported_) rep_.unsupported.push_back(std::move(c));
  }

 private:
  Drive drive_;
  ir::Graph& g_;
  const CompiledTable::Impl& impl_;
  const Table& t_;
  const ConvertOptions& o_;
  Report& rep_;
  Progress progress_;  // a progress line for a big graph (see support/progress.h)
  // Every change goes through a rewriter: the engine's own, or the greedy driver's (fixed_point).
  ir::Rewriter own_rw_;
  ir::Rewriter* rw_;
  absl::flat_hash_map<Symbol, const std::vector<Candidate>*> dispatch_;
  std::vector<uint8_t> claimed_;
  std::vector<uint32_t> pos_;
  std::map<std::string, OpCount> unmapped_, unsupported_;
  std::vector<std::string> foreign_prefixes_;
  Symbol src_sym_, dst_sym_;
  absl::flat_hash_map<const Rule*, size_t> hits_;  // matches rewritten per rule (into rep_.by_rule at the end)
  bool same_family_ = false;  // two versions of one family (amanda/onnx/12 -> 13), not two frameworks
  std::vector<std::string>* why_ = nullptr;  // --explain: reasons for the op being explained

  // Attribute, port and op type names come from the table and repeat for every op: a small table
  // of them stays in cache, where the graph's symbol table (every op name too) does not.
  absl::flat_hash_map<std::string, Symbol> keys_;
  Symbol sym(std::string_view s) {
    auto it = keys_.find(absl::string_view(s.data(), s.size()));
    if (it != keys_.end()) return it->second;
    Symbol y = g_.sym(s);
    keys_.emplace(std::string(s), y);
    return y;
  }
  // A string the table owns (an attribute, port or op type name of a rule; it lives as long as the
  // table): looked up by its address, which is cheaper than hashing its text for every op.
  absl::flat_hash_map<const std::string*, Symbol> tkeys_;
  Symbol tsym(const std::string& s) {
    auto [it, fresh] = tkeys_.try_emplace(&s, 0);
    if (fresh) it->second = sym(s);
    return it->second;
  }
  // Op names are (mostly) all different: straight to the graph's symbol table.
  Symbol name_sym(std::string_view s) { return g_.sym(s); }

  void note(const std::string& s) {
    if (why_) why_->push_back(s);
  }

  bool claimed(OpId op) const { return op.value < claimed_.size() && claimed_[op.value]; }
  void claim(OpId op) {
    if (op.value >= claimed_.size()) claimed_.resize(g_.id_bound(), 0);
    claimed_[op.value] = 1;
  }

  // ---------------------------------------------------------------- traversal

  void scope(OpId s) {
    if (g_.is_graph(s) && g_.graph_namespace(s) == src_sym_) rw_->set_graph_namespace(s, dst_sym_);
    ir::TopoResult topo = g_.topo_order(s);
    std::vector<OpId> order = topo.ok() ? std::move(topo.order) : g_.children(s);
    if (o_.expand && expand_missing(s, order)) {
      topo = g_.topo_order(s);
      order = topo.ok() ? std::move(topo.order) : g_.children(s);
    }
    if (pos_.size() < g_.id_bound()) pos_.resize(g_.id_bound(), 0);
    {
      uint32_t k = 0;
      for (OpId c = g_.first_child(s); c; c = g_.next_sibling(c)) pos_[c.value] = k++;
    }
    std::vector<Match> matches;
    std::vector<OpId> pending_consts;
    matches.reserve(order.size());
    for (OpId op : order) {
      progress_.advance();
      if (claimed(op)) continue;
      ++rep_.ops;
      bool explaining = !o_.explain.empty() && g_.name_str(op) == o_.explain;
      std::vector<std::string> reasons;
      why_ = explaining ? &reasons : nullptr;
      Match m;
      if (find_match(op, m)) {
        for (OpId x : m.ops) claim(x);
        if (explaining) reasons.push_back("=> rule '" + m.rule->rule->name + "' applies");
        matches.push_back(std::move(m));
      } else if (Verdict v = no_rule(op); v.kind == Verdict::Keep) {
        ++rep_.passed;
        if (why_) note("=> no rule applies; '" + std::string(g_.type_str(op)) + "' " + v.why + ": kept as it is");
      } else if (v.kind == Verdict::Refuse) {
        count(unsupported_, op, "(schemas)", v.why);
        if (why_) note("=> no rule applies, and the schemas say it cannot be kept: " + v.why);
      } else if (!t_.reverse_constant.type.empty() && g_.type_str(op) == t_.reverse_constant.type) {
        // A constant no rule maps may only feed inputs that matchers take as values: decided
        // after the rewrites (erased when nothing reads it any more).
        pending_consts.push_back(op);
        if (why_) note("=> no rule applies to this constant: it must be read only as a value by the rules of its consumers");
      } else {
        count(unmapped_, op, "", v.why);
        if (why_) note("=> no rule applies and " + v.why + ": unmapped");
      }
      why_ = nullptr;
      if (explaining) {
        rep_.explain.push_back(fmt::format("{} ({}), converting {} -> {}:", g_.path(op), g_.type_str(op), t_.src, t_.dst));
        for (auto& r : reasons) rep_.explain.push_back("  " + r);
      }
    }
    for (Match& m : matches) rewrite(m, s);
    for (auto& [op, st] : drops_) drop_extensions(*rw_, op, *st);
    drops_.clear();
    for (OpId c : pending_consts) {
      if (!g_.valid(c)) continue;
      bool used = false;
      for (PortId o : g_.outputs(c))
        if (g_.first_out_edge(o)) used = true;
      if (used) count(unmapped_, c, "", "");
      else rw_->erase_op(c);
    }
    // Nested graphs: attribute graphs and bodies of the ops now in this scope.
    std::vector<OpId> nested;
    for (OpId c = g_.first_child(s); c; c = g_.next_sibling(c)) {
      for (OpId a : g_.attr_graphs(c)) nested.push_back(a);
      if (!g_.is_graph(c) && g_.first_child(c)) nested.push_back(c);
    }
    for (OpId n : nested) scope(n);
    fix_order(s);
  }

  // What becomes of an op no rule matched: the two schemas decide (schema_step.h), also for an op
  // whose rules did not apply (rules cover the cases the schemas cannot settle; a change of
  // meaning the schemas do not show as a change of attributes or ports, such as Max's broadcasting
  // in opset 8, needs a rule that refuses the other cases).
  struct Verdict {
    enum Kind { Keep, Refuse, Unmapped } kind;
    std::string why;
  };
  struct TypeInfo {
    SchemaStep step;
    const schema::OpSchema* dst = nullptr;
    bool foreign = false, ruled = false;
    bool lowers_refused = false;  // ConvertOptions::lowers_refused says yes for this type
  };
  absl::node_hash_map<Symbol, TypeInfo> types_;  // (node-stable: drops_ points into it)
  std::vector<std::pair<OpId, const SchemaStep*>> drops_;  // kept ops that lose defaulted attributes / unused ports

  const TypeInfo& type_info(OpId op) {
    Symbol t = g_.type(op);
    auto it = types_.find(t);
    if (it != types_.end()) return it->second;
    std::string_view type = g_.type_str(op);
    TypeInfo info;
    for (const auto& p : foreign_prefixes_)
      if (type.starts_with(p)) info.foreign = true;  // an op of another imported namespace: not this table's business
    info.ruled = dispatch_.contains(t);
    info.lowers_refused = info.ruled && same_family_ && o_.expand && o_.lowers_refused && o_.lowers_refused(std::string(type), t_.src);
    if (!info.foreign && t_.src != t_.dst) {
      const schema::OpSchema* a = impl_.reg.resolve(t_.src, type);
      info.dst = impl_.reg.resolve(t_.dst, type);
      info.step = compare_schemas(a, info.dst, t_.dst);
      // Between two frameworks an op of the same name is not the same op: only one declaration
      // passes; the schemas decide only between versions of one family (amanda/onnx/12 -> 13).
      if (!same_family_ && info.step.kind != SchemaStep::Kind::Same) {
        info.step.kind = SchemaStep::Kind::Changed;
        info.step.why = "it is not the same declaration in both namespaces";
      }
      if (info.step.kind == SchemaStep::Kind::Missing && a && a->since_version)
        info.step.why += fmt::format(" (it is new in {} version {})", t_.src.substr(0, t_.src.rfind('/')), *a->since_version);
    } else {
      info.step.kind = SchemaStep::Kind::Same;
    }
    return types_.emplace(t, std::move(info)).first->second;
  }

  // Ops the target lacks and no rule takes: replaced by their function bodies where the source
  // namespace defines them (the body's ops may in turn be missing: expanded again, a few levels).
  std::map<OpId, std::string> not_expanded_;
  bool expand_missing(OpId scope, std::vector<OpId>& order) {
    bool any = false;
    for (int round = 0; round < 4; ++round) {
      bool changed = false;
      for (OpId op : order) {
        if (!g_.valid(op) || claimed(op) || not_expanded_.contains(op)) continue;
        const TypeInfo& info = type_info(op);
        if (info.lowers_refused) {
          // The tables' rules first: lowered only when the rule that applies refuses it.
          Match m;
          std::vector<std::string>* why = why_;
          why_ = nullptr;
          bool matched = find_match(op, m);
          why_ = why;
          if (!matched || !m.rule->rule->unsupported) continue;
        } else if (info.foreign || info.ruled || info.step.kind != SchemaStep::Kind::Missing) {
          continue;
        }
        std::string type(g_.type_str(op));
        std::string why = o_.expand(g_, op, t_.src);
        if (why.empty()) {
          changed = any = true;
          ++rep_.by_rule[(info.lowers_refused ? "(lowering) " : "(function body) ") + type];
        } else {
          not_expanded_[op] = why;
        }
      }
      if (!changed) break;
      order = g_.children(scope);
    }
    return any;
  }

  Verdict no_rule(OpId op) {
    const TypeInfo& info = type_info(op);
    if (info.foreign) return {Verdict::Keep, "belongs to another namespace"};
    switch (info.step.kind) {
      case SchemaStep::Kind::Same: return {Verdict::Keep, "is the same in " + t_.src + " and " + t_.dst};
      case SchemaStep::Kind::Missing: {
        auto it = not_expanded_.find(op);
        return {Verdict::Refuse, info.step.why + (it == not_expanded_.end() ? "" : "; its ONNX function body cannot replace it: " + it->second)};
      }
      case SchemaStep::Kind::Changed:
        return {Verdict::Unmapped, "changed between " + t_.src + " and " + t_.dst + " (" + info.step.why + "), and no rule converts it"};
      case SchemaStep::Kind::TypesOnly: break;
    }
    std::string bad = extension_refusal(g_, op, info.step, t_.dst);
    if (bad.empty()) bad = type_refusal(g_, op, *info.dst, t_.dst);
    if (!bad.empty()) return {Verdict::Refuse, bad};
    if (!info.step.dropped_attrs.empty() || info.step.max_inputs != SIZE_MAX || info.step.max_outputs != SIZE_MAX)
      drops_.push_back({op, &info.step});
    return {Verdict::Keep, "has the same attributes and ports in " + t_.src + " and " + t_.dst + " (but for ones left at their defaults), and its types fit"};
  }

  void count(std::map<std::string, OpCount>& m, OpId op, const std::string& rule, const std::string& reason) {
    std::string key = std::string(g_.type_str(op)) + "\x1f" + rule;
    OpCount& c = m[key];
    c.type = g_.type_str(op);
    c.rule = rule;
    c.reason = reason;
    ++c.count;
    if (c.names.size() < 5) c.names.push_back(g_.path(op));
  }

  // ---------------------------------------------------------------- matching

  bool find_match(OpId op, Match& m) {
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

  bool extend(const CRule& cr, const std::vector<Step>& plan, size_t k, Match& m, std::string& why) {
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
  bool finish(const CRule& cr, Match& m, std::string& why) {
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

  std::string describe_refs(const Expr& e, const Bindings& b) {
    std::vector<std::string> refs;
    e.refs(refs);
    std::string s;
    for (const auto& r : refs)
      if (const Value* v = b.get(r)) s += (s.empty() ? " (" : ", ") + r + " = " + value_str(*v);
    return s.empty() ? s : s + ")";
  }

  // The port a pattern names: "#k[io]" = the k-th PortSpec of that op; else a port name.
  PortId find_spec_port(const CRule& cr, size_t spec, OpId op, PortDir dir, const std::string& name, const Bindings& b) {
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

  using PortList = absl::InlinedVector<PortId, 6>;
  PortList data_ports(OpId op, PortDir d) {
    PortList out;
    for (PortId p : g_.ports(op, d))
      if (!g_.is_control(p) && !g_.port_name_str(p).starts_with("@")) out.push_back(p);
    return out;
  }

  PortId locate(OpId op, PortDir dir, const PortSpec& ps, const Bindings& b) {
    if (ps.name && ps.name->kind != Expr::Kind::Ref) {
      Value n = ps.name->eval(b);
      if (!n.is_string()) return PortId();
      return g_.find_port(op, dir, sym(n.as_string()));
    }
    PortList ports = data_ports(op, dir);
    return ps.position < ports.size() ? ports[ps.position] : PortId();
  }

  const Value* attr_or_default(OpId op, const schema::OpSchema* s, const std::string& name) {
    if (const Value* v = g_.attr(op, tsym(name))) return v;
    if (s)
      if (const schema::AttrSchema* a = s->attr(name)) return a->type.default_value();
    return nullptr;
  }

  template <class Get>
  bool match_attrs(const std::vector<AttrSpec>& specs, const Get& get, Match& m,
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
          Value want = bound->is_null() && a.expr->ref_default ? *a.expr->ref_default : *bound;
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
  std::optional<Value> constant_of(PortId in, OpId* producer) {
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

  bool match_ports(const CRule& cr, size_t spec, OpId op, PortDir dir, Match& m, std::string& why) {
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
  bool match_list(OpId op, PortDir dir, const PortSpec& ps, Match& m, std::string& why) {
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

  bool match_op(const CRule& cr, size_t spec, OpId op, Match& m, std::string& why) {
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

  // ---------------------------------------------------------------- rewriting

  struct InLink {
    Symbol name = 0;
    PortId producer;
    ir::AttrList attrs;
    std::optional<Value> constant;
    bool droppable = false;  // `optional: true`: left out when nothing connects to it and nothing after it does
  };
  struct OutLink {
    Symbol name = 0;
    std::vector<PortId> consumers;
    ir::AttrList attrs;
    ir::TypeId type;  // the value's inferred type: a later rewrite's mapper in this pass reads it
  };
  struct Plan {
    std::vector<InLink> ins;
    std::vector<OutLink> outs;
    bool rebuild_in = false, rebuild_out = false;
  };

  // A name no op of the scope has: `base`, else base_1, base_2, ... (interned once, as a symbol;
  // a name the graph's symbol table did not hold yet is no op's name, so no lookup then).
  Symbol unique_op_name(OpId scope, const std::string& base) {
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

  std::vector<PortId> consumers(PortId out) {
    std::vector<PortId> c;
    for (EdgeId x = g_.first_out_edge(out); x; x = g_.next_out_edge(x)) c.push_back(g_.edge_dst(x));
    return c;
  }

  // The src port a dst port spec stands for.
  PortId source_port(const Match& m, const PortSpec& ps, PortDir dir, bool single, const Bindings& b) {
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

  std::string port_name_for(const PortSpec& ps, PortId src, const schema::OpSchema* s, PortDir dir, const Bindings& b) {
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
  static std::string schema_port_name(const std::vector<schema::PortSchema>* ports, size_t i, std::string_view fallback) {
    if (ports && !ports->empty()) {
      size_t last = ports->size() - 1;
      if ((*ports)[last].arity == schema::Arity::Variadic && i >= last)
        if (auto n = (*ports)[last].expected_name()) return *n + "." + std::to_string(i - last);
      if (i < ports->size())
        if (auto n = (*ports)[i].expected_name()) return *n;
    }
    return std::string(fallback);
  }

  Plan plan_ports(const Match& m, size_t d, bool single, const std::vector<PortId>& bin, const std::vector<PortId>& bout, bool implicit) {
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
          if (!v.is_null() && !v.is_tensor()) throw EvalError("const: " + value_str(v) + " is not a tensor (write tensor(x, 'int64'))");
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

  OpId make_constant(OpId scope, const std::string& base, const Value& v) {
    const ConstantSpec& c = t_.constant;
    if (!v.is_tensor()) throw EvalError("const: " + value_str(v) + " is not a tensor (write tensor(x, 'int64'))");
    OpId op = rw_->create_op(tsym(c.type), unique_op_name(scope, base));
    rw_->set_attr(op, tsym(c.attr), v);
    rw_->add_port(op, PortDir::Out, tsym(c.port));
    return op;
  }

  void build_ports(OpId op, Plan& p, OpId scope, const std::string& base) {
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
  void reorder_inputs(OpId op) {
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

  // A rule's attribute values, evaluated before the rewrite changes anything: a mapper that fails
  // then leaves the graph as it was (the check-then-mutate discipline of MLIR's patterns).
  // (One vector for the whole apply, reused: rewrite_match fills it and records where each dst op's
  // values start.) A null Value: erase the key.
  std::vector<std::pair<Symbol, Value>> attr_values_;
  void eval_attrs(const OpSpec& os, const Bindings& b) {
    for (const AttrSpec& a : os.attrs) attr_values_.emplace_back(tsym(a.name), a.expr ? a.expr->eval(b) : Value());
  }

  // A reused op keeps its `@` attributes, and, when the table carries attributes, the ones the
  // dst schema has; then the mapper's values are set.
  void set_attrs(OpId op, const schema::OpSchema* s, std::span<std::pair<Symbol, Value>> values, bool reused, bool carried) {
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

  void rewrite(Match& m, OpId scope) {
    const CRule& cr = *m.rule;
    const Rule& r = *cr.rule;
    // A constant matched by its own rule (PyTorch's int and bool constants, which control flow
    // reads as values) that another rule read through a const: capture and erased as unused.
    for (OpId op : m.ops)
      if (!g_.valid(op) || rw_->erased(op)) return;
    if (r.unsupported) {
      for (OpId op : m.ops) {
        auto it = not_expanded_.find(op);  // a lowering (ConvertOptions::lowers_refused) declined it
        count(unsupported_, op, r.name, it == not_expanded_.end() ? *r.unsupported : *r.unsupported + "; not lowered: " + it->second);
      }
      return;
    }
    // One transaction per rule application: whatever it throws, the match is as it was.
    absl::InlinedVector<OpId, 2> made;
    rw_->begin();
    try {
      made = rewrite_match(m, scope);
      rw_->commit();
    } catch (const std::exception& e) {
      rw_->rollback();  // (first: the op is named in the report by its restored name)
      rep_.errors.push_back(fmt::format("{}: rule '{}' ({}): {}", g_.path(m.ops[0]), r.name, r.loc.str(), e.what()));
      return;
    } catch (...) {
      rw_->rollback();
      rep_.errors.push_back(fmt::format("{}: rule '{}' ({}): an exception without a message", g_.path(m.ops[0]), r.name, r.loc.str()));
      return;
    }
    rep_.mapped += m.ops.size();
    ++hits_[&r];
    // A rule's result must take the model's element types too (a rule that keeps Pow must not
    // keep an integer base below opset 12): checked like the ops no rule touches.
    if (same_family_ && !r.types_unchecked)
      for (size_t d = 0; d < made.size(); ++d)
        if (m.dst->schema[d] && g_.valid(made[d])) {
          std::string bad = type_refusal(g_, made[d], *m.dst->schema[d], t_.dst);
          if (!bad.empty()) count(unsupported_, made[d], r.name, bad);
        }
  }

  // The mapper for this match: the rule's, or, for a template (lists: `xs...`, `for` lines), its
  // expansion for the match's lengths and values, compiled once per expanded text.
  const DstSide& dst_side(const Match& m) {
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

  absl::InlinedVector<OpId, 2> rewrite_match(Match& m, OpId scope) {
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
  OpId last_in_body(const Match& m) {
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

  // ---------------------------------------------------------------- fixed point

  // A fixed_point table: its rules, as patterns of the greedy driver (ir::apply_patterns_greedily),
  // rewrite the scope until none matches. Each rule is tried at each of its src op types (the
  // candidates' order of the one-pass mode: bigger patterns, then priority, then declaration).
  bool fixed_ = false;
  std::vector<uint8_t> matched_;  // ops a rule took (the report's "unchanged" count)
  void fixed_scope(OpId s) {
    fixed_ = true;
    std::vector<OpId> initial;
    for (OpId c = g_.first_child(s); c; c = g_.next_sibling(c))
      if (!g_.is_graph(c)) initial.push_back(c);
    rep_.ops += initial.size();
    std::vector<ir::Pattern> pats;
    std::vector<std::string> types;
    for (const auto& [type, list] : impl_.by_type) types.push_back(type);
    std::sort(types.begin(), types.end());  // (deterministic order of the pattern list)
    for (const std::string& type : types) {
      const std::vector<Candidate>& list = impl_.by_type.at(type);
      for (size_t i = 0; i < list.size(); ++i) {
        Candidate c = list[i];
        ir::Pattern p;
        p.name = fmt::format("rule '{}' ({})", c.rule->rule->name, c.rule->rule->loc.str());
        p.root = type;
        p.benefit = static_cast<int>(list.size() - i);
        p.rewrite = [this, c, s](OpId op, ir::Rewriter& rw) { return apply_candidate(c, op, s, rw); };
        pats.push_back(std::move(p));
      }
    }
    size_t cap = o_.max_rewrites ? o_.max_rewrites : 10 * initial.size() + 1000;
    ir::GreedyResult res = ir::apply_patterns_greedily(g_, s, pats, cap, o_.listener);
    for (const std::string& e : res.errors) rep_.errors.push_back(e);
    if (!res.converged)
      rep_.errors.push_back(fmt::format("{}: table {} did not reach a fixed point: {} rewrites (the cap), the rules keep rewriting each other's results",
                                        s == g_.root() ? std::string("the graph") : g_.path(s), t_.name(), cap));
    for (OpId c : initial)
      if (g_.valid(c) && !(c.value < matched_.size() && matched_[c.value])) ++rep_.passed;
    std::vector<OpId> nested;
    for (OpId c = g_.first_child(s); c; c = g_.next_sibling(c)) {
      for (OpId a : g_.attr_graphs(c)) nested.push_back(a);
      if (!g_.is_graph(c) && g_.first_child(c)) nested.push_back(c);
    }
    for (OpId n : nested) fixed_scope(n);
    fix_order(s);
  }

  bool apply_candidate(const Candidate& c, OpId op, OpId s, ir::Rewriter& rw) {
    struct Use {  // the driver's rewriter (its transaction, its listener) for this rewrite
      ir::Rewriter*& slot;
      ir::Rewriter* saved;
      ~Use() { slot = saved; }
    } use{rw_, rw_};
    rw_ = &rw;
    const Rule& r = *c.rule->rule;
    Match m;
    m.rule = c.rule;
    m.ops.assign(r.src.ops.size(), OpId());
    m.b.graph = &g_;
    std::string why;
    bool ok = false;
    try {
      ok = match_op(*c.rule, c.start, op, m, why) && extend(*c.rule, c.rule->plans[c.start], 0, m, why);
    } catch (const EvalError&) {
      ok = false;
    }
    if (!ok) return false;
    if (r.unsupported) {
      for (OpId x : m.ops) count(unsupported_, x, r.name, *r.unsupported);
      return false;
    }
    rewrite_match(m, s);  // (what it throws, the driver rolls back and reports with the rule's name and the op)
    rep_.mapped += m.ops.size();
    ++hits_[&r];
    for (OpId x : m.ops) {
      if (x.value >= matched_.size()) matched_.resize(g_.id_bound(), 0);
      matched_[x.value] = 1;
    }
    return true;
  }

  PortId dst_port(OpId op, const OpSpec& os, PortDir dir, const std::string& name, const Bindings& b) {
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

  // Rewrites may leave a consumer before its producer in sibling order: restore a topological
  // order (stable: ops keep their relative order where they can).
  void fix_order(OpId s) {
    std::vector<OpId> kids;
    for (OpId c = g_.first_child(s); c; c = g_.next_sibling(c))
      if (!g_.is_graph(c)) kids.push_back(c);
    if (pos_.size() < g_.id_bound()) pos_.resize(g_.id_bound(), 0);
    for (uint32_t k = 0; k < kids.size(); ++k) pos_[kids[k].value] = k;
    bool ok = true;
    for (OpId c : kids) {
      for (PortId p : g_.inputs(c))
        for (EdgeId x = g_.first_in_edge(p); x; x = g_.next_in_edge(x)) {
          OpId src = g_.port_op(g_.edge_src(x));
          if (g_.parent(src) == s && !g_.is_graph(src) && pos_[src.value] > pos_[c.value]) ok = false;
        }
      if (!ok) break;
    }
    if (ok) return;
    ir::TopoResult t = g_.topo_order(s);
    if (!t.ok()) return;
    for (OpId c : t.order) rw_->move_before(c, OpId());
  }
};

}  // namespace

void CompiledTable::apply(ir::Graph& g, const ConvertOptions& o, Report& report, Drive drive) const {
  report.tables.push_back(impl_->table.name());
  Applier(g, *impl_, o, report, drive).run();
}

// ---------------------------------------------------------------- report

std::string Report::text() const {
  std::string s;
  for (const auto& t : tables) s += "table " + t + "\n";
  s += fmt::format("{} ops: {} converted by rules, {} unchanged\n", ops, mapped, passed);
  if (!unmapped.empty()) {
    size_t total = 0;
    for (const auto& u : unmapped) total += u.count;
    s += fmt::format("unmapped: {} ops of {} types have no rule\n", total, unmapped.size());
    for (const auto& u : unmapped) {
      s += fmt::format("  {:<24} x{:<5} ", u.type, u.count);
      for (size_t i = 0; i < u.names.size(); ++i) s += (i ? ", " : "") + u.names[i];
      s += u.count > u.names.size() ? ", ...\n" : "\n";
    }
  }
  if (!unsupported.empty()) {
    s += "cannot be converted:\n";
    for (const auto& u : unsupported) {
      s += fmt::format("  {:<24} x{:<5} {} (rule {})\n", u.type, u.count, u.reason, u.rule);
      s += "      at ";
      for (size_t i = 0; i < u.names.size(); ++i) s += (i ? ", " : "") + u.names[i];
      s += u.count > u.names.size() ? ", ...\n" : "\n";
    }
  }
  for (const auto& e : errors) s += "error: " + e + "\n";
  for (const auto& e : explain) s += e + "\n";
  return s;
}

std::string Report::json() const {
  auto counts = [](const std::vector<OpCount>& v) {
    std::string s = "[";
    for (size_t i = 0; i < v.size(); ++i) {
      const OpCount& c = v[i];
      s += fmt::format("{}{{\"type\": {}, \"count\": {}", i ? ", " : "", json_str(c.type), c.count);
      if (!c.rule.empty()) s += ", \"rule\": " + json_str(c.rule);
      if (!c.reason.empty()) s += ", \"reason\": " + json_str(c.reason);
      s += ", \"examples\": [";
      for (size_t k = 0; k < c.names.size(); ++k) s += (k ? ", " : "") + json_str(c.names[k]);
      s += "]}";
    }
    return s + "]";
  };
  std::string s = "{\"ok\": " + std::string(ok() ? "true" : "false") + ", \"tables\": [";
  for (size_t i = 0; i < tables.size(); ++i) s += (i ? ", " : "") + json_str(tables[i]);
  s += fmt::format("], \"ops\": {}, \"converted\": {}, \"unchanged\": {}, \"by_rule\": {{", ops, mapped, passed);
  bool first = true;
  for (const auto& [k, v] : by_rule) {
    s += fmt::format("{}{}: {}", first ? "" : ", ", json_str(k), v);
    first = false;
  }
  s += "}, \"unmapped\": " + counts(unmapped) + ", \"unsupported\": " + counts(unsupported) + ", \"errors\": [";
  for (size_t i = 0; i < errors.size(); ++i) s += (i ? ", " : "") + json_str(errors[i]);
  s += "], \"explain\": [";
  for (size_t i = 0; i < explain.size(); ++i) s += (i ? ", " : "") + json_str(explain[i]);
  return s + "]}\n";
}

}  // namespace amanda::mapping
