// Ops, names, ports and paths of ir::Graph.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "amanda/ir/graph.h"
#include "ir_test_util.h"

namespace amanda::ir {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using test::in;
using test::names;
using test::out;

TEST(GraphOps, EmptyGraphHasOnlyTheRoot) {
  Graph g;
  EXPECT_EQ(g.root(), OpId(1));
  EXPECT_EQ(g.root_kind(), Graph::RootKind::Graph);
  EXPECT_TRUE(g.valid(g.root()));
  EXPECT_TRUE(g.is_graph(g.root()));
  EXPECT_TRUE(g.has_body(g.root()));
  EXPECT_EQ(g.op_count(), 0u);
  EXPECT_EQ(g.edge_count(), 0u);
  EXPECT_THAT(g.children(g.root()), IsEmpty());
  EXPECT_EQ(g.path(g.root()), "<graph>");
  EXPECT_FALSE(g.valid(OpId()));
  EXPECT_FALSE(g.valid(OpId(2)));
}

TEST(GraphOps, OpRootCountsAsAnOp) {
  Graph g(Graph::RootKind::Op);
  EXPECT_FALSE(g.is_graph(g.root()));
  EXPECT_EQ(g.op_count(), 1u);
  EXPECT_EQ(g.path(g.root()), "<op>");
  g.set_name(g.root(), g.sym("h"));
  EXPECT_EQ(g.path(g.root()), "h");
  OpId f = g.create_op(g.root(), "F", "f");
  EXPECT_EQ(g.op_count(), 2u);
  EXPECT_EQ(g.path(f), "f");  // the root, op or graph, is never part of the paths below it
}

TEST(GraphOps, CreateOpAppendsToItsScopeInOrder) {
  Graph g;
  OpId a = g.create_op(g.root(), "Conv", "a");
  OpId b = g.create_op(g.root(), "Relu", "b");
  OpId c = g.create_op(g.root(), "Conv", "c");
  EXPECT_THAT(g.children(g.root()), ElementsAre(a, b, c));
  EXPECT_EQ(g.first_child(g.root()), a);
  EXPECT_EQ(g.next_sibling(a), b);
  EXPECT_EQ(g.next_sibling(c), OpId());
  EXPECT_EQ(g.child_count(g.root()), 3u);
  EXPECT_EQ(g.parent(b), g.root());
  EXPECT_EQ(g.type_str(b), "Relu");
  EXPECT_EQ(g.name_str(c), "c");
  EXPECT_FALSE(g.name_generated(a));
  EXPECT_EQ(g.op_count(), 3u);
  EXPECT_LT(a.value, b.value);
  EXPECT_LT(b.value, c.value);
  EXPECT_FALSE(g.is_graph(a));
  EXPECT_FALSE(g.has_body(a));
}

TEST(GraphOps, CreateOpInAnInvalidScopeThrows) {
  Graph g;
  EXPECT_THROW(g.create_op(OpId(7), "X", "x"), Error);
  OpId a = g.create_op(g.root(), "X", "a");
  g.erase_op(a);
  EXPECT_THROW(g.create_op(a, "X", "x"), Error);
  EXPECT_EQ(g.op_count(), 0u);
}

TEST(GraphOps, GeneratedNamesCountPerScopeAndSkipTakenNames) {
  Graph g;
  OpId a = g.create_op(g.root(), "Relu");
  OpId b = g.create_op(g.root(), "Relu");
  EXPECT_EQ(g.name_str(a), "_0");
  EXPECT_EQ(g.name_str(b), "_1");
  EXPECT_TRUE(g.name_generated(a));
  EXPECT_TRUE(g.name_generated(b));
  g.create_op(g.root(), "Relu", "_2");
  OpId d = g.create_op(g.root(), "Relu");
  EXPECT_EQ(g.name_str(d), "_3");
  // Another scope starts again at _0.
  OpId inner = g.create_op(a, "Relu");
  EXPECT_EQ(g.name_str(inner), "_0");
  EXPECT_EQ(g.path(inner), "_0/_0");
  EXPECT_EQ(g.find_op(g.root(), "_3"), d);
}

TEST(GraphOps, UngeneratedAnonymousOpStaysUnnamed) {
  Graph g;
  OpId a = g.create_op(g.root(), g.sym("Relu"), 0, /*generate_name=*/false);
  EXPECT_EQ(g.name(a), 0u);
  EXPECT_FALSE(g.name_generated(a));
  EXPECT_EQ(g.path(a), "<op>");
  EXPECT_EQ(g.find_op(g.root(), Symbol(0)), OpId());
  g.set_name(a, g.sym("named"));
  EXPECT_EQ(g.find_op(g.root(), "named"), a);
}

TEST(GraphOps, SetNameReindexesAndClearsTheGeneratedFlag) {
  Graph g;
  OpId a = g.create_op(g.root(), "Relu");
  ASSERT_EQ(g.find_op(g.root(), "_0"), a);
  g.set_name(a, g.sym("relu1"));
  EXPECT_EQ(g.name_str(a), "relu1");
  EXPECT_FALSE(g.name_generated(a));
  EXPECT_EQ(g.find_op(g.root(), "_0"), OpId());
  EXPECT_EQ(g.find_op(g.root(), "relu1"), a);
  g.set_name_generated(a, true);
  EXPECT_TRUE(g.name_generated(a));
}

TEST(GraphOps, FindOpIsPerScope) {
  Graph g;
  OpId f_outer = g.create_op(g.root(), "F", "f");
  OpId h = g.create_op(g.root(), "H", "h");
  OpId f_inner = g.create_op(h, "F", "f");
  EXPECT_EQ(g.find_op(g.root(), "f"), f_outer);
  EXPECT_EQ(g.find_op(h, "f"), f_inner);
  EXPECT_EQ(g.find_op(g.root(), g.sym("h")), h);
  EXPECT_EQ(g.find_op(h, "h"), OpId());
  EXPECT_EQ(g.find_op(g.root(), "never-interned"), OpId());
  EXPECT_EQ(g.path(f_inner), "h/f");
}

TEST(GraphOps, DuplicateNamesStayFindableAfterEraseOrRename) {
  Graph g;
  OpId x1 = g.create_op(g.root(), "X", "x");
  OpId x2 = g.create_op(g.root(), "X", "x");
  OpId x3 = g.create_op(g.root(), "X", "x");
  EXPECT_EQ(g.find_op(g.root(), "x"), x1);
  g.erase_op(x1);
  EXPECT_EQ(g.find_op(g.root(), "x"), x2);
  g.set_name(x2, g.sym("y"));
  EXPECT_EQ(g.find_op(g.root(), "x"), x3);
  EXPECT_EQ(g.find_op(g.root(), "y"), x2);
  g.erase_op(x3);
  EXPECT_EQ(g.find_op(g.root(), "x"), OpId());
  // A new op of that name is found again.
  OpId x4 = g.create_op(g.root(), "X", "x");
  EXPECT_EQ(g.find_op(g.root(), "x"), x4);
}

TEST(GraphOps, DuplicateNamesInsideAnErasedBodyDoNotLeakIntoTheIndex) {
  Graph g;
  OpId h = g.create_op(g.root(), "H", "h");
  g.create_op(h, "X", "x");
  g.create_op(h, "X", "x");
  g.erase_op(h);
  // The outer scope still works, with and without duplicates.
  OpId a = g.create_op(g.root(), "X", "x");
  OpId b = g.create_op(g.root(), "X", "x");
  EXPECT_EQ(g.find_op(g.root(), "x"), a);
  g.erase_op(a);
  EXPECT_EQ(g.find_op(g.root(), "x"), b);
  g.erase_op(b);
  EXPECT_EQ(g.find_op(g.root(), "x"), OpId());
}

TEST(GraphOps, EraseOpRemovesItsEdgesAndNeverReusesIds) {
  Graph g;
  OpId a = g.create_op(g.root(), "A", "a", {}, {"y"});
  OpId b = g.create_op(g.root(), "B", "b", {"x"}, {"y"});
  OpId c = g.create_op(g.root(), "C", "c", {"x"}, {});
  EdgeId ab = g.connect(out(g, a, "y"), in(g, b, "x"));
  EdgeId bc = g.connect(out(g, b, "y"), in(g, c, "x"));
  EdgeId ctrl = g.connect(g.control_out(a), g.control_in(b));
  PortId bx = in(g, b, "x");
  ASSERT_EQ(g.edge_count(), 3u);
  size_t op_bound = g.id_bound(), port_bound = g.port_id_bound(), edge_bound = g.edge_id_bound();

  g.erase_op(b);
  EXPECT_FALSE(g.valid(b));
  EXPECT_FALSE(g.valid(bx));
  EXPECT_FALSE(g.valid(ab));
  EXPECT_FALSE(g.valid(bc));
  EXPECT_FALSE(g.valid(ctrl));
  EXPECT_EQ(g.edge_count(), 0u);
  EXPECT_EQ(g.op_count(), 2u);
  EXPECT_THAT(g.children(g.root()), ElementsAre(a, c));
  EXPECT_THAT(g.consumers(out(g, a, "y")), IsEmpty());
  EXPECT_EQ(g.out_degree(g.control_out(a)), 0u);
  EXPECT_EQ(g.producer(in(g, c, "x")), PortId());
  EXPECT_EQ(g.find_op(g.root(), "b"), OpId());
  // Survivors keep their ids; new entities get fresh ones.
  EXPECT_EQ(g.find_op(g.root(), "a"), a);
  EXPECT_EQ(g.find_op(g.root(), "c"), c);
  OpId d = g.create_op(g.root(), "D", "d", {"x"}, {});
  EXPECT_EQ(d.value, op_bound);
  EXPECT_EQ(in(g, d, "x").value, port_bound);
  EdgeId e = g.connect(out(g, a, "y"), in(g, d, "x"));
  EXPECT_EQ(e.value, edge_bound);
  EXPECT_EQ(g.edge_count(), 1u);
}

TEST(GraphOps, EraseOpErasesBodyAndAttributeGraphs) {
  Graph g;
  OpId src = g.create_op(g.root(), "Src", "src", {}, {"y"});
  OpId h = g.create_op(g.root(), "H", "h", {"hx"}, {"hk"});
  OpId f = g.create_op(h, "F", "f", {"x"}, {"m"});
  OpId k = g.create_op(h, "G", "g", {"z"}, {"k"});
  OpId deep = g.create_op(f, "D", "deep");
  OpId sub = g.create_attr_graph(h, g.sym("branch"));
  g.set_attr(h, g.sym("branch"), Value::graph(sub));
  OpId t = g.create_op(sub, "T", "t", {"x"}, {});
  OpId sink = g.create_op(g.root(), "Sink", "sink", {"x"}, {});
  g.connect(out(g, src, "y"), in(g, h, "hx"));
  g.connect(in(g, h, "hx"), in(g, f, "x"));
  g.connect(out(g, f, "m"), in(g, k, "z"));
  g.connect(out(g, k, "k"), out(g, h, "hk"));
  g.connect(in(g, h, "hx"), in(g, t, "x"));  // explicit capture
  g.connect(out(g, h, "hk"), in(g, sink, "x"));
  ASSERT_EQ(g.op_count(), 7u);  // src h f g deep t sink; the attribute graph is not an op
  ASSERT_EQ(g.edge_count(), 6u);

  g.erase_op(h);
  for (OpId x : {h, f, k, deep, sub, t}) EXPECT_FALSE(g.valid(x)) << x.value;
  EXPECT_EQ(g.op_count(), 2u);
  EXPECT_EQ(g.edge_count(), 0u);
  EXPECT_THAT(g.children(g.root()), ElementsAre(src, sink));
  EXPECT_EQ(g.out_degree(out(g, src, "y")), 0u);
  EXPECT_EQ(g.producer(in(g, sink, "x")), PortId());
}

TEST(GraphOps, EraseOpRejectsTheRootAndDeadOps) {
  Graph g;
  EXPECT_THROW(g.erase_op(g.root()), Error);
  OpId a = g.create_op(g.root(), "A", "a");
  g.erase_op(a);
  EXPECT_THROW(g.erase_op(a), Error);
  EXPECT_THROW(g.erase_op(OpId(999)), Error);
  EXPECT_EQ(g.op_count(), 0u);
  EXPECT_TRUE(g.valid(g.root()));
}

TEST(GraphOps, EraseManyOpsOfOneScopeKeepsTheRestIntact) {
  // Erase every other op of a wide scope; the others keep their names, order and edges.
  Graph g;
  std::vector<OpId> ops;
  for (int i = 0; i < 2000; ++i)
    ops.push_back(g.create_op(g.root(), "N", "n" + std::to_string(i), {"x"}, {"y"}));
  for (int i = 0; i + 1 < 2000; ++i) g.connect(g.output(ops[i], 0), g.input(ops[i + 1], 0));
  for (int i = 0; i < 2000; i += 2) g.erase_op(ops[i]);
  EXPECT_EQ(g.op_count(), 1000u);
  EXPECT_EQ(g.edge_count(), 0u);  // every edge touched an even op
  std::vector<OpId> expect;
  for (int i = 1; i < 2000; i += 2) expect.push_back(ops[i]);
  EXPECT_EQ(g.children(g.root()), expect);
  for (int i = 0; i < 2000; ++i)
    EXPECT_EQ(g.find_op(g.root(), "n" + std::to_string(i)), i % 2 ? ops[i] : OpId()) << i;
}

TEST(GraphOps, OpsOfTypeFindsNestedOpsInIdOrder) {
  Graph g;
  OpId c1 = g.create_op(g.root(), "Conv", "c1");
  g.create_op(g.root(), "Relu", "r");
  OpId h = g.create_op(g.root(), "H", "h");
  OpId c2 = g.create_op(h, "Conv", "c2");
  OpId sub = g.create_attr_graph(h, g.sym("body"));
  OpId c3 = g.create_op(sub, "Conv", "c3");
  g.set_graph_namespace(sub, g.sym("Conv"));  // a graph node is never an op of a type
  EXPECT_THAT(g.ops_of_type("Conv"), ElementsAre(c1, c2, c3));
  EXPECT_THAT(g.ops_of_type(g.sym("H")), ElementsAre(h));
  EXPECT_THAT(g.ops_of_type("NeverSeen"), IsEmpty());
  g.erase_op(c1);
  EXPECT_THAT(g.ops_of_type("Conv"), ElementsAre(c2, c3));
  std::vector<OpId> all;
  g.for_each_op([&](OpId op) { all.push_back(op); });
  EXPECT_EQ(all.size(), g.op_count());
}

TEST(GraphOps, MoveBeforeReordersTheBody) {
  Graph g;
  OpId a = g.create_op(g.root(), "A", "a");
  OpId b = g.create_op(g.root(), "B", "b");
  OpId c = g.create_op(g.root(), "C", "c");
  g.move_before(c, a);
  EXPECT_THAT(g.children(g.root()), ElementsAre(c, a, b));
  g.move_before(c, OpId());
  EXPECT_THAT(g.children(g.root()), ElementsAre(a, b, c));
  g.move_before(a, c);
  EXPECT_THAT(g.children(g.root()), ElementsAre(b, a, c));
  g.move_before(a, a);  // before itself: stays
  EXPECT_THAT(g.children(g.root()), ElementsAre(b, a, c));
  g.move_before(c, OpId());  // already last
  EXPECT_THAT(g.children(g.root()), ElementsAre(b, a, c));
  EXPECT_EQ(g.next_sibling(c), OpId());
}

// ---------------------------------------------------------------- ports

TEST(GraphPorts, PortsHaveIndexDirectionAndName) {
  Graph g;
  OpId f = g.create_op(g.root(), "F", "f", {"x", "y"}, {"m", "n"});
  ASSERT_EQ(g.inputs(f).size(), 2u);
  ASSERT_EQ(g.outputs(f).size(), 2u);
  PortId y = g.input(f, 1);
  EXPECT_EQ(g.port_name_str(y), "y");
  EXPECT_EQ(g.port_index(y), 1u);
  EXPECT_EQ(g.port_dir(y), PortDir::In);
  EXPECT_EQ(g.port_op(y), f);
  EXPECT_FALSE(g.is_control(y));
  PortId m = g.output(f, 0);
  EXPECT_EQ(g.port_dir(m), PortDir::Out);
  EXPECT_EQ(g.port_index(m), 0u);
  EXPECT_EQ(in(g, f, "y"), y);
  EXPECT_EQ(out(g, f, "m"), m);
  EXPECT_EQ(g.find_port(f, PortDir::Out, g.sym("n")), g.output(f, 1));
  EXPECT_EQ(in(g, f, "m"), PortId());  // m is an output
  EXPECT_EQ(in(g, f, "zzz"), PortId());
  PortId z = g.add_input(f, g.sym("z"));
  EXPECT_EQ(g.port_index(z), 2u);
  EXPECT_EQ(g.ports(f, PortDir::In).back(), z);
  EXPECT_THROW(g.add_input(OpId(99), g.sym("q")), Error);
}

TEST(GraphPorts, ErasePortShiftsLaterPortsDown) {
  Graph g;
  OpId src = g.create_op(g.root(), "S", "s", {}, {"y"});
  OpId f = g.create_op(g.root(), "F", "f", {"a", "b", "c", "d"}, {});
  PortId a = in(g, f, "a"), b = in(g, f, "b"), c = in(g, f, "c"), d = in(g, f, "d");
  EdgeId eb = g.connect(out(g, src, "y"), b);
  EdgeId ec = g.connect(out(g, src, "y"), c);
  g.set_attr(b, g.sym("note"), Value("gone"));

  g.erase_port(b);
  EXPECT_FALSE(g.valid(b));
  EXPECT_FALSE(g.valid(eb));
  EXPECT_TRUE(g.valid(ec));
  EXPECT_EQ(g.edge_count(), 1u);
  EXPECT_THAT(g.inputs(f), ElementsAre(a, c, d));
  EXPECT_EQ(g.port_index(a), 0u);
  EXPECT_EQ(g.port_index(c), 1u);
  EXPECT_EQ(g.port_index(d), 2u);
  EXPECT_EQ(g.input(f, 1), c);
  EXPECT_EQ(in(g, f, "b"), PortId());
  EXPECT_THAT(g.consumers(out(g, src, "y")), ElementsAre(c));

  // Grow again past the old capacity, then erase the first and the last.
  PortId e = g.add_input(f, g.sym("e"));
  PortId h = g.add_input(f, g.sym("h"));
  PortId i = g.add_input(f, g.sym("i"));
  EXPECT_THAT(g.inputs(f), ElementsAre(a, c, d, e, h, i));
  EXPECT_EQ(g.port_index(i), 5u);
  g.erase_port(a);
  g.erase_port(i);
  EXPECT_THAT(g.inputs(f), ElementsAre(c, d, e, h));
  for (uint32_t k = 0; k < 4; ++k) EXPECT_EQ(g.port_index(g.input(f, k)), k);
  EXPECT_TRUE(g.valid(ec));
  EXPECT_THROW(g.erase_port(a), Error);
}

TEST(GraphPorts, PortListsOfManyOpsDoNotOverlap) {
  // Ports of interleaved ops share one slot arena; each op must keep its own list.
  Graph g;
  OpId p = g.create_op(g.root(), "P", "p");
  OpId q = g.create_op(g.root(), "Q", "q");
  std::vector<PortId> ps, qs;
  for (int i = 0; i < 40; ++i) {
    ps.push_back(g.add_input(p, g.sym("p" + std::to_string(i))));
    qs.push_back(g.add_input(q, g.sym("q" + std::to_string(i))));
    if (i % 7 == 3) {
      g.erase_port(ps[i / 2]);
      ps.erase(ps.begin() + i / 2);
    }
  }
  EXPECT_EQ(std::vector<PortId>(g.inputs(p).begin(), g.inputs(p).end()), ps);
  EXPECT_EQ(std::vector<PortId>(g.inputs(q).begin(), g.inputs(q).end()), qs);
  for (size_t k = 0; k < ps.size(); ++k) EXPECT_EQ(g.port_index(ps[k]), k);
}

TEST(GraphPorts, ControlPortsAreCreatedLazily) {
  Graph g;
  OpId f = g.create_op(g.root(), "F", "f", {"x"}, {"m"});
  EXPECT_EQ(g.find_control(f, PortDir::In), PortId());
  EXPECT_EQ(g.find_control(f, PortDir::Out), PortId());
  EXPECT_EQ(g.find_port(f, PortDir::In, g.control_symbol()), PortId());
  size_t bound = g.port_id_bound();

  PortId ci = g.control_in(f);
  EXPECT_EQ(g.port_id_bound(), bound + 1);
  EXPECT_TRUE(g.valid(ci));
  EXPECT_TRUE(g.is_control(ci));
  EXPECT_EQ(g.port_dir(ci), PortDir::In);
  EXPECT_EQ(g.port_op(ci), f);
  EXPECT_EQ(g.port_name_str(ci), "^control");
  EXPECT_EQ(g.control_in(f), ci);  // created once
  EXPECT_EQ(g.find_control(f, PortDir::In), ci);
  EXPECT_EQ(g.find_port(f, PortDir::In, g.sym("^control")), ci);
  EXPECT_EQ(g.find_control(f, PortDir::Out), PortId());  // the other one is still absent
  EXPECT_EQ(g.inputs(f).size(), 1u);                     // not a data port

  PortId co = g.control_out(f);
  EXPECT_NE(co, ci);
  EXPECT_EQ(g.port_dir(co), PortDir::Out);
  EXPECT_EQ(g.find_port(f, PortDir::Out, g.control_symbol()), co);
  EXPECT_EQ(g.outputs(f).size(), 1u);
  EXPECT_EQ(g.path(ci), "f:input ^control");
  EXPECT_EQ(g.path(co), "f:output ^control");

  g.erase_port(ci);
  EXPECT_FALSE(g.valid(ci));
  EXPECT_EQ(g.find_control(f, PortDir::In), PortId());
  PortId ci2 = g.control_in(f);
  EXPECT_NE(ci2, ci);
  EXPECT_TRUE(g.valid(ci2));
}

TEST(GraphPorts, SetPortNameAndGeneratedFlag) {
  Graph g;
  OpId f = g.create_op(g.root(), "F", "f", {"x"}, {});
  PortId x = in(g, f, "x");
  g.set_port_name_generated(x, true);
  EXPECT_TRUE(g.port_name_generated(x));
  g.set_port_name(x, g.sym("renamed"));
  EXPECT_FALSE(g.port_name_generated(x));
  EXPECT_EQ(in(g, f, "renamed"), x);
  EXPECT_EQ(in(g, f, "x"), PortId());
}

// ---------------------------------------------------------------- paths

TEST(GraphPaths, PathsNameNestedOpsPortsAndEdges) {
  Graph g;
  OpId h = g.create_op(g.root(), "H", "h", {"hx", "hy"}, {"hk"});
  OpId f = g.create_op(h, "F", "f", {"x", "y"}, {"m", "n"});
  EdgeId e = g.connect(in(g, h, "hx"), in(g, f, "x"));
  EXPECT_EQ(g.path(h), "h");
  EXPECT_EQ(g.path(f), "h/f");
  EXPECT_EQ(g.path(in(g, f, "x")), "h/f:input x");
  EXPECT_EQ(g.path(out(g, f, "m")), "h/f:output m");
  EXPECT_EQ(g.path(out(g, h, "hk")), "h:output hk");
  EXPECT_EQ(g.path(g.control_out(f)), "h/f:output ^control");
  EXPECT_EQ(g.path(e), "edge h:input hx -> h/f:input x");
  // The root's name is not part of the paths below it.
  g.set_name(g.root(), g.sym("net"));
  EXPECT_EQ(g.path(g.root()), "net");
  EXPECT_EQ(g.path(f), "h/f");
  // Attribute graphs are a level of the path, named or not.
  OpId named = g.create_attr_graph(f, g.sym("then_branch"));
  OpId t = g.create_op(named, "T", "t", {"a"}, {});
  EXPECT_EQ(g.path(named), "h/f/then_branch");
  EXPECT_EQ(g.path(in(g, t, "a")), "h/f/then_branch/t:input a");
  OpId anon = g.create_attr_graph(f, 0);
  OpId u = g.create_op(anon, "U", "u");
  EXPECT_EQ(g.path(u), "h/f/<graph>/u");
}

}  // namespace
}  // namespace amanda::ir
