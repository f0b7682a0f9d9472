// ir::Rewriter: every change through one object, heard by a listener, undone exactly by a
// rollback (the YAML form byte-identical); erase only what has no uses; the greedy driver reaches
// the fixed point that applying the patterns by hand reaches.
#include <gtest/gtest.h>

#include "amanda/ir/rewriter.h"
#include "amanda/ir/value.h"
#include "amanda/text/document.h"

namespace amanda::ir {
namespace {

std::string yaml(const text::Document& d) { return text::to_text(d, text::Format::Yaml); }

// x -> a:Relu -> b:Neg -> c:Exp -> output y, with attributes on ops and an edge.
text::Document chain() {
  const char* src = R"(graph:
  name: g
  input_ports:
    - name: x
  output_ports:
    - name: y
  ops:
    - type: Relu
      name: a
      attrs: { k: 1, s: hello }
      input_ports: [{ name: x }]
      output_ports: [{ name: y }]
    - type: Neg
      name: b
      input_ports: [{ name: x }]
      output_ports: [{ name: y }]
    - type: Exp
      name: c
      input_ports: [{ name: x }]
      output_ports: [{ name: y }]
  edges:
    - output_port: { op: g, port: x }
      input_port: { op: a, port: x }
    - output_port: { op: a, port: y }
      input_port: { op: b, port: x }
      attrs: { note: kept }
    - output_port: { op: b, port: y }
      input_port: { op: c, port: x }
    - output_port: { op: c, port: y }
      input_port: { op: g, port: y }
)";
  Diagnostics d;
  return text::parse(src, text::Format::Yaml, "chain.yaml", d);
}

struct Log : RewriteListener {
  std::vector<std::string> events;
  Graph* g;
  void op_created(OpId op) override { events.push_back("created " + std::string(g->name_str(op))); }
  void op_erased(OpId op) override { events.push_back("erased " + std::string(g->name_str(op))); }
  void op_modified(OpId op) override { events.push_back("modified " + std::string(g->name_str(op))); }
  void edge_added(EdgeId e) override { events.push_back("edge " + g->path(g->edge_src(e)) + " -> " + g->path(g->edge_dst(e))); }
  void edge_removed(PortId s, PortId d) override { events.push_back("unedge " + g->path(s) + " -> " + g->path(d)); }
  void uses_replaced(PortId f, PortId t) override { events.push_back("replace " + g->path(f) + " by " + g->path(t)); }
  void rolled_back() override { events.push_back("rolled back"); }
};

TEST(Rewriter, RollbackLeavesTheGraphByteIdentical) {
  auto doc = chain();
  Graph& g = doc.graph;
  std::string before = yaml(doc);
  Rewriter rw(g);
  OpId a = g.find_op(g.root(), "a"), b = g.find_op(g.root(), "b"), c = g.find_op(g.root(), "c");
  rw.begin();
  // Replace b by a new op, change attributes of a, rewire, erase b, then give up.
  rw.set_insertion_point_before(b);
  OpId n = rw.create_op("Sigmoid", "n", {"x"}, {"y"});
  rw.connect(g.output(a, 0), g.input(n, 0));
  rw.replace_all_uses(g.output(b, 0), g.output(n, 0));
  rw.erase_op(b);
  rw.set_attr(a, "k", Value(int64_t(2)));
  rw.erase_attr(a, "s");
  rw.set_attr(a, "new", Value("x"));
  rw.set_port_type(g.output(c, 0), g.types().unranked(DType::Float32));
  rw.add_output(c, "extra");
  ASSERT_NE(yaml(doc), before);
  rw.rollback();
  EXPECT_EQ(yaml(doc), before);
  EXPECT_TRUE(g.valid(b));
  EXPECT_FALSE(g.port_type(g.output(c, 0)));
}

TEST(Rewriter, CommitKeepsTheRewrite) {
  auto doc = chain();
  Graph& g = doc.graph;
  Rewriter rw(g);
  OpId a = g.find_op(g.root(), "a"), b = g.find_op(g.root(), "b");
  rw.begin();
  rw.replace_all_uses(g.output(b, 0), g.output(a, 0));
  rw.erase_op(b);
  rw.commit();
  EXPECT_FALSE(g.valid(b));
  OpId c = g.find_op(g.root(), "c");
  EXPECT_EQ(g.producer(g.input(c, 0)), g.output(a, 0));
  EXPECT_EQ(g.op_count(), 2u);
}

TEST(Rewriter, EraseOnlyWhatHasNoUses) {
  auto doc = chain();
  Graph& g = doc.graph;
  Rewriter rw(g);
  OpId b = g.find_op(g.root(), "b");
  try {
    rw.erase_op(b);
    FAIL() << "erased an op with uses";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "Rewriter: b cannot be erased: b:output y is still used by c:input x");
  }
  EXPECT_TRUE(g.valid(b));
  // Consumers first, inside one transaction: each lets go of its inputs.
  rw.begin();
  OpId c = g.find_op(g.root(), "c");
  for (EdgeId e : g.out_edges(g.output(c, 0))) rw.disconnect(e);
  rw.erase_op(c);
  rw.erase_op(b);
  rw.commit();
  EXPECT_EQ(g.op_count(), 1u);
}

TEST(Rewriter, TheListenerHearsEveryChange) {
  auto doc = chain();
  Graph& g = doc.graph;
  Log log;
  log.g = &g;
  Rewriter rw(g, &log);
  OpId a = g.find_op(g.root(), "a"), b = g.find_op(g.root(), "b");
  rw.begin();
  OpId n = rw.create_op("Sigmoid", "n", {"x"}, {"y"});
  rw.connect(g.output(a, 0), g.input(n, 0));
  rw.replace_all_uses(g.output(b, 0), g.output(n, 0));
  rw.erase_op(b);
  rw.set_attr(n, "alpha", Value(1.5));
  rw.rollback();
  EXPECT_EQ(log.events, (std::vector<std::string>{"created n", "edge a:output y -> n:input x", "modified n",
                                                   "replace b:output y by n:output y", "modified c", "erased b",
                                                   "unedge a:output y -> b:input x", "modified b", "modified n",
                                                   "rolled back"}));
}

// Two fusion rules that enable each other: T(T(x)) -> x, and T(Relu(x)) -> Relu(T(x)).
std::vector<Pattern> transpose_patterns() {
  Pattern cancel{"cancel-transposes", "Transpose", 1, [](OpId op, Rewriter& rw) {
                   Graph& g = rw.graph();
                   PortId in = g.producer(g.input(op, 0));
                   if (!in || g.is_graph(g.port_op(in)) || g.type_str(g.port_op(in)) != "Transpose") return false;
                   OpId inner = g.port_op(in);
                   PortId x = g.producer(g.input(inner, 0));
                   if (!x) return false;
                   rw.replace_all_uses(g.output(op, 0), x);
                   rw.erase_op(op);
                   if (!g.first_out_edge(g.output(inner, 0))) rw.erase_op(inner);
                   return true;
                 }};
  Pattern sink{"transpose-through-relu", "Transpose", 1, [](OpId op, Rewriter& rw) {
                 Graph& g = rw.graph();
                 PortId in = g.producer(g.input(op, 0));
                 if (!in || g.is_graph(g.port_op(in)) || g.type_str(g.port_op(in)) != "Relu") return false;
                 OpId relu = g.port_op(in);
                 if (g.out_degree(in) != 1) return false;
                 PortId x = g.producer(g.input(relu, 0));
                 rw.set_insertion_point_before(relu);
                 OpId t = rw.create_op("Transpose", "", {"x"}, {"y"});
                 OpId r = rw.create_op("Relu", "", {"x"}, {"y"});
                 rw.connect(x, g.input(t, 0));
                 rw.connect(g.output(t, 0), g.input(r, 0));
                 rw.replace_all_uses(g.output(op, 0), g.output(r, 0));
                 rw.erase_op(op);
                 rw.erase_op(relu);
                 return true;
               }};
  return {cancel, sink};
}

text::Document transposes(const std::vector<std::string>& types) {
  text::Document doc;
  Graph& g = doc.graph;
  g.set_name(g.root(), g.sym("g"));
  PortId prev = g.add_input(g.root(), g.sym("x"));
  for (size_t i = 0; i < types.size(); ++i) {
    OpId op = g.create_op(g.root(), types[i], types[i] + std::to_string(i), {"x"}, {"y"});
    g.connect(prev, g.input(op, 0));
    prev = g.output(op, 0);
  }
  g.connect(prev, g.add_output(g.root(), g.sym("y")));
  return doc;
}

// The op types from the graph input to the graph output.
std::vector<std::string> path_types(const Graph& g) {
  std::vector<std::string> r;
  PortId p = g.producer(g.output(g.root(), 0));
  while (p && g.port_op(p) != g.root()) {
    OpId op = g.port_op(p);
    r.insert(r.begin(), std::string(g.type_str(op)));
    p = g.producer(g.input(op, 0));
  }
  return r;
}

TEST(GreedyDriver, TwoRulesThatEnableEachOtherReachTheFixedPoint) {
  auto doc = transposes({"Transpose", "Transpose", "Relu", "Transpose", "Relu", "Transpose"});
  auto res = apply_patterns_greedily(doc.graph, doc.graph.root(), transpose_patterns());
  EXPECT_TRUE(res.converged);
  EXPECT_TRUE(res.errors.empty());
  // By hand: T T R T R T -> (cancel) R T R T -> (sink the last T) R T T R -> (cancel) R R.
  EXPECT_EQ(path_types(doc.graph), (std::vector<std::string>{"Relu", "Relu"}));
  EXPECT_EQ(doc.graph.op_count(), 2u);
  EXPECT_GE(res.rewrites, 3u);
  // Applying again changes nothing: a fixed point.
  auto again = apply_patterns_greedily(doc.graph, doc.graph.root(), transpose_patterns());
  EXPECT_EQ(again.rewrites, 0u);
}

TEST(GreedyDriver, AFailingPatternIsRolledBackAndReported) {
  auto doc = transposes({"Relu", "Transpose"});
  std::string before = yaml(doc);
  Pattern bad{"half-done", "Transpose", 2, [](OpId op, Rewriter& rw) -> bool {
                rw.create_op("Junk", "junk", {}, {"y"});
                rw.set_attr(op, "touched", Value(true));
                throw Error("mapper failed half-way");
              }};
  auto res = apply_patterns_greedily(doc.graph, doc.graph.root(), {bad});
  EXPECT_EQ(res.rewrites, 0u);
  ASSERT_EQ(res.errors.size(), 1u);
  EXPECT_EQ(res.errors[0], "half-done on Transpose1: mapper failed half-way");
  EXPECT_EQ(yaml(doc), before);
}

// The changes the mapping engine makes (type, name, moves, ports erased and added, control ports,
// attributes set, added and erased, port attributes and types, an op erased whose name a new op
// takes) are all undone, nested transactions included.
TEST(Rewriter, EveryKindOfChangeIsUndone) {
  auto doc = chain();
  Graph& g = doc.graph;
  std::string before = yaml(doc);
  OpId a = g.find_op(g.root(), "a"), b = g.find_op(g.root(), "b"), c = g.find_op(g.root(), "c");
  Rewriter rw(g);
  rw.begin();
  rw.set_op_type(a, g.sym("Sigmoid"));
  rw.set_name(a, g.sym("a2"));
  rw.set_attr(a, g.sym("k"), Value(int64_t(7)));   // replaced
  rw.erase_attr(a, g.sym("s"));                     // erased
  rw.set_attr(a, g.sym("new"), Value(true));        // added
  rw.move_before(c, a);
  rw.set_attr(g.inputs(b)[0], g.sym("note"), Value(std::string("p")));
  rw.set_port_type(g.outputs(b)[0], g.types().unranked(ElemType::Float32));
  rw.begin();  // nested: undone alone first
  PortId extra = rw.add_port(b, PortDir::In, g.sym("extra"));
  rw.connect(g.outputs(a)[0], extra);
  rw.connect(rw.control_out(a), rw.control_in(c));
  rw.rollback();
  EXPECT_EQ(g.inputs(b).size(), 1u);
  EXPECT_FALSE(g.find_control(a, PortDir::Out));
  rw.erase_port(g.inputs(c)[0]);                    // with its edge
  // b goes (it has no use left); a new op takes its name at once.
  EXPECT_FALSE(g.first_out_edge(g.outputs(b)[0]));  // (went with c's input port)
  rw.erase_op(b);
  rw.set_insertion_point(g.root(), c);
  OpId nb = rw.create_op(g.sym("Neg"), g.sym("b"), false);
  EXPECT_EQ(g.find_op(g.root(), "b"), nb);
  EXPECT_NE(yaml(doc), before);
  rw.rollback();
  EXPECT_EQ(yaml(doc), before);
  EXPECT_EQ(g.find_op(g.root(), "b"), b);
  EXPECT_TRUE(g.valid(b));
}

}  // namespace
}  // namespace amanda::ir
