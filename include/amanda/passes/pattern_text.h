// The matcher's patterns as text (docs/optimize.md, "Patterns as text"): what matcher.h's C++
// builders say, one binding per line, the last line the root.
//
//   # LayerNormalization written out (opset 17 fuses it)
//   x = any
//   mean = ReduceMean(x, const?) [uses=1]
//   d = Sub(x, mean) [uses=2]
//   var = ReduceMean(Pow(d, const) [uses=1], const?) [uses=1]
//   Div(d, Sqrt(Add(var, const) [uses=1]) [uses=1])
//
// - A node: `any`, `const`, `input` (a scope input), a bound name (the same value again: DAG
//   sharing), or `Type(args)` / `A|B(args)`; an argument followed by `?` may be omitted, by `*`
//   stands for zero or more inputs.
// - Predicates in brackets after a node: `uses=N`, `max_uses=N`, `rank=N`, `dtype=float32`,
//   `output=N`, `static_shape`, `not_output`, `exact`, `boundary`, `label=NAME`, `!ATTR` (absent),
//   `ATTR=VALUE` (present and equal), `ATTR=VALUE default VALUE` (absent counts as the default);
//   a VALUE is an integer, a float, a 'string' or a [list].
// - `#` starts a comment; a name is bound once, before it is used.
// Errors are ParseError with the file, line and column; nesting and size are bounded.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "amanda/passes/matcher.h"

namespace amanda::passes {

struct TextPattern {
  Pat root;
  std::map<std::string, Pat, std::less<>> names;  // every bound name, for Match::value
};

TextPattern parse_pattern(std::string_view text, const std::string& file = "<pattern>");

}  // namespace amanda::passes
