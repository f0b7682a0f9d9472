#include "amanda/ir/rewriter.h"

#include <algorithm>
#include <map>

#include "amanda/ir/value.h"
#include "amanda/support/diagnostics.h"

namespace amanda::ir {

// One undo step; the journal is undone last-first.
struct Rewriter::Undo {
  enum Kind : uint8_t { Created, PortAdded, Connected, Disconnected, Resourced, Attrs, PortType, ErasePending } kind;
  OpId op;
  PortId port, src, dst;
  EdgeId edge;
  AttrList attrs;
  TypeId type;
};

Rewriter::Rewriter(Graph& g, RewriteListener* listener)
    : g_(g), listener_(listener), scope_(g.root()), journal_(new std::vector<Undo>) {}

Rewriter::~Rewriter() {
  marks_.clear();
  try {
    finish();
  } catch (...) {
  }
  delete journal_;
}

void Rewriter::record(Undo u) {
  if (!marks_.empty()) journal_->push_back(std::move(u));
}

void Rewriter::set_insertion_point(OpId scope, OpId before) {
  if (!g_.valid(scope)) throw Error("Rewriter: invalid insertion scope");
  if (before && g_.parent(before) != scope) throw Error("Rewriter: the insertion point is not in the scope");
  scope_ = scope;
  before_ = before;
}

OpId Rewriter::create_op(std::string_view type, std::string_view name, std::initializer_list<std::string_view> inputs,
                         std::initializer_list<std::string_view> outputs) {
  OpId op = g_.create_op(scope_, type, name, inputs, outputs);
  if (before_) g_.move_before(op, before_);
  record({Undo::Created, op, {}, {}, {}, {}, {}, {}});
  if (listener_) listener_->op_created(op);
  return op;
}

PortId Rewriter::add_input(OpId op, std::string_view name) {
  PortId p = g_.add_input(op, g_.sym(name));
  record({Undo::PortAdded, op, p, {}, {}, {}, {}, {}});
  if (listener_) listener_->op_modified(op);
  return p;
}

PortId Rewriter::add_output(OpId op, std::string_view name) {
  PortId p = g_.add_output(op, g_.sym(name));
  record({Undo::PortAdded, op, p, {}, {}, {}, {}, {}});
  if (listener_) listener_->op_modified(op);
  return p;
}

EdgeId Rewriter::connect(PortId src, PortId dst) {
  EdgeId e = g_.connect(src, dst);
  record({Undo::Connected, {}, {}, src, dst, e, {}, {}});
  if (listener_) {
    listener_->edge_added(e);
    listener_->op_modified(g_.port_op(dst));
  }
  return e;
}

void Rewriter::disconnect(EdgeId e) {
  if (!g_.valid(e)) throw Error("Rewriter: disconnect of an invalid edge");
  PortId s = g_.edge_src(e), d = g_.edge_dst(e);
  record({Undo::Disconnected, {}, {}, s, d, e, g_.attrs(e), {}});
  g_.disconnect(e);
  if (listener_) {
    listener_->edge_removed(s, d);
    listener_->op_modified(g_.port_op(d));
  }
}

void Rewriter::replace_all_uses(PortId from, PortId to) {
  if (!g_.valid(from) || !g_.valid(to)) throw Error("Rewriter: replace_all_uses of an invalid port");
  if (from == to) return;
  std::vector<EdgeId> uses = g_.out_edges(from);
  for (EdgeId e : uses) {
    // The same edge id, now leaving `to` (edge ids decide the written order).
    PortId d = g_.edge_dst(e);
    AttrList a = g_.attrs(e);
    g_.disconnect(e);
    g_.revive_edge(e, to, d);
    g_.set_attr_list(e, a);
    record({Undo::Resourced, {}, {}, from, d, e, {}, {}});
  }
  if (listener_) {
    listener_->uses_replaced(from, to);
    for (EdgeId e : uses) listener_->op_modified(g_.port_op(g_.edge_dst(e)));
  }
}

void Rewriter::replace_op(OpId op, std::span<const PortId> values) {
  std::vector<PortId> outs;
  for (PortId p : g_.outputs(op))
    if (!g_.is_control(p)) outs.push_back(p);
  if (outs.size() != values.size())
    throw Error("Rewriter: replace_op of " + g_.path(op) + " with " + std::to_string(values.size()) + " values for " +
                std::to_string(outs.size()) + " outputs");
  for (size_t i = 0; i < outs.size(); ++i) replace_all_uses(outs[i], values[i]);
  erase_op(op);
}

bool Rewriter::erased(OpId op) const {
  return std::find(pending_erase_.begin(), pending_erase_.end(), op) != pending_erase_.end();
}

void Rewriter::erase_op(OpId op) {
  if (!g_.valid(op) || erased(op)) throw Error("Rewriter: erase of an op that is not there");
  for (PortId p : g_.outputs(op))
    for (EdgeId e = g_.first_out_edge(p); e; e = g_.next_out_edge(e))
      if (g_.port_op(g_.edge_dst(e)) != op)
        throw Error("Rewriter: " + g_.path(op) + " cannot be erased: " + g_.path(p) + " is still used by " + g_.path(g_.edge_dst(e)));
  if (listener_) listener_->op_erased(op);
  if (marks_.empty()) {
    g_.erase_op(op);
    return;
  }
  // Inside a transaction the op stays (a rollback must find it as it was) but lets go of its
  // inputs, so that what fed it may be erased too; the commit erases it.
  for (PortId p : g_.inputs(op))
    while (EdgeId e = g_.first_in_edge(p)) disconnect(e);
  pending_erase_.push_back(op);
  record({Undo::ErasePending, op, {}, {}, {}, {}, {}, {}});
}

void Rewriter::touch_attrs(OpId op) { record({Undo::Attrs, op, {}, {}, {}, {}, g_.attrs(op), {}}); }

void Rewriter::set_attr(OpId op, std::string_view key, Value v) {
  Symbol k = g_.sym(key);
  if (const Value* old = g_.attr(op, k); old && (old->is_graph() || (old->is_list() && !old->as_list().empty() && old->as_list()[0].is_graph())) && !marks_.empty())
    throw Error("Rewriter: " + g_.path(op) + ": a graph-valued attribute cannot be replaced inside a transaction");
  touch_attrs(op);
  g_.set_attr(op, k, std::move(v));
  if (listener_) listener_->op_modified(op);
}

void Rewriter::erase_attr(OpId op, std::string_view key) {
  Symbol k = g_.symbols().find(key);
  if (k == SymbolTable::kNone || !g_.attr(op, k)) return;
  if (const Value* old = g_.attr(op, k); (old->is_graph() || old->is_list()) && !marks_.empty()) {
    bool graphs = old->is_graph() || (!old->as_list().empty() && old->as_list()[0].is_graph());
    if (graphs) throw Error("Rewriter: " + g_.path(op) + ": a graph-valued attribute cannot be erased inside a transaction");
  }
  touch_attrs(op);
  g_.erase_attr(op, k);
  if (listener_) listener_->op_modified(op);
}

void Rewriter::set_port_type(PortId p, TypeId t) {
  record({Undo::PortType, {}, p, {}, {}, {}, {}, g_.port_type(p)});
  g_.set_port_type(p, t);
  if (listener_) listener_->op_modified(g_.port_op(p));
}

void Rewriter::begin() { marks_.push_back(journal_->size()); }

void Rewriter::commit() {
  if (marks_.empty()) throw Error("Rewriter: commit without begin");
  marks_.pop_back();
  if (marks_.empty()) {
    journal_->clear();
    finish();
  }
}

void Rewriter::finish() {
  if (!marks_.empty()) return;
  std::vector<OpId> ops;
  ops.swap(pending_erase_);
  for (OpId op : ops)
    if (g_.valid(op)) g_.erase_op(op);
}

void Rewriter::rollback() {
  if (marks_.empty()) throw Error("Rewriter: rollback without begin");
  size_t mark = marks_.back();
  marks_.pop_back();
  auto& j = *journal_;
  while (j.size() > mark) {
    Undo u = std::move(j.back());
    j.pop_back();
    switch (u.kind) {
      case Undo::Created:
        if (g_.valid(u.op)) g_.erase_op(u.op);
        break;
      case Undo::PortAdded:
        if (g_.valid(u.port)) g_.erase_port(u.port);
        break;
      case Undo::Connected:
        if (g_.valid(u.edge)) g_.disconnect(u.edge);
        break;
      case Undo::Disconnected:
        g_.revive_edge(u.edge, u.src, u.dst);
        g_.set_attr_list(u.edge, std::move(u.attrs));
        break;
      case Undo::Resourced: {
        AttrList a = g_.attrs(u.edge);
        g_.disconnect(u.edge);
        g_.revive_edge(u.edge, u.src, u.dst);
        g_.set_attr_list(u.edge, std::move(a));
        break;
      }
      case Undo::Attrs: g_.set_attr_list(u.op, std::move(u.attrs)); break;
      case Undo::PortType: g_.set_port_type(u.port, u.type); break;
      case Undo::ErasePending:
        if (auto it = std::find(pending_erase_.begin(), pending_erase_.end(), u.op); it != pending_erase_.end())
          pending_erase_.erase(it);
        break;
    }
  }
  if (listener_) listener_->rolled_back();
}

// ---------------------------------------------------------------- greedy driver

namespace {

// Collects what a rewrite touched; the driver adds it to the worklist only when the rewrite stays.
class Touched : public RewriteListener {
 public:
  Touched(Graph& g, RewriteListener* user) : g_(g), user_(user) {}
  std::vector<OpId> ops;
  void add(OpId op) {
    if (op && !g_.is_graph(op)) ops.push_back(op);
  }
  void add_users(PortId p) {
    for (EdgeId e = g_.first_out_edge(p); e; e = g_.next_out_edge(e)) add(g_.port_op(g_.edge_dst(e)));
  }
  void op_created(OpId op) override {
    add(op);
    if (user_) user_->op_created(op);
  }
  void op_erased(OpId op) override {
    // What fed it may now be dead or newly matchable.
    for (PortId p : g_.inputs(op))
      if (PortId s = g_.producer(p)) add(g_.port_op(s));
    if (user_) user_->op_erased(op);
  }
  void op_modified(OpId op) override {
    add(op);
    if (user_) user_->op_modified(op);
  }
  void edge_added(EdgeId e) override {
    add(g_.port_op(g_.edge_src(e)));
    if (user_) user_->edge_added(e);
  }
  void edge_removed(PortId s, PortId d) override {
    add(g_.port_op(s));
    if (user_) user_->edge_removed(s, d);
  }
  void uses_replaced(PortId from, PortId to) override {
    add_users(to);
    add(g_.port_op(to));
    if (user_) user_->uses_replaced(from, to);
  }
  void rolled_back() override {
    ops.clear();
    if (user_) user_->rolled_back();
  }

 private:
  Graph& g_;
  RewriteListener* user_;
};

}  // namespace

GreedyResult apply_patterns_greedily(Graph& g, OpId scope, const std::vector<Pattern>& patterns, size_t max_rewrites,
                                     RewriteListener* listener) {
  GreedyResult res;
  // Dispatch by root op type; within a type, by benefit, then declaration order.
  std::map<std::string, std::vector<const Pattern*>, std::less<>> by_type;
  std::vector<const Pattern*> any;
  for (const Pattern& p : patterns) (p.root.empty() ? any : by_type[p.root]).push_back(&p);
  auto order = [](std::vector<const Pattern*>& v) {
    std::stable_sort(v.begin(), v.end(), [](const Pattern* a, const Pattern* b) { return a->benefit > b->benefit; });
  };
  for (auto& [k, v] : by_type) order(v);
  order(any);

  Touched touched(g, listener);
  Rewriter rw(g, &touched);
  std::vector<OpId> worklist;
  std::vector<uint8_t> queued;
  auto push = [&](OpId op) {
    if (op.value >= queued.size()) queued.resize(g.id_bound() + 64, 0);
    if (queued[op.value]) return;
    queued[op.value] = 1;
    worklist.push_back(op);
  };
  // LIFO, filled in reverse so that the first pass visits ops in body order.
  std::vector<OpId> kids = g.children(scope);
  for (auto it = kids.rbegin(); it != kids.rend(); ++it) push(*it);
  while (!worklist.empty()) {
    OpId op = worklist.back();
    worklist.pop_back();
    queued[op.value] = 0;
    if (!g.valid(op) || g.parent(op) != scope) continue;
    ++res.visits;
    std::vector<const Pattern*> cands;
    if (auto it = by_type.find(g.type_str(op)); it != by_type.end()) cands = it->second;
    cands.insert(cands.end(), any.begin(), any.end());
    if (any.size() && cands.size() > any.size()) order(cands);
    for (const Pattern* p : cands) {
      touched.ops.clear();
      rw.set_insertion_point(scope, op);
      rw.begin();
      bool ok = false;
      try {
        ok = p->rewrite(op, rw);
      } catch (const std::exception& e) {
        res.errors.push_back(p->name + " on " + g.path(op) + ": " + e.what());
        ok = false;
      }
      if (!ok) {
        rw.rollback();
        continue;
      }
      std::vector<OpId> again = std::move(touched.ops);
      rw.commit();
      ++res.rewrites;
      for (auto it = again.rbegin(); it != again.rend(); ++it)
        if (g.valid(*it)) push(*it);
      break;
    }
    if (res.rewrites >= max_rewrites) {
      res.converged = false;
      break;
    }
  }
  return res;
}

}  // namespace amanda::ir
