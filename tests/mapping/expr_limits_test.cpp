// The table-expression language on hostile expressions: checked integer arithmetic (no SIGFPE
// from INT64_MIN / -1), depth limits in the parser (nesting and long chains), and range/repeat
// charged to the expression-step budget before their lists are made.
#include <limits>
#include <string>

#include <gtest/gtest.h>

#include "amanda/mapping/expr.h"
#include "amanda/support/budget.h"

namespace amanda::mapping {
namespace {

using ir::Value;

Value eval(const std::string& text, const Bindings& b = {}) { return parse_expr(text, SourceLoc{"t.yaml", 3, 11})->eval(b); }

std::string error_of(const std::string& text, const Bindings& b = {}) {
  try {
    eval(text, b);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

std::string repeated(const std::string& s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

TEST(ExprLimits, Int64MinDividedByMinusOneIsAnErrorNotSigfpe) {
  Bindings b;
  b.set("x", Value(std::numeric_limits<int64_t>::min()));
  b.set("y", Value(int64_t(-1)));
  EXPECT_NE(error_of("x / y", b).find("-9223372036854775808 / -1 overflows int64"), std::string::npos) << error_of("x / y", b);
  EXPECT_EQ(eval("x % y", b).as_int(), 0);
  EXPECT_EQ(eval("7 % -1").as_int(), 0);
  EXPECT_EQ(eval("-7 / 2").as_int(), -4);  // floor division stays
  EXPECT_EQ(eval("-7 % 2").as_int(), 1);
  EXPECT_EQ(eval("7 / -1").as_int(), -7);
  EXPECT_NE(error_of("-x", b).find("overflows int64"), std::string::npos);
  EXPECT_NE(error_of("x - 1", b).find("overflows int64"), std::string::npos);
  EXPECT_NE(error_of("9223372036854775807 + 1").find("overflows int64"), std::string::npos);
  EXPECT_NE(error_of("4294967296 * 4294967296").find("overflows int64"), std::string::npos);
  EXPECT_NE(error_of("[x, 1] / y", b).find("overflows int64"), std::string::npos);  // element-wise too
  EXPECT_NE(error_of("1 % 0").find("division by zero"), std::string::npos);
}

TEST(ExprLimits, NestingIsLimitedAtTheDepthBudget) {
  uint64_t limit = Budget::run().limits().depth;
  // Each parenthesis costs two levels (the group and the expression inside it).
  int ok = static_cast<int>(limit / 2) - 2;
  EXPECT_EQ(eval(repeated("(", ok) + "1" + repeated(")", ok)).as_int(), 1);
  for (const auto& [open, close] : {std::pair<std::string, std::string>{"(", ")"}, {"not ", ""}, {"- (", ")"}, {"[", "]"}}) {
    std::string text = repeated(open, 20000) + "1" + repeated(close, 20000);
    std::string e = error_of(text);
    EXPECT_NE(e.find("nested deeper than " + std::to_string(limit) + " levels (--max-depth)"), std::string::npos)
        << open << ": " << e.substr(0, 200);
  }
}

TEST(ExprLimits, ALongChainIsAsDeepAsNesting) {
  // 1 + 1 + ... is parsed by a loop, but evaluating, printing and freeing its tree recurse.
  uint64_t limit = Budget::run().limits().depth;
  std::string ok = "1" + repeated(" + 1", static_cast<int>(limit) - 2);
  EXPECT_EQ(eval(ok).as_int(), static_cast<int64_t>(limit) - 1);
  std::string e = error_of("1" + repeated(" + 1", 200000));
  EXPECT_NE(e.find("nested deeper than"), std::string::npos) << e.substr(0, 200);
}

TEST(ExprLimits, RangeAndRepeatAreChargedBeforeTheirListsAreMade) {
  BudgetLimits saved = Budget::run().limits();
  EXPECT_EQ(eval("len(range(3, 7))").as_int(), 4);
  EXPECT_EQ(eval("len(range(7, 3))").as_int(), 0);
  EXPECT_EQ(eval("len(repeat([1, 2], 3))").as_int(), 3);
  // e - b overflows int64 here: the length is computed without overflow.
  std::string e = error_of("range(-9223372036854775807 - 1, 9223372036854775807)");
  EXPECT_NE(e.find("range()"), std::string::npos) << e;
  EXPECT_NE(e.find("--max-expr-steps"), std::string::npos) << e;
  e = error_of("repeat(repeat(1, 1048576), 1048576)");
  EXPECT_NE(e.find("repeat()"), std::string::npos) << e;
  e = error_of("repeat(1, 9223372036854775807)");
  EXPECT_NE(e.find("--max-expr-steps"), std::string::npos) << e;
  // The budget is per expression: the same expression again is fine, and a larger budget lets
  // a longer range through.
  EXPECT_EQ(eval("len(range(1000))").as_int(), 1000);
  BudgetLimits big = saved;
  big.expr_steps = 2'000'000;
  Budget::run().set_limits(big);
  EXPECT_EQ(eval("len(range(1500000))").as_int(), 1500000);
  big.expr_steps = 100;
  Budget::run().set_limits(big);
  EXPECT_NE(error_of("len(range(1000))").find("expression steps"), std::string::npos);
  Budget::run().set_limits(saved);
}

}  // namespace
}  // namespace amanda::mapping
