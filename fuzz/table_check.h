// The property the table_fuzz target checks, shared with the corpus replay test
// (tests/mapping/fuzz_corpus_test.cpp): the first byte picks the reader, the rest is its input —
//   0: an expression (parse_expr), evaluated with a few bindings (INT64_MIN, -1, a list, ...);
//   1: a template string (parse_template), evaluated the same way;
//   2: a table file (YAML), parsed into a Table;
//   3: a matcher pattern in its text form (amanda/passes/pattern_text.h).
// Every input must give a result or amanda::Error / ParseError / EvalError: never a crash (no
// SIGFPE from INT64_MIN / -1, no stack overflow from nesting), a hang, or memory past the
// fuzzer's -rss_limit_mb (range and repeat are charged to the expression-step budget).
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include "amanda/mapping/expr.h"
#include "amanda/mapping/table.h"
#include "amanda/passes/pattern_text.h"
#include "amanda/support/budget.h"
#include "amanda/text/tree.h"

namespace amanda::fuzz {

// "" when the property holds, else what went wrong.
inline std::string table_problem(std::string_view input) {
  if (input.empty()) return "";
  std::string_view rest = input.substr(1);
  try {
    mapping::Bindings b;
    b.set("x", ir::Value(std::numeric_limits<int64_t>::min()));
    b.set("y", ir::Value(int64_t(-1)));
    b.set("n", ir::Value(int64_t(3)));
    b.set("l", ir::Value(ir::Value::List{ir::Value(int64_t(1)), ir::Value(int64_t(2)), ir::Value(int64_t(3))}));
    b.set("s", ir::Value(std::string("abc")));
    b.set("f", ir::Value(2.5));
    switch (static_cast<unsigned char>(input[0]) % 4) {  // the seeds start with '0'..'3' (48..51)
      case 0: mapping::parse_expr(rest, SourceLoc{"fuzz", 1, 1})->eval(b); break;
      case 1: mapping::parse_template(rest, SourceLoc{"fuzz", 1, 1})->eval(b); break;
      case 2: mapping::parse_table(text::parse_tree(rest, text::Format::Yaml, "fuzz.yaml")); break;
      default: passes::parse_pattern(rest, "fuzz.pat"); break;
    }
  } catch (const Error&) {
  } catch (const ParseError&) {
  } catch (const mapping::EvalError&) {
  } catch (const std::exception& e) {
    return std::string("an exception that is not amanda::Error: ") + e.what();
  }
  return "";
}

}  // namespace amanda::fuzz
