// Layer tables (`over:`, docs/mapping-tables.md "Layer tables"): a table src -> dst over B joins a
// chain from src that passes through B and then dst; its rules run before the chain's first table
// and the ops they make are dst's, untouched by the tables until the chain reaches dst. Here an
// opset-12 graph with a layer to opset 14 over 13 (Relu -> HardSwish, an op new in 14, for the
// test's sake): without the sealing, the 12 -> 13 step would refuse HardSwish.
#include <gtest/gtest.h>

#include "amanda/frameworks/onnx/namespaces.h"
#include "amanda/mapping/engine.h"
#include "amanda/schema/registry.h"
#include "amanda/text/document.h"
#include "amanda/text/tree.h"

using namespace amanda;
using namespace amanda::mapping;

namespace {

std::unique_ptr<Table> table(const std::string& yaml) { return parse_table(text::parse_tree(yaml, text::Format::Yaml, "layer.yaml")); }

const char* kLayer = R"yaml(table:
  src: amanda/onnx/12
  dst: amanda/onnx/14
  over: amanda/onnx/13
  rules:
    - rule_name: relu_hardswish
      src: {type: Relu, input_ports: [{name: X, ref: x}], output_ports: [{name: Y, ref: y}]}
      dst: {type: HardSwish, input_ports: [{name: X, ref: x}], output_ports: [{name: Y, ref: y}]}
)yaml";

std::unique_ptr<schema::Registry> onnx_registry() {
  auto reg = schema::make_default_registry();
  reg->add_provider(onnx_frontend::make_onnx_namespace_provider());
  return reg;
}

// x -> FIRST -> Sigmoid -> y at opset 12
text::Document graph(const std::string& first = "Relu") {
  Diagnostics d;
  auto doc = text::parse(R"(graph:
  namespace: amanda/onnx/12
  name: g
  input_ports: [{name: x}]
  output_ports: [{name: y}]
  ops:
    - {type: )" + first + R"(, name: r, input_ports: [X], output_ports: [Y]}
    - {type: Sigmoid, name: s, input_ports: [X], output_ports: [Y]}
  edges:
    - {output_port: {op: g, port: x}, input_ports: {op: r, port: X}}
    - {output_port: {op: r, port: Y}, input_ports: {op: s, port: X}}
    - {output_port: {op: s, port: Y}, input_ports: {op: g, port: y}}
)", text::Format::Yaml, "g.yaml", d);
  EXPECT_FALSE(d.has_errors()) << d.str();
  return doc;
}

std::string types(const ir::Graph& g) {
  std::string s;
  for (ir::OpId c = g.first_child(g.root()); c; c = g.next_sibling(c)) s += (s.empty() ? "" : " ") + std::string(g.type_str(c));
  return s;
}

std::string names(const std::vector<const Table*>& chain) {
  std::string s;
  for (const Table* t : chain)
    if (t->src != t->dst)  // (rewrite tables at onnx/13, tables/pytorch's tagged ones, are no steps)
      s += (s.empty() ? "" : "; ") + t->name() + (t->over.empty() ? "" : " over " + t->over);
  return s;
}

TableSet shipped_and_layer() {
  TableSet set;
  set.add_folder(shipped_table_dir(), /*lazy=*/true);
  set.add(table(kLayer));
  return set;
}

}  // namespace

TEST(LayerTables, JoinOnlyChainsThroughOverAndDst) {
  TableSet set = shipped_and_layer();
  EXPECT_EQ(names(set.plan("amanda/onnx/12", "amanda/onnx/13")), "amanda/onnx/12 -> amanda/onnx/13");
  EXPECT_EQ(names(set.plan("amanda/onnx/12", "amanda/onnx/14")),
            "amanda/onnx/12 -> amanda/onnx/14 over amanda/onnx/13; amanda/onnx/12 -> amanda/onnx/13; amanda/onnx/13 -> amanda/onnx/14");
  EXPECT_EQ(names(set.plan("amanda/onnx/12", "amanda/onnx/15")),
            "amanda/onnx/12 -> amanda/onnx/14 over amanda/onnx/13; amanda/onnx/12 -> amanda/onnx/13; amanda/onnx/13 -> amanda/onnx/14; "
            "amanda/onnx/14 -> amanda/onnx/15");
  // (no step of its own: the chain from 13 or to 11 does not see it)
  EXPECT_EQ(names(set.plan("amanda/onnx/13", "amanda/onnx/14")), "amanda/onnx/13 -> amanda/onnx/14");
  EXPECT_EQ(names(set.plan("amanda/onnx/12", "amanda/onnx/11")), "amanda/onnx/12 -> amanda/onnx/11");
}

TEST(LayerTables, WhatTheLayerMakesIsLeftAloneUntilItsOpset) {
  auto reg = onnx_registry();
  {
    TableSet set = shipped_and_layer();
    auto doc = graph();
    Report rep = convert(doc.graph, "amanda/onnx/15", set, *reg, {});
    ASSERT_TRUE(rep.ok()) << rep.text();
    EXPECT_EQ(types(doc.graph), "HardSwish Sigmoid");
    EXPECT_EQ(doc.graph.type_str(doc.graph.root()), "amanda/onnx/15");
    EXPECT_EQ(rep.by_rule["relu_hardswish"], 1u) << rep.text();
  }
  {  // below the layer's dst it does not run
    TableSet set = shipped_and_layer();
    auto doc = graph();
    Report rep = convert(doc.graph, "amanda/onnx/13", set, *reg, {});
    ASSERT_TRUE(rep.ok()) << rep.text();
    EXPECT_EQ(types(doc.graph), "Relu Sigmoid");
  }
  {  // a HardSwish in the opset-12 graph that no layer made is refused by the 12 -> 13 step's
     // schemas: the sealing is what lets the layer's through
    TableSet set = shipped_and_layer();
    auto doc = graph("HardSwish");
    Report rep = convert(doc.graph, "amanda/onnx/14", set, *reg, {});
    EXPECT_FALSE(rep.ok());
  }
}

TEST(LayerTables, HeaderIsChecked) {
  EXPECT_THROW(table("table:\n  src: amanda/onnx/12\n  dst: amanda/onnx/14\n  over: amanda/onnx/14\n  rules: []\n"), ParseError);
  EXPECT_THROW(table("table:\n  src: amanda/onnx/12\n  dst: amanda/onnx/14\n  over: amanda/onnx/13\n  reversible: true\n  rules: []\n"),
               ParseError);
  TableSet set;
  set.add(table(kLayer));
  // two files of one pair must agree on over
  EXPECT_THROW(set.add(table("table:\n  src: amanda/onnx/12\n  dst: amanda/onnx/14\n  rules: []\n")), ParseError);
}
