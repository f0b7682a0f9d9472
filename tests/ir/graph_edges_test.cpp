// Edges: connect/disconnect, producer and consumers, replace_all_uses, insert_op_on_edge.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

#include "amanda/ir/graph.h"
#include "ir_test_util.h"

namespace amanda::ir {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using test::in;
using test::out;

TEST(GraphEdges, ConnectAndDisconnect) {
  Graph g;
  OpId a = g.create_op(g.root(), "A", "a", {}, {"y"});
  OpId b = g.create_op(g.root(), "B", "b", {"x"}, {});
  PortId y = out(g, a, "y"), x = in(g, b, "x");
  EdgeId e = g.connect(y, x);
  EXPECT_TRUE(g.valid(e));
  EXPECT_EQ(g.edge_src(e), y);
  EXPECT_EQ(g.edge_dst(e), x);
  EXPECT_FALSE(g.is_control(e));
  EXPECT_EQ(g.edge_scope(e), g.root());
  EXPECT_EQ(g.edge_count(), 1u);
  EXPECT_THAT(g.out_edges(y), ElementsAre(e));
  EXPECT_THAT(g.in_edges(x), ElementsAre(e));
  EXPECT_EQ(g.first_out_edge(y), e);
  EXPECT_EQ(g.next_out_edge(e), EdgeId());
  EXPECT_EQ(g.in_degree(x), 1u);
  EXPECT_EQ(g.out_degree(y), 1u);
  EXPECT_EQ(g.in_degree(y), 0u);
  EXPECT_EQ(g.path(e), "edge a:output y -> b:input x");

  g.disconnect(e);
  EXPECT_FALSE(g.valid(e));
  EXPECT_EQ(g.edge_count(), 0u);
  EXPECT_THAT(g.out_edges(y), IsEmpty());
  EXPECT_THAT(g.in_edges(x), IsEmpty());
  EXPECT_EQ(g.producer(x), PortId());
  EXPECT_THROW(g.disconnect(e), Error);
  EXPECT_THROW(g.disconnect(EdgeId(77)), Error);
  EXPECT_THROW(g.connect(y, PortId(99)), Error);
  EXPECT_THROW(g.connect(PortId(), x), Error);
  EXPECT_EQ(g.edge_count(), 0u);
}

TEST(GraphEdges, ControlEdges) {
  Graph g;
  OpId a = g.create_op(g.root(), "A", "a");
  OpId b = g.create_op(g.root(), "B", "b");
  EdgeId e = g.connect(g.control_out(a), g.control_in(b));
  EXPECT_TRUE(g.is_control(e));
  EXPECT_EQ(g.path(e), "edge a:output ^control -> b:input ^control");
  // A control input port takes many control signals.
  OpId c = g.create_op(g.root(), "C", "c");
  EdgeId e2 = g.connect(g.control_out(c), g.control_in(b));
  EXPECT_THAT(g.in_edges(g.control_in(b)), ElementsAre(e, e2));
  EXPECT_EQ(g.producer(g.control_in(b)), g.control_out(a));
}

TEST(GraphEdges, ProducerAndConsumersInConnectionOrder) {
  Graph g;
  OpId a = g.create_op(g.root(), "A", "a", {}, {"y"});
  std::vector<OpId> users;
  for (const char* n : {"u0", "u1", "u2", "u3"}) users.push_back(g.create_op(g.root(), "U", n, {"x"}, {}));
  PortId y = out(g, a, "y");
  // Connect out of creation order: the consumer order is the connection order.
  EdgeId e2 = g.connect(y, g.input(users[2], 0));
  EdgeId e0 = g.connect(y, g.input(users[0], 0));
  EdgeId e3 = g.connect(y, g.input(users[3], 0));
  EdgeId e1 = g.connect(y, g.input(users[1], 0));
  EXPECT_THAT(test::paths(g, g.consumers(y)), ElementsAre("u2:input x", "u0:input x", "u3:input x", "u1:input x"));
  for (OpId u : users) EXPECT_EQ(g.producer(g.input(u, 0)), y);

  g.disconnect(e0);  // middle
  EXPECT_THAT(g.out_edges(y), ElementsAre(e2, e3, e1));
  g.disconnect(e2);  // head
  EXPECT_THAT(g.out_edges(y), ElementsAre(e3, e1));
  g.disconnect(e1);  // tail
  EXPECT_THAT(g.out_edges(y), ElementsAre(e3));
  EdgeId again = g.connect(y, g.input(users[0], 0));
  EXPECT_THAT(g.out_edges(y), ElementsAre(e3, again));
  EXPECT_THAT(test::paths(g, g.consumers(y)), ElementsAre("u3:input x", "u0:input x"));
  EXPECT_EQ(g.producer(g.input(users[2], 0)), PortId());
  EXPECT_EQ(g.edge_count(), 2u);
}

// The intrusive in/out lists against a plain model, under random connects, disconnects and
// replace_all_uses.
TEST(GraphEdges, EdgeListsMatchAModelUnderRandomEdits) {
  Graph g;
  std::vector<PortId> outs, ins;
  for (int i = 0; i < 6; ++i) {
    OpId op = g.create_op(g.root(), "N", "n" + std::to_string(i), {"a", "b"}, {"y", "z"});
    for (PortId p : g.inputs(op)) ins.push_back(p);
    for (PortId p : g.outputs(op)) outs.push_back(p);
  }
  std::map<uint32_t, std::vector<EdgeId>> model_out, model_in;  // port -> edges in order
  std::vector<EdgeId> live;
  std::mt19937 rng(12345);
  auto erase_from = [](std::vector<EdgeId>& v, EdgeId e) { v.erase(std::find(v.begin(), v.end(), e)); };
  for (int step = 0; step < 3000; ++step) {
    int what = rng() % 10;
    if (what < 5 || live.empty()) {
      PortId s = outs[rng() % outs.size()], d = ins[rng() % ins.size()];
      EdgeId e = g.connect(s, d);
      model_out[s.value].push_back(e);
      model_in[d.value].push_back(e);
      live.push_back(e);
    } else if (what < 9) {
      size_t k = rng() % live.size();
      EdgeId e = live[k];
      model_out[g.edge_src(e).value].erase(
          std::find(model_out[g.edge_src(e).value].begin(), model_out[g.edge_src(e).value].end(), e));
      erase_from(model_in[g.edge_dst(e).value], e);
      g.disconnect(e);
      live.erase(live.begin() + k);
    } else {
      PortId from = outs[rng() % outs.size()], to = outs[rng() % outs.size()];
      g.replace_all_uses(from, to);
      if (from != to) {
        auto& f = model_out[from.value];
        auto& t = model_out[to.value];
        t.insert(t.end(), f.begin(), f.end());
        f.clear();
      }
    }
    if (step % 97 == 0 || step == 2999) {
      ASSERT_EQ(g.edge_count(), live.size()) << step;
      for (PortId p : outs) ASSERT_EQ(g.out_edges(p), model_out[p.value]) << "step " << step << " " << g.path(p);
      for (PortId p : ins) {
        ASSERT_EQ(g.in_edges(p), model_in[p.value]) << "step " << step << " " << g.path(p);
        ASSERT_EQ(g.in_degree(p), model_in[p.value].size());
        PortId want = model_in[p.value].empty() ? PortId() : g.edge_src(model_in[p.value].front());
        ASSERT_EQ(g.producer(p), want);
      }
      for (EdgeId e : live)
        ASSERT_NE(std::find(model_out[g.edge_src(e).value].begin(), model_out[g.edge_src(e).value].end(), e),
                  model_out[g.edge_src(e).value].end());
    }
  }
}

TEST(GraphEdges, ReplaceAllUsesMovesEdgesKeepingIdsAndAttributes) {
  Graph g;
  OpId a = g.create_op(g.root(), "A", "a", {}, {"y"});
  OpId b = g.create_op(g.root(), "B", "b", {}, {"y"});
  OpId c = g.create_op(g.root(), "C", "c", {"x"}, {});
  OpId d = g.create_op(g.root(), "D", "d", {"x"}, {});
  OpId e = g.create_op(g.root(), "E", "e", {"x"}, {});
  PortId ay = out(g, a, "y"), by = out(g, b, "y");
  EdgeId be = g.connect(by, in(g, e, "x"));
  EdgeId ac = g.connect(ay, in(g, c, "x"));
  EdgeId ad = g.connect(ay, in(g, d, "x"));
  g.set_attr(ad, g.sym("tag"), Value("kept"));

  g.replace_all_uses(ay, by);
  EXPECT_THAT(g.consumers(ay), IsEmpty());
  EXPECT_THAT(test::paths(g, g.consumers(by)), ElementsAre("e:input x", "c:input x", "d:input x"));
  EXPECT_THAT(g.out_edges(by), ElementsAre(be, ac, ad));
  EXPECT_EQ(g.producer(in(g, c, "x")), by);
  EXPECT_EQ(g.producer(in(g, d, "x")), by);
  EXPECT_EQ(g.edge_src(ad), by);
  EXPECT_EQ(g.attr(ad, g.sym("tag"))->as_string(), "kept");
  EXPECT_EQ(g.edge_count(), 3u);

  g.replace_all_uses(by, by);  // a no-op
  EXPECT_THAT(g.out_edges(by), ElementsAre(be, ac, ad));
  // Moving back onto an empty port, then disconnecting one, keeps both lists consistent.
  g.replace_all_uses(by, ay);
  g.disconnect(ac);
  EXPECT_THAT(g.out_edges(ay), ElementsAre(be, ad));
  EXPECT_THAT(g.out_edges(by), IsEmpty());
  EXPECT_THROW(g.replace_all_uses(ay, PortId(1000)), Error);
}

TEST(GraphEdges, InsertOpOnEdgeMovesAttributesToTheEdgeReachingTheOldDestination) {
  Graph g;
  OpId a = g.create_op(g.root(), "A", "a", {}, {"y"});
  OpId b = g.create_op(g.root(), "B", "b", {"x"}, {});
  EdgeId e = g.connect(out(g, a, "y"), in(g, b, "x"));
  g.set_attr(e, g.sym("shape"), Value(Value::List{Value(1), Value(3)}));

  OpId r = g.insert_op_on_edge(e, g.sym("Relu"), g.sym("r"), g.sym("in"), g.sym("out"));
  EXPECT_FALSE(g.valid(e));
  EXPECT_EQ(g.parent(r), g.root());
  EXPECT_EQ(g.type_str(r), "Relu");
  EXPECT_EQ(g.name_str(r), "r");
  EXPECT_THAT(g.children(g.root()), ElementsAre(a, b, r));
  ASSERT_EQ(g.inputs(r).size(), 1u);
  ASSERT_EQ(g.outputs(r).size(), 1u);
  EXPECT_EQ(g.producer(in(g, r, "in")), out(g, a, "y"));
  EXPECT_EQ(g.producer(in(g, b, "x")), out(g, r, "out"));
  EXPECT_EQ(g.edge_count(), 2u);
  EdgeId first = g.first_in_edge(in(g, r, "in"));
  EdgeId second = g.first_in_edge(in(g, b, "x"));
  EXPECT_THAT(g.attrs(first), IsEmpty());
  ASSERT_NE(g.attr(second, g.sym("shape")), nullptr);
  EXPECT_EQ(g.attr(second, g.sym("shape"))->as_list().size(), 2u);
  EXPECT_EQ(g.attr(second, g.sym("shape"))->as_list()[1].as_int(), 3);

  // A generated name when none is given; an invalid edge throws.
  OpId r2 = g.insert_op_on_edge(second, g.sym("Neg"), 0, g.sym("i"), g.sym("o"));
  EXPECT_EQ(g.name_str(r2), "_0");
  EXPECT_EQ(g.producer(in(g, b, "x")), out(g, r2, "o"));
  EXPECT_EQ(g.producer(in(g, r2, "i")), out(g, r, "out"));
  EXPECT_EQ(g.attr(g.first_in_edge(in(g, b, "x")), g.sym("shape"))->as_list()[0].as_int(), 1);
  EXPECT_THROW(g.insert_op_on_edge(e, g.sym("X"), 0, g.sym("i"), g.sym("o")), Error);
}

TEST(GraphEdges, InsertOpOnEdgeInsideABodyCreatesTheOpThere) {
  Graph g;
  OpId h = g.create_op(g.root(), "H", "h", {"hx"}, {"hk"});
  OpId f = g.create_op(h, "F", "f", {"x"}, {"m"});
  EdgeId in_edge = g.connect(in(g, h, "hx"), in(g, f, "x"));
  EdgeId out_edge = g.connect(out(g, f, "m"), out(g, h, "hk"));
  EXPECT_EQ(g.edge_scope(in_edge), h);
  EXPECT_EQ(g.edge_scope(out_edge), h);
  OpId p = g.insert_op_on_edge(in_edge, g.sym("Pre"), g.sym("pre"), g.sym("i"), g.sym("o"));
  OpId q = g.insert_op_on_edge(out_edge, g.sym("Post"), g.sym("post"), g.sym("i"), g.sym("o"));
  EXPECT_EQ(g.parent(p), h);
  EXPECT_EQ(g.parent(q), h);
  EXPECT_EQ(g.path(q), "h/post");
  EXPECT_THAT(g.children(h), ElementsAre(f, p, q));
  EXPECT_EQ(g.producer(in(g, p, "i")), in(g, h, "hx"));
  EXPECT_EQ(g.producer(in(g, f, "x")), out(g, p, "o"));
  EXPECT_EQ(g.producer(out(g, h, "hk")), out(g, q, "o"));
  EXPECT_EQ(g.producer(in(g, q, "i")), out(g, f, "m"));
}

}  // namespace
}  // namespace amanda::ir
