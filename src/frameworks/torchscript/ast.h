// The syntax tree of TorchScript's serialized Python (the code/ files of a torch.jit.save
// archive): classes with attribute annotations and methods, module-level functions, and the
// statements and expressions the TorchScript printer emits. Types stay text (as written) or,
// where they appear inside expressions (annotate(List[int], [])), ordinary expressions.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace amanda::torchscript {

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;
struct Stmt;
using StmtPtr = std::unique_ptr<Stmt>;

struct Pos {
  uint32_t line = 0, column = 0;  // 1-based
};

struct Expr {
  enum class Kind : uint8_t {
    Name,       // text = identifier
    Int,        // i (decimal, hex; out of int64 range is an error)
    Float,      // f ("inf", "nan" are Names; 1e-05, 0., .5 are Floats)
    Str,        // text = decoded string ('...' or "..." with escapes)
    None, True, False,
    Attribute,  // args[0] = object, text = attribute name           a.b
    Call,       // args[0] = callee, args[1..] = positional arguments; keywords = keyword arguments
    Subscript,  // args[0] = object, args[1] = index (a Tuple for a[x, y]; a Slice for a[1:2])
    Slice,      // args = {lower, upper, step}, each may be null
    List,       // args = elements
    Tuple,      // args = elements ((a,) and (a, b); bare "a, b" in return / assignment targets)
    Dict,       // args = key0, value0, key1, value1, ...
    Unary,      // text = "-", "+", "not", "~"; args[0]
    Binary,     // text = "+", "-", "*", "/", "//", "%", "**", "@", "&", "|", "^", "<<", ">>"; args[0], args[1]
    Compare,    // text = "==", "!=", "<", "<=", ">", ">=", "is", "is not", "in", "not in"; args[0], args[1] (chains are nested with "and")
    BoolOp,     // text = "and" / "or"; args[0], args[1]
    IfExp,      // args = {condition, then, else}     (a if c else b)
  };
  Kind kind = Kind::Name;
  Pos pos;
  std::string text;
  int64_t i = 0;
  double f = 0;
  std::vector<ExprPtr> args;
  std::vector<std::pair<std::string, ExprPtr>> keywords;
};

struct Stmt {
  enum class Kind : uint8_t {
    Assign,     // targets = one or more (a = b = e); each target a Name, Attribute, Subscript or Tuple of them; value
    AugAssign,  // targets[0] op= value; text = "+", "-", ...
    AnnAssign,  // targets[0] : annotation (text) [= value]
    Expr,       // value
    Return,     // value (may be null)
    Pass, Break, Continue,
    If,         // value = condition; body; orelse (an elif is an If alone in orelse)
    While,      // value = condition; body
    For,        // targets[0] = target; value = iterable; body
    Raise,      // value (may be null)
    Assert,     // value = condition; message (may be null) in targets[0]
    Del,        // targets
  };
  Kind kind = Kind::Pass;
  Pos pos;
  std::string text;
  std::vector<ExprPtr> targets;
  ExprPtr value;
  std::vector<StmtPtr> body;
  std::vector<StmtPtr> orelse;
};

struct Param {
  std::string name;
  std::string type;     // annotation as written, "" when none
  ExprPtr default_value;
  Pos pos;
};

struct FunctionDef {
  std::string name;
  std::vector<Param> params;
  std::string return_type;  // "" when none
  std::vector<StmtPtr> body;
  Pos pos;
};

struct ClassAttr {
  std::string name;   // `training : bool` -> training; `__annotations__["0"] = T` -> "0"
  std::string type;   // as written
  ExprPtr value;      // `x : Final[int] = 3` -> 3; null otherwise
  Pos pos;
};

struct ClassDef {
  std::string name;               // as written (Conv2d)
  std::vector<std::string> bases; // (Module) -> {"Module"}; NamedTuple, Enum, ...
  std::vector<std::string> parameters;  // __parameters__ = ["weight", "bias", ]
  std::vector<std::string> buffers;     // __buffers__ = [...]
  std::vector<ClassAttr> attributes;    // annotations in order
  std::vector<std::pair<std::string, ExprPtr>> constants;  // other `NAME = expr` lines (e.g. __constants__)
  std::vector<FunctionDef> methods;
  Pos pos;
};

// One code file. `imports` keeps `import X` / `from X import Y` lines as written.
struct SourceFile {
  std::string path;  // as given to parse_source, used in errors
  std::vector<std::string> imports;
  std::vector<ClassDef> classes;
  std::vector<FunctionDef> functions;
  std::vector<StmtPtr> statements;  // anything else at module level (assignments)
};

struct ParseLimits {
  size_t max_depth = 200;  // nesting of expressions and blocks
};

// Parses one file. Throws amanda::ParseError with path:line:column and what was expected for
// anything outside the grammar (bad indentation, unterminated string, unexpected token, nesting
// deeper than the limit, ...). Never crashes or hangs on any input.
SourceFile parse_source(std::string_view source, const std::string& path, const ParseLimits& limits = {});

// Renders an expression back as source text (for error messages and tests): "torch.add(x, y, alpha=1)".
std::string to_source(const Expr& e);

}  // namespace amanda::torchscript
