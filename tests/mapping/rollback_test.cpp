// A rule whose mapper fails half-way leaves the graph exactly as it was (the YAML form
// byte-identical) and the report names the rule and the op: the engine evaluates every name,
// attribute and constant of a rule before it changes anything.
#include <gtest/gtest.h>

#include "amanda/frontends/onnx/namespaces.h"
#include "amanda/mapping/engine.h"
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
