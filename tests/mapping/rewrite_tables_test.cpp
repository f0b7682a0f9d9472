// Rewrite tables (src == dst) in conversions (issue 26): the planner puts a namespace's rewrite
// tables into every chain that passes through it, and convert() / rewrite() run them to a fixed
// point, with a bound on the rewrites that reports rules which never settle. The test table
// (tests/mapping/tables/onnx_13_sink_transposes.yaml) has two rules that enable each other.
#include <gtest/gtest.h>

#include "amanda/frameworks/onnx/namespaces.h"
#include "amanda/mapping/engine.h"
#include "amanda/mapping/expr.h"
#include "amanda/schema/registry.h"
#include "amanda/text/document.h"

using namespace amanda;
using namespace amanda::mapping;

namespace {

const std::string kTable = std::string(AMANDA_TEST_DATA) + "/mapping/tables/onnx_13_sink_transposes.yaml";

std::unique_ptr<schema::Registry> onnx_registry() {
  auto reg = schema::make_default_registry();
  reg->add_provider(onnx_frontend::make_onnx_namespace_provider());
  return reg;
}

// x -> t1:Transpose[1,0,2] -> r1:Relu -> t2:Transpose[0,2,1] -> r2:Relu -> t3:Transpose[2,1,0] -> y
text::Document chain(const std::string& ns = "amanda/onnx/13") {
  Diagnostics d;
  auto doc = text::parse(R"(graph:
  namespace: )" + ns + R"(
  name: g
  input_ports: [{name: x}]
  output_ports: [{name: y}]
  ops:
    - {type: Transpose, name: t1, attrs: {perm: [1, 0, 2]}, input_ports: [data], output_ports: [transposed]}
    - {type: Relu, name: r1, input_ports: [X], output_ports: [Y]}
    - {type: Transpose, name: t2, attrs: {perm: [0, 2, 1]}, input_ports: [data], output_ports: [transposed]}
    - {type: Relu, name: r2, input_ports: [X], output_ports: [Y]}
    - {type: Transpose, name: t3, attrs: {perm: [2, 1, 0]}, input_ports: [data], output_ports: [transposed]}
  edges:
    - {output_port: {op: g, port: x}, input_ports: {op: t1, port: data}}
    - {output_port: {op: t1, port: transposed}, input_ports: {op: r1, port: X}}
    - {output_port: {op: r1, port: Y}, input_ports: {op: t2, port: data}}
    - {output_port: {op: t2, port: transposed}, input_ports: {op: r2, port: X}}
    - {output_port: {op: r2, port: Y}, input_ports: {op: t3, port: data}}
    - {output_port: {op: t3, port: transposed}, input_ports: {op: g, port: y}}
)", text::Format::Yaml, "chain.yaml", d);
  EXPECT_FALSE(d.has_errors()) << d.str();
  return doc;
}

// The ops from x to y: types, with Transpose's perm ("Relu Relu Transpose[0, 2, 1]").
std::string chain_of(const ir::Graph& g) {
  std::string s;
  ir::PortId p = g.inputs(g.root())[0];
  for (int guard = 0; guard < 100; ++guard) {
    ir::PortId next;
    for (ir::EdgeId e = g.first_out_edge(p); e; e = g.next_out_edge(e)) {
      ir::OpId op = g.port_op(g.edge_dst(e));
      if (op == g.root()) continue;
      s += (s.empty() ? "" : " ") + std::string(g.type_str(op));
      if (const ir::Value* v = g.attr(op, g.symbols().find("perm"))) s += value_str(*v);
      next = g.outputs(op)[0];
    }
    if (!next) break;
    p = next;
  }
  return s;
}

TableSet shipped_and_rewrite() {
  TableSet set;
  set.add_folder(shipped_table_dir(), /*lazy=*/true);
  set.add(read_table(kTable));
  return set;
}

}  // namespace

TEST(RewriteTables, TheTableIsChecked) {
  auto reg = onnx_registry();
  auto t = read_table(kTable);
  Diagnostics d;
  check_table(*t, *reg, d);
  EXPECT_FALSE(d.has_errors()) << d.str();
  EXPECT_FALSE(t->fixed_point) << "the file does not ask for it: convert() and rewrite() run it to a fixed point anyway";
}

// One pass (the table applied as it declares itself) does not finish: each rule's result is the
// other's pattern, so the result needs both, again and again.
TEST(RewriteTables, OnePassDoesNotFinish) {
  auto reg = onnx_registry();
  auto t = read_table(kTable);
  auto doc = chain();
  Report rep;
  CompiledTable(*t, *reg).apply(doc.graph, {}, rep);
  ASSERT_TRUE(rep.ok()) << rep.text();
  EXPECT_NE(chain_of(doc.graph), "Relu Relu Transpose[0, 2, 1]") << rep.text();
}

TEST(RewriteTables, RewriteRunsToAFixedPoint) {
  auto reg = onnx_registry();
  auto t = read_table(kTable);
  auto doc = chain();
  Report rep = rewrite(doc.graph, *t, *reg);
  ASSERT_TRUE(rep.ok()) << rep.text();
  // [1,0,2] then [0,2,1] then [2,1,0] is [0,2,1]; both Relus first.
  EXPECT_EQ(chain_of(doc.graph), "Relu Relu Transpose[0, 2, 1]");
  EXPECT_EQ(rep.by_rule["sink_transpose"], 2u) << rep.text();
  EXPECT_EQ(rep.by_rule["fuse_transposes"], 2u) << rep.text();
  EXPECT_EQ(std::string(doc.graph.str(doc.graph.graph_namespace(doc.graph.root()))), "amanda/onnx/13");
  // Applying it again changes nothing: it is a fixed point.
  Report again = rewrite(doc.graph, *t, *reg);
  EXPECT_TRUE(again.ok()) << again.text();
  EXPECT_EQ(again.mapped, 0u) << again.text();
  EXPECT_EQ(chain_of(doc.graph), "Relu Relu Transpose[0, 2, 1]");
}

TEST(RewriteTables, RewriteRefusesATableBetweenTwoNamespaces) {
  auto reg = onnx_registry();
  auto set = shipped_and_rewrite();
  auto doc = chain();
  const Table* down = set.plan("amanda/onnx/13", "amanda/onnx/12").back();
  ASSERT_NE(down->src, down->dst);
  EXPECT_THROW(rewrite(doc.graph, *down, *reg), Error);
}

TEST(RewriteTables, ThePlanRunsThemWhereTheChainPasses) {
  auto set = shipped_and_rewrite();
  auto names = [](const std::vector<const Table*>& c) {
    std::string s;
    for (const Table* t : c) s += (s.empty() ? "" : ", ") + t->name();
    return s;
  };
  EXPECT_EQ(names(set.plan("amanda/onnx/13", "amanda/onnx/12")), "amanda/onnx/13 -> amanda/onnx/13, amanda/onnx/13 -> amanda/onnx/12");
  EXPECT_EQ(names(set.plan("amanda/onnx/12", "amanda/onnx/13")), "amanda/onnx/12 -> amanda/onnx/13, amanda/onnx/13 -> amanda/onnx/13");
  EXPECT_EQ(names(set.plan("amanda/onnx/14", "amanda/onnx/12")),
            "amanda/onnx/14 -> amanda/onnx/13, amanda/onnx/13 -> amanda/onnx/13, amanda/onnx/13 -> amanda/onnx/12");
  EXPECT_EQ(names(set.plan("amanda/onnx/13", "amanda/onnx/13")), "amanda/onnx/13 -> amanda/onnx/13");
  EXPECT_EQ(names(set.plan("amanda/onnx/11", "amanda/onnx/10")), "amanda/onnx/11 -> amanda/onnx/10") << "not on the way";
  EXPECT_EQ(names(set.plan("amanda/onnx/12", "amanda/onnx/12")), "");
  EXPECT_EQ(names(set.rewrites("amanda/onnx/13")), "amanda/onnx/13 -> amanda/onnx/13");
}

// A conversion 13 -> 12 passes through 13: the rewrite table runs there to a fixed point, then the
// 13 -> 12 table converts the result.
TEST(RewriteTables, AConversionRunsThemToAFixedPoint) {
  auto reg = onnx_registry();
  auto set = shipped_and_rewrite();
  auto doc = chain();
  Report rep = convert(doc.graph, "amanda/onnx/12", set, *reg, {});
  ASSERT_TRUE(rep.ok()) << rep.text();
  EXPECT_EQ(chain_of(doc.graph), "Relu Relu Transpose[0, 2, 1]") << rep.text();
  EXPECT_EQ(rep.by_rule["sink_transpose"], 2u) << rep.text();
  EXPECT_EQ(rep.by_rule["fuse_transposes"], 2u) << rep.text();
  EXPECT_EQ(std::string(doc.graph.str(doc.graph.graph_namespace(doc.graph.root()))), "amanda/onnx/12");
  ASSERT_EQ(rep.tables.size(), 2u);
  EXPECT_EQ(rep.tables[0], "amanda/onnx/13 -> amanda/onnx/13");

  // From 12 up to 13: the rewrite runs at the end, on what the 12 -> 13 table made.
  auto up = chain("amanda/onnx/12");
  Report rep2 = convert(up.graph, "amanda/onnx/13", set, *reg, {});
  ASSERT_TRUE(rep2.ok()) << rep2.text();
  EXPECT_EQ(chain_of(up.graph), "Relu Relu Transpose[0, 2, 1]") << rep2.text();

  // A "conversion" to the graph's own namespace runs its rewrite tables.
  auto same = chain();
  Report rep3 = convert(same.graph, "amanda/onnx/13", set, *reg, {});
  ASSERT_TRUE(rep3.ok()) << rep3.text();
  EXPECT_EQ(chain_of(same.graph), "Relu Relu Transpose[0, 2, 1]") << rep3.text();
}

// The bound on rewrites: rules that keep rewriting each other's results are reported, and the
// conversion stops there (nothing converted further, report not ok).
TEST(RewriteTables, NonConvergenceIsReported) {
  auto reg = onnx_registry();
  auto set = shipped_and_rewrite();
  set.add(parse_table(text::parse_tree(R"(table:
  src: amanda/onnx/13
  dst: amanda/onnx/13
  rules:
    - {rule_name: relu_forever, type: {src: Relu, dst: Relu}}
)", text::Format::Yaml, "forever.yaml")));
  auto doc = chain();
  ConvertOptions o;
  o.max_rewrites = 40;
  Report rep = convert(doc.graph, "amanda/onnx/12", set, *reg, o);
  EXPECT_FALSE(rep.ok());
  ASSERT_FALSE(rep.errors.empty()) << rep.text();
  EXPECT_NE(rep.errors.back().find("did not reach a fixed point: 40 rewrites (the cap)"), std::string::npos) << rep.text();
  EXPECT_EQ(rep.tables.back(), "amanda/onnx/13 -> amanda/onnx/13") << "the chain stops at the table that does not settle";

  // The same through rewrite(), and with the default bound (10 per op plus 1000).
  auto t = parse_table(text::parse_tree("table:\n  src: amanda/onnx/13\n  dst: amanda/onnx/13\n  rules:\n    - {rule_name: relu_forever, type: {src: Relu, dst: Relu}}\n",
                                        text::Format::Yaml, "forever.yaml"));
  auto doc2 = chain();
  Report rep2 = rewrite(doc2.graph, *t, *reg);
  EXPECT_FALSE(rep2.ok());
  ASSERT_EQ(rep2.errors.size(), 1u) << rep2.text();
  EXPECT_NE(rep2.errors[0].find("did not reach a fixed point: 1050 rewrites (the cap)"), std::string::npos) << rep2.errors[0];
}
