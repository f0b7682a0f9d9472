// The driver of CompiledTable::apply: how a table's rules are applied to a graph (MLIR's drivers,
// beside its pattern applicator). One pass per scope in topological order claims matches (the
// matcher, matcher.h), decides what becomes of the ops no rule matched (the two schemas,
// schema_step.h; C++ lowerings and function bodies through ConvertOptions::expand), then rewrites
// the matches (the result builder, result_builder.h), one transaction each; nested graphs are
// converted too. A fixed_point table, or a rewrite table run by convert()/rewrite(), goes through
// ir::apply_patterns_greedily instead, bounded by ConvertOptions::max_rewrites.
#include <algorithm>
#include <map>

#include <absl/container/node_hash_map.h>
#include <fmt/format.h>

#include "amanda/mapping/engine.h"
#include "amanda/mapping/schema_step.h"
#include "amanda/support/progress.h"
#include "apply_context.h"
#include "matcher.h"
#include "result_builder.h"

namespace amanda::mapping {

namespace engine {
namespace {

class Applier : ContextUser {
 public:
  Applier(ApplyContext& c, Drive drive)
      : ContextUser(c), drive_(drive), progress_("converting " + c.t.name(), c.g.op_count()), matcher_(c), builder_(c) {
    src_sym_ = g_.sym(t_.src);
    dst_sym_ = g_.sym(t_.dst);
    same_family_ = schema::split_version(t_.src).first == schema::split_version(t_.dst).first;
  }

  void run() {
    cx_.claimed.assign(g_.id_bound(), 0);
    if (o_.sealed)  // what a layer table made for a later namespace: taken already, as if claimed
      for (size_t i = 0; i < o_.sealed->size() && i < cx_.claimed.size(); ++i) cx_.claimed[i] = (*o_.sealed)[i];
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
  Progress progress_;  // a progress line for a big graph (see support/progress.h)
  Matcher matcher_;
  ResultBuilder builder_;
  std::map<std::string, OpCount> unmapped_, unsupported_;
  std::vector<std::string> foreign_prefixes_;
  Symbol src_sym_, dst_sym_;
  absl::flat_hash_map<const Rule*, size_t> hits_;  // matches rewritten per rule (into rep_.by_rule at the end)
  bool same_family_ = false;  // two versions of one family (amanda/onnx/12 -> 13), not two frameworks

  // ---------------------------------------------------------------- traversal

  void scope(OpId s) {
    const bool layer = drive_ == Drive::Layer;  // (a layer's graphs stay in the source namespace)
    if (!layer && g_.is_graph(s) && g_.graph_namespace(s) == src_sym_) rw_->set_graph_namespace(s, dst_sym_);
    ir::TopoResult topo = g_.topo_order(s);
    std::vector<OpId> order = topo.ok() ? std::move(topo.order) : g_.children(s);
    if (!layer && o_.expand && expand_missing(s, order)) {
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
      if (matcher_.find_match(op, m)) {
        for (OpId x : m.ops) claim(x);
        if (explaining) reasons.push_back("=> rule '" + m.rule->rule->name + "' applies");
        matches.push_back(std::move(m));
      } else if (layer) {
        --rep_.ops;  // no rule of the layer: the chain's tables take it
        if (why_) note("=> no rule of this layer table applies: left to the chain's tables");
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
    info.ruled = matcher_.has_rules(t);
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
          bool matched = matcher_.find_match(op, m);
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
      made = builder_.rewrite_match(m, scope);
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

  // ---------------------------------------------------------------- fixed point

  // A fixed_point table: its rules, as patterns of the greedy driver (ir::apply_patterns_greedily),
  // rewrite the scope until none matches. Each rule is tried at each of its src op types (the
  // candidates' order of the one-pass mode: bigger patterns, then priority, then declaration).
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
      ok = matcher_.match_op(*c.rule, c.start, op, m, why) && matcher_.extend(*c.rule, c.rule->plans[c.start], 0, m, why);
    } catch (const EvalError&) {
      ok = false;
    }
    if (!ok) return false;
    if (r.unsupported) {
      for (OpId x : m.ops) count(unsupported_, x, r.name, *r.unsupported);
      return false;
    }
    builder_.rewrite_match(m, s);  // (what it throws, the driver rolls back and reports with the rule's name and the op)
    rep_.mapped += m.ops.size();
    ++hits_[&r];
    for (OpId x : m.ops) {
      if (x.value >= matched_.size()) matched_.resize(g_.id_bound(), 0);
      matched_[x.value] = 1;
    }
    return true;
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
}  // namespace engine

void CompiledTable::apply(ir::Graph& g, const ConvertOptions& o, Report& report, Drive drive) const {
  report.tables.push_back(impl_->table.name());
  ir::Rewriter rw(g, o.listener);
  engine::ApplyContext cx(g, *impl_, o, report, &rw);
  engine::Applier(cx, drive).run();
}

}  // namespace amanda::mapping
