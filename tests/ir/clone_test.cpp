// clone_subgraph / clone_ops, in one graph and across graphs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "amanda/ir/equal.h"
#include "amanda/ir/graph.h"
#include "amanda/ir/verify.h"
#include "ir_test_util.h"

namespace amanda::ir {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using test::in;
using test::names;
using test::out;
using test::paths;

TEST(Clone, InTheSameGraphCopiesInternalEdgesOnly) {
  Graph g;
  OpId src = g.create_op(g.root(), "Src", "src", {}, {"y"});
  OpId a = g.create_op(g.root(), "A", "a", {"x"}, {"y"});
  OpId b = g.create_op(g.root(), "B", "b", {"x"}, {"y"});
  OpId sink = g.create_op(g.root(), "Sink", "sink", {"x"}, {});
  g.connect(out(g, src, "y"), in(g, a, "x"));
  EdgeId ab = g.connect(out(g, a, "y"), in(g, b, "x"));
  g.connect(out(g, b, "y"), in(g, sink, "x"));
  g.connect(g.control_out(a), g.control_in(b));
  g.connect(g.control_out(src), g.control_in(a));
  g.set_attr(a, g.sym("k"), Value(1));
  g.set_attr(in(g, a, "x"), g.sym("dtype"), Value("f32"));
  g.set_attr(ab, g.sym("w"), Value(2));

  std::vector<OpId> set{a, b};
  std::vector<OpId> copy = g.clone_subgraph(set, g.root());
  ASSERT_EQ(copy.size(), 2u);
  OpId a1 = copy[0], b1 = copy[1];
  EXPECT_THAT(names(g, copy), ElementsAre("a_1", "b_1"));
  EXPECT_EQ(g.type_str(a1), "A");
  EXPECT_EQ(g.parent(a1), g.root());
  EXPECT_EQ(g.find_op(g.root(), "a_1"), a1);
  EXPECT_EQ(g.find_op(g.root(), "a"), a);
  EXPECT_EQ(g.attr(a1, g.sym("k"))->as_int(), 1);
  EXPECT_EQ(g.attr(in(g, a1, "x"), g.sym("dtype"))->as_string(), "f32");
  // Internal data and control edges are copied, with their attributes.
  EXPECT_EQ(g.producer(in(g, b1, "x")), out(g, a1, "y"));
  EdgeId ab1 = g.first_in_edge(in(g, b1, "x"));
  EXPECT_EQ(g.attr(ab1, g.sym("w"))->as_int(), 2);
  EXPECT_EQ(g.producer(g.control_in(b1)), g.control_out(a1));
  // Edges from or to the outside are not.
  EXPECT_EQ(g.producer(in(g, a1, "x")), PortId());
  EXPECT_EQ(g.out_degree(out(g, b1, "y")), 0u);
  EXPECT_EQ(g.in_degree(g.control_in(a1)), 0u);
  // The originals are untouched.
  EXPECT_THAT(paths(g, g.consumers(out(g, src, "y"))), ElementsAre("a:input x"));
  EXPECT_THAT(paths(g, g.consumers(out(g, b, "y"))), ElementsAre("sink:input x"));
  EXPECT_EQ(g.edge_count(), 5u + 2u);
  EXPECT_EQ(g.op_count(), 6u);

  // A second copy takes the next free suffix.
  std::vector<OpId> copy2 = g.clone_subgraph(set, g.root());
  EXPECT_THAT(names(g, copy2), ElementsAre("a_2", "b_2"));
  Diagnostics d;
  EXPECT_TRUE(verify(g, d)) << d.str();
}

TEST(Clone, ManyPortsAndAttributesInTheSameGraph) {
  // Copying grows the arenas the source is read from; the copy must still be exact.
  Graph g;
  OpId a = g.create_op(g.root(), "Wide", "wide");
  for (int i = 0; i < 12; ++i) {
    g.add_input(a, g.sym("i" + std::to_string(i)));
    g.add_output(a, g.sym("o" + std::to_string(i)));
    g.set_attr(a, g.sym("attr" + std::to_string(i)), Value("value number " + std::to_string(i)));
    g.set_attr(g.input(a, i), g.sym("p"), Value(i));
  }
  OpId b = g.create_op(g.root(), "Wide", "wide2", {"x"}, {});
  for (int i = 0; i < 12; ++i) g.set_attr(g.connect(g.output(a, i), i == 0 ? g.input(b, 0) : g.input(a, i)), g.sym("e"), Value(i));
  std::vector<OpId> set{a, b};
  for (int round = 1; round <= 30; ++round) {
    std::vector<OpId> c = g.clone_subgraph(set, g.root());
    ASSERT_EQ(c.size(), 2u);
    EXPECT_EQ(g.name_str(c[0]), "wide_" + std::to_string(round));
    ASSERT_EQ(g.inputs(c[0]).size(), 12u);
    ASSERT_EQ(g.outputs(c[0]).size(), 12u);
    ASSERT_EQ(g.attrs(c[0]).size(), 12u);
    for (int i = 0; i < 12; ++i) {
      EXPECT_EQ(g.port_name_str(g.input(c[0], i)), "i" + std::to_string(i));
      EXPECT_EQ(g.port_name_str(g.output(c[0], i)), "o" + std::to_string(i));
      EXPECT_EQ(g.str(g.attrs(c[0])[i].first), "attr" + std::to_string(i));
      EXPECT_EQ(g.attrs(c[0])[i].second.as_string(), "value number " + std::to_string(i));
      EXPECT_EQ(g.attr(g.input(c[0], i), g.sym("p"))->as_int(), i);
      EdgeId e = g.first_out_edge(g.output(c[0], i));
      ASSERT_TRUE(e);
      EXPECT_EQ(g.attr(e, g.sym("e"))->as_int(), i);
      EXPECT_EQ(g.port_op(g.edge_dst(e)), i == 0 ? c[1] : c[0]);
    }
  }
  EXPECT_EQ(g.op_count(), 62u);
  EXPECT_EQ(g.edge_count(), 31u * 12u);
}

// h(hx -> hk) { f(x -> m); g(z -> k); hx -> f.x; f.m -> g.z; g.k -> hk; f ^-> g }
// with attribute graphs: "sub" (t reads h.hx, an explicit capture) and "branches" (a list of two).
void build_nested(Graph& g) {
  OpId r = g.root();
  OpId h = g.create_op(r, "H", "h", {"hx"}, {"hk"});
  OpId f = g.create_op(h, "F", "f", {"x"}, {"m"});
  OpId k = g.create_op(h, "G", "g", {"z"}, {"k"});
  g.connect(in(g, h, "hx"), in(g, f, "x"));
  g.connect(out(g, f, "m"), in(g, k, "z"));
  g.connect(out(g, k, "k"), out(g, h, "hk"));
  g.connect(g.control_out(f), g.control_in(k));
  g.set_attr(f, g.sym("alpha"), Value(0.5));
  OpId sub = g.create_attr_graph(h, g.sym("sub"));
  g.set_graph_namespace(sub, g.sym("amanda/test"));
  OpId t = g.create_op(sub, "T", "t", {"x"}, {"y"});
  g.connect(in(g, h, "hx"), in(g, t, "x"));
  g.set_attr(h, g.sym("sub"), Value::graph(sub));
  OpId b0 = g.create_attr_graph(h, g.sym("branches"));
  OpId b1 = g.create_attr_graph(h, g.sym("branches"));
  g.create_op(b0, "B0", "b0");
  g.create_op(b1, "B1", "b1");
  g.set_attr(h, g.sym("branches"), Value(Value::List{Value::graph(b0), Value::graph(b1)}));
}

TEST(Clone, CopiesBodiesAttributeGraphsAndCapturesInTheSameGraph) {
  Graph g;
  build_nested(g);
  OpId h = g.find_op(g.root(), "h");
  OpId sub = g.attr(h, g.sym("sub"))->as_graph();
  std::vector<OpId> set{h};
  std::vector<OpId> copy = g.clone_subgraph(set, g.root());
  ASSERT_EQ(copy.size(), 1u);
  OpId h1 = copy[0];
  EXPECT_EQ(g.name_str(h1), "h_1");
  EXPECT_THAT(names(g, g.children(h1)), ElementsAre("f", "g"));
  OpId f1 = g.find_op(h1, "f"), k1 = g.find_op(h1, "g");
  EXPECT_NE(f1, g.find_op(h, "f"));
  EXPECT_EQ(g.path(f1), "h_1/f");
  EXPECT_EQ(g.producer(in(g, f1, "x")), in(g, h1, "hx"));
  EXPECT_EQ(g.producer(in(g, k1, "z")), out(g, f1, "m"));
  EXPECT_EQ(g.producer(out(g, h1, "hk")), out(g, k1, "k"));
  EXPECT_EQ(g.producer(g.control_in(k1)), g.control_out(f1));
  EXPECT_EQ(g.attr(f1, g.sym("alpha"))->as_float(), 0.5);

  // Attribute values name the copied graphs, not the originals.
  std::vector<OpId> graphs = g.attr_graphs(h1);
  ASSERT_EQ(graphs.size(), 3u);
  OpId sub1 = g.attr(h1, g.sym("sub"))->as_graph();
  EXPECT_NE(sub1, sub);
  EXPECT_EQ(sub1, graphs[0]);
  EXPECT_EQ(g.parent(sub1), h1);
  EXPECT_EQ(g.str(g.graph_namespace(sub1)), "amanda/test");
  const auto& branches = g.attr(h1, g.sym("branches"))->as_list();
  ASSERT_EQ(branches.size(), 2u);
  EXPECT_EQ(branches[0].as_graph(), graphs[1]);
  EXPECT_EQ(branches[1].as_graph(), graphs[2]);
  EXPECT_EQ(g.path(g.first_child(branches[1].as_graph())), "h_1/branches/b1");
  OpId t1 = g.find_op(sub1, "t");
  ASSERT_TRUE(t1);
  EXPECT_EQ(g.producer(in(g, t1, "x")), in(g, h1, "hx"));  // the capture follows the copy

  // Erasing the original leaves the copy whole.
  g.erase_op(h);
  EXPECT_TRUE(g.valid(sub1));
  EXPECT_TRUE(g.valid(t1));
  EXPECT_EQ(g.producer(in(g, t1, "x")), in(g, h1, "hx"));
  Diagnostics d;
  EXPECT_TRUE(verify(g, d)) << d.str();
}

TEST(Clone, AcrossGraphsGivesAnEqualGraph) {
  Graph a;
  build_nested(a);
  OpId extra = a.create_op(a.root(), "Relu", "r", {"x"}, {"y"});
  a.connect(a.output(a.find_op(a.root(), "h"), 0), a.input(extra, 0));
  Graph b;
  b.sym("something else first");  // different symbol numbering
  std::vector<OpId> all = a.children(a.root());
  std::vector<OpId> copy = b.clone_ops(a, all, b.root());
  ASSERT_EQ(copy.size(), 2u);
  EXPECT_THAT(names(b, copy), ElementsAre("h", "r"));
  EXPECT_EQ(first_difference(a, b), "");
  EXPECT_TRUE(equal(a, b));
  EXPECT_EQ(b.op_count(), a.op_count());
  EXPECT_EQ(b.edge_count(), a.edge_count());
  EXPECT_EQ(b.ops_of_type("B1").size(), 1u);
}

TEST(Clone, IntoANestedScopeSuffixesTakenNames) {
  Graph g;
  build_nested(g);
  OpId h = g.find_op(g.root(), "h");
  OpId f_outer = g.create_op(g.root(), "F", "f", {"x"}, {"m"});
  std::vector<OpId> set{f_outer};
  std::vector<OpId> copy = g.clone_subgraph(set, h);
  ASSERT_EQ(copy.size(), 1u);
  EXPECT_EQ(g.path(copy[0]), "h/f_1");
  EXPECT_EQ(g.parent(copy[0]), h);
  EXPECT_THAT(names(g, g.children(h)), ElementsAre("f", "g", "f_1"));
  // With f_1 taken too, the next copy is f_2.
  copy = g.clone_subgraph(set, h);
  EXPECT_EQ(g.path(copy[0]), "h/f_2");
  // In a scope where the name is free it is kept.
  OpId other = g.create_op(g.root(), "O", "other");
  copy = g.clone_subgraph(set, other);
  EXPECT_EQ(g.path(copy[0]), "other/f");
}

TEST(Clone, GeneratedNamesAreGeneratedAfreshAndUnnamedOpsStayUnnamed) {
  Graph g;
  OpId gen = g.create_op(g.root(), "Relu");  // "_0", generated
  OpId anon = g.create_op(g.root(), g.sym("Relu"), 0, /*generate_name=*/false);
  ASSERT_EQ(g.name_str(gen), "_0");
  std::vector<OpId> set{gen, anon};
  std::vector<OpId> c = g.clone_subgraph(set, g.root());
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(g.name_str(c[0]), "_1");
  EXPECT_TRUE(g.name_generated(c[0]));
  EXPECT_EQ(g.name(c[1]), 0u);
  EXPECT_FALSE(g.name_generated(c[1]));
  // In a scope where it is free, a generated name is kept as it was.
  Graph other;
  std::vector<OpId> c2 = other.clone_ops(g, set, other.root());
  EXPECT_EQ(other.name_str(c2[0]), "_0");
  EXPECT_TRUE(other.name_generated(c2[0]));
}

TEST(Clone, EmptyBodyMarkIsCopied) {
  Graph a;
  OpId h = a.create_op(a.root(), "H", "h");
  a.mark_has_body(h);
  EXPECT_TRUE(a.has_body(h));
  Graph b;
  std::vector<OpId> set{h};
  std::vector<OpId> c = b.clone_ops(a, set, b.root());
  EXPECT_TRUE(b.has_body(c[0]));
  EXPECT_THAT(b.children(c[0]), IsEmpty());
  EXPECT_TRUE(equal(a, b));
}

}  // namespace
}  // namespace amanda::ir
