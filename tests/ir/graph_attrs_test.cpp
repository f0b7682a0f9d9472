// Attributes on ops, ports and edges, and graph-valued attributes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "amanda/ir/graph.h"
#include "ir_test_util.h"

namespace amanda::ir {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using test::in;
using test::out;

std::vector<std::string> keys(const Graph& g, const AttrList& l) {
  std::vector<std::string> r;
  for (const auto& [k, v] : l) r.emplace_back(g.str(k));
  return r;
}

TEST(GraphAttrs, OpAttributesKeepOrderAndReplaceInPlace) {
  Graph g;
  OpId f = g.create_op(g.root(), "Conv", "f");
  EXPECT_THAT(g.attrs(f), IsEmpty());
  EXPECT_EQ(g.attr(f, g.sym("a")), nullptr);
  g.set_attr(f, g.sym("a"), Value(1));
  g.set_attr(f, g.sym("b"), Value("same"));
  g.set_attr(f, g.sym("c"), Value(Value::List{Value(1), Value(2.5)}));
  g.set_attr(f, g.sym("a"), Value(5));
  EXPECT_THAT(keys(g, g.attrs(f)), ElementsAre("a", "b", "c"));
  ASSERT_NE(g.attr(f, g.sym("a")), nullptr);
  EXPECT_EQ(g.attr(f, g.sym("a"))->as_int(), 5);
  EXPECT_EQ(g.attr(f, g.sym("b"))->as_string(), "same");
  EXPECT_EQ(g.attr(f, g.sym("c"))->as_list().at(1).as_float(), 2.5);
  EXPECT_TRUE(g.erase_attr(f, g.sym("b")));
  EXPECT_FALSE(g.erase_attr(f, g.sym("b")));
  EXPECT_THAT(keys(g, g.attrs(f)), ElementsAre("a", "c"));
  EXPECT_EQ(g.attr(f, g.sym("b")), nullptr);
}

TEST(GraphAttrs, PortAndEdgeAttributes) {
  Graph g;
  OpId a = g.create_op(g.root(), "A", "a", {}, {"y"});
  OpId b = g.create_op(g.root(), "B", "b", {"x"}, {});
  PortId y = out(g, a, "y");
  EdgeId e = g.connect(y, in(g, b, "x"));
  g.set_attr(y, g.sym("dtype"), Value("float32"));
  g.set_attr(e, g.sym("weight"), Value(0.5));
  EXPECT_EQ(g.attr(y, g.sym("dtype"))->as_string(), "float32");
  EXPECT_EQ(g.attr(e, g.sym("weight"))->as_float(), 0.5);
  EXPECT_THAT(g.attrs(a), IsEmpty());  // attributes of a port are not the op's
  EXPECT_THAT(keys(g, g.attrs(e)), ElementsAre("weight"));
  EXPECT_TRUE(g.erase_attr(y, g.sym("dtype")));
  EXPECT_EQ(g.attr(y, g.sym("dtype")), nullptr);
  EXPECT_TRUE(g.erase_attr(e, g.sym("weight")));
  EXPECT_FALSE(g.erase_attr(e, g.sym("weight")));
}

TEST(GraphAttrs, AttributesOfErasedEntitiesDoNotReappearOnNewOnes) {
  Graph g;
  OpId a = g.create_op(g.root(), "A", "a", {}, {"y"});
  OpId b = g.create_op(g.root(), "B", "b", {"x"}, {});
  g.set_attr(a, g.sym("k"), Value(1));
  g.set_attr(out(g, a, "y"), g.sym("k"), Value(2));
  EdgeId e = g.connect(out(g, a, "y"), in(g, b, "x"));
  g.set_attr(e, g.sym("k"), Value(3));
  g.set_attr(g.control_in(a), g.sym("k"), Value(4));
  g.erase_op(a);
  OpId c = g.create_op(g.root(), "C", "c", {"x"}, {"y"});
  EdgeId e2 = g.connect(out(g, c, "y"), in(g, b, "x"));
  EXPECT_THAT(g.attrs(c), IsEmpty());
  EXPECT_THAT(g.attrs(out(g, c, "y")), IsEmpty());
  EXPECT_THAT(g.attrs(in(g, c, "x")), IsEmpty());
  EXPECT_THAT(g.attrs(e2), IsEmpty());
  EXPECT_THAT(g.attrs(g.control_in(c)), IsEmpty());
  g.set_attr(c, g.sym("new"), Value(true));
  EXPECT_THAT(keys(g, g.attrs(c)), ElementsAre("new"));
}

TEST(GraphAttrs, AttributeGraphsAreOwnedButNotBody) {
  Graph g;
  OpId cond = g.create_op(g.root(), "If", "cond", {"c", "v"}, {"r"});
  OpId then_g = g.create_attr_graph(cond, g.sym("then_branch"));
  g.set_attr(cond, g.sym("then_branch"), Value::graph(then_g));
  OpId t = g.create_op(then_g, "Neg", "t", {"x"}, {"y"});
  g.connect(in(g, cond, "v"), in(g, t, "x"));  // an explicit capture of the owner's input

  EXPECT_TRUE(g.valid(then_g));
  EXPECT_TRUE(g.is_graph(then_g));
  EXPECT_EQ(g.parent(then_g), cond);
  EXPECT_THAT(g.attr_graphs(cond), ElementsAre(then_g));
  EXPECT_THAT(g.children(cond), IsEmpty());
  EXPECT_EQ(g.child_count(cond), 0u);
  EXPECT_EQ(g.first_child(cond), OpId());
  EXPECT_FALSE(g.has_body(cond));  // an attribute graph is not a body
  EXPECT_TRUE(g.has_body(then_g));
  EXPECT_THAT(g.children(then_g), ElementsAre(t));
  EXPECT_EQ(g.op_count(), 2u);  // cond and t; graph nodes are not ops
  EXPECT_EQ(g.attr(cond, g.sym("then_branch"))->as_graph(), then_g);
  EXPECT_EQ(g.edge_scope(EdgeId(1)), then_g);

  EXPECT_TRUE(g.erase_attr(cond, g.sym("then_branch")));
  EXPECT_FALSE(g.valid(then_g));
  EXPECT_FALSE(g.valid(t));
  EXPECT_THAT(g.attr_graphs(cond), IsEmpty());
  EXPECT_EQ(g.op_count(), 1u);
  EXPECT_EQ(g.edge_count(), 0u);
  EXPECT_EQ(g.out_degree(in(g, cond, "v")), 0u);
}

TEST(GraphAttrs, ReplacingAGraphValueErasesTheOldGraph) {
  Graph g;
  OpId op = g.create_op(g.root(), "Loop", "loop");
  OpId g1 = g.create_attr_graph(op, g.sym("body"));
  OpId g2 = g.create_attr_graph(op, g.sym("body"));
  g.create_op(g1, "X", "x1");
  g.set_attr(op, g.sym("body"), Value::graph(g1));
  g.set_attr(op, g.sym("body"), Value::graph(g2));
  EXPECT_FALSE(g.valid(g1));
  EXPECT_TRUE(g.valid(g2));
  EXPECT_EQ(g.attr(op, g.sym("body"))->as_graph(), g2);
  EXPECT_THAT(g.attr_graphs(op), ElementsAre(g2));
  EXPECT_EQ(g.op_count(), 1u);
}

TEST(GraphAttrs, SettingTheSameGraphValueAgainKeepsTheGraph) {
  Graph g;
  OpId op = g.create_op(g.root(), "Loop", "loop");
  OpId body = g.create_attr_graph(op, g.sym("body"));
  OpId x = g.create_op(body, "X", "x");
  g.set_attr(op, g.sym("body"), Value::graph(body));
  g.set_attr(op, g.sym("body"), Value::graph(body));
  EXPECT_TRUE(g.valid(body));
  EXPECT_TRUE(g.valid(x));
  EXPECT_EQ(g.attr(op, g.sym("body"))->as_graph(), body);
  EXPECT_THAT(g.attr_graphs(op), ElementsAre(body));
}

TEST(GraphAttrs, ShrinkingAListOfGraphsErasesOnlyTheDroppedOnes) {
  Graph g;
  OpId op = g.create_op(g.root(), "Switch", "sw");
  OpId b0 = g.create_attr_graph(op, g.sym("branches"));
  OpId b1 = g.create_attr_graph(op, g.sym("branches"));
  OpId b2 = g.create_attr_graph(op, g.sym("branches"));
  g.set_attr(op, g.sym("branches"), Value(Value::List{Value::graph(b0), Value::graph(b1), Value::graph(b2)}));
  g.set_attr(op, g.sym("branches"), Value(Value::List{Value::graph(b2), Value::graph(b0)}));
  EXPECT_TRUE(g.valid(b0));
  EXPECT_FALSE(g.valid(b1));
  EXPECT_TRUE(g.valid(b2));
  EXPECT_THAT(g.attr_graphs(op), ElementsAre(b0, b2));
}

TEST(GraphAttrs, ErasingAMapAttributeErasesItsGraphs) {
  Graph g;
  OpId op = g.create_op(g.root(), "Case", "case");
  OpId a = g.create_attr_graph(op, g.sym("a"));
  OpId b = g.create_attr_graph(op, g.sym("b"));
  OpId kept = g.create_attr_graph(op, g.sym("kept"));
  g.set_attr(op, g.sym("cases"), Value(Value::Map{{"a", Value::graph(a)}, {"b", Value::List{Value::graph(b)}}}));
  g.set_attr(op, g.sym("kept"), Value::graph(kept));
  EXPECT_TRUE(g.erase_attr(op, g.sym("cases")));
  EXPECT_FALSE(g.valid(a));
  EXPECT_FALSE(g.valid(b));
  EXPECT_TRUE(g.valid(kept));
  EXPECT_THAT(g.attr_graphs(op), ElementsAre(kept));
}

TEST(GraphAttrs, AttributeGraphsNest) {
  Graph g;
  OpId outer = g.create_op(g.root(), "Loop", "outer");
  OpId body = g.create_attr_graph(outer, g.sym("body"));
  g.set_attr(outer, g.sym("body"), Value::graph(body));
  OpId inner = g.create_op(body, "If", "inner", {"c"}, {});
  OpId branch = g.create_attr_graph(inner, g.sym("then_branch"));
  g.set_attr(inner, g.sym("then_branch"), Value::graph(branch));
  OpId leaf = g.create_op(branch, "Relu", "leaf");
  EXPECT_EQ(g.path(leaf), "outer/body/inner/then_branch/leaf");
  EXPECT_EQ(g.op_count(), 3u);
  g.erase_op(outer);
  for (OpId x : {outer, body, inner, branch, leaf}) EXPECT_FALSE(g.valid(x)) << x.value;
  EXPECT_EQ(g.op_count(), 0u);
}

TEST(GraphAttrs, CreateAttrGraphNeedsALiveOwner) {
  Graph g;
  EXPECT_THROW(g.create_attr_graph(OpId(42), g.sym("x")), Error);
  OpId a = g.create_op(g.root(), "A", "a");
  g.erase_op(a);
  EXPECT_THROW(g.create_attr_graph(a, g.sym("x")), Error);
}

}  // namespace
}  // namespace amanda::ir
