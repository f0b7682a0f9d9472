// Mapping tables (amanda-design.md, "Mapping Mechanism"; docs/mapping-tables.md): a table maps
// graphs of namespace `src` to namespace `dst` with rules; a rule has a matcher (the `src` side),
// a mapper (the `dst` side), optional tags, a condition and a priority. Both sides are written in
// one pattern language (OpSpec): a matcher reads it as a pattern that captures refs, a mapper as a
// template that uses them, so a table can also be run in reverse.
#pragma once

#include <memory>
#include <optional>
#include <map>
#include <string>
#include <vector>

#include "amanda/mapping/expr.h"
#include "amanda/schema/registry.h"
#include "amanda/support/diagnostics.h"
#include "amanda/text/tree.h"

namespace amanda::mapping {

struct AttrSpec {
  std::string name;
  std::unique_ptr<Expr> expr;  // null: `null` was written (matcher: must be absent; mapper: drop it)
  SourceLoc loc;
};

struct PortSpec {
  std::unique_ptr<Expr> name;   // null: by position
  std::string ref;              // matcher: captures the port; mapper: takes the captured port's edges
  std::unique_ptr<Expr> value;  // `const:` matcher: the input comes from a constant, matched against this;
                                // mapper: a new constant op feeds the input
  bool optional = false;        // matcher: the port may be missing or unconnected
  bool by_position = false;     // compact form, no PORT given: the schema's port at `position` (mapper: its name)
  // `ref: xs...` (matcher): a list capture: every port NAME.0, NAME.1, ... of the op. `xs` is bound
  // to the list of their names (len(xs)), each port to the ref `xs[k]` (dtype(xs[0]), a mapper's
  // `xs[1]`, `values=xs...` in graph: text). At least one port unless `optional: true`.
  bool variadic = false;
  std::vector<AttrSpec> attrs;
  size_t position = 0;
  SourceLoc loc;
};

struct OpSpec {
  std::string type;
  std::unique_ptr<Expr> name;  // null: any (matcher) / derived from the matched op (mapper)
  std::string id;              // a label for edges
  std::vector<AttrSpec> attrs;
  std::vector<PortSpec> inputs, outputs;
  bool inputs_given = false, outputs_given = false;
  bool primary = false;        // mapper: the op that takes over the matched op's name and control edges
  SourceLoc loc;
};

struct EdgeSpec {
  size_t src_op = 0, dst_op = 0;   // indexes into Pattern::ops
  std::string src_port, dst_port;  // a port name, or "#k": the k-th PortSpec of that op
  SourceLoc loc;
};

struct Pattern {
  std::vector<OpSpec> ops;
  std::vector<EdgeSpec> edges;
};

struct Rule {
  std::string name;
  std::vector<std::string> tags;  // applies only when one of them is selected; none: always
  std::unique_ptr<Expr> when;     // a condition on the captures
  int priority = 0;
  Pattern src, dst;
  std::optional<std::string> unsupported;  // the conversion cannot be done: the reason, reported
  // The result is not held to dst's type constraints (why, e.g. a writer that stores the op in
  // another form the older namespace takes: int64 Constants below ONNX opset 9 as initializers).
  std::optional<std::string> types_unchecked;
  size_t order = 0;
  SourceLoc loc;
  text::Tree src_tree, dst_tree;  // the two sides as read (after pushdown splitting), for reversing
  // The mapper's `graph:` text uses lists (`xs...` spreads, `for i in range(n):` lines, `m[i-1]`):
  // it is a template, expanded for each match with the match's list lengths and values
  // (src/mapping/lists.h). `dst` then holds an expansion with sample lengths, for the checker.
  bool dst_template = false;
};

struct ConstantSpec {  // how the dst namespace spells a constant: Constant(value=T) -> output
  std::string type = "Constant", attr = "value", port = "output";
  // `values: any`: the constant op holds any value (TorchScript's prim::Constant: ints, lists,
  // bools, strings, None), not only tensors; `const:` arguments are then written as they evaluate.
  bool any_value = false;
};

struct Table {
  std::string src, dst;
  std::string file;
  std::vector<Rule> rules;
  bool reversible = false;
  // `fixed_point: true` (src == dst only): the rules are applied until none matches, each rule
  // seeing the others' results (MLIR's greedy worklist driver; docs/mapping-tables.md).
  bool fixed_point = false;
  bool carry_attrs = true;  // single-op rules carry attributes the mapper does not mention (if dst has them)
  ConstantSpec constant, reverse_constant;
  SourceLoc loc;
  // `only_for: [TYPE, ...]`: every rule matches an op of one of these types, so a conversion of a
  // graph that has none of them need not read the file (TableSet defers it; docs/mapping-tables.md).
  std::vector<std::string> only_for;
  // `imports: {PREFIX: NAMESPACE}`: a rule's op type `PREFIX::T` is op T of that namespace, as a
  // graph's root `imports` says for ops of a second vocabulary it mixes in.
  std::map<std::string, std::string> imports;
  // `over: NAMESPACE`: a layer table (docs/mapping-tables.md, "Layer tables"): no step of its own;
  // on a chain from src that passes through `over` and then dst, its rules are tried before the
  // chain's first table, and the ops they make are dst's, left alone until the chain reaches dst
  // (torch.onnx's symbolic_opset14..17 over symbolic_opset13: Trilu at 14, LayerNormalization at 17).
  std::string over;
  std::string name() const { return src + " -> " + dst; }
};

// The op types the rules' matchers name (every op of every src pattern), sorted, each once: a
// conversion needs the table's file only for a graph with one of them (TableSet derives this
// when it loads a folder lazily; `only_for` is the hand-written form of the same promise).
std::vector<std::string> matcher_types(const Table& t);

// Reads a table file (YAML or JSON). Throws ParseError (file:line:column, rule name) on a malformed
// table. `check` (below) compares it with the namespaces' schemas.
std::unique_ptr<Table> read_table(const std::string& path);
std::unique_ptr<Table> parse_table(const text::Tree& doc);
// The same table run the other way (dst -> src). Throws Error naming a rule that cannot be reversed
// (a condition, a function without an inverse, `unsupported`).
std::unique_ptr<Table> reverse_table(const Table& t);

// Checks a table against both namespaces: matchers mention only ops, attributes and ports that
// `src` has; mappers make ops of `dst` with attributes and ports it has and every required
// attribute; templates use only refs the matcher captured. One diagnostic per problem, each
// naming the rule, file and line.
void check_table(const Table& t, schema::Registry& reg, Diagnostics& out);

// The schema of op `type` of namespace `ns` (a table's src or dst), following the table's
// `imports` for a `PREFIX::T` type. Null when there is none.
const schema::OpSchema* resolve_op(schema::Registry& reg, const Table& t, const std::string& ns, const std::string& type);

}  // namespace amanda::mapping
