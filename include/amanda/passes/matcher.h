// A subgraph matcher in the spirit of nomnigraph's SubgraphMatcher: a pattern is a DAG of value
// predicates rooted at an output and matched backwards from a candidate op.
//
//   Pat x = any();                                   // any value (non-terminal: not examined)
//   Pat conv = op("Conv").in(x).in(constant()).opt(constant()).uses(1);
//   Pat bn = op("BatchNormalization").in(conv).star(constant());
//   Match m = match(g, candidate, bn);
//   if (!m) std::cout << m.why;                      // which predicate failed, where
//
// A node is a predicate on a value (an output port) and its producing op: the op's type (one of
// "A|B"), attributes, the value's element type, rank and shape, constant-ness, number of uses.
// Inputs are matched in order: `in` exactly one, `opt` an input that may be omitted (or beyond
// the op's inputs), `star` zero or more. A node used twice in a pattern (DAG sharing) must bind
// the same value both times: Sub(x, ReduceMean(x)) is `op("Sub").in(x).in(op("ReduceMean").in(x))`.
// `boundary()` makes an op node non-terminal: its op is checked but its inputs are not, and it is
// not part of the matched ops. Matching never mutates the graph; it costs O(pattern size) per
// candidate (star inputs: O(inputs)), so matching every op of a graph is linear in the graph.
// Optional and star inputs are matched greedily (no backtracking into an earlier input).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "amanda/ir/graph.h"
#include "amanda/ir/rewriter.h"
#include "amanda/ir/value.h"

namespace amanda::passes {

struct PatternNode;

// A handle on a pattern node; copies share the node (that is how a pattern says "the same value").
class Pat {
 public:
  Pat();
  explicit Pat(std::shared_ptr<PatternNode> n) : n_(std::move(n)) {}

  // ---- inputs, in order
  Pat& in(const Pat& p);    // exactly one input matching p
  Pat& opt(const Pat& p);   // an input that may be omitted; when present it must match p
  Pat& star(const Pat& p);  // zero or more inputs, each matching p (greedy)
  Pat& exact();             // the op has no inputs beyond those the pattern lists
  // ---- predicates
  Pat& uses(size_t n);      // the value has exactly n uses (a scope output counts as one)
  Pat& max_uses(size_t n);
  Pat& not_scope_output();  // the value is not an output of its graph or body
  Pat& output(int index);   // the value is output `index` of its op (default 0; -1: any)
  Pat& attr(std::string name, ir::Value v);                   // present and equal
  Pat& attr_or(std::string name, ir::Value v, ir::Value dflt);  // equal, absent counting as dflt
  Pat& no_attr(std::string name);
  Pat& dtype(ir::DType t);
  Pat& rank(int64_t r);
  Pat& static_shape();      // every dimension known
  Pat& where(std::string what, std::function<bool(const ir::Graph&, ir::OpId)> f);          // on the op
  Pat& where_value(std::string what, std::function<bool(const ir::Graph&, ir::PortId)> f);  // on the value
  Pat& boundary();          // non-terminal: check the op, not its inputs; not part of the match
  Pat& as(std::string label);  // a name for Match::at and for messages

  const PatternNode& node() const { return *n_; }
  const std::shared_ptr<PatternNode>& ptr() const { return n_; }

 private:
  std::shared_ptr<PatternNode> n_;
};

// Node makers.
Pat op(std::string_view types);  // "Conv" or "Conv|ConvTranspose"
Pat any();                       // any value; its producer is not examined
Pat constant();                  // a constant (Constant op output, initializer)
Pat scope_input();               // an input of the graph or body (a capture included)

struct Match {
  bool ok = false;
  std::string why;  // when !ok: which node and predicate failed, with the ops' paths
  ir::OpId root;
  std::vector<ir::OpId> ops;  // the matched ops (boundary and value nodes excluded), root first
  // node -> values it bound (one, or several for a star input), in binding order
  std::vector<std::pair<const PatternNode*, ir::PortId>> bindings;

  explicit operator bool() const { return ok; }
  ir::PortId value(const Pat& p) const;  // the (first) value bound to p, PortId() when none
  std::vector<ir::PortId> values(const Pat& p) const;
  ir::OpId op(const ir::Graph& g, const Pat& p) const;  // the op that produces value(p)
  ir::PortId at(std::string_view label) const;
  // Every matched op other than the root is used only by matched ops (so replacing the root's
  // value makes them dead) and is not a scope output.
  bool closed(const ir::Graph& g) const;
};

struct MatchOptions {
  // An op the match may not include (excluded by name): the candidate fails, saying so.
  std::function<bool(ir::OpId)> allowed;
};

// Matches `pattern` with its root at output `pattern.output` of op `root`. Never changes `g`.
Match match(const ir::Graph& g, ir::OpId root, const Pat& pattern, const MatchOptions& options = {});
// Every op of `scope` (not its bodies) whose match succeeds, in body order.
std::vector<Match> match_all(const ir::Graph& g, ir::OpId scope, const Pat& pattern, const MatchOptions& options = {});

// nomnigraph's ReplaceSubgraph: for each match in `scope`, to a fixed point (ir::
// apply_patterns_greedily), calls `replace` inside a Rewriter transaction; when it returns false
// or throws, everything it did is rolled back and the graph is as it was.
using ReplaceFn = std::function<bool(const Match&, ir::Rewriter&)>;
ir::GreedyResult replace_all(ir::Graph& g, ir::OpId scope, const Pat& pattern, const ReplaceFn& replace,
                             const MatchOptions& options = {}, std::string name = "pattern",
                             ir::RewriteListener* listener = nullptr);

}  // namespace amanda::passes
