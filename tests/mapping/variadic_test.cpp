// Variadic captures (issue 26): `ref: xs...` in a matcher's port list binds every port NAME.0,
// NAME.1, ... of the op; the mapper's graph: text spreads it (`xs...`), indexes it (`xs[0]`,
// `m[i - 1]`) and repeats a line per element (`for i in range(len(xs)): ...`). One rule for any
// input count, where the tables had one generated rule per count.
#include <gtest/gtest.h>

#include "amanda/frameworks/onnx/namespaces.h"
#include "amanda/mapping/engine.h"
#include "amanda/mapping/expr.h"
#include "amanda/schema/registry.h"
#include "amanda/text/document.h"

using namespace amanda;
using namespace amanda::mapping;

namespace {

std::unique_ptr<schema::Registry> onnx_registry() {
  auto reg = schema::make_default_registry();
  reg->add_provider(onnx_frontend::make_onnx_namespace_provider());
  return reg;
}

std::unique_ptr<Table> table_of(const std::string& rules, schema::Registry& reg) {
  auto t = parse_table(text::parse_tree("table:\n  src: amanda/onnx/13\n  dst: amanda/onnx/13\n  rules:" + rules, text::Format::Yaml, "v.yaml"));
  Diagnostics d;
  check_table(*t, reg, d);
  EXPECT_FALSE(d.has_errors()) << d.str();
  return t;
}

// Concats of 1, 3 and 5 graph inputs (x0, x1, ...), each a graph output.
text::Document concats() {
  std::string ops, edges, ins, outs;
  for (int k = 0; k < 5; ++k) ins += (k ? ", " : "") + std::string("{name: x") + std::to_string(k) + "}";
  for (int n : {1, 3, 5}) {
    std::string c = "c" + std::to_string(n), ports;
    for (int k = 0; k < n; ++k) {
      ports += (k ? ", " : "") + std::string("inputs.") + std::to_string(k);
      edges += "    - {output_port: {op: g, port: x" + std::to_string(k) + "}, input_ports: {op: " + c + ", port: inputs." + std::to_string(k) + "}}\n";
    }
    ops += "    - {type: Concat, name: " + c + ", attrs: {axis: 0}, input_ports: [" + ports + "], output_ports: [concat_result]}\n";
    edges += "    - {output_port: {op: " + c + ", port: concat_result}, input_ports: {op: g, port: y" + std::to_string(n) + "}}\n";
    outs += (outs.empty() ? "" : ", ") + std::string("{name: y") + std::to_string(n) + "}";
  }
  Diagnostics d;
  auto doc = text::parse("graph:\n  namespace: amanda/onnx/13\n  name: g\n  input_ports: [" + ins + "]\n  output_ports: [" + outs + "]\n  ops:\n" + ops +
                             "  edges:\n" + edges,
                         text::Format::Yaml, "concats.yaml", d);
  EXPECT_FALSE(d.has_errors()) << d.str();
  return doc;
}

// The producers of op's data inputs, by name ("x2 x1 x0"); through an Identity, its input's.
std::string inputs_of(const ir::Graph& g, ir::OpId op) {
  std::string s;
  for (ir::PortId p : g.inputs(op)) {
    ir::PortId src = g.producer(p);
    if (!src) continue;
    ir::OpId o = g.port_op(src);
    std::string v = o == g.root() ? std::string(g.port_name_str(src)) : std::string(g.type_str(o)) + "(" + inputs_of(g, o) + ")";
    s += (s.empty() ? "" : " ") + v;
  }
  return s;
}

ir::OpId producer_of_output(const ir::Graph& g, const std::string& out) {
  for (ir::PortId p : g.outputs(g.root()))
    if (g.port_name_str(p) == out) return g.port_op(g.producer(p));
  return ir::OpId();
}

}  // namespace

// One rule reverses a Concat of any count: the list spread backwards through a `for` line.
TEST(VariadicCaptures, OneRuleForAnyInputCount) {
  auto reg = onnx_registry();
  auto t = table_of(R"Y(
    - rule_name: single
      src: {type: Concat, input_ports: [{name: inputs, ref: xs...}], output_ports: [{name: concat_result, ref: y}]}
      when: "len(xs) == 1"
      dst: {graph: "y = Identity(xs[0])"}
    - rule_name: reverse
      src: {type: Concat, attrs: {axis: {ref: ax}}, input_ports: [{name: inputs, ref: xs...}], output_ports: [{name: concat_result, ref: y}]}
      dst:
        graph: |
          for i in range(len(xs)): r[i] = Neg(xs[len(xs) - 1 - i])
          y = Concat(r...) {axis: "{ax + len(xs) - len(xs)}"}
)Y", *reg);
  auto doc = concats();
  Report rep;
  CompiledTable(*t, *reg).apply(doc.graph, {}, rep);  // (one pass: the result is a Concat the rules match again)
  ASSERT_TRUE(rep.ok()) << rep.text();
  EXPECT_EQ(rep.by_rule["single"], 1u);
  EXPECT_EQ(rep.by_rule["reverse"], 2u);
  const ir::Graph& g = doc.graph;
  EXPECT_EQ(g.type_str(producer_of_output(g, "y1")), "Identity");
  EXPECT_EQ(inputs_of(g, producer_of_output(g, "y1")), "x0");
  EXPECT_EQ(inputs_of(g, producer_of_output(g, "y3")), "Neg(x2) Neg(x1) Neg(x0)");
  EXPECT_EQ(inputs_of(g, producer_of_output(g, "y5")), "Neg(x4) Neg(x3) Neg(x2) Neg(x1) Neg(x0)");
  // The spread gives the schema's variadic port names.
  ir::OpId c5 = producer_of_output(g, "y5");
  EXPECT_EQ(g.port_name_str(g.inputs(c5)[4]), "inputs.4");
  // 1 Identity, 3 + 5 Negs, 2 Concats
  EXPECT_EQ(g.op_count(), 11u);
}

// Port predicates index a list capture: dtype(xs[0]), connected(xs[-1]); len() in conditions.
TEST(VariadicCaptures, ConditionsReadTheList) {
  auto reg = onnx_registry();
  auto t = table_of(R"Y(
    - rule_name: three
      src: {type: Concat, input_ports: [{name: inputs, ref: xs...}], output_ports: [{name: concat_result, ref: y}]}
      when: "len(xs) == 3 and connected(xs[-1]) and connected(xs[0])"
      dst:
        graph: |
          m[1] = Add(xs[0], xs[1])
          for i in range(2, len(xs)): m[i] = Add(m[i - 1], xs[i])
          y = Identity(m[len(xs) - 1])
)Y", *reg);
  auto doc = concats();
  Report rep;
  CompiledTable(*t, *reg).apply(doc.graph, {}, rep);  // (one pass: the result is a Concat the rules match again)
  ASSERT_TRUE(rep.ok()) << rep.text();
  EXPECT_EQ(rep.by_rule["three"], 1u);
  EXPECT_EQ(inputs_of(doc.graph, producer_of_output(doc.graph, "y3")), "Add(Add(x0 x1) x2)");
  EXPECT_EQ(doc.graph.type_str(producer_of_output(doc.graph, "y5")), "Concat") << "five inputs: the condition does not hold";
}

// A loop of several statements (';'): each step's statements in order, so step i reads what step
// i - 1 made (a chain of layers: tables/pytorch/pytorch_1.13_onnx_13_rnn.yaml).
TEST(VariadicCaptures, ALoopOfSeveralStatementsChains) {
  auto reg = onnx_registry();
  auto t = table_of(R"Y(
    - rule_name: chain
      src: {type: Concat, input_ports: [{name: inputs, ref: xs...}], output_ports: [{name: concat_result, ref: y}]}
      when: "len(xs) == 3"
      dst:
        graph: |
          z[0] = Identity(xs[0])
          for i in range(1, len(xs)): a[i] = Add(z[i - 1], xs[i]); z[i] = Neg(a[i])
          y = Identity(z[len(xs) - 1])
)Y", *reg);
  auto doc = concats();
  Report rep;
  CompiledTable(*t, *reg).apply(doc.graph, {}, rep);
  ASSERT_TRUE(rep.ok()) << rep.text();
  EXPECT_EQ(rep.by_rule["chain"], 1u);
  EXPECT_EQ(inputs_of(doc.graph, producer_of_output(doc.graph, "y3")), "Neg(Add(Neg(Add(Identity(x0) x1)) x2))");
}

// A mapper that fails while it is expanded (an index past the list) is rolled back and reported
// with the rule and the op; the others still convert.
TEST(VariadicCaptures, AnExpansionThatFailsIsReported) {
  auto reg = onnx_registry();
  auto t = table_of(R"Y(
    - rule_name: bad_index
      src: {type: Concat, input_ports: [{name: inputs, ref: xs...}], output_ports: [{name: concat_result, ref: y}]}
      dst:
        graph: |
          for i in range(len(xs) - 4): r[i] = Neg(xs[i])
          y = Concat(r..., xs[len(xs) - 1])
)Y", *reg);
  auto doc = concats();
  std::string before = text::to_text(doc, text::Format::Yaml);
  Report rep;
  CompiledTable(*t, *reg).apply(doc.graph, {}, rep);  // (one pass: the result is a Concat the rules match again)
  // len 1: range(-3) is refused ("not a length"); len 3 as well; len 5: one Neg and the last input
  EXPECT_EQ(rep.by_rule["bad_index"], 1u) << rep.text();
  ASSERT_EQ(rep.errors.size(), 2u) << rep.text();
  EXPECT_NE(rep.errors[0].find("rule 'bad_index'"), std::string::npos) << rep.errors[0];
  EXPECT_NE(rep.errors[0].find("not a length"), std::string::npos) << rep.errors[0];
  EXPECT_EQ(inputs_of(doc.graph, producer_of_output(doc.graph, "y5")), "Neg(x0) x4");
  EXPECT_EQ(inputs_of(doc.graph, producer_of_output(doc.graph, "y3")), "x0 x1 x2") << "rolled back";
}

TEST(VariadicCaptures, TheTableLanguageChecksThem) {
  auto parse = [](const std::string& rule) {
    return parse_table(text::parse_tree("table:\n  src: amanda/onnx/13\n  dst: amanda/onnx/12\n  rules:\n" + rule, text::Format::Yaml, "v.yaml"));
  };
  auto refused = [&](const std::string& rule, const std::string& msg) {
    try {
      parse(rule);
      ADD_FAILURE() << "accepted: " << rule;
    } catch (const ParseError& e) {
      EXPECT_NE(std::string(e.what()).find(msg), std::string::npos) << e.what();
    }
  };
  refused("    - {rule_name: a, src: {type: Concat, input_ports: [{ref: xs...}]}, dst: {type: Concat}}\n", "needs the port's name");
  refused("    - {rule_name: a, src: {type: Concat, input_ports: [{name: inputs, ref: ...}]}, dst: {type: Concat}}\n", "needs a name");
  refused("    - {rule_name: a, src: {graph: \"y = Concat(xs...)\"}, dst: {type: Concat}}\n", "a matcher's graph: text has no lists");
  refused("    - {rule_name: a, src: {type: Concat, input_ports: [{name: inputs, ref: xs...}]}, dst: {graph: \"for i in 3: y = Neg(x)\"}}\n",
          "a loop is `for VAR in range([LO,] HI): LINE`");
  // Expansions are bounded (a hostile table): a length, and the lines of all loops together.
  refused("    - {rule_name: a, src: {type: Concat, input_ports: [{name: inputs, ref: xs...}]}, dst: {graph: \"for i in range(200000): y[i] = Neg(xs[0])\"}}\n",
          "more than 100000");
  refused("    - {rule_name: a, src: {type: Concat, input_ports: [{name: inputs, ref: xs...}]}, dst: {graph: \"for i in range(60000): y[i] = Neg(xs[0])\\n"
          "for i in range(60000): z[i] = Neg(xs[0])\"}}\n",
          "the lists expand to more than 100000 lines");
  // A table with list captures cannot run backwards.
  auto t = parse("    - {rule_name: a, src: {type: Concat, input_ports: [{name: inputs, ref: xs...}], output_ports: [{name: concat_result, ref: y}]}, "
                 "dst: {graph: \"y = Concat(xs...)\"}}\n");
  EXPECT_TRUE(t->rules[0].dst_template);
  EXPECT_TRUE(t->rules[0].src.ops[0].inputs[0].variadic);
  EXPECT_THROW(reverse_table(*t), Error);
  // The checker sees an expansion with sample lengths: a mapper op that the target lacks is named.
  auto reg = onnx_registry();
  auto bad = parse("    - {rule_name: a, src: {type: Concat, input_ports: [{name: inputs, ref: xs...}], output_ports: [{name: concat_result, ref: y}]}, "
                   "dst: {graph: \"for i in range(len(xs)): r[i] = NoSuchOp(xs[i])\\ny = Concat(r...)\"}}\n");
  Diagnostics d;
  check_table(*bad, *reg, d);
  EXPECT_NE(d.str().find("NoSuchOp"), std::string::npos) << d.str();
}
