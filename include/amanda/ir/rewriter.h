// One path for mutation, in the manner of MLIR's RewriterBase: a Rewriter creates ops at an
// insertion point, connects and disconnects, replaces all uses, sets attributes and types, and
// erases only ops whose outputs have no remaining uses. A listener hears every change. Changes
// made inside a transaction can be rolled back: the graph is then exactly as before (the text
// forms write it byte for byte the same: undone edges get their old ids back, attribute lists
// their old order; erasures wait for the commit).
//
// apply_patterns_greedily drives a set of patterns to a fixed point with MLIR's worklist
// discipline: every op of the scope once, in body order; after a successful rewrite only the ops
// it touched and their neighbours are revisited; patterns of an op type are tried by benefit,
// ties by declaration order; a pattern that fails (returns false or throws) is rolled back.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "amanda/ir/graph.h"

namespace amanda::ir {

class RewriteListener {
 public:
  virtual ~RewriteListener() = default;
  virtual void op_created(OpId) {}
  virtual void op_erased(OpId) {}        // before the op goes (at commit, or when undoing a creation)
  virtual void op_modified(OpId) {}      // an attribute, a port, a type of one of its ports
  virtual void edge_added(EdgeId) {}
  virtual void edge_removed(PortId /*src*/, PortId /*dst*/) {}
  virtual void uses_replaced(PortId /*from*/, PortId /*to*/) {}
  virtual void rolled_back() {}
};

class Rewriter {
 public:
  explicit Rewriter(Graph& g, RewriteListener* listener = nullptr);
  ~Rewriter();  // commits what is pending
  Rewriter(const Rewriter&) = delete;
  Rewriter& operator=(const Rewriter&) = delete;

  Graph& graph() { return g_; }
  void set_listener(RewriteListener* l) { listener_ = l; }

  // ---- insertion point: new ops go into `scope` before `before` (OpId(): at the end)
  void set_insertion_point(OpId scope, OpId before = OpId());
  void set_insertion_point_before(OpId op) { set_insertion_point(g_.parent(op), op); }
  void set_insertion_point_after(OpId op) { set_insertion_point(g_.parent(op), g_.next_sibling(op)); }
  OpId insertion_scope() const { return scope_; }

  // ---- changes
  OpId create_op(std::string_view type, std::string_view name = {}, std::initializer_list<std::string_view> inputs = {},
                 std::initializer_list<std::string_view> outputs = {});
  // By symbols (Graph::create_op's rules for the name), at the insertion point.
  OpId create_op(Symbol type, Symbol name, bool generate_name = true);
  void set_op_type(OpId op, Symbol type);
  void set_graph_namespace(OpId graph, Symbol ns) { set_op_type(graph, ns); }  // the same slot
  void set_name(OpId op, Symbol name, bool generated = false);
  // Moves op before `before` in its scope (OpId(): to the end).
  void move_before(OpId op, OpId before);
  // Erases a port and its edges; a rollback brings it back at its index with its edges (old ids).
  void erase_port(PortId p);
  PortId control_in(OpId op);   // created on first use (a change)
  PortId control_out(OpId op);
  void set_attr(OpId op, Symbol key, Value v);
  void erase_attr(OpId op, Symbol key);
  void set_attr_list(OpId op, AttrList l);  // the whole list, order included
  void set_attr(PortId p, Symbol key, Value v);
  void set_attr_list(PortId p, AttrList l);
  PortId add_input(OpId op, std::string_view name) { return add_port(op, PortDir::In, g_.sym(name)); }
  PortId add_output(OpId op, std::string_view name) { return add_port(op, PortDir::Out, g_.sym(name)); }
  PortId add_port(OpId op, PortDir dir, Symbol name);
  EdgeId connect(PortId src, PortId dst);
  void disconnect(EdgeId e);
  // Every use of `from` becomes a use of `to` (MLIR's replaceAllUsesWith).
  void replace_all_uses(PortId from, PortId to);
  // Replaces op's outputs (by position) with `values`, then erases op.
  void replace_op(OpId op, std::span<const PortId> values);
  // Throws amanda::Error when an output of op still has a use.
  void erase_op(OpId op);
  void set_attr(OpId op, std::string_view key, Value v) { set_attr(op, g_.sym(key), std::move(v)); }
  void erase_attr(OpId op, std::string_view key);
  void set_port_type(PortId p, TypeId t);

  // ---- transactions (nestable: an inner rollback undoes only its own changes)
  // A transaction's journal keeps only what a rollback needs: ops, ports and edges created in the
  // innermost open transaction are not journaled further (undoing their creation removes them), an
  // attribute change keeps the one old value, and an erased op gives up its name at once (a new op
  // may take it; a rollback gives it back).
  void begin();
  void commit();
  void rollback();
  bool in_transaction() const { return !marks_.empty(); }
  bool erased(OpId op) const;  // erased in this transaction, gone at the commit

 private:
  struct Undo;
  struct Mark {
    size_t journal;
    uint32_t ops, ports, edges;  // id bounds when the transaction began
    uint32_t lists, values;      // sizes of lists_ and values_
  };
  static constexpr uint32_t kNoSlot = UINT32_MAX;
  uint32_t keep_list(const AttrList& l);  // into lists_ (kNoSlot for an empty list)
  AttrList take_list(uint32_t slot);
  void record(Undo u);
  void finish();  // erase what is pending once no transaction is open
  // Created in the innermost open transaction (or no transaction open): nothing to journal.
  bool fresh(OpId op) const { return marks_.empty() || op.value >= marks_.back().ops; }
  bool fresh(PortId p) const { return marks_.empty() || p.value >= marks_.back().ports; }

  Graph& g_;
  RewriteListener* listener_;
  OpId scope_, before_;
  std::vector<Undo>* journal_;
  std::vector<Mark> marks_;
  std::vector<OpId> pending_erase_;
  std::vector<OpId> graph_owners_;  // ops whose attribute list changed while it held graphs
  // What undo steps keep besides ids (the journal's steps stay small and trivially copyable).
  std::vector<AttrList> lists_;
  std::vector<Value> values_;
};

// ---- greedy driver

struct Pattern {
  std::string name;
  std::string root;  // the op type it rewrites ("" = any)
  int benefit = 1;
  // Returns true when it changed the graph (through the rewriter only); false leaves nothing.
  std::function<bool(OpId, Rewriter&)> rewrite;
};

struct GreedyResult {
  size_t rewrites = 0;
  size_t visits = 0;
  bool converged = true;  // false: max_rewrites reached
  std::vector<std::string> errors;  // patterns that threw ("pattern on path: message"), rolled back
};

GreedyResult apply_patterns_greedily(Graph& g, OpId scope, const std::vector<Pattern>& patterns, size_t max_rewrites = 100000,
                                     RewriteListener* listener = nullptr);

}  // namespace amanda::ir
