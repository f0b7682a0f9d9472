// A rule whose mapper fails half-way leaves the graph exactly as it was (the YAML form
// byte-identical) and the report names the rule and the op: the engine evaluates every name,
// attribute and constant of a rule before it changes anything.
#include <gtest/gtest.h>

#include "amanda/frameworks/onnx/namespaces.h"
#include "amanda/ir/equal.h"
#include "amanda/mapping/engine.h"
#include "amanda/mapping/expr.h"
#include "amanda/schema/registry.h"
#include "amanda/text/document.h"
#include "amanda/text/tree.h"

using namespace amanda;
using namespace amanda::mapping;

namespace {

TEST(MappingRollback, AMapperThatFailsHalfWayLeavesTheGraphAsItWas) {
  auto reg = schema::make_default_registry();
  reg->add_provider(onnx_frontend::make_onnx_namespace_provider());
  // One Softmax becomes Flatten + Softmax; the second op's axis divides by (axis - 1), which is
  // zero for this graph's Softmax: the first dst op would already exist when that fails.
  auto t = parse_table(text::parse_tree(R"(table:
  src: amanda/onnx/12
  dst: amanda/onnx/13
  rules:
    - rule_name: softmax_flattened
      src: {type: Softmax, attrs: {axis: {ref: axis}}, input_ports: [{name: input, ref: x}], output_ports: [{name: output, ref: y}]}
      dst:
        ops:
          - {id: flat, type: Flatten, attrs: {axis: "{axis}"}, input_ports: [{name: input, ref: x}], output_ports: [output]}
          - {id: softmax, type: Softmax, primary: true, attrs: {axis: "{1 / (axis - 1)}"}, input_ports: [input], output_ports: [{name: output, ref: y}]}
        edges:
          - {output_port: {op: flat, port: output}, input_port: {op: softmax, port: input}}
)", text::Format::Yaml, "t.yaml"));
  Diagnostics d;
  check_table(*t, *reg, d);
  ASSERT_FALSE(d.has_errors()) << d.str();
  auto doc = text::parse(R"(graph:
  namespace: amanda/onnx/12
  name: g
  input_ports: [{name: x}]
  output_ports: [{name: y}]
  ops:
    - {type: Softmax, name: sm, attrs: {axis: 1}, input_ports: [input], output_ports: [output]}
  edges:
    - {output_port: {op: g, port: x}, input_ports: {op: sm, port: input}}
    - {output_port: {op: sm, port: output}, input_ports: {op: g, port: y}}
)", text::Format::Yaml, "g.yaml", d);
  std::string before = text::to_text(doc, text::Format::Yaml);
  CompiledTable ct(*t, *reg);
  Report rep;
  ct.apply(doc.graph, {}, rep);
  ASSERT_EQ(rep.errors.size(), 1u) << rep.text();
  EXPECT_NE(rep.errors[0].find("sm: rule 'softmax_flattened'"), std::string::npos) << rep.errors[0];
  EXPECT_NE(rep.errors[0].find("division by zero"), std::string::npos) << rep.errors[0];
  EXPECT_EQ(rep.mapped, 0u);
  // The conversion itself renames the namespace; apart from that, nothing changed.
  std::string after = text::to_text(doc, text::Format::Yaml);
  after.replace(after.find("amanda/onnx/13"), 14, "amanda/onnx/12");
  EXPECT_EQ(after, before);
}

}  // namespace

// ---------------------------------------------------------------- through the Rewriter
//
// Every change of a conversion goes through ir::Rewriter, one transaction per rule application:
// whatever a rule throws after it has started to change the graph (here a callback the engine
// calls once the dst ops exist and the matched ops are erased), the rule is rolled back and the
// graph writes byte for byte as before.

namespace amanda::mapping {
namespace {

constexpr const char* kTransposeRules = R"(
    - rule_name: fuse_transposes
      src:
        ops:
          - {id: a, type: Transpose, attrs: {perm: {ref: p}}}
          - {id: b, type: Transpose, attrs: {perm: {ref: q}}}
        edges:
          - {output_port: {op: a, port: transposed}, input_ports: {op: b, port: data}}
      dst: {type: Transpose, attrs: {perm: "{permute(p, q)}"}}
)";

constexpr const char* kSinkRule = R"(
    - rule_name: sink_transpose
      src:
        ops:
          - {id: t, type: Transpose, attrs: {perm: {ref: p}}, input_ports: [{name: data, ref: x}]}
          - {id: r, type: Relu, output_ports: [{name: Y, ref: y}]}
        edges:
          - {output_port: {op: t, port: transposed}, input_ports: {op: r, port: X}}
      dst:
        ops:
          - {id: r2, type: Relu, input_ports: [{name: X, ref: x}], output_ports: [Y]}
          - {id: t2, type: Transpose, primary: true, attrs: {perm: "{p}"}, input_ports: [data], output_ports: [{name: transposed, ref: y}]}
        edges:
          - {output_port: {op: r2, port: Y}, input_port: {op: t2, port: data}}
)";

std::unique_ptr<schema::Registry> onnx_registry() {
  auto reg = schema::make_default_registry();
  reg->add_provider(onnx_frontend::make_onnx_namespace_provider());
  return reg;
}

std::unique_ptr<Table> table_of(const std::string& rules, bool fixed_point, schema::Registry& reg) {
  std::string text = std::string("table:\n  src: amanda/onnx/13\n  dst: amanda/onnx/13\n") +
                     (fixed_point ? "  fixed_point: true\n" : "") + "  rules:" + rules;
  auto t = parse_table(text::parse_tree(text, text::Format::Yaml, "t.yaml"));
  Diagnostics d;
  check_table(*t, reg, d);
  EXPECT_FALSE(d.has_errors()) << d.str();
  return t;
}

// x -> t1:Transpose[1,0,2] -> r1:Relu -> t2:Transpose[0,2,1] -> r2:Relu -> t3:Transpose[2,1,0] -> y,
// with a control edge into t2 from a side op (it must come back too).
text::Document transpose_chain() {
  Diagnostics d;
  auto doc = text::parse(R"(graph:
  namespace: amanda/onnx/13
  name: g
  input_ports: [{name: x}]
  output_ports: [{name: y}, {name: z}]
  ops:
    - {type: Transpose, name: t1, attrs: {perm: [1, 0, 2]}, input_ports: [data], output_ports: [transposed]}
    - {type: Relu, name: r1, input_ports: [X], output_ports: [Y]}
    - {type: Transpose, name: t2, attrs: {perm: [0, 2, 1]}, input_ports: [data], output_ports: [transposed]}
    - {type: Relu, name: r2, input_ports: [X], output_ports: [Y]}
    - {type: Transpose, name: t3, attrs: {perm: [2, 1, 0]}, input_ports: [data], output_ports: [transposed]}
    - {type: Neg, name: side, input_ports: [X], output_ports: [Y]}
  edges:
    - {output_port: {op: g, port: x}, input_ports: {op: t1, port: data}}
    - {output_port: {op: t1, port: transposed}, input_ports: {op: r1, port: X}}
    - {output_port: {op: r1, port: Y}, input_ports: {op: t2, port: data}}
    - {output_port: {op: t2, port: transposed}, input_ports: {op: r2, port: X}}
    - {output_port: {op: r2, port: Y}, input_ports: {op: t3, port: data}}
    - {output_port: {op: t3, port: transposed}, input_ports: {op: g, port: y}}
    - {output_port: {op: g, port: x}, input_ports: {op: side, port: X}}
    - {output_port: {op: side, port: Y}, input_ports: {op: g, port: z}}
    - {output_port: {op: side, port: ^control}, input_ports: {op: t2, port: ^control}}
)", text::Format::Yaml, "chain.yaml", d);
  EXPECT_FALSE(d.has_errors()) << d.str();
  return doc;
}

std::string yaml(const text::Document& d) { return text::to_text(d, text::Format::Yaml); }

// The chain from input x to output y: op types, with Transpose's perm ("Relu Transpose[0, 2, 1]").
std::string chain_of(const ir::Graph& g) {
  std::string s;
  ir::PortId p = g.inputs(g.root())[0];
  for (int guard = 0; guard < 100; ++guard) {
    ir::PortId next;
    for (ir::EdgeId e = g.first_out_edge(p); e; e = g.next_out_edge(e)) {
      ir::OpId op = g.port_op(g.edge_dst(e));
      if (op == g.root() || g.type_str(op) == "Neg") continue;
      s += (s.empty() ? "" : " ") + std::string(g.type_str(op));
      if (const ir::Value* v = g.attr(op, g.symbols().find("perm"))) s += value_str(*v);
      next = g.outputs(op)[0];
    }
    if (!next) break;
    p = next;
  }
  return s;
}

struct Counter : ir::RewriteListener {
  size_t changes = 0, rollbacks = 0;
  void op_created(ir::OpId) override { ++changes; }
  void op_erased(ir::OpId) override { ++changes; }
  void op_modified(ir::OpId) override { ++changes; }
  void edge_added(ir::EdgeId) override { ++changes; }
  void edge_removed(ir::PortId, ir::PortId) override { ++changes; }
  void rolled_back() override { ++rollbacks; }
};

TEST(MappingRollback, ARuleThatThrowsAfterItChangedTheGraphIsRolledBack) {
  auto reg = onnx_registry();
  auto t = table_of(kSinkRule, false, *reg);
  auto doc = transpose_chain();
  std::string before = yaml(doc);
  CompiledTable ct(*t, *reg);
  ConvertOptions o;
  int calls = 0;
  // Called once the rule has made its ops (and let go of the matched ones): the first match's
  // rewrite fails there; the second (t2, r2) goes through.
  o.on_rewrite = [&](ir::OpId, const std::string&) {
    if (++calls == 1) throw std::runtime_error("the mapper broke half-way");
  };
  Counter heard;
  o.listener = &heard;
  Report rep;
  ct.apply(doc.graph, o, rep);
  ASSERT_EQ(rep.errors.size(), 1u) << rep.text();
  EXPECT_NE(rep.errors[0].find("t1: rule 'sink_transpose'"), std::string::npos) << rep.errors[0];
  EXPECT_NE(rep.errors[0].find("the mapper broke half-way"), std::string::npos) << rep.errors[0];
  EXPECT_EQ(rep.mapped, 2u);  // t2 and r2
  EXPECT_EQ(heard.rollbacks, 1u);
  EXPECT_GT(heard.changes, 10u);
  EXPECT_EQ(chain_of(doc.graph), "Transpose[1, 0, 2] Relu Relu Transpose[0, 2, 1] Transpose[2, 1, 0]");

  // All of them failing: the graph is byte for byte the one read.
  auto doc2 = transpose_chain();
  ConvertOptions fail;
  fail.on_rewrite = [](ir::OpId, const std::string&) { throw std::runtime_error("no"); };
  Report rep2;
  ct.apply(doc2.graph, fail, rep2);
  EXPECT_EQ(rep2.errors.size(), 2u) << rep2.text();
  EXPECT_EQ(rep2.mapped, 0u);
  EXPECT_EQ(yaml(doc2), before);
}

TEST(MappingRollback, AFusionThatThrowsLeavesTheGraphByteIdentical) {
  auto reg = onnx_registry();
  for (bool fixed : {false, true}) {
    auto t = table_of(kTransposeRules, fixed, *reg);
    Diagnostics d;
    // t1 -> t2 -> t3 directly: both fusions fail after their ops exist.
    auto doc = text::parse(R"(graph:
  namespace: amanda/onnx/13
  name: g
  input_ports: [{name: x}]
  output_ports: [{name: y}]
  ops:
    - {type: Transpose, name: t1, attrs: {perm: [1, 0, 2]}, input_ports: [data], output_ports: [transposed]}
    - {type: Transpose, name: t2, attrs: {perm: [0, 2, 1]}, input_ports: [data], output_ports: [transposed]}
  edges:
    - {output_port: {op: g, port: x}, input_ports: {op: t1, port: data}}
    - {output_port: {op: t1, port: transposed}, input_ports: {op: t2, port: data}}
    - {output_port: {op: t2, port: transposed}, input_ports: {op: g, port: y}, attrs: {note: kept}}
)", text::Format::Yaml, "g.yaml", d);
    std::string before = yaml(doc);
    CompiledTable ct(*t, *reg);
    ConvertOptions o;
    o.on_rewrite = [](ir::OpId, const std::string&) { throw std::runtime_error("fusion failed"); };
    Report rep;
    ct.apply(doc.graph, o, rep);
    ASSERT_FALSE(rep.errors.empty()) << rep.text();
    EXPECT_NE(rep.errors[0].find("rule 'fuse_transposes'"), std::string::npos) << rep.errors[0];
    EXPECT_NE(rep.errors[0].find("t1"), std::string::npos) << rep.errors[0];
    EXPECT_NE(rep.errors[0].find("fusion failed"), std::string::npos) << rep.errors[0];
    EXPECT_EQ(yaml(doc), before) << (fixed ? "fixed point" : "one pass");
  }
}

// A one-op rule changes the op it matched in place (type, name, attributes, its ports rebuilt, an
// attribute the dst schema lacks dropped, a constant made): all of it is undone.
TEST(MappingRollback, AnOpChangedInPlaceComesBackAsItWas) {
  auto reg = onnx_registry();
  auto t = table_of(R"(
    - rule_name: retranspose
      src: {type: Transpose, name: {ref: n}, attrs: {perm: {ref: p}}}
      dst:
        type: Transpose
        name: "{n}_r"
        attrs: {perm: "{permute(p, [2, 1, 0])}"}
        input_ports: [data]
        output_ports: [transposed]
    - rule_name: unsqueeze_axes
      src: {type: Relu, input_ports: [{name: X, ref: x}], output_ports: [{name: Y, ref: y}]}
      dst:
        type: Unsqueeze
        input_ports: [{name: data, ref: x}, {name: axes, const: "{tensor([0], 'int64')}"}]
        output_ports: [{name: expanded, ref: y}]
)", false, *reg);
  Diagnostics d;
  auto doc = text::parse(R"(graph:
  namespace: amanda/onnx/13
  name: g
  input_ports: [{name: x}]
  output_ports: [{name: y}]
  ops:
    - {type: Transpose, name: t1, attrs: {perm: [1, 0, 2], stale: 3, '@note': kept}, input_ports: [{name: data, attrs: {'@shape': [1, 2, 3]}}], output_ports: [transposed]}
    - {type: Relu, name: r1, input_ports: [X], output_ports: [Y]}
  edges:
    - {output_port: {op: g, port: x}, input_ports: {op: t1, port: data}}
    - {output_port: {op: t1, port: transposed}, input_ports: {op: r1, port: X}, attrs: {note: e}}
    - {output_port: {op: r1, port: Y}, input_ports: {op: g, port: y}}
)", text::Format::Yaml, "g.yaml", d);
  ASSERT_FALSE(d.has_errors()) << d.str();
  std::string before = yaml(doc);
  CompiledTable ct(*t, *reg);
  // First the rules go through (so that the test sees they change the graph), then on a fresh copy
  // every rewrite fails after its changes.
  {
    Diagnostics d2;
    auto copy = text::parse(before, text::Format::Yaml, "g.yaml", d2);
    Report ok;
    ct.apply(copy.graph, {}, ok);
    EXPECT_TRUE(ok.ok()) << ok.text();
    EXPECT_EQ(ok.mapped, 2u) << ok.text();
    EXPECT_NE(yaml(copy), before);
    EXPECT_NE(yaml(copy).find("t1_r"), std::string::npos) << yaml(copy);
    EXPECT_EQ(yaml(copy).find("stale"), std::string::npos) << yaml(copy);
  }
  ConvertOptions o;
  o.on_rewrite = [](ir::OpId, const std::string&) { throw std::runtime_error("late failure"); };
  Counter heard;
  o.listener = &heard;
  Report rep;
  ct.apply(doc.graph, o, rep);
  ASSERT_EQ(rep.errors.size(), 2u) << rep.text();
  EXPECT_NE(rep.errors[0].find("t1: rule 'retranspose'"), std::string::npos) << rep.errors[0];
  EXPECT_NE(rep.errors[1].find("r1: rule 'unsqueeze_axes'"), std::string::npos) << rep.errors[1];
  EXPECT_EQ(heard.rollbacks, 2u);
  EXPECT_EQ(yaml(doc), before);
}

// ---------------------------------------------------------------- fixed point

// Two fusion rules that enable each other: sinking a Transpose below a Relu brings two Transposes
// together, fusing them brings a Transpose next to the next Relu. With fixed_point the table gets
// where applying the rules by hand, one at a time until neither applies, gets.
TEST(MappingFixedPoint, RulesThatEnableEachOtherReachTheResultOfApplyingThemByHand) {
  auto reg = onnx_registry();
  auto fixed = table_of(std::string(kTransposeRules) + kSinkRule, true, *reg);
  auto doc = transpose_chain();
  Report rep;
  CompiledTable(*fixed, *reg).apply(doc.graph, {}, rep);
  EXPECT_TRUE(rep.ok()) << rep.text();
  EXPECT_EQ(rep.by_rule["sink_transpose"], 2u) << rep.text();
  EXPECT_EQ(rep.by_rule["fuse_transposes"], 2u) << rep.text();

  // By hand: one rule at a time (each a table of its own, one pass), until neither applies.
  auto sink = table_of(kSinkRule, false, *reg), fuse = table_of(kTransposeRules, false, *reg);
  CompiledTable cs(*sink, *reg), cf(*fuse, *reg);
  auto hand = transpose_chain();
  for (int round = 0; round < 10; ++round) {
    Report a, b;
    cs.apply(hand.graph, {}, a);
    cf.apply(hand.graph, {}, b);
    ASSERT_TRUE(a.ok() && b.ok()) << a.text() << b.text();
    if (a.mapped + b.mapped == 0) break;
  }
  // [1,0,2] then [0,2,1] then [2,1,0] is [0,2,1].
  EXPECT_EQ(chain_of(hand.graph), "Relu Relu Transpose[0, 2, 1]");
  EXPECT_EQ(chain_of(doc.graph), chain_of(hand.graph));
  EXPECT_EQ(doc.graph.op_count(), hand.graph.op_count());
  // Textually: the same ops in the same order with the same attributes and edges (op names
  // follow the order in which the rules ran: left out of the comparison).
  auto strip_names = [](ir::Graph& g) {
    int k = 0;
    for (ir::OpId op = g.first_child(g.root()); op; op = g.next_sibling(op)) g.set_name(op, g.sym("op" + std::to_string(k++)));
  };
  strip_names(doc.graph);
  strip_names(hand.graph);
  EXPECT_EQ(ir::first_difference(doc.graph, hand.graph), "");

  // Without fixed_point the same rules make one pass: the fusions the sinking enables are missed.
  auto once = table_of(std::string(kTransposeRules) + kSinkRule, false, *reg);
  auto doc2 = transpose_chain();
  Report rep2;
  CompiledTable(*once, *reg).apply(doc2.graph, {}, rep2);
  EXPECT_TRUE(rep2.ok()) << rep2.text();
  EXPECT_NE(chain_of(doc2.graph), chain_of(hand.graph));
  EXPECT_EQ(chain_of(doc2.graph), "Relu Transpose[1, 0, 2] Relu Transpose[0, 2, 1] Transpose[2, 1, 0]");
}

TEST(MappingFixedPoint, RulesThatNeverSettleAreReportedAtTheCap) {
  auto reg = onnx_registry();
  // Relu -> Relu forever.
  auto t = table_of(R"(
    - rule_name: again
      type: {src: Relu, dst: Relu}
)", true, *reg);
  auto doc = transpose_chain();
  ConvertOptions o;
  o.max_rewrites = 50;
  Report rep;
  CompiledTable(*t, *reg).apply(doc.graph, o, rep);
  ASSERT_EQ(rep.errors.size(), 1u) << rep.text();
  EXPECT_NE(rep.errors[0].find("did not reach a fixed point: 50 rewrites"), std::string::npos) << rep.errors[0];
}

TEST(MappingFixedPoint, TheHeaderKeyIsChecked) {
  auto parse = [](const std::string& header) {
    return parse_table(text::parse_tree("table:\n  src: amanda/onnx/12\n" + header + "  rules: []\n", text::Format::Yaml, "t.yaml"));
  };
  EXPECT_TRUE(parse("  dst: amanda/onnx/12\n  fixed_point: true\n")->fixed_point);
  EXPECT_FALSE(parse("  dst: amanda/onnx/12\n  fixed_point: false\n")->fixed_point);
  EXPECT_FALSE(parse("  dst: amanda/onnx/13\n")->fixed_point);
  try {
    parse("  dst: amanda/onnx/12\n  fixed_point: yes please\n");
    ADD_FAILURE() << "accepted a fixed_point that is not a boolean";
  } catch (const ParseError& e) {
    EXPECT_NE(std::string(e.what()).find("fixed_point must be true or false"), std::string::npos) << e.what();
  }
  try {
    parse("  dst: amanda/onnx/13\n  fixed_point: true\n");
    ADD_FAILURE() << "accepted a fixed_point table between two namespaces";
  } catch (const ParseError& e) {
    EXPECT_NE(std::string(e.what()).find("needs a table from a namespace to itself"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace amanda::mapping
