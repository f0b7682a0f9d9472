#include "amanda/passes/matcher.h"

#include <algorithm>

#include "amanda/ir/conventions.h"
#include "util.h"

namespace amanda::passes {

struct PatternNode {
  enum class Kind { Op, Any, Constant, ScopeInput } kind = Kind::Any;
  std::vector<std::string> types;  // Kind::Op: one of these
  struct Arg {
    enum Count { One, Optional, Star } count;
    std::shared_ptr<PatternNode> node;
  };
  std::vector<Arg> args;
  bool exact = false;
  bool boundary = false;
  int output = 0;
  int64_t uses_eq = -1, uses_max = -1;
  bool not_scope_output = false;
  struct OpPred {
    std::string what;
    std::function<bool(const ir::Graph&, ir::OpId)> f;
  };
  struct ValuePred {
    std::string what;
    std::function<bool(const ir::Graph&, ir::PortId)> f;
  };
  std::vector<OpPred> op_preds;
  std::vector<ValuePred> value_preds;
  std::string label;
};

Pat::Pat() : n_(std::make_shared<PatternNode>()) {}

Pat& Pat::in(const Pat& p) { n_->args.push_back({PatternNode::Arg::One, p.n_}); return *this; }
Pat& Pat::opt(const Pat& p) { n_->args.push_back({PatternNode::Arg::Optional, p.n_}); return *this; }
Pat& Pat::star(const Pat& p) { n_->args.push_back({PatternNode::Arg::Star, p.n_}); return *this; }
Pat& Pat::exact() { n_->exact = true; return *this; }
Pat& Pat::uses(size_t n) { n_->uses_eq = static_cast<int64_t>(n); return *this; }
Pat& Pat::max_uses(size_t n) { n_->uses_max = static_cast<int64_t>(n); return *this; }
Pat& Pat::not_scope_output() { n_->not_scope_output = true; return *this; }
Pat& Pat::output(int index) { n_->output = index; return *this; }
Pat& Pat::boundary() { n_->boundary = true; return *this; }
Pat& Pat::as(std::string label) { n_->label = std::move(label); return *this; }

Pat& Pat::attr(std::string name, ir::Value v) {
  std::string what = "attribute " + name + " is as the pattern says";
  n_->op_preds.push_back({what, [name, v](const ir::Graph& g, ir::OpId op) {
                            Symbol s = g.symbols().find(name);
                            const ir::Value* a = s == SymbolTable::kNone ? nullptr : g.attr(op, s);
                            return a && *a == v;
                          }});
  return *this;
}

Pat& Pat::attr_or(std::string name, ir::Value v, ir::Value dflt) {
  std::string what = "attribute " + name + " (or its default) is as the pattern says";
  n_->op_preds.push_back({what, [name, v, dflt](const ir::Graph& g, ir::OpId op) {
                            Symbol s = g.symbols().find(name);
                            const ir::Value* a = s == SymbolTable::kNone ? nullptr : g.attr(op, s);
                            return a ? *a == v : dflt == v;
                          }});
  return *this;
}

Pat& Pat::no_attr(std::string name) {
  n_->op_preds.push_back({"no attribute " + name, [name](const ir::Graph& g, ir::OpId op) {
                            Symbol s = g.symbols().find(name);
                            return s == SymbolTable::kNone || !g.attr(op, s);
                          }});
  return *this;
}

Pat& Pat::dtype(ir::DType t) {
  n_->value_preds.push_back({"element type " + std::string(ir::dtype_name(t)),
                             [t](const ir::Graph& g, ir::PortId p) { return detail::elem_type(g, p) == t; }});
  return *this;
}

Pat& Pat::rank(int64_t r) {
  n_->value_preds.push_back({"rank " + std::to_string(r), [r](const ir::Graph& g, ir::PortId p) { return detail::rank_of(g, p) == r; }});
  return *this;
}

Pat& Pat::static_shape() {
  n_->value_preds.push_back({"a static shape", [](const ir::Graph& g, ir::PortId p) { return detail::static_shape(g, p).has_value(); }});
  return *this;
}

Pat& Pat::where(std::string what, std::function<bool(const ir::Graph&, ir::OpId)> f) {
  n_->op_preds.push_back({std::move(what), std::move(f)});
  return *this;
}

Pat& Pat::where_value(std::string what, std::function<bool(const ir::Graph&, ir::PortId)> f) {
  n_->value_preds.push_back({std::move(what), std::move(f)});
  return *this;
}

Pat op(std::string_view types) {
  Pat p;
  auto n = p.ptr();
  n->kind = PatternNode::Kind::Op;
  size_t start = 0;
  while (start <= types.size()) {
    size_t bar = types.find('|', start);
    if (bar == std::string_view::npos) bar = types.size();
    if (bar > start) n->types.emplace_back(types.substr(start, bar - start));
    start = bar + 1;
  }
  return p;
}

Pat any() { return Pat(); }

Pat constant() {
  Pat p;
  p.ptr()->kind = PatternNode::Kind::Constant;
  return p;
}

Pat scope_input() {
  Pat p;
  p.ptr()->kind = PatternNode::Kind::ScopeInput;
  return p;
}

// ---- Match

ir::PortId Match::value(const Pat& p) const {
  for (const auto& [n, v] : bindings)
    if (n == p.ptr().get()) return v;
  return ir::PortId();
}

std::vector<ir::PortId> Match::values(const Pat& p) const {
  std::vector<ir::PortId> r;
  for (const auto& [n, v] : bindings)
    if (n == p.ptr().get()) r.push_back(v);
  return r;
}

ir::OpId Match::op(const ir::Graph& g, const Pat& p) const {
  ir::PortId v = value(p);
  return v ? g.port_op(v) : ir::OpId();
}

ir::PortId Match::at(std::string_view label) const {
  for (const auto& [n, v] : bindings)
    if (n->label == label) return v;
  return ir::PortId();
}

bool Match::closed(const ir::Graph& g) const {
  for (ir::OpId o : ops) {
    if (o == root) continue;
    for (ir::PortId out : g.outputs(o)) {
      for (ir::EdgeId e = g.first_out_edge(out); e; e = g.next_out_edge(e)) {
        ir::OpId user = g.port_op(g.edge_dst(e));
        if (std::find(ops.begin(), ops.end(), user) == ops.end()) return false;
      }
    }
  }
  return true;
}

namespace {

class Matcher {
 public:
  Matcher(const ir::Graph& g, const MatchOptions& o, Match& m) : g_(g), o_(o), m_(m) {}

  std::string describe(ir::OpId op) const {
    return "'" + g_.path(op) + "' (" + std::string(g_.type_str(op)) + ")";
  }
  std::string node_name(const PatternNode& n) const {
    if (!n.label.empty()) return "pattern node '" + n.label + "'";
    if (n.kind == PatternNode::Kind::Op) {
      std::string t;
      for (const auto& s : n.types) t += (t.empty() ? "" : "|") + s;
      return "pattern node " + t;
    }
    return n.kind == PatternNode::Kind::Constant ? "pattern node constant()" : n.kind == PatternNode::Kind::ScopeInput ? "pattern node scope_input()" : "pattern node any()";
  }
  bool fail(std::string why) {
    m_.why = std::move(why);
    return false;
  }

  bool value(ir::PortId v, const PatternNode& n, bool star = false) {
    if (!star)
      for (const auto& [bn, bv] : m_.bindings)
      if (bn == &n) {
        // DAG sharing: a node reached twice must bind the same value (checked once)
        if (bv == v) return true;
        return fail(node_name(n) + " is shared: it bound " + g_.path(bv) + " and cannot also bind " + g_.path(v));
      }
    const size_t mark = m_.bindings.size(), ops_mark = m_.ops.size();
    m_.bindings.emplace_back(&n, v);
    bool ok = check(v, n);
    if (!ok) {
      m_.bindings.resize(mark);
      m_.ops.resize(ops_mark);
    }
    return ok;
  }

  bool value_preds(ir::PortId v, const PatternNode& n) {
    // uses counted only as far as the predicate needs: a shared constant may have a million
    size_t u = 0;
    if (n.uses_eq >= 0 || n.uses_max >= 0) {
      size_t limit = static_cast<size_t>(std::max(n.uses_eq, n.uses_max)) + 1;
      for (ir::EdgeId e = g_.first_out_edge(v); e && u < limit; e = g_.next_out_edge(e)) ++u;
    }
    if (n.uses_eq >= 0 && u != static_cast<size_t>(n.uses_eq))
      return fail(g_.path(v) + " has " + std::to_string(u) + " uses; " + node_name(n) + " wants " + std::to_string(n.uses_eq));
    if (n.uses_max >= 0 && u > static_cast<size_t>(n.uses_max))
      return fail(g_.path(v) + " has " + std::to_string(u) + " uses; " + node_name(n) + " wants at most " + std::to_string(n.uses_max));
    if (n.not_scope_output && detail::feeds_scope_output(g_, v))
      return fail(g_.path(v) + " is an output of its graph (" + node_name(n) + " wants an inner value)");
    for (const auto& p : n.value_preds)
      if (!p.f(g_, v)) return fail(g_.path(v) + ": " + node_name(n) + " wants " + p.what);
    return true;
  }

  bool check(ir::PortId v, const PatternNode& n) {
    using K = PatternNode::Kind;
    if (n.kind == K::Any) return value_preds(v, n);
    if (n.kind == K::Constant) {
      if (!detail::constant_value(g_, v)) return fail(g_.path(v) + " is not a constant (" + node_name(n) + ")");
      return value_preds(v, n);
    }
    if (n.kind == K::ScopeInput) {
      if (!detail::is_scope_value(g_, v)) return fail(g_.path(v) + " is not an input of its graph (" + node_name(n) + ")");
      return value_preds(v, n);
    }
    ir::OpId op = g_.port_op(v);
    if (g_.port_dir(v) != ir::PortDir::Out || g_.is_graph(op))
      return fail(g_.path(v) + " is an input of its graph, not an op's output (" + node_name(n) + ")");
    std::string_view t = g_.type_str(op);
    if (!n.types.empty() && std::find(n.types.begin(), n.types.end(), t) == n.types.end())
      return fail(describe(op) + " is not a " + node_name(n).substr(13));
    if (n.output >= 0) {
      auto outs = g_.outputs(op);
      if (static_cast<size_t>(n.output) >= outs.size() || outs[static_cast<size_t>(n.output)] != v)
        return fail(g_.path(v) + " is not output " + std::to_string(n.output) + " of " + describe(op));
    }
    if (!n.boundary && o_.allowed && !o_.allowed(op)) return fail(describe(op) + " is excluded from rewriting");
    if (!value_preds(v, n)) return false;
    for (const auto& p : n.op_preds)
      if (!p.f(g_, op)) return fail(describe(op) + ": " + node_name(n) + " wants " + p.what);
    if (n.boundary) return true;
    m_.ops.push_back(op);
    std::vector<ir::PortId> ins = detail::data_inputs(g_, op);
    size_t i = 0;
    for (size_t a = 0; a < n.args.size(); ++a) {
      const auto& arg = n.args[a];
      switch (arg.count) {
        case PatternNode::Arg::One: {
          if (i >= ins.size())
            return fail(describe(op) + " has " + std::to_string(ins.size()) + " inputs; " + node_name(n) + " wants input " + std::to_string(i));
          ir::PortId p = g_.producer(ins[i]);
          if (!p) return fail(describe(op) + ": input " + std::to_string(i) + " is omitted; " + node_name(n) + " wants one");
          if (!value(p, *arg.node)) return fail(describe(op) + " input " + std::to_string(i) + ": " + m_.why);
          ++i;
          break;
        }
        case PatternNode::Arg::Optional: {
          if (i >= ins.size()) break;
          ir::PortId p = g_.producer(ins[i]);
          if (p && !value(p, *arg.node)) return fail(describe(op) + " optional input " + std::to_string(i) + ": " + m_.why);
          ++i;
          break;
        }
        case PatternNode::Arg::Star: {
          while (i < ins.size()) {
            ir::PortId p = g_.producer(ins[i]);
            if (!p) break;
            std::string keep = m_.why;
            if (!value(p, *arg.node, true)) {
              m_.why = keep;
              break;
            }
            ++i;
          }
          break;
        }
      }
    }
    if (n.exact && i != ins.size())
      return fail(describe(op) + " has " + std::to_string(ins.size()) + " inputs; " + node_name(n) + " takes " + std::to_string(i));
    return true;
  }

 private:
  const ir::Graph& g_;
  const MatchOptions& o_;
  Match& m_;
};

}  // namespace

Match match(const ir::Graph& g, ir::OpId root, const Pat& pattern, const MatchOptions& options) {
  Match m;
  m.root = root;
  const PatternNode& n = pattern.node();
  auto outs = g.outputs(root);
  ir::PortId v;
  size_t want = n.output < 0 ? 0 : static_cast<size_t>(n.output);
  size_t k = 0;
  for (ir::PortId p : outs) {
    if (g.is_control(p)) continue;
    if (k++ == want) {
      v = p;
      break;
    }
  }
  if (!v) {
    m.why = "'" + g.path(root) + "' (" + std::string(g.type_str(root)) + ") has no output " + std::to_string(want);
    return m;
  }
  Matcher mt(g, options, m);
  m.ok = mt.value(v, n);
  if (m.ok) m.why.clear();
  return m;
}

std::vector<Match> match_all(const ir::Graph& g, ir::OpId scope, const Pat& pattern, const MatchOptions& options) {
  std::vector<Match> r;
  const PatternNode& n = pattern.node();
  for (ir::OpId op = g.first_child(scope); op; op = g.next_sibling(op)) {
    if (n.kind == PatternNode::Kind::Op && !n.types.empty() &&
        std::find(n.types.begin(), n.types.end(), g.type_str(op)) == n.types.end())
      continue;
    Match m = match(g, op, pattern, options);
    if (m) r.push_back(std::move(m));
  }
  return r;
}

ir::GreedyResult replace_all(ir::Graph& g, ir::OpId scope, const Pat& pattern, const ReplaceFn& replace, const MatchOptions& options,
                             std::string name, ir::RewriteListener* listener) {
  std::vector<ir::Pattern> ps;
  const PatternNode& n = pattern.node();
  std::vector<std::string> roots = n.types;
  if (roots.empty()) roots.push_back("");
  for (const std::string& root : roots) {
    ir::Pattern p;
    p.name = name;
    p.root = root;
    p.rewrite = [&g, &pattern, &replace, &options](ir::OpId op, ir::Rewriter& rw) {
      Match m = match(g, op, pattern, options);
      if (!m) return false;
      return replace(m, rw);
    };
    ps.push_back(std::move(p));
  }
  return ir::apply_patterns_greedily(g, scope, ps, 100000, listener);
}

}  // namespace amanda::passes
