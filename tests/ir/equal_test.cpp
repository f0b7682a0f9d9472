// ir::first_difference / ir::equal.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>

#include "amanda/ir/equal.h"
#include "amanda/ir/graph.h"
#include "ir_test_util.h"

namespace amanda::ir {
namespace {

using ::testing::HasSubstr;
using test::in;
using test::out;

// A graph with root ports, a subgraph op, an attribute graph with a capture, control edges and
// attributes everywhere. `tweak` runs at the end to make one difference.
void build(Graph& g, const std::function<void(Graph&)>& tweak = {}) {
  OpId r = g.root();
  g.set_name(r, g.sym("net"));
  PortId gin = g.add_input(r, g.sym("in"));
  PortId gout = g.add_output(r, g.sym("out"));
  OpId h = g.create_op(r, "H", "h", {"hx"}, {"hk"});
  OpId f = g.create_op(h, "Relu", "f", {"x"}, {"m"});
  OpId k = g.create_op(h, "G", "g", {"z"}, {"k"});
  g.set_attr(f, g.sym("alpha"), Value(0.5));
  g.set_attr(in(g, f, "x"), g.sym("dtype"), Value("float32"));
  g.connect(gin, in(g, h, "hx"));
  g.connect(in(g, h, "hx"), in(g, f, "x"));
  EdgeId fk = g.connect(out(g, f, "m"), in(g, k, "z"));
  g.set_attr(fk, g.sym("shape"), Value(Value::List{Value(1), Value(4)}));
  g.connect(out(g, k, "k"), out(g, h, "hk"));
  g.connect(g.control_out(f), g.control_in(k));
  OpId cond = g.create_op(r, "If", "cond", {"c"}, {"r"});
  g.connect(out(g, h, "hk"), in(g, cond, "c"));
  g.connect(out(g, cond, "r"), gout);
  OpId then_g = g.create_attr_graph(cond, g.sym("then_branch"));
  g.set_graph_namespace(then_g, g.sym("amanda/onnx/13"));
  g.set_attr(cond, g.sym("then_branch"), Value::graph(then_g));
  OpId t = g.create_op(then_g, "Neg", "t", {"x"}, {"y"});
  g.set_attr(t, g.sym("axis"), Value(1));
  g.connect(in(g, cond, "c"), in(g, t, "x"));
  if (tweak) tweak(g);
}

TEST(Equal, TwoGraphsBuiltTheSameWayAreEqual) {
  Graph a, b;
  build(a);
  build(b);
  EXPECT_EQ(first_difference(a, b), "");
  EXPECT_TRUE(equal(a, b));
  EXPECT_TRUE(equal(b, a));
  EXPECT_TRUE(equal(a, a));
}

TEST(Equal, IdsSymbolsAndEdgeCreationOrderDoNotMatter) {
  Graph a, b;
  build(a);
  // b: other symbol numbers, a dead op (so other ids), edges of h's body made in another order.
  b.sym("zzz");
  b.erase_op(b.create_op(b.root(), "Dead", "dead"));
  OpId r = b.root();
  b.set_name(r, b.sym("net"));
  PortId gin = b.add_input(r, b.sym("in"));
  PortId gout = b.add_output(r, b.sym("out"));
  OpId h = b.create_op(r, "H", "h", {"hx"}, {"hk"});
  OpId f = b.create_op(h, "Relu", "f", {"x"}, {"m"});
  OpId k = b.create_op(h, "G", "g", {"z"}, {"k"});
  b.set_attr(f, b.sym("alpha"), Value(0.5));
  b.set_attr(in(b, f, "x"), b.sym("dtype"), Value("float32"));
  b.connect(b.control_out(f), b.control_in(k));
  b.connect(out(b, k, "k"), out(b, h, "hk"));
  EdgeId fk = b.connect(out(b, f, "m"), in(b, k, "z"));
  b.set_attr(fk, b.sym("shape"), Value(Value::List{Value(1), Value(4)}));
  b.connect(in(b, h, "hx"), in(b, f, "x"));
  b.connect(gin, in(b, h, "hx"));
  OpId cond = b.create_op(r, "If", "cond", {"c"}, {"r"});
  b.connect(out(b, cond, "r"), gout);
  b.connect(out(b, h, "hk"), in(b, cond, "c"));
  OpId then_g = b.create_attr_graph(cond, b.sym("then_branch"));
  b.set_graph_namespace(then_g, b.sym("amanda/onnx/13"));
  b.set_attr(cond, b.sym("then_branch"), Value::graph(then_g));
  OpId t = b.create_op(then_g, "Neg", "t", {"x"}, {"y"});
  b.set_attr(t, b.sym("axis"), Value(1));
  b.connect(in(b, cond, "c"), in(b, t, "x"));
  EXPECT_EQ(first_difference(a, b), "");
}

struct Case {
  const char* what;
  std::function<void(Graph&)> tweak;
  std::string expected;  // the exact first difference
};

TEST(Equal, EachDifferenceIsFoundWithItsPath) {
  auto h_of = [](Graph& g) { return g.find_op(g.root(), "h"); };
  auto f_of = [&](Graph& g) { return g.find_op(h_of(g), "f"); };
  auto t_of = [](Graph& g) {
    OpId cond = g.find_op(g.root(), "cond");
    return g.first_child(g.attr(cond, g.sym("then_branch"))->as_graph());
  };
  std::vector<Case> cases = {
      {"op type", [&](Graph& g) { g.set_type(f_of(g), g.sym("Tanh")); }, "h/f: type/namespace 'Relu' vs 'Tanh'"},
      {"op name", [&](Graph& g) { g.set_name(f_of(g), g.sym("f2")); }, "h/f: name 'f' vs 'f2'"},
      {"root name", [&](Graph& g) { g.set_name(g.root(), g.sym("other")); }, "net: name 'net' vs 'other'"},
      {"attribute value", [&](Graph& g) { g.set_attr(f_of(g), g.sym("alpha"), Value(0.25)); },
       "h/f: attribute 'alpha' differs"},
      {"attribute kind", [&](Graph& g) { g.set_attr(f_of(g), g.sym("alpha"), Value("0.5")); },
       "h/f: attribute 'alpha' differs"},
      {"extra attribute", [&](Graph& g) { g.set_attr(f_of(g), g.sym("beta"), Value(true)); },
       "h/f: 1 vs 2 attributes"},
      {"port attribute", [&](Graph& g) { g.set_attr(in(g, f_of(g), "x"), g.sym("dtype"), Value("int8")); },
       "h/f:input x: attribute 'dtype' differs"},
      {"port name", [&](Graph& g) { g.set_port_name(g.output(f_of(g), 0), g.sym("mm")); },
       "h/f:output m: port name differs ('mm')"},
      {"port count", [&](Graph& g) { g.add_input(f_of(g), g.sym("extra")); }, "h/f: 1 vs 2 input ports"},
      {"extra op", [&](Graph& g) { g.create_op(h_of(g), "X", "x"); }, "h: 2 vs 3 ops in its body"},
      {"missing edge", [&](Graph& g) { g.disconnect(g.first_in_edge(g.control_in(g.find_op(h_of(g), "g")))); },
       "h: edges differ at h/f:^control> -> h/g:^control<"},
      {"attribute graph body", [&](Graph& g) { g.set_attr(t_of(g), g.sym("axis"), Value(2)); },
       "cond/then_branch/t: attribute 'axis' differs"},
      {"attribute graph namespace",
       [&](Graph& g) { g.set_graph_namespace(g.attr(g.find_op(g.root(), "cond"), g.sym("then_branch"))->as_graph(), g.sym("x")); },
       "cond/then_branch: type/namespace 'amanda/onnx/13' vs 'x'"},
      {"attribute graph count",
       [&](Graph& g) { g.create_attr_graph(g.find_op(g.root(), "cond"), g.sym("unused")); },
       "cond: different number of attribute graphs"},
      {"capture removed", [&](Graph& g) { g.disconnect(g.first_in_edge(in(g, t_of(g), "x"))); },
       "cond/then_branch: edges differ at cond:c< -> cond/then_branch/t:x<"},
      {"body marker", [&](Graph& g) { g.mark_has_body(g.find_op(g.root(), "cond")); },
       "cond: one has a body, the other not"},
      {"edge attribute", [&](Graph& g) {
         g.set_attr(g.first_in_edge(in(g, g.find_op(h_of(g), "g"), "z")), g.sym("shape"), Value(Value::List{Value(2)}));
       }, "edge h/f:output m -> h/g:input z: attribute 'shape' differs"},
  };
  Graph base;
  build(base);
  for (const Case& c : cases) {
    Graph other;
    build(other, c.tweak);
    EXPECT_FALSE(equal(base, other)) << c.what;
    EXPECT_EQ(first_difference(base, other), c.expected) << c.what;
  }
}

TEST(Equal, RootKindsDiffer) {
  Graph a(Graph::RootKind::Graph), b(Graph::RootKind::Op);
  EXPECT_EQ(first_difference(a, b), "<root>: one is a graph, the other an op");
}

TEST(Equal, EdgeAttributeDifferencesAreFoundInBothDirections) {
  Graph a, b;
  build(a);
  build(b, [](Graph& g) {
    OpId h = g.find_op(g.root(), "h");
    g.erase_attr(g.first_in_edge(in(g, g.find_op(h, "g"), "z")), g.sym("shape"));
  });
  EXPECT_FALSE(equal(a, b));
  EXPECT_FALSE(equal(b, a));
  EXPECT_THAT(first_difference(b, a), HasSubstr("h/f:output m -> h/g:input z"));
}

}  // namespace
}  // namespace amanda::ir
