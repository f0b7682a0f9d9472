#include "amanda/ir/rewriter.h"

#include <algorithm>
#include <map>

#include "amanda/ir/value.h"
#include "amanda/support/diagnostics.h"

namespace amanda::ir {

// One undo step; the journal is undone last-first.
struct Rewriter::Undo {
  enum Kind : uint8_t {
    Created, PortAdded, Connected, Disconnected, Resourced, Attrs, PortAttrs, AttrSet, AttrAdded, PortType, OpType, Renamed,
    Moved, PortErased, ErasePending, AttrErased
  } kind;
  OpId op, op2;  // Moved: op2 was the next sibling
  PortId port, src, dst;
  EdgeId edge;
  TypeId type;
  Symbol key = 0;      // AttrSet, AttrAdded, AttrErased: the key; OpType: the old type; Renamed: the old name
  uint32_t index = 0;  // PortErased: the port's index; AttrErased: the attribute's; Renamed: the old "generated" flag
  uint32_t slot = 0;   // Attrs, PortAttrs, PortErased, Disconnected: into lists_; AttrSet, AttrErased: into values_
  explicit Undo(Kind k) : kind(k) {}
};

uint32_t Rewriter::keep_list(const AttrList& l) {
  if (l.empty()) return kNoSlot;
  lists_.push_back(l);
  return static_cast<uint32_t>(lists_.size() - 1);
}

AttrList Rewriter::take_list(uint32_t slot) { return slot == kNoSlot ? AttrList() : std::move(lists_[slot]); }

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
  Undo u(Undo::Created);
  u.op = op;
  record(std::move(u));
  if (listener_) listener_->op_created(op);
  return op;
}

OpId Rewriter::create_op(Symbol type, Symbol name, bool generate_name) {
  OpId op = g_.create_op(scope_, type, name, generate_name);
  if (before_) g_.move_before(op, before_);
  if (!marks_.empty()) {
    Undo u(Undo::Created);
    u.op = op;
    journal_->push_back(std::move(u));
  }
  if (listener_) listener_->op_created(op);
  return op;
}

void Rewriter::set_op_type(OpId op, Symbol type) {
  if (!fresh(op)) {
    Undo u(Undo::OpType);
    u.op = op;
    u.key = g_.type(op);
    journal_->push_back(std::move(u));
  }
  g_.set_type(op, type);
  if (listener_) listener_->op_modified(op);
}

void Rewriter::set_name(OpId op, Symbol name, bool generated) {
  if (!fresh(op)) {
    Undo u(Undo::Renamed);
    u.op = op;
    u.key = g_.name(op);
    u.index = g_.name_generated(op);
    journal_->push_back(std::move(u));
  }
  g_.set_name(op, name);
  if (generated) g_.set_name_generated(op, true);
  if (listener_) listener_->op_modified(op);
}

void Rewriter::move_before(OpId op, OpId before) {
  if (op == before || g_.next_sibling(op) == before) return;
  if (before && g_.parent(before) != g_.parent(op)) throw Error("Rewriter: move_before across scopes");
  if (!fresh(op)) {
    Undo u(Undo::Moved);
    u.op = op;
    u.op2 = g_.next_sibling(op);
    journal_->push_back(std::move(u));
  }
  g_.move_before(op, before);
  if (listener_) listener_->op_modified(op);
}

PortId Rewriter::add_port(OpId op, PortDir dir, Symbol name) {
  PortId p = g_.add_port(op, dir, name);
  if (!fresh(op)) {
    Undo u(Undo::PortAdded);
    u.op = op;
    u.port = p;
    journal_->push_back(std::move(u));
  }
  if (listener_) listener_->op_modified(op);
  return p;
}

PortId Rewriter::control_in(OpId op) {
  if (PortId p = g_.find_control(op, PortDir::In)) return p;
  PortId p = g_.control_in(op);
  if (!fresh(op)) {
    Undo u(Undo::PortAdded);
    u.op = op;
    u.port = p;
    journal_->push_back(std::move(u));
  }
  if (listener_) listener_->op_modified(op);
  return p;
}

PortId Rewriter::control_out(OpId op) {
  if (PortId p = g_.find_control(op, PortDir::Out)) return p;
  PortId p = g_.control_out(op);
  if (!fresh(op)) {
    Undo u(Undo::PortAdded);
    u.op = op;
    u.port = p;
    journal_->push_back(std::move(u));
  }
  if (listener_) listener_->op_modified(op);
  return p;
}

void Rewriter::erase_port(PortId p) {
  if (!g_.valid(p)) throw Error("Rewriter: erase of a port that is not there");
  while (EdgeId e = g_.first_in_edge(p)) disconnect(e);
  while (EdgeId e = g_.first_out_edge(p)) disconnect(e);
  OpId op = g_.port_op(p);
  if (!fresh(p)) {
    Undo u(Undo::PortErased);
    u.op = op;
    u.port = p;
    u.index = g_.is_control(p) ? 0 : g_.port_index(p);
    u.slot = keep_list(g_.attrs(p));
    journal_->push_back(std::move(u));
  }
  g_.erase_port(p);
  if (listener_) listener_->op_modified(op);
}

EdgeId Rewriter::connect(PortId src, PortId dst) {
  EdgeId e = g_.connect(src, dst);
  // An edge of a port made in this transaction goes with the port on a rollback.
  if (!fresh(src) && !fresh(dst)) {
    Undo u(Undo::Connected);
    u.src = src;
    u.dst = dst;
    u.edge = e;
    journal_->push_back(std::move(u));
  }
  if (listener_) {
    listener_->edge_added(e);
    listener_->op_modified(g_.port_op(dst));
  }
  return e;
}

void Rewriter::disconnect(EdgeId e) {
  if (!g_.valid(e)) throw Error("Rewriter: disconnect of an invalid edge");
  PortId s = g_.edge_src(e), d = g_.edge_dst(e);
  // (An edge made in this transaction need not come back.)
  if (!marks_.empty() && e.value < marks_.back().edges) {
    Undo u(Undo::Disconnected);
    u.src = s;
    u.dst = d;
    u.edge = e;
    u.slot = keep_list(g_.attrs(e));
    journal_->push_back(std::move(u));
  }
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
    Undo u(Undo::Resourced);
    u.src = from;
    u.dst = d;
    u.edge = e;
    record(std::move(u));
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
  if (marks_.empty() || fresh(op)) {  // (made in this transaction: a rollback has nothing to bring back)
    if (!marks_.empty())
      for (PortId p : g_.inputs(op))
        while (EdgeId e = g_.first_in_edge(p)) disconnect(e);
    g_.erase_op(op);
    return;
  }
  // Inside a transaction the op stays (a rollback must find it as it was) but lets go of its
  // inputs, so that what fed it may be erased too, and of its name, so that a new op may take it;
  // the commit erases it.
  for (PortId p : g_.inputs(op))
    while (EdgeId e = g_.first_in_edge(p)) disconnect(e);
  if (PortId c = g_.find_control(op, PortDir::In))
    while (EdgeId e = g_.first_in_edge(c)) disconnect(e);
  if (PortId c = g_.find_control(op, PortDir::Out))
    while (EdgeId e = g_.first_out_edge(c)) disconnect(e);
  if (g_.name(op)) {
    Undo u(Undo::Renamed);
    u.op = op;
    u.key = g_.name(op);
    u.index = g_.name_generated(op);
    journal_->push_back(std::move(u));
    g_.set_name(op, 0);
  }
  pending_erase_.push_back(op);
  Undo u(Undo::ErasePending);
  u.op = op;
  journal_->push_back(std::move(u));
}

static bool holds_graphs(const Value& v) {
  return v.is_graph() || (v.is_list() && !v.as_list().empty() && v.as_list()[0].is_graph());
}

void Rewriter::set_attr(OpId op, Symbol key, Value v) {
  if (!fresh(op)) {
    if (AttrList* l = g_.mutable_attrs(op))
      for (auto& [k, slot] : *l)
        if (k == key) {
          if (holds_graphs(slot)) {
            // The attribute graphs it held stay until the commit (a rollback needs them).
            AttrList copy = *l;
            for (auto& e : copy)
              if (e.first == key) e.second = std::move(v);
            set_attr_list(op, std::move(copy));
            return;
          }
          Undo u(Undo::AttrSet);
          u.op = op;
          u.key = key;
          u.slot = static_cast<uint32_t>(values_.size());
          values_.push_back(std::move(slot));  // (the old value moves to the journal: no copy)
          slot = std::move(v);
          journal_->push_back(u);
          if (listener_) listener_->op_modified(op);
          return;
        }
    Undo u(Undo::AttrAdded);
    u.op = op;
    u.key = key;
    journal_->push_back(u);
  }
  g_.set_attr(op, key, std::move(v));
  if (listener_) listener_->op_modified(op);
}

void Rewriter::erase_attr(OpId op, std::string_view key) {
  Symbol k = g_.symbols().find(key);
  if (k == SymbolTable::kNone) return;
  erase_attr(op, k);
}

void Rewriter::erase_attr(OpId op, Symbol k) {
  const Value* old = g_.attr(op, k);
  if (!old) return;
  if (!fresh(op)) {
    if (holds_graphs(*old)) {
      AttrList copy;
      for (const auto& e : g_.attrs(op))
        if (e.first != k) copy.push_back(e);
      set_attr_list(op, std::move(copy));
      return;
    }
    AttrList& l = *g_.mutable_attrs(op);
    size_t i = 0;
    while (l[i].first != k) ++i;
    Undo u(Undo::AttrErased);
    u.op = op;
    u.key = k;
    u.index = static_cast<uint32_t>(i);
    u.slot = static_cast<uint32_t>(values_.size());
    values_.push_back(std::move(l[i].second));
    l.erase(l.begin() + static_cast<std::ptrdiff_t>(i));
    journal_->push_back(u);
    if (listener_) listener_->op_modified(op);
    return;
  }
  g_.erase_attr(op, k);
  if (listener_) listener_->op_modified(op);
}

void Rewriter::set_attr_list(OpId op, AttrList l) {
  bool graphs = false;
  for (const auto& e : g_.attrs(op)) graphs = graphs || holds_graphs(e.second);
  // Attribute graphs the new list no longer holds go at the commit (at once outside a transaction).
  if (graphs) graph_owners_.push_back(op);
  if (!fresh(op)) {
    Undo u(Undo::Attrs);
    u.op = op;
    u.slot = static_cast<uint32_t>(lists_.size());
    lists_.push_back(g_.exchange_attr_list(op, std::move(l)));
    journal_->push_back(u);
  } else {
    g_.set_attr_list(op, std::move(l));
  }
  if (listener_) listener_->op_modified(op);
  if (graphs) finish();  // (does nothing inside a transaction)
}

void Rewriter::set_attr(PortId p, Symbol key, Value v) {
  if (!fresh(p)) {
    Undo u(Undo::PortAttrs);
    u.port = p;
    u.slot = keep_list(g_.attrs(p));
    journal_->push_back(std::move(u));
  }
  g_.set_attr(p, key, std::move(v));
  if (listener_) listener_->op_modified(g_.port_op(p));
}

void Rewriter::set_attr_list(PortId p, AttrList l) {
  if (!fresh(p)) {
    Undo u(Undo::PortAttrs);
    u.port = p;
    u.slot = keep_list(g_.attrs(p));
    journal_->push_back(std::move(u));
  }
  g_.set_attr_list(p, std::move(l));
  if (listener_) listener_->op_modified(g_.port_op(p));
}

void Rewriter::set_port_type(PortId p, TypeId t) {
  if (!fresh(p)) {
    Undo u(Undo::PortType);
    u.port = p;
    u.type = g_.port_type(p);
    journal_->push_back(std::move(u));
  }
  g_.set_port_type(p, t);
  if (listener_) listener_->op_modified(g_.port_op(p));
}

void Rewriter::begin() {
  marks_.push_back({journal_->size(), static_cast<uint32_t>(g_.id_bound()), static_cast<uint32_t>(g_.port_id_bound()),
                    static_cast<uint32_t>(g_.edge_id_bound()), static_cast<uint32_t>(lists_.size()),
                    static_cast<uint32_t>(values_.size())});
}

void Rewriter::commit() {
  if (marks_.empty()) throw Error("Rewriter: commit without begin");
  marks_.pop_back();
  if (marks_.empty()) {
    journal_->clear();
    if (!lists_.empty()) lists_.clear();
    if (!values_.empty()) values_.clear();
    finish();
  }
}

void Rewriter::finish() {
  if (!marks_.empty()) return;
  if (!graph_owners_.empty()) {
    std::vector<OpId> owners;
    owners.swap(graph_owners_);
    for (OpId op : owners) {
      if (!g_.valid(op)) continue;
      std::vector<OpId> held;
      for (const auto& e : g_.attrs(op)) {
        if (e.second.is_graph()) held.push_back(e.second.as_graph());
        if (e.second.is_list())
          for (const Value& x : e.second.as_list())
            if (x.is_graph()) held.push_back(x.as_graph());
      }
      for (OpId ag : g_.attr_graphs(op))
        if (std::find(held.begin(), held.end(), ag) == held.end()) g_.erase_op(ag);
    }
  }
  if (pending_erase_.empty()) return;
  for (OpId op : pending_erase_)  // (keeps its capacity for the next transaction)
    if (g_.valid(op)) g_.erase_op(op);
  pending_erase_.clear();
}

void Rewriter::rollback() {
  if (marks_.empty()) throw Error("Rewriter: rollback without begin");
  Mark mk = marks_.back();
  size_t mark = mk.journal;
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
        if (u.slot != kNoSlot) g_.set_attr_list(u.edge, take_list(u.slot));
        break;
      case Undo::Resourced: {
        AttrList a = g_.attrs(u.edge);
        g_.disconnect(u.edge);
        g_.revive_edge(u.edge, u.src, u.dst);
        g_.set_attr_list(u.edge, std::move(a));
        break;
      }
      case Undo::Attrs: g_.set_attr_list(u.op, std::move(lists_[u.slot])); break;
      case Undo::PortAttrs: g_.set_attr_list(u.port, take_list(u.slot)); break;
      case Undo::AttrSet: g_.set_attr(u.op, u.key, std::move(values_[u.slot])); break;
      case Undo::AttrErased:
        if (AttrList* l = g_.mutable_attrs(u.op))
          l->insert(l->begin() + std::min<std::ptrdiff_t>(u.index, static_cast<std::ptrdiff_t>(l->size())), {u.key, std::move(values_[u.slot])});
        else
          g_.set_attr(u.op, u.key, std::move(values_[u.slot]));
        break;
      case Undo::AttrAdded: g_.erase_attr(u.op, u.key); break;
      case Undo::PortType: g_.set_port_type(u.port, u.type); break;
      case Undo::OpType: g_.set_type(u.op, u.key); break;
      case Undo::Renamed:
        g_.set_name(u.op, u.key);
        g_.set_name_generated(u.op, u.index != 0);
        break;
      case Undo::Moved: g_.move_before(u.op, u.op2); break;
      case Undo::PortErased:
        g_.revive_port(u.port, u.index);
        g_.set_attr_list(u.port, take_list(u.slot));
        break;
      case Undo::ErasePending:
        if (auto it = std::find(pending_erase_.begin(), pending_erase_.end(), u.op); it != pending_erase_.end())
          pending_erase_.erase(it);
        break;
    }
  }
  lists_.erase(lists_.begin() + mk.lists, lists_.end());
  values_.erase(values_.begin() + mk.values, values_.end());
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
      std::string error;
      try {
        ok = p->rewrite(op, rw);
      } catch (const std::exception& e) {
        error = e.what();
        if (error.empty()) error = "(an exception without a message)";
        ok = false;
      }
      if (!ok) {
        rw.rollback();
        // (named after the rollback: an op erased inside the transaction has its name back)
        if (!error.empty()) res.errors.push_back(p->name + " on " + g.path(op) + ": " + error);
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
