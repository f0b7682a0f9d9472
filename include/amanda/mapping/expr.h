// The small expression language of mapping tables (docs/mapping-tables.md, "Expressions").
//
//   when: "ceil_mode == 0 and all(dilations, 1)"
//   attrs: { pads: "{concat(begin, end)}", perm: "{permute(p, [0, 2, 3, 1])}", mode: "{value_map(m, 'SAME_UPPER', 'SAME')}" }
//
// Values are ir::Values (null, bool, int, float, string, list, tensor); names are the refs a
// matcher captured. Arithmetic works on numbers and element-wise on lists (a scalar is broadcast).
// Functions are looked up by name in one registry; some have an inverse, so that an expression on
// the matcher side of a rule (or of a reversed table) can bind its ref from an attribute's value.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <absl/container/flat_hash_map.h>

#include "amanda/ir/graph.h"
#include "amanda/ir/value.h"
#include "amanda/support/diagnostics.h"

namespace amanda::mapping {

// What an expression sees: the captured values, and (for shape/type predicates) the ports that a
// matcher captured with `ref:`.
class Bindings {
 public:
  void set(std::string_view name, ir::Value v) { values_.try_emplace(key(name)).first->second = std::move(v); }
  void set_port(std::string_view name, ir::PortId p) { ports_.try_emplace(key(name)).first->second = p; }
  const ir::Value* get(std::string_view name) const {
    auto it = values_.find(key(name));
    return it == values_.end() ? nullptr : &it->second;
  }
  std::optional<ir::PortId> port(std::string_view name) const {
    auto it = ports_.find(key(name));
    if (it == ports_.end()) return std::nullopt;
    return it->second;
  }
  bool has(std::string_view name) const { return values_.contains(key(name)) || ports_.contains(key(name)); }
  void clear() {
    values_.clear();
    ports_.clear();
  }
  const ir::Graph* graph = nullptr;  // for port predicates (rank, shape, dtype, is_const)

 private:
  // absl's string maps look up a string_view without building a std::string (no allocation for a
  // name past the small-string buffer): lookups run for every ref of every rule tried.
  static absl::string_view key(std::string_view s) { return absl::string_view(s.data(), s.size()); }
  absl::flat_hash_map<std::string, ir::Value> values_;
  absl::flat_hash_map<std::string, ir::PortId> ports_;
};

// Thrown when an expression cannot be evaluated on these values (a type mismatch, a missing
// value_map entry, an index out of range). The engine turns it into "rule did not apply" with the
// message (shown by --explain) or, in a mapper, into a conversion error naming the op.
class EvalError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Expr {
  enum class Kind { Literal, Ref, Call, Unary, Binary, Index, List, Interp };
  Kind kind = Kind::Literal;
  ir::Value literal;                          // Literal; Interp: the text pieces are in `parts`
  std::string name;                           // Ref: the ref; Call: the function; Unary/Binary: the operator
  std::vector<std::unique_ptr<Expr>> args;    // Call, Unary, Binary, Index (base, index), List
  std::vector<std::string> parts;             // Interp: text, hole, text, hole, ..., text (holes in args)
  std::optional<ir::Value> ref_default;       // Ref written as {ref: x, default: v}
  // Levels of the tree below and with this node; the parser keeps it within the Depth budget, so
  // evaluating, printing and destroying an expression never recurse deeper than that.
  uint32_t height = 1;
  // Set by the parser so that evaluation compares no strings: Unary/Binary the operator as one
  // character ('+', '-', '*', '/', '%'; '=' ==, '!' !=, '<', 'l' <=, '>', 'g' >=, '&' and, '|' or,
  // 'i' in, 'n' not), Call the function's entry.
  char op = 0;
  const struct ExprFunction* fn = nullptr;

  ir::Value eval(const Bindings& b) const;
  // The refs this expression reads, in order of first use.
  void refs(std::vector<std::string>& out) const;
  // Binds the one unbound ref of this expression so that eval() would give `v` (inverse functions:
  // permute, value_map, tensor/list/scalar, +/- a constant, ...). False when `v` cannot come out of
  // this expression (the rule does not match); EvalError when the expression has no inverse.
  bool bind(const ir::Value& v, Bindings& b) const;
  bool invertible() const;
  std::string str() const;  // as written (normalised)
};

// Parses an expression ("a + 1", "all(d, 1)"). Throws ParseError at `loc` (column adjusted).
std::unique_ptr<Expr> parse_expr(std::string_view text, const SourceLoc& loc);
// A string value of a table: "{expr}" alone is that expression (any type); text with {holes} is an
// interpolated string; text without braces is a string literal. "{{" and "}}" are literal braces.
std::unique_ptr<Expr> parse_template(std::string_view text, const SourceLoc& loc);
bool is_template(std::string_view text);

// The registered functions (for docs and `amanda table functions`).
struct FunctionInfo {
  std::string name;
  std::string signature;
  std::string doc;
  bool invertible = false;
};
std::vector<FunctionInfo> functions();
bool is_function(std::string_view name);

std::string value_str(const ir::Value& v);  // short text of a value for messages

}  // namespace amanda::mapping
