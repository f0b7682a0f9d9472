// Subgraph boundary, replace_subgraph (by one op and by a graph).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <utility>

#include "amanda/ir/equal.h"
#include "amanda/ir/graph.h"
#include "amanda/ir/verify.h"
#include "ir_test_util.h"

namespace amanda::ir {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using test::all_edges;
using test::in;
using test::names;
using test::out;
using test::paths;

using PortMap = std::vector<std::pair<PortId, PortId>>;
using IndexMap = std::vector<std::pair<PortId, size_t>>;

// src -> A -> B -> {sink1, sink2}, with pre ^-> A and B ^-> post; A ^-> B is internal.
struct Chain {
  Graph g;
  OpId src, a, b, sink1, sink2, pre, post;
  Chain() {
    OpId r = g.root();
    src = g.create_op(r, "Src", "src", {}, {"y"});
    a = g.create_op(r, "A", "A", {"x"}, {"m"});
    b = g.create_op(r, "B", "B", {"x"}, {"m"});
    sink1 = g.create_op(r, "Sink", "sink1", {"x"}, {});
    sink2 = g.create_op(r, "Sink", "sink2", {"x"}, {});
    pre = g.create_op(r, "Pre", "pre");
    post = g.create_op(r, "Post", "post");
    g.connect(out(g, src, "y"), in(g, a, "x"));
    g.connect(out(g, a, "m"), in(g, b, "x"));
    g.connect(out(g, b, "m"), in(g, sink1, "x"));
    g.connect(out(g, b, "m"), in(g, sink2, "x"));
    g.connect(g.control_out(pre), g.control_in(a));
    g.connect(g.control_out(b), g.control_in(post));
    g.connect(g.control_out(a), g.control_in(b));
  }
};

TEST(Boundary, PortsFedFromOrFeedingOutsideTheSet) {
  Chain c;
  std::vector<OpId> set{c.a, c.b};
  SubgraphBoundary bd = c.g.boundary(set);
  EXPECT_THAT(paths(c.g, bd.inputs), ElementsAre("A:input x"));
  EXPECT_THAT(paths(c.g, bd.outputs), ElementsAre("B:output m"));
  std::vector<OpId> only_a{c.a};
  SubgraphBoundary ba = c.g.boundary(only_a);
  EXPECT_THAT(paths(c.g, ba.inputs), ElementsAre("A:input x"));
  EXPECT_THAT(paths(c.g, ba.outputs), ElementsAre("A:output m"));
}

TEST(ReplaceSubgraphByOp, RewiresBoundaryAndMovesCrossingControlEdges) {
  Chain c;
  Graph& g = c.g;
  OpId f = g.create_op(g.root(), "Fused", "fused", {"i"}, {"o"});
  std::vector<OpId> set{c.a, c.b};
  PortMap im{{in(g, c.a, "x"), in(g, f, "i")}};
  PortMap om{{out(g, c.b, "m"), out(g, f, "o")}};
  g.replace_subgraph(set, f, im, om);

  EXPECT_FALSE(g.valid(c.a));
  EXPECT_FALSE(g.valid(c.b));
  EXPECT_THAT(names(g, g.children(g.root())), ElementsAre("src", "sink1", "sink2", "pre", "post", "fused"));
  EXPECT_EQ(g.producer(in(g, f, "i")), out(g, c.src, "y"));
  EXPECT_THAT(paths(g, g.consumers(out(g, f, "o"))), ElementsAre("sink1:input x", "sink2:input x"));
  EXPECT_THAT(paths(g, g.consumers(g.control_out(c.pre))), ElementsAre("fused:input ^control"));
  EXPECT_THAT(paths(g, g.consumers(g.control_out(f))), ElementsAre("post:input ^control"));
  EXPECT_EQ(g.in_degree(g.control_in(f)), 1u);  // the internal A ^-> B edge is not kept
  EXPECT_EQ(g.op_count(), 6u);
  EXPECT_EQ(g.edge_count(), 5u);
  Diagnostics d;
  EXPECT_TRUE(verify(g, d)) << d.str();
}

TEST(ReplaceSubgraphByOp, KeepsAttributesOfTheRewiredEdges) {
  Chain c;
  Graph& g = c.g;
  g.set_attr(g.first_in_edge(in(g, c.a, "x")), g.sym("shape"), Value("in"));
  g.set_attr(g.first_in_edge(in(g, c.sink2, "x")), g.sym("shape"), Value("out2"));
  OpId f = g.create_op(g.root(), "Fused", "fused", {"i"}, {"o"});
  std::vector<OpId> set{c.a, c.b};
  PortMap im{{in(g, c.a, "x"), in(g, f, "i")}};
  PortMap om{{out(g, c.b, "m"), out(g, f, "o")}};
  g.replace_subgraph(set, f, im, om);
  const Value* vin = g.attr(g.first_in_edge(in(g, f, "i")), g.sym("shape"));
  const Value* v2 = g.attr(g.first_in_edge(in(g, c.sink2, "x")), g.sym("shape"));
  ASSERT_NE(vin, nullptr);
  ASSERT_NE(v2, nullptr);
  EXPECT_EQ(vin->as_string(), "in");
  EXPECT_EQ(v2->as_string(), "out2");
  EXPECT_THAT(g.attrs(g.first_in_edge(in(g, c.sink1, "x"))), IsEmpty());
}

TEST(ReplaceSubgraphByOp, ControlEdgesFromOneSourceToManyOpsOfTheSetMergeIntoOne) {
  Chain c;
  Graph& g = c.g;
  g.connect(g.control_out(c.pre), g.control_in(c.b));
  g.connect(g.control_out(c.a), g.control_in(c.post));
  OpId f = g.create_op(g.root(), "Fused", "fused", {"i"}, {"o"});
  std::vector<OpId> set{c.a, c.b};
  PortMap im{{in(g, c.a, "x"), in(g, f, "i")}};
  PortMap om{{out(g, c.b, "m"), out(g, f, "o")}};
  g.replace_subgraph(set, f, im, om);
  EXPECT_EQ(g.out_degree(g.control_out(c.pre)), 1u);
  EXPECT_EQ(g.in_degree(g.control_in(c.post)), 1u);
  EXPECT_EQ(g.producer(g.control_in(c.post)), g.control_out(f));
}

// Everything observable about the chain's wiring, to show that a failed call changed nothing.
std::vector<std::string> snapshot(const Graph& g) {
  std::vector<std::string> s = all_edges(g);
  s.push_back("ops " + std::to_string(g.op_count()));
  for (OpId op : g.children(g.root())) s.push_back(g.path(op));
  return s;
}

TEST(ReplaceSubgraphByOp, UnmappedBoundaryPortThrowsAndChangesNothing) {
  Chain c;
  Graph& g = c.g;
  OpId f = g.create_op(g.root(), "Fused", "fused", {"i"}, {"o"});
  auto before = snapshot(g);
  std::vector<OpId> set{c.a, c.b};
  PortMap im{{in(g, c.a, "x"), in(g, f, "i")}};
  PortMap none;
  try {
    g.replace_subgraph(set, f, im, none);
    ADD_FAILURE() << "no exception";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("boundary output B:output m is not mapped"));
  }
  EXPECT_EQ(snapshot(g), before);
  try {
    g.replace_subgraph(set, f, none, none);
    ADD_FAILURE() << "no exception";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("boundary input A:input x is not mapped"));
  }
  EXPECT_EQ(snapshot(g), before);
  EXPECT_TRUE(g.valid(c.a));
  EXPECT_EQ(g.edge_count(), 7u);
  EXPECT_EQ(g.find_control(f, PortDir::In), PortId());
}

TEST(ReplaceSubgraphByOp, MappingToAPortThatIsNotTheReplacementsThrowsAndChangesNothing) {
  Chain c;
  Graph& g = c.g;
  OpId f = g.create_op(g.root(), "Fused", "fused", {"i"}, {"o"});
  auto before = snapshot(g);
  std::vector<OpId> set{c.a, c.b};
  PortMap good_in{{in(g, c.a, "x"), in(g, f, "i")}};
  PortMap good_out{{out(g, c.b, "m"), out(g, f, "o")}};
  // An input mapped to an output port, to a port of another op, to an erased port.
  PortMap wrong_dir{{in(g, c.a, "x"), out(g, f, "o")}};
  PortMap other_op{{out(g, c.b, "m"), out(g, c.src, "y")}};
  PortId gone = g.add_output(f, g.sym("gone"));
  g.erase_port(gone);
  PortMap erased{{out(g, c.b, "m"), gone}};
  EXPECT_THROW(g.replace_subgraph(set, f, wrong_dir, good_out), Error);
  EXPECT_EQ(snapshot(g), before);
  EXPECT_THROW(g.replace_subgraph(set, f, good_in, other_op), Error);
  EXPECT_EQ(snapshot(g), before);
  EXPECT_THROW(g.replace_subgraph(set, f, good_in, erased), Error);
  EXPECT_EQ(snapshot(g), before);
}

TEST(ReplaceSubgraphByOp, RejectsOpsOfDifferentScopesAndAForeignReplacement) {
  Chain c;
  Graph& g = c.g;
  OpId h = g.create_op(g.root(), "H", "h");
  OpId inner = g.create_op(h, "I", "inner", {"x"}, {"m"});
  OpId f = g.create_op(g.root(), "Fused", "fused", {"i"}, {"o"});
  OpId f_inner = g.create_op(h, "Fused", "f_inner", {"i"}, {"o"});
  auto before = snapshot(g);
  std::vector<OpId> mixed{c.a, inner};
  std::vector<OpId> set{c.a};
  std::vector<OpId> empty;
  // Complete maps, so that only the scope rule can make these calls fail.
  PortMap im{{in(g, c.a, "x"), in(g, f, "i")}};
  PortMap om{{out(g, c.a, "m"), out(g, f, "o")}};
  PortMap im_inner{{in(g, c.a, "x"), in(g, f_inner, "i")}};
  PortMap om_inner{{out(g, c.a, "m"), out(g, f_inner, "o")}};
  EXPECT_THROW(g.replace_subgraph(mixed, f, im, om), Error);
  EXPECT_THROW(g.replace_subgraph(set, f_inner, im_inner, om_inner), Error);
  EXPECT_THROW(g.replace_subgraph(empty, f, im, om), Error);
  EXPECT_EQ(snapshot(g), before);
}

TEST(ReplaceSubgraphByOp, WorksInsideABodyWithTheOwnersPortsAsBoundary) {
  Graph g;
  OpId h = g.create_op(g.root(), "H", "h", {"hx"}, {"hk"});
  OpId p = g.create_op(h, "P", "p", {"x"}, {"y"});
  OpId q = g.create_op(h, "Q", "q", {"x"}, {"y"});
  g.connect(in(g, h, "hx"), in(g, p, "x"));
  g.connect(out(g, p, "y"), in(g, q, "x"));
  g.connect(out(g, q, "y"), out(g, h, "hk"));
  OpId f = g.create_op(h, "F", "f", {"i"}, {"o"});
  std::vector<OpId> set{p, q};
  PortMap im{{in(g, p, "x"), in(g, f, "i")}};
  PortMap om{{out(g, q, "y"), out(g, f, "o")}};
  g.replace_subgraph(set, f, im, om);
  EXPECT_THAT(g.children(h), ElementsAre(f));
  EXPECT_EQ(g.producer(in(g, f, "i")), in(g, h, "hx"));
  EXPECT_EQ(g.producer(out(g, h, "hk")), out(g, f, "o"));
  EXPECT_EQ(g.edge_count(), 2u);
  Diagnostics d;
  EXPECT_TRUE(verify(g, d)) << d.str();
}

// ---------------------------------------------------------------- by a graph

// The replacement: root(in0, in1 -> out0) = Q(P(in0), in1), and in0 also feeds R (a side op
// whose output is unused).
Graph make_replacement() {
  Graph r;
  OpId root = r.root();
  PortId in0 = r.add_input(root, r.sym("in0"));
  PortId in1 = r.add_input(root, r.sym("in1"));
  PortId out0 = r.add_output(root, r.sym("out0"));
  OpId p = r.create_op(root, "P", "P", {"a"}, {"b"});
  OpId q = r.create_op(root, "Q", "Q", {"a", "c"}, {"b"});
  OpId side = r.create_op(root, "R", "R", {"a"}, {});
  r.set_attr(p, r.sym("alpha"), Value(0.25));
  r.connect(in0, in(r, p, "a"));
  r.connect(in0, in(r, side, "a"));
  r.connect(out(r, p, "b"), in(r, q, "a"));
  r.connect(in1, in(r, q, "c"));
  r.connect(out(r, q, "b"), out0);
  r.connect(r.control_out(p), r.control_in(side));
  return r;
}

// Host: s0, s1 -> M(x, w) -> N -> sink; the set {M, N} has boundary inputs M.x, M.w and output N.m.
struct Host {
  Graph g;
  OpId s0, s1, m, n, sink;
  Host() {
    OpId r = g.root();
    s0 = g.create_op(r, "S", "s0", {}, {"y"});
    s1 = g.create_op(r, "S", "s1", {}, {"y"});
    m = g.create_op(r, "M", "M", {"x", "w"}, {"m"});
    n = g.create_op(r, "N", "N", {"x"}, {"m"});
    sink = g.create_op(r, "Sink", "sink", {"x"}, {});
    g.connect(out(g, s0, "y"), in(g, m, "x"));
    g.connect(out(g, s1, "y"), in(g, m, "w"));
    g.connect(out(g, m, "m"), in(g, n, "x"));
    g.connect(out(g, n, "m"), in(g, sink, "x"));
  }
};

TEST(ReplaceSubgraphByGraph, CopiesTheBodyAndMapsRootPortsToTheBoundary) {
  Host h;
  Graph& g = h.g;
  Graph r = make_replacement();
  std::vector<OpId> set{h.m, h.n};
  IndexMap im{{in(g, h.m, "x"), 0}, {in(g, h.m, "w"), 1}};
  IndexMap om{{out(g, h.n, "m"), 0}};
  std::vector<OpId> fresh = g.replace_subgraph(set, r, im, om);

  ASSERT_EQ(fresh.size(), 3u);
  EXPECT_THAT(names(g, fresh), ElementsAre("P", "Q", "R"));
  EXPECT_EQ(g.type_str(fresh[1]), "Q");
  EXPECT_FALSE(g.valid(h.m));
  EXPECT_FALSE(g.valid(h.n));
  EXPECT_THAT(names(g, g.children(g.root())), ElementsAre("s0", "s1", "sink", "P", "Q", "R"));
  OpId p = fresh[0], q = fresh[1], side = fresh[2];
  EXPECT_EQ(g.producer(in(g, p, "a")), out(g, h.s0, "y"));
  EXPECT_EQ(g.producer(in(g, side, "a")), out(g, h.s0, "y"));
  EXPECT_EQ(g.producer(in(g, q, "a")), out(g, p, "b"));
  EXPECT_EQ(g.producer(in(g, q, "c")), out(g, h.s1, "y"));
  EXPECT_EQ(g.producer(in(g, h.sink, "x")), out(g, q, "b"));
  EXPECT_EQ(g.producer(g.control_in(side)), g.control_out(p));
  ASSERT_NE(g.attr(p, g.sym("alpha")), nullptr);
  EXPECT_EQ(g.attr(p, g.sym("alpha"))->as_float(), 0.25);
  EXPECT_EQ(g.op_count(), 6u);
  EXPECT_EQ(g.edge_count(), 6u);
  Diagnostics d;
  EXPECT_TRUE(verify(g, d)) << d.str();
  // The replacement graph is untouched.
  EXPECT_TRUE(equal(r, make_replacement()));
}

TEST(ReplaceSubgraphByGraph, NamesAlreadyTakenInTheScopeGetSuffixes) {
  Host h;
  Graph& g = h.g;
  g.create_op(g.root(), "X", "P");  // taken
  Graph r = make_replacement();
  std::vector<OpId> set{h.m, h.n};
  IndexMap im{{in(g, h.m, "x"), 0}, {in(g, h.m, "w"), 1}};
  IndexMap om{{out(g, h.n, "m"), 0}};
  std::vector<OpId> fresh = g.replace_subgraph(set, r, im, om);
  EXPECT_THAT(names(g, fresh), ElementsAre("P_1", "Q", "R"));
}

TEST(ReplaceSubgraphByGraph, CrossingControlEdgesAreKeptOnTheNewOps) {
  Host h;
  Graph& g = h.g;
  OpId pre = g.create_op(g.root(), "Pre", "pre");
  OpId post = g.create_op(g.root(), "Post", "post");
  g.connect(g.control_out(pre), g.control_in(h.m));
  g.connect(g.control_out(h.n), g.control_in(post));
  Graph r = make_replacement();
  std::vector<OpId> set{h.m, h.n};
  IndexMap im{{in(g, h.m, "x"), 0}, {in(g, h.m, "w"), 1}};
  IndexMap om{{out(g, h.n, "m"), 0}};
  std::vector<OpId> fresh = g.replace_subgraph(set, r, im, om);
  // Every new op runs after pre and before post.
  for (OpId op : fresh) {
    bool after_pre = false, before_post = false;
    for (EdgeId e : g.in_edges(g.control_in(op))) after_pre |= g.port_op(g.edge_src(e)) == pre;
    for (EdgeId e : g.out_edges(g.control_out(op))) before_post |= g.port_op(g.edge_dst(e)) == post;
    EXPECT_TRUE(after_pre) << g.path(op);
    EXPECT_TRUE(before_post) << g.path(op);
  }
  Diagnostics d;
  EXPECT_TRUE(verify(g, d)) << d.str();
  EXPECT_TRUE(g.topo_order(g.root()).ok());
}

TEST(ReplaceSubgraphByGraph, BadMappingsThrowAndChangeNothing) {
  Host h;
  Graph& g = h.g;
  std::vector<OpId> set{h.m, h.n};
  IndexMap im{{in(g, h.m, "x"), 0}, {in(g, h.m, "w"), 1}};
  IndexMap om{{out(g, h.n, "m"), 0}};
  IndexMap im_missing{{in(g, h.m, "x"), 0}};
  IndexMap im_range{{in(g, h.m, "x"), 0}, {in(g, h.m, "w"), 2}};
  IndexMap om_none;
  auto before = snapshot(g);
  size_t bound = g.id_bound();
  Graph r = make_replacement();
  EXPECT_THROW(g.replace_subgraph(set, r, im_missing, om), Error);
  EXPECT_THROW(g.replace_subgraph(set, r, im_range, om), Error);
  EXPECT_THROW(g.replace_subgraph(set, r, im, om_none), Error);
  EXPECT_THROW(g.replace_subgraph(set, g, im, om), Error);  // itself
  EXPECT_EQ(snapshot(g), before);

  // A graph output without a producer, and one fed straight from a graph input.
  Graph unfed = make_replacement();
  unfed.disconnect(unfed.first_in_edge(unfed.output(unfed.root(), 0)));
  EXPECT_THROW(g.replace_subgraph(set, unfed, im, om), Error);
  EXPECT_EQ(snapshot(g), before);
  Graph passthrough = make_replacement();
  passthrough.disconnect(passthrough.first_in_edge(passthrough.output(passthrough.root(), 0)));
  passthrough.connect(passthrough.input(passthrough.root(), 1), passthrough.output(passthrough.root(), 0));
  EXPECT_THROW(g.replace_subgraph(set, passthrough, im, om), Error);
  EXPECT_EQ(snapshot(g), before);
  EXPECT_EQ(g.id_bound(), bound);  // not even a temporary op was created
}

}  // namespace
}  // namespace amanda::ir
