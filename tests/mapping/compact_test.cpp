// The table language's short forms (docs/mapping-tables.md): a rule matching a list of types,
// and the compact one-op-per-line pattern form (`graph: |`), whose edges follow from value names
// and whose positional ports take the schema's names.
#include <gtest/gtest.h>

#include "amanda/frameworks/onnx/namespaces.h"
#include "amanda/mapping/engine.h"
#include "amanda/schema/registry.h"
#include "amanda/text/document.h"
#include "amanda/text/tree.h"

using namespace amanda;
using namespace amanda::mapping;

namespace {

std::unique_ptr<schema::Registry> registry() {
  auto r = schema::make_default_registry();
  r->add_provider(onnx_frontend::make_onnx_namespace_provider());
  return r;
}

std::unique_ptr<Table> table(const std::string& rules) {
  std::string yaml = "table:\n  src: amanda/onnx/13\n  dst: amanda/onnx/12\n  rules:\n" + rules;
  return parse_table(text::parse_tree(yaml, text::Format::Yaml, "t.yaml"));
}

// x -> Relu -> Sigmoid -> y
const char* kGraph = R"(graph:
  namespace: amanda/onnx/13
  name: g
  input_ports: [{name: x, attrs: {type: float32, shape: [2, 3]}}]
  output_ports: [{name: y}]
  ops:
    - {type: Relu, name: r, input_ports: [X], output_ports: [{name: Y, attrs: {"@type": float32, "@shape": [2, 3]}}]}
    - {type: Sigmoid, name: s, input_ports: [X], output_ports: [{name: Y, attrs: {"@type": float32, "@shape": [2, 3]}}]}
  edges:
    - {output_port: {op: g, port: x}, input_ports: {op: r, port: X}}
    - {output_port: {op: r, port: Y}, input_ports: {op: s, port: X}}
    - {output_port: {op: s, port: Y}, input_ports: {op: g, port: y}}
)";

Report apply(text::Document& doc, const Table& t, schema::Registry& reg) {
  Diagnostics d;
  check_table(t, reg, d);
  EXPECT_FALSE(d.has_errors()) << d.str();
  CompiledTable ct(t, reg, {});
  Report rep;
  ct.apply(doc.graph, {}, rep);
  return rep;
}

std::vector<std::string> op_types(const ir::Graph& g) {
  std::vector<std::string> out;
  for (ir::OpId c = g.first_child(g.root()); c; c = g.next_sibling(c)) out.emplace_back(g.type_str(c));
  return out;
}

}  // namespace

TEST(MappingShortForms, RuleForAListOfTypes) {
  auto reg = registry();
  // one rule for both ops; written once, it stands for one rule per type, all with its name
  auto t = table(R"(    - rule_name: act
      src: {type: [Relu, Sigmoid], input_ports: [{name: X, ref: x}], output_ports: [{name: Y, ref: y}]}
      dst: {type: Abs, input_ports: [{name: X, ref: x}], output_ports: [{name: Y, ref: y}]}
)");
  ASSERT_EQ(t->rules.size(), 2u);
  EXPECT_EQ(t->rules[0].src.ops[0].type, "Relu");
  EXPECT_EQ(t->rules[1].src.ops[0].type, "Sigmoid");
  EXPECT_EQ(t->rules[1].name, "act");
  Diagnostics d;
  text::Document doc = text::parse(kGraph, text::Format::Yaml, "g.yaml", d);
  Report r = apply(doc, *t, *reg);
  EXPECT_TRUE(r.ok()) << r.text();
  EXPECT_EQ(r.by_rule["act"], 2u);
  EXPECT_EQ(op_types(doc.graph), (std::vector<std::string>{"Abs", "Abs"}));
  // the pushdown spelling too
  auto p = table("    - {rule_name: act, type: {src: [Relu, Sigmoid], dst: Abs}}\n");
  ASSERT_EQ(p->rules.size(), 2u);
  EXPECT_EQ(p->rules[1].src.ops[0].type, "Sigmoid");
  EXPECT_EQ(p->rules[1].dst.ops[0].type, "Abs");
  // an empty list or a list of non-names is an error with a location
  EXPECT_THROW(table("    - {rule_name: act, type: {src: [], dst: Abs}}\n"), ParseError);
  EXPECT_THROW(table("    - {rule_name: act, type: {src: [[Relu]], dst: Abs}}\n"), ParseError);
  // two rules of the same name written separately are still refused
  EXPECT_THROW(table("    - {rule_name: a, type: {src: Relu, dst: Abs}}\n    - {rule_name: a, type: {src: Sigmoid, dst: Abs}}\n"),
               ParseError);
}

TEST(MappingShortForms, CompactPatternMakesOpsEdgesPortsAndConstants) {
  auto reg = registry();
  // Relu(x) -> Mul(Neg(x), 2) then Transpose: edges from value names, ports by position get the
  // schema's names (Neg: X -> Y; Mul: A, B -> C), a {expr} argument is a constant input.
  auto t = table(R"(    - rule_name: relu
      src: {type: Relu, input_ports: [{name: X, ref: x}], output_ports: [{name: Y, ref: y}]}
      dst:
        graph: |
          # a comment line
          n = Neg(x)
          m = Mul(n, {tensor(2.0, 'float32')})
          y = Transpose(data=m) {perm: [1, 0]}
    - {rule_name: sigmoid, type: Sigmoid}
)");
  ASSERT_EQ(t->rules.size(), 2u);
  const Pattern& p = t->rules[0].dst;
  ASSERT_EQ(p.ops.size(), 3u);
  EXPECT_EQ(p.ops[0].type, "Neg");
  EXPECT_EQ(p.ops[2].attrs.at(0).name, "perm");
  ASSERT_EQ(p.edges.size(), 2u);
  EXPECT_EQ(p.edges[0].src_op, 0u);
  EXPECT_EQ(p.edges[0].dst_op, 1u);
  EXPECT_EQ(p.edges[1].src_op, 1u);
  EXPECT_EQ(p.edges[1].dst_op, 2u);
  EXPECT_EQ(p.ops[0].inputs[0].ref, "x");     // not made by a line: a capture
  EXPECT_EQ(p.ops[2].outputs[0].ref, "y");    // read by no line: the boundary
  EXPECT_TRUE(p.ops[1].outputs[0].ref.empty());  // an inner value
  EXPECT_TRUE(p.ops[1].inputs[1].value);        // {expr}: a constant

  Diagnostics d;
  text::Document doc = text::parse(kGraph, text::Format::Yaml, "g.yaml", d);
  Report r = apply(doc, *t, *reg);
  EXPECT_TRUE(r.ok()) << r.text();
  ir::Graph& g = doc.graph;
  ir::OpId neg, mul, tr;
  for (ir::OpId c = g.first_child(g.root()); c; c = g.next_sibling(c)) {
    if (g.type_str(c) == "Neg") neg = c;
    if (g.type_str(c) == "Mul") mul = c;
    if (g.type_str(c) == "Transpose") tr = c;
  }
  ASSERT_TRUE(neg && mul && tr);
  // schema port names, and the edges between them
  EXPECT_TRUE(g.find_port(neg, ir::PortDir::In, g.sym("X")));
  ir::PortId a = g.find_port(mul, ir::PortDir::In, g.sym("A"));
  ir::PortId b = g.find_port(mul, ir::PortDir::In, g.sym("B"));
  ASSERT_TRUE(a && b);
  EXPECT_EQ(g.port_op(g.producer(a)), neg);
  EXPECT_EQ(g.type_str(g.port_op(g.producer(b))), "Constant");
  ir::PortId data = g.find_port(tr, ir::PortDir::In, g.sym("data"));
  ASSERT_TRUE(data);
  EXPECT_EQ(g.port_op(g.producer(data)), mul);
  EXPECT_EQ(g.port_name_str(g.producer(data)), "C");
  // Relu's input feeds Neg; Transpose's output feeds the Sigmoid Relu fed
  EXPECT_EQ(g.port_name_str(g.producer(g.find_port(neg, ir::PortDir::In, g.sym("X")))), "x");
  ASSERT_EQ(g.attr(tr, g.sym("perm"))->as_list().size(), 2u);
}

TEST(MappingShortForms, CompactPatternErrorsNameTheRuleAndLine) {
  auto bad = [](const std::string& graph) {
    std::string rules = "    - rule_name: r\n      src: {type: Relu}\n      dst:\n        graph: |\n";
    size_t s = 0;
    while (s < graph.size()) {
      size_t e = graph.find('\n', s);
      if (e == std::string::npos) e = graph.size();
      rules += "          " + graph.substr(s, e - s) + "\n";
      s = e + 1;
    }
    try {
      table(rules);
    } catch (const ParseError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(bad("y = Neg(x)\ny = Abs(x)").find("made twice"), std::string::npos);
  EXPECT_NE(bad("y = Neg(z)\nz = Abs(x)").find("read before"), std::string::npos);
  EXPECT_NE(bad("Neg(x)").find("OUTS = TYPE(ARGS)"), std::string::npos);
  EXPECT_NE(bad("y = Neg(x").find("closing bracket"), std::string::npos);
  EXPECT_NE(bad("y = Neg(x) perm").find("only {ATTRS}"), std::string::npos);
  EXPECT_NE(bad("y = Neg(1x)").find("not a value name"), std::string::npos);
  EXPECT_NE(bad("y = Neg(x)\n").find("no error"), std::string::npos);
  // the error names the rule and the line of the table file
  std::string e = bad("y = Neg(x)\nz = Abs(1x)");
  EXPECT_NE(e.find("rule 'r'"), std::string::npos) << e;
  EXPECT_NE(e.find("t.yaml:10"), std::string::npos) << e;
}
