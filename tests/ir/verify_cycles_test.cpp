// The verifier refuses data and control edges that form a cycle, within a scope and through a
// nested graph, and names the ops on the cycle.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "amanda/ir/graph.h"
#include "amanda/ir/verify.h"
#include "ir_test_util.h"

namespace amanda::ir {
namespace {

using test::in;
using test::out;

std::string problems(const Graph& g) {
  Diagnostics d;
  verify(g, d);
  return d.str();
}

TEST(VerifyCycles, AnOpFeedingItselfIsACycle) {
  Graph g;
  OpId add = g.create_op(g.root(), "Add", "add", {"a", "b"}, {"y"});
  g.connect(out(g, add, "y"), in(g, add, "b"));
  EXPECT_THAT(problems(g), ::testing::HasSubstr("data edges form a cycle: add -> add"));
}

TEST(VerifyCycles, TwoOpsAndTheOpsAfterThemReportOneCycle) {
  Graph g;
  OpId a = g.create_op(g.root(), "A", "a", {"x"}, {"y"});
  OpId b = g.create_op(g.root(), "B", "b", {"x"}, {"y"});
  OpId c = g.create_op(g.root(), "C", "c", {"x"}, {"y"});
  g.connect(out(g, a, "y"), in(g, b, "x"));
  g.connect(out(g, b, "y"), in(g, a, "x"));
  g.connect(out(g, b, "y"), in(g, c, "x"));  // after the cycle, not on it
  Diagnostics d;
  EXPECT_FALSE(verify(g, d));
  ASSERT_EQ(d.error_count(), 1u) << d.str();
  EXPECT_THAT(d.str(), ::testing::AnyOf(::testing::HasSubstr("a -> b -> a"), ::testing::HasSubstr("b -> a -> b")));
}

TEST(VerifyCycles, AChainIsNotACycle) {
  Graph g;
  OpId a = g.create_op(g.root(), "A", "a", {"x"}, {"y"});
  OpId b = g.create_op(g.root(), "B", "b", {"x"}, {"y"});
  g.connect(out(g, a, "y"), in(g, b, "x"));
  g.connect(g.control_out(a), g.control_in(b));
  EXPECT_EQ(problems(g), "");
}

TEST(VerifyCycles, AControlEdgeBackIsACycle) {
  Graph g;
  OpId a = g.create_op(g.root(), "A", "a", {"x"}, {"y"});
  OpId b = g.create_op(g.root(), "B", "b", {"x"}, {"y"});
  g.connect(out(g, a, "y"), in(g, b, "x"));
  g.connect(g.control_out(b), g.control_in(a));
  EXPECT_THAT(problems(g), ::testing::HasSubstr("form a cycle"));
}

TEST(VerifyCycles, ACycleInsideABodyIsFound) {
  Graph g;
  OpId h = g.create_op(g.root(), "H", "h", {"x"}, {"y"});
  OpId a = g.create_op(h, "A", "a", {"x"}, {"y"});
  OpId b = g.create_op(h, "B", "b", {"x"}, {"y"});
  g.connect(out(g, a, "y"), in(g, b, "x"));
  g.connect(out(g, b, "y"), in(g, a, "x"));
  EXPECT_THAT(problems(g), ::testing::HasSubstr("h/a"));
}

TEST(VerifyCycles, ACycleThroughANestedGraphIsFound) {
  // h's body computes h's output from h's input; outside, h's output comes back to h's input
  // through b: h -> b -> h.
  Graph g;
  OpId h = g.create_op(g.root(), "H", "h", {"x"}, {"y"});
  OpId inner = g.create_op(h, "I", "inner", {"x"}, {"y"});
  g.connect(in(g, h, "x"), in(g, inner, "x"));
  g.connect(out(g, inner, "y"), out(g, h, "y"));
  OpId b = g.create_op(g.root(), "B", "b", {"x"}, {"y"});
  g.connect(out(g, h, "y"), in(g, b, "x"));
  g.connect(out(g, b, "y"), in(g, h, "x"));
  EXPECT_THAT(problems(g), ::testing::HasSubstr("form a cycle"));
}

TEST(VerifyValues, TwoDefinitionsOfOneValueNameAreReported) {
  // What the ONNX importer makes of two initializers named "c": a second port "c.1" that keeps
  // the file's name in "@value".
  Graph g;
  g.add_input(g.root(), g.sym("c"));
  PortId second = g.add_input(g.root(), g.sym("c.1"));
  g.set_attr(second, g.sym("@value"), Value("c"));
  EXPECT_THAT(problems(g), ::testing::HasSubstr("value 'c' is defined twice"));
  g.set_attr(second, g.sym("@value"), Value("d"));  // renamed, but another value: fine
  EXPECT_EQ(problems(g), "");
}

TEST(VerifyCycles, ManyScopesStayLinear) {
  // 20,000 ops, each with a body: a per-scope sort over all ops would be quadratic.
  Graph g;
  OpId prev;
  for (int i = 0; i < 20000; ++i) {
    OpId h = g.create_op(g.root(), "H", "h" + std::to_string(i), {"x"}, {"y"});
    OpId inner = g.create_op(h, "I", "inner", {"x"}, {"y"});
    g.connect(in(g, h, "x"), in(g, inner, "x"));
    g.connect(out(g, inner, "y"), out(g, h, "y"));
    if (prev) g.connect(out(g, prev, "y"), in(g, h, "x"));
    prev = h;
  }
  EXPECT_EQ(problems(g), "");
}

}  // namespace
}  // namespace amanda::ir
