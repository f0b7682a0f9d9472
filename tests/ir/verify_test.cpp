// The structural verifier: every problem, each with its path.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "amanda/ir/graph.h"
#include "amanda/ir/verify.h"
#include "ir_test_util.h"

namespace amanda::ir {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using test::in;
using test::out;
using test::wheres;

const std::string kOnlyThroughOwner = "; an edge may leave a nested graph only through its owner's ports";

// The seed's example, nested: the top-level graph (in -> out) holds src, h and an If op whose
// attribute graph reads the If's own input (an explicit capture); h's input ports feed its inner
// ops and its inner ops feed its output port. Control edges join siblings.
void build_valid(Graph& g) {
  OpId r = g.root();
  PortId gin = g.add_input(r, g.sym("in"));
  PortId gout = g.add_output(r, g.sym("out"));
  OpId src = g.create_op(r, "Src", "src", {"a"}, {"y"});
  OpId h = g.create_op(r, "H", "h", {"hx", "hy"}, {"hk"});
  OpId f = g.create_op(h, "F", "f", {"x", "y"}, {"m", "n"});
  OpId k = g.create_op(h, "G", "g", {"z"}, {"k"});
  OpId cond = g.create_op(r, "If", "cond", {"c"}, {"r"});
  OpId then_g = g.create_attr_graph(cond, g.sym("then_branch"));
  g.set_attr(cond, g.sym("then_branch"), Value::graph(then_g));
  PortId then_out = g.add_output(then_g, g.sym("res"));
  OpId t = g.create_op(then_g, "Neg", "t", {"x"}, {"y"});
  g.connect(gin, in(g, src, "a"));
  g.connect(out(g, src, "y"), in(g, h, "hx"));
  g.connect(out(g, src, "y"), in(g, h, "hy"));
  g.connect(in(g, h, "hx"), in(g, f, "x"));
  g.connect(in(g, h, "hy"), in(g, f, "y"));
  g.connect(out(g, f, "m"), in(g, k, "z"));
  g.connect(out(g, k, "k"), out(g, h, "hk"));
  g.connect(g.control_out(f), g.control_in(k));
  g.connect(out(g, h, "hk"), in(g, cond, "c"));
  g.connect(in(g, cond, "c"), in(g, t, "x"));  // capture
  g.connect(out(g, t, "y"), then_out);
  g.connect(out(g, cond, "r"), gout);
  g.connect(g.control_out(src), g.control_in(cond));
  // Same port name on the two sides is fine, and so is a same op name in another scope.
  g.create_op(h, "Src", "src", {"v"}, {"v"});
}

TEST(Verify, AValidNestedGraphPasses) {
  Graph g;
  build_valid(g);
  Diagnostics d;
  EXPECT_TRUE(verify(g, d));
  EXPECT_TRUE(d.empty()) << d.str();
}

TEST(Verify, OnlyNewErrorsDecideTheResult) {
  Graph g;
  build_valid(g);
  Diagnostics d;
  d.error("elsewhere", "an earlier problem");
  EXPECT_TRUE(verify(g, d));
  EXPECT_EQ(d.items().size(), 1u);
}

TEST(Verify, TwoProducersIntoOneDataInputPort) {
  Graph g;
  OpId a = g.create_op(g.root(), "A", "a", {}, {"y"});
  OpId b = g.create_op(g.root(), "B", "b", {}, {"y"});
  OpId c = g.create_op(g.root(), "C", "c", {"x"}, {});
  g.connect(out(g, a, "y"), in(g, c, "x"));
  g.connect(out(g, b, "y"), in(g, c, "x"));
  Diagnostics d;
  EXPECT_FALSE(verify(g, d));
  ASSERT_EQ(d.items().size(), 1u) << d.str();
  EXPECT_EQ(d.items()[0].severity, Severity::Error);
  EXPECT_EQ(d.items()[0].where, "c:input x");
  EXPECT_EQ(d.items()[0].message, "data port has 2 producers (a:output y, b:output y); a data port takes at most one");
}

TEST(Verify, ManyProducersAreListedUpToFour) {
  Graph g;
  OpId h = g.create_op(g.root(), "H", "h", {}, {"hk"});
  std::vector<OpId> ps;
  for (int i = 0; i < 5; ++i) ps.push_back(g.create_op(h, "P", "p" + std::to_string(i), {}, {"y"}));
  for (OpId p : ps) g.connect(g.output(p, 0), out(g, h, "hk"));  // into the owner's output port
  Diagnostics d;
  EXPECT_FALSE(verify(g, d));
  ASSERT_EQ(d.items().size(), 1u) << d.str();
  EXPECT_EQ(d.items()[0].where, "h:output hk");
  EXPECT_EQ(d.items()[0].message,
            "data port has 5 producers (h/p0:output y, h/p1:output y, h/p2:output y, h/p3:output y, ...); "
            "a data port takes at most one");
}

TEST(Verify, ManyControlSignalsIntoOneControlPortAreFine) {
  Graph g;
  OpId a = g.create_op(g.root(), "A", "a");
  OpId b = g.create_op(g.root(), "B", "b");
  OpId c = g.create_op(g.root(), "C", "c");
  g.connect(g.control_out(a), g.control_in(c));
  g.connect(g.control_out(b), g.control_in(c));
  Diagnostics d;
  EXPECT_TRUE(verify(g, d)) << d.str();
}

TEST(Verify, DuplicateOpNamesInOneScope) {
  Graph g;
  OpId f1 = g.create_op(g.root(), "F", "f");
  OpId f2 = g.create_op(g.root(), "F", "f");
  OpId h = g.create_op(g.root(), "H", "h");
  OpId i1 = g.create_op(h, "I", "i");
  OpId i2 = g.create_op(h, "I", "i");
  OpId sub = g.create_attr_graph(h, g.sym("sub"));
  OpId s1 = g.create_op(sub, "S", "s");
  OpId s2 = g.create_op(sub, "S", "s");
  Diagnostics d;
  EXPECT_FALSE(verify(g, d));
  ASSERT_EQ(d.items().size(), 3u) << d.str();
  EXPECT_THAT(wheres(d), ElementsAre("f", "h/i", "h/sub/s"));
  auto ids = [](OpId a, OpId b) { return " (op ids " + std::to_string(a.value) + " and " + std::to_string(b.value) + ")"; };
  EXPECT_EQ(d.items()[0].message, "duplicate name 'f' in the top-level graph" + ids(f1, f2));
  EXPECT_EQ(d.items()[1].message, "duplicate name 'i' in op h" + ids(i1, i2));
  EXPECT_EQ(d.items()[2].message, "duplicate name 's' in graph h/sub" + ids(s1, s2));
}

TEST(Verify, DuplicateNamesInATopLevelOp) {
  Graph g(Graph::RootKind::Op);
  g.set_name(g.root(), g.sym("top"));
  g.create_op(g.root(), "F", "f");
  g.create_op(g.root(), "F", "f");
  Diagnostics d;
  EXPECT_FALSE(verify(g, d));
  ASSERT_EQ(d.items().size(), 1u) << d.str();
  EXPECT_THAT(d.items()[0].message, ::testing::StartsWith("duplicate name 'f' in the top-level op"));
}

TEST(Verify, DuplicatePortNames) {
  Graph g;
  g.create_op(g.root(), "F", "f", {"x", "y", "x"}, {"m", "m"});
  Diagnostics d;
  EXPECT_FALSE(verify(g, d));
  ASSERT_EQ(d.items().size(), 2u) << d.str();
  EXPECT_EQ(d.items()[0].where, "f:input x");
  EXPECT_EQ(d.items()[0].message, "duplicate port name on the input side of f");
  EXPECT_EQ(d.items()[1].where, "f:output m");
  EXPECT_EQ(d.items()[1].message, "duplicate port name on the output side of f");
}

TEST(Verify, EdgeFromInsideASubgraphOpToOutside) {
  Graph g;
  OpId h = g.create_op(g.root(), "H", "h", {"hx"}, {"hk"});
  OpId f = g.create_op(h, "F", "f", {"x"}, {"m"});
  OpId k = g.create_op(g.root(), "G", "g", {"z"}, {});
  g.connect(out(g, f, "m"), in(g, k, "z"));
  Diagnostics d;
  EXPECT_FALSE(verify(g, d));
  ASSERT_EQ(d.items().size(), 1u) << d.str();
  EXPECT_EQ(d.items()[0].where, "edge h/f:output m -> g:input z");
  EXPECT_EQ(d.items()[0].message,
            "edge crosses scopes: h/f:output m is not visible in the top-level graph" + kOnlyThroughOwner);
}

TEST(Verify, EdgeFromOutsideIntoASubgraphOp) {
  Graph g;
  OpId src = g.create_op(g.root(), "Src", "src", {}, {"y"});
  OpId h = g.create_op(g.root(), "H", "h", {"hx"}, {"hk"});
  OpId f = g.create_op(h, "F", "f", {"x"}, {"m"});
  g.connect(out(g, src, "y"), in(g, f, "x"));   // skips h:input hx
  g.connect(out(g, src, "y"), out(g, h, "hk"));  // into h's output port from outside its body
  Diagnostics d;
  EXPECT_FALSE(verify(g, d));
  ASSERT_EQ(d.items().size(), 2u) << d.str();
  EXPECT_EQ(d.items()[0].where, "edge src:output y -> h/f:input x");
  EXPECT_EQ(d.items()[0].message, "edge crosses scopes: src:output y is not visible in op h" + kOnlyThroughOwner);
  EXPECT_EQ(d.items()[1].where, "edge src:output y -> h:output hk");
  EXPECT_EQ(d.items()[1].message, "edge crosses scopes: src:output y is not visible in op h" + kOnlyThroughOwner);
}

TEST(Verify, AttributeGraphMayCaptureOnlyItsOwnersInputs) {
  Graph g;
  OpId other = g.create_op(g.root(), "O", "other", {"v"}, {"w"});
  OpId cond = g.create_op(g.root(), "If", "cond", {"c"}, {});
  OpId sub = g.create_attr_graph(cond, g.sym("then_branch"));
  OpId t = g.create_op(sub, "T", "t", {"x", "y"}, {"o"});
  OpId sink = g.create_op(g.root(), "Sink", "sink", {"x"}, {});
  g.connect(in(g, cond, "c"), in(g, t, "x"));     // fine: the owner's input
  g.connect(in(g, other, "v"), in(g, t, "y"));    // another op's input
  g.connect(out(g, t, "o"), in(g, sink, "x"));    // out of the attribute graph
  Diagnostics d;
  EXPECT_FALSE(verify(g, d));
  ASSERT_EQ(d.items().size(), 2u) << d.str();
  EXPECT_EQ(d.items()[0].where, "edge other:input v -> cond/then_branch/t:input y");
  EXPECT_EQ(d.items()[0].message,
            "edge crosses scopes: other:input v is not visible in graph cond/then_branch" + kOnlyThroughOwner);
  EXPECT_EQ(d.items()[1].where, "edge cond/then_branch/t:output o -> sink:input x");
  EXPECT_EQ(d.items()[1].message,
            "edge crosses scopes: cond/then_branch/t:output o is not visible in the top-level graph" +
                kOnlyThroughOwner);
}

TEST(Verify, EdgeIntoAnAttributeGraphsOwnPortIsNotASink) {
  Graph g;
  OpId h = g.create_op(g.root(), "H", "h");
  OpId f = g.create_op(h, "F", "f", {}, {"m"});
  OpId sub = g.create_attr_graph(h, g.sym("sub"));
  PortId p = g.add_input(sub, g.sym("p"));
  g.connect(out(g, f, "m"), p);
  Diagnostics d;
  EXPECT_FALSE(verify(g, d));
  ASSERT_EQ(d.items().size(), 1u) << d.str();
  EXPECT_EQ(d.items()[0].where, "edge h/f:output m -> h/sub:input p");
  EXPECT_EQ(d.items()[0].message, "edge crosses scopes: h/sub:input p is not a sink of op h" + kOnlyThroughOwner);
}

TEST(Verify, ControlEdgeJoinedToADataPort) {
  Graph g;
  OpId a = g.create_op(g.root(), "A", "a", {}, {"y"});
  OpId b = g.create_op(g.root(), "B", "b", {"x"}, {});
  g.connect(g.control_out(a), in(g, b, "x"));
  g.connect(out(g, a, "y"), g.control_in(b));
  Diagnostics d;
  EXPECT_FALSE(verify(g, d));
  ASSERT_EQ(d.items().size(), 2u) << d.str();
  EXPECT_EQ(d.items()[0].where, "edge a:output ^control -> b:input x");
  EXPECT_EQ(d.items()[0].message, "edge joins a control port to a data port");
  EXPECT_EQ(d.items()[1].where, "edge a:output y -> b:input ^control");
  EXPECT_EQ(d.items()[1].message, "edge joins a control port to a data port");
}

TEST(Verify, EveryProblemIsReportedNotOnlyTheFirst) {
  Graph g;
  build_valid(g);
  OpId h = g.find_op(g.root(), "h");
  OpId f = g.find_op(h, "f");
  OpId src = g.find_op(g.root(), "src");
  OpId cond = g.find_op(g.root(), "cond");
  // 1. a second "f" in h; 2. a duplicate port; 3. a second producer; 4. a crossing edge;
  // 5. control into data.
  g.create_op(h, "F", "f");
  OpId dup = g.create_op(g.root(), "D", "dup", {"p", "p"}, {});
  g.connect(in(g, h, "hy"), in(g, f, "x"));
  g.connect(out(g, f, "n"), in(g, dup, "p"));
  g.connect(g.control_out(src), in(g, cond, "c"));
  Diagnostics d;
  EXPECT_FALSE(verify(g, d));
  EXPECT_THAT(wheres(d), ElementsAre("h/f:input x",                         // two producers
                                     "cond:input c",                        // two producers
                                     "h/f",                                 // duplicate name
                                     "dup:input p",                         // duplicate port
                                     "edge h/f:output n -> dup:input p",    // crosses scopes
                                     "edge src:output ^control -> cond:input c"))  // control -> data
      << d.str();
  EXPECT_EQ(d.error_count(), 6u);
}

}  // namespace
}  // namespace amanda::ir
