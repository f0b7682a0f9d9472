// The mapping layer: the seed's three table examples, the expression language (with inverses),
// rule features (conditions, priority, attributes <-> inputs, one -> several, refusal of shared
// inner values, tags, reversal), table errors and the unmapped-op report.
#include "amanda/frameworks/torch/torchscript.h"
#include <gtest/gtest.h>

#include "amanda/ir/equal.h"
#include "amanda/frameworks/onnx/namespaces.h"
#include "amanda/io/io.h"
#include "amanda/mapping/engine.h"
#include "amanda/schema/registry.h"
#include "amanda/text/document.h"
#include "amanda/text/tree.h"

using namespace amanda;
using namespace amanda::mapping;
using amanda::ir::Value;

namespace {

std::unique_ptr<schema::Registry> registry() { return io::default_registry(); }

std::unique_ptr<Table> table(const std::string& yaml) { return parse_table(text::parse_tree(yaml, text::Format::Yaml, "t.yaml")); }

text::Document graph(const std::string& yaml) {
  Diagnostics d;
  return text::parse(yaml, text::Format::Yaml, "g.yaml", d);
}

Report apply(text::Document& doc, const Table& t, schema::Registry& reg, ConvertOptions o = {}) {
  Diagnostics d;
  check_table(t, reg, d);
  EXPECT_FALSE(d.has_errors()) << d.str();
  CompiledTable ct(t, reg, o.tags);
  Report rep;
  ct.apply(doc.graph, o, rep);
  return rep;
}

std::string yaml(const text::Document& doc) { return text::to_text(doc, text::Format::Yaml); }

Value eval(const std::string& e, const Bindings& b = {}) { return parse_expr(e, {})->eval(b); }

// The seed's PyTorch fragment: x -> aten::t -> aten::matmul(_0) with a Float output.
const char* kTorchGraph = R"(graph:
  namespace: amanda/pytorch/1.4.0
  name: g
  input_ports: [{name: x}, {name: w}]
  output_ports: [{name: y}]
  ops:
    - type: aten::t
      name: t0
      input_ports: [{name: _0}]
      output_ports: [{name: "7"}]
    - type: aten::matmul
      name: mm
      input_ports: [{name: _0}, {name: _1}]
      output_ports: [{name: out, attrs: {type: Float}}]
  edges:
    - {output_port: {op: g, port: w}, input_ports: {op: t0, port: _0}}
    - {output_port: {op: t0, port: "7"}, input_ports: {op: mm, port: _0}}
    - {output_port: {op: g, port: x}, input_ports: {op: mm, port: _1}}
    - {output_port: {op: mm, port: out}, input_ports: {op: g, port: y}}
)";

}  // namespace

TEST(MappingExpr, ArithmeticListsAndFunctions) {
  Bindings b;
  b.set("pads", Value(Value::List{Value(int64_t(1)), Value(int64_t(2))}));
  b.set("fmt", Value("NHWC"));
  b.set("strides", Value(Value::List{Value(int64_t(1)), Value(int64_t(2)), Value(int64_t(3)), Value(int64_t(1))}));
  EXPECT_EQ(value_str(eval("pads * 2 + 1", b)), "[3, 5]");
  EXPECT_EQ(value_str(eval("7 / 2")), "3");
  EXPECT_EQ(value_str(eval("-7 / 2")), "-4");  // floor division
  EXPECT_EQ(value_str(eval("at(strides, find(fmt, 'H'))", b)), "2");  // index chosen by another attribute
  EXPECT_EQ(value_str(eval("at(pads, 5, 0)", b)), "0");
  EXPECT_EQ(value_str(eval("value_map('SAME_UPPER', 'SAME_UPPER', 'SAME', 'VALID', 'VALID')")), "'SAME'");
  EXPECT_EQ(value_str(eval("fmt == 'NHWC'", b)), "true");  // string-equals -> bool
  EXPECT_EQ(value_str(eval("permute(strides, [0, 3, 1, 2])", b)), "[1, 1, 2, 3]");  // NHWC -> NCHW
  EXPECT_EQ(value_str(eval("begin_end([[1, 2], [3, 4]])")), "[1, 3, 2, 4]");
  EXPECT_EQ(value_str(eval("normalize_axes([-1, 0], 4)")), "[3, 0]");
  EXPECT_EQ(value_str(eval("list(tensor([1, 2], 'int64'))")), "[1, 2]");
  EXPECT_EQ(value_str(eval("scalar(tensor(0.5, 'float32'))")), "0.5");
  io::install_conventions();  // the frontends' element type numberings (amanda/ir/conventions.h)
  EXPECT_EQ(value_str(eval("dtype_code(dtype_name(1, 'onnx'), 'torch')", b)), "6");  // element types across systems
  EXPECT_THROW(eval("dtype_code('float32', 'nosuch')", b), EvalError);  // a system no frontend registered
  b.set("nothing_here", Value());
  EXPECT_EQ(value_str(eval("if(has(nothing_here), nothing_here + 1, 2)", b)), "2") << "if() evaluates only the branch it takes";
  EXPECT_EQ(value_str(eval("all([1, 1], 1) and not any([1, 2], 3)")), "true");
  EXPECT_THROW(eval("at(pads, 5)", b), EvalError);
  EXPECT_THROW(eval("value_map('x', 'a', 'b')"), EvalError);
  EXPECT_THROW(parse_expr("nosuch(1)", {"t.yaml", 3, 7}), ParseError);
  EXPECT_THROW(parse_expr("1 +", {}), ParseError);
  EXPECT_THROW(parse_expr("len(1, 2)", {}), ParseError);
}

// Shape lists for lowerings (GatherElements' flat indices, Trilu's diagonal offsets).
TEST(MappingExpr, ShapeFunctions) {
  EXPECT_EQ(value_str(eval("all_known([2, 0, 3])")), "true");
  EXPECT_EQ(value_str(eval("all_known([2, 'N', 3])")), "false");  // a symbolic dimension
  EXPECT_EQ(value_str(eval("all_known([2, -1])")), "false");
  Bindings b;
  b.set("unknown", Value());
  EXPECT_EQ(value_str(eval("all_known(unknown)", b)), "false");
  EXPECT_EQ(value_str(eval("strides([2, 3, 4])")), "[12, 4, 1]");
  EXPECT_EQ(value_str(eval("strides([])")), "[]");
  EXPECT_EQ(value_str(eval("index_grid([2, 3], [-1, 1])")), "[0, 1, 2, -1, 0, 1]");  // j - i
  EXPECT_EQ(value_str(eval("index_grid([2, 2, 2], [4, 0, 1])")), "[0, 1, 0, 1, 4, 5, 4, 5]");
  EXPECT_EQ(value_str(eval("index_grid([], [])")), "[0]");  // a 0-D shape has one index
  EXPECT_EQ(value_str(eval("index_grid([3, 0], [1, 1])")), "[]");
  EXPECT_EQ(value_str(eval("coords([2, 3])")), "[0, 0, 0, 1, 0, 2, 1, 0, 1, 1, 1, 2]");
  EXPECT_EQ(value_str(eval("coords([2, 0])")), "[]");
  EXPECT_EQ(value_str(eval("coords([])")), "[]");
  EXPECT_EQ(value_str(eval("shape_of(reshape(tensor([1, 2, 3, 4, 5, 6], 'int64'), [2, 3]))")), "[2, 3]");
  EXPECT_EQ(value_str(eval("list(reshape(tensor([1, 2, 3, 4, 5, 6], 'int64'), [3, 2]))")), "[1, 2, 3, 4, 5, 6]");
  EXPECT_EQ(value_str(eval("shape_of(reshape(tensor(7.5, 'float32'), [1, 1]))")), "[1, 1]");
  EXPECT_THROW(eval("reshape(tensor([1, 2, 3], 'int64'), [2, 2])"), EvalError);
  EXPECT_THROW(eval("index_grid([2, 3], [1])"), EvalError);
  EXPECT_THROW(eval("strides([2, -3])"), EvalError);
  EXPECT_EQ(value_str(eval("prod([2, 3, 4])")), "24");
  EXPECT_EQ(value_str(eval("prod([2, 3, 4], [0, -1])")), "8");
  EXPECT_EQ(value_str(eval("prod([])")), "1");
  EXPECT_EQ(value_str(eval("pick([5, 6, 7], [2, 0, -2])")), "[7, 5, 6]");
  EXPECT_THROW(eval("pick([5], [1])"), EvalError);
  EXPECT_EQ(value_str(eval("without(range(5), [1, 3])")), "[0, 2, 4]");
  EXPECT_EQ(value_str(eval("without([1, 2], [])")), "[1, 2]");
  EXPECT_EQ(value_str(eval("prod([5, 7], [])")), "1");
  EXPECT_THROW(eval("prod([2, 3], [2])"), EvalError);
  EXPECT_THROW(eval("prod([4294967296, 4294967296])"), EvalError);  // overflows int64
  // Operators are coded at parse time: each still computes what its spelling says.
  EXPECT_EQ(value_str(eval("7 % 3 + 7 / 2 * 2 - -1")), "8");
  EXPECT_EQ(value_str(eval("-7 / 2")), "-4");  // floor division
  EXPECT_EQ(value_str(eval("[1 < 2, 2 <= 2, 3 > 4, 4 >= 5, 1 == 1, 1 != 1]")), "[true, true, false, false, true, false]");
  EXPECT_EQ(value_str(eval("not (1 in [2, 3]) and (2 in [2, 3] or false)")), "true");
  EXPECT_EQ(value_str(eval("if(1 > 0, 'a', 'b')")), "'a'");
}

TEST(MappingExpr, InversesBindTheirRef) {
  Bindings b;
  EXPECT_TRUE(parse_expr("permute(p, [0, 2, 3, 1])", {})->bind(Value(Value::List{Value(int64_t(0)), Value(int64_t(2)), Value(int64_t(3)), Value(int64_t(1))}), b));
  EXPECT_EQ(value_str(*b.get("p")), "[0, 1, 2, 3]");
  EXPECT_TRUE(parse_expr("value_map(m, 'SAME_UPPER', 'SAME')", {})->bind(Value("SAME"), b));
  EXPECT_EQ(value_str(*b.get("m")), "'SAME_UPPER'");
  EXPECT_FALSE(parse_expr("value_map(m2, 'SAME_UPPER', 'SAME')", {})->bind(Value("VALID"), b));
  EXPECT_TRUE(parse_expr("k + 1", {})->bind(Value(int64_t(5)), b));
  EXPECT_EQ(b.get("k")->as_int(), 4);
  EXPECT_TRUE(parse_expr("tensor(axes, 'int64')", {})->bind(eval("tensor([0, 2], 'int64')"), b));
  EXPECT_EQ(value_str(*b.get("axes")), "[0, 2]");
  EXPECT_FALSE(parse_expr("tensor(axes2, 'int32')", {})->bind(eval("tensor([0, 2], 'int64')"), b));
  EXPECT_THROW(parse_expr("len(q)", {})->bind(Value(int64_t(2)), b), EvalError);  // no inverse
}

// The seed's first example: a single-op rule matching aten::matmul with a Float output.
TEST(MappingSeed, SingleOpRule) {
  auto reg = registry();
  auto t = table(R"(table:
  src: amanda/pytorch/1.4.0
  dst: amanda/tensorflow/1.13.1
  rules:
    - rule_name: convert_matmul
      src:
        type: aten::matmul
        output_ports:
          - attrs:
              type: Float
      dst:
        type: MatMul
        name: dense/MatMul
        attrs:
          T: float32
)");
  text::Document doc = graph(kTorchGraph);
  ConvertOptions o;
  o.keep_unmapped = true;
  Report r = apply(doc, *t, *reg, o);
  EXPECT_EQ(r.by_rule["convert_matmul"], 1u);
  ASSERT_EQ(r.unmapped.size(), 1u);  // aten::t has no rule
  EXPECT_EQ(r.unmapped[0].type, "aten::t");
  ir::Graph& g = doc.graph;
  ir::OpId mm = g.find_op(g.root(), "dense/MatMul");
  ASSERT_TRUE(mm);
  EXPECT_EQ(g.type_str(mm), "MatMul");
  EXPECT_EQ(g.attr(mm, g.sym("T"))->as_string(), "float32");
  EXPECT_EQ(g.str(g.graph_namespace(g.root())), "amanda/tensorflow/1.13.1");
  // The edges went with it: the graph output is fed by the new op.
  EXPECT_EQ(g.port_op(g.producer(g.find_output(g.root(), g.sym("y")))), mm);
}

// The seed's second and third examples: a subgraph rule (aten::t + aten::matmul -> MatMul with
// transpose_a) and the same single-op rule in pushdown form.
TEST(MappingSeed, SubgraphRuleAndPushdown) {
  auto reg = registry();
  auto sub = table(R"(table:
  src: amanda/pytorch/1.4.0
  dst: amanda/tensorflow/1.13.1
  rules:
    - rule_name: convert_matmul
      src:
        ops:
          - type: aten::t
            name:
              ref: t_name
            output_ports:
              - name:
                  ref: t_output_name
          - type: aten::matmul
            name:
              ref: matmul_name
            input_ports:
              - name: _0
            output_ports:
              - attrs:
                  type: Float
        edges:
          - output_port: { op: "{t_name}", port: "{t_output_name}" }
            input_ports: { op: "{matmul_name}", port: _0 }
      dst:
        type: MatMul
        name: dense/MatMul
        attrs:
          T: float32
          transpose_a: true
)");
  text::Document doc = graph(kTorchGraph);
  Report r = apply(doc, *sub, *reg);
  EXPECT_TRUE(r.ok()) << r.text();
  ir::Graph& g = doc.graph;
  EXPECT_EQ(g.op_count(), 1u);
  ir::OpId mm = g.find_op(g.root(), "dense/MatMul");
  ASSERT_TRUE(mm);
  EXPECT_TRUE(g.attr(mm, g.sym("transpose_a"))->as_bool());
  // The boundary in order: t's input (w) then matmul's other input (x); the output feeds y.
  ASSERT_EQ(g.inputs(mm).size(), 2u);
  EXPECT_EQ(g.port_name_str(g.producer(g.inputs(mm)[0])), "w");
  EXPECT_EQ(g.port_name_str(g.producer(g.inputs(mm)[1])), "x");
  EXPECT_EQ(g.port_op(g.producer(g.find_output(g.root(), g.sym("y")))), mm);

  auto push = table(R"(table:
  src: amanda/pytorch/1.4.0
  dst: amanda/tensorflow/1.13.1
  rules:
    - rule_name: convert_matmul
      type:
        src: aten::matmul
        dst: MatMul
      output_ports:
          - attrs:
              src:
                type: Float
      name:
        dst: dense/MatMul
      attrs:
        dst:
          T: float32
)");
  ASSERT_EQ(push->rules.size(), 1u);
  const Rule& rule = push->rules[0];
  EXPECT_EQ(rule.src.ops[0].type, "aten::matmul");
  EXPECT_EQ(rule.dst.ops[0].type, "MatMul");
  ASSERT_EQ(rule.src.ops[0].outputs.size(), 1u);
  EXPECT_EQ(rule.src.ops[0].outputs[0].attrs[0].name, "type");
  EXPECT_TRUE(rule.src.ops[0].attrs.empty());
  EXPECT_EQ(rule.dst.ops[0].attrs[0].name, "T");
  text::Document doc2 = graph(kTorchGraph);
  ConvertOptions o;
  o.keep_unmapped = true;
  Report r2 = apply(doc2, *push, *reg, o);
  EXPECT_EQ(r2.by_rule["convert_matmul"], 1u);
  ASSERT_TRUE(doc2.graph.find_op(doc2.graph.root(), "dense/MatMul"));
}

namespace {
// A small ONNX-namespace graph: x -> Relu -> Softmax(axis) -> y, plus a Squeeze with constant axes.
const char* kOnnxGraph = R"(graph:
  namespace: amanda/onnx/13
  name: g
  input_ports: [{name: x, attrs: {type: tensor(float), shape: [2, 3, 4]}}]
  output_ports: [{name: y}, {name: z}]
  ops:
    - type: Relu
      name: relu
      input_ports: [X]
      output_ports: [{name: Y, attrs: {"@type": tensor(float), "@shape": [2, 3, 4]}}]
    - type: Softmax
      name: sm
      attrs: {axis: 1}
      input_ports: [input]
      output_ports: [output]
    - type: Constant
      name: axes
      attrs: {value: !tensor {dtype: int64, shape: [1], data: [0]}}
      output_ports: [output]
    - type: Unsqueeze
      name: unsq
      input_ports: [data, axes]
      output_ports: [expanded]
  edges:
    - {output_port: {op: g, port: x}, input_ports: {op: relu, port: X}}
    - {output_port: {op: relu, port: Y}, input_ports: {op: sm, port: input}}
    - {output_port: {op: sm, port: output}, input_ports: {op: g, port: y}}
    - {output_port: {op: relu, port: Y}, input_ports: {op: unsq, port: data}}
    - {output_port: {op: axes, port: output}, input_ports: {op: unsq, port: axes}}
    - {output_port: {op: unsq, port: expanded}, input_ports: {op: g, port: z}}
)";
}  // namespace

TEST(MappingRules, ConditionsInputsToAttributesAndReport) {
  auto reg = registry();
  auto t = table(R"(table:
  src: amanda/onnx/13
  dst: amanda/onnx/12
  rules:
    - rule_name: unsqueeze_axes_to_attribute
      src: {type: Unsqueeze, input_ports: [data, {name: axes, const: "{axes}"}]}
      dst: {type: Unsqueeze, input_ports: [data], attrs: {axes: "{list(axes)}"}}
    - rule_name: softmax_last_axis
      src: {type: Softmax, attrs: {axis: {ref: axis}}, input_ports: [{name: input, ref: x}]}
      when: "axis == -1 or axis == rank(x) - 1"
      dst: {type: Softmax, attrs: {axis: "{axis}"}}
    - rule_name: softmax_inner_axis
      type: Softmax
      unsupported: "the axis is not the last one"
    - {rule_name: relu, type: Relu}
)");
  text::Document doc = graph(kOnnxGraph);
  ConvertOptions o;
  o.explain = "sm";
  Report r = apply(doc, *t, *reg, o);
  EXPECT_FALSE(r.ok());
  ASSERT_EQ(r.unsupported.size(), 1u) << r.text();
  EXPECT_EQ(r.unsupported[0].type, "Softmax");
  EXPECT_EQ(r.unsupported[0].reason, "the axis is not the last one");
  // --explain tells why the first rule did not match: the condition, with the values.
  std::string ex;
  for (auto& l : r.explain) ex += l + "\n";
  EXPECT_NE(ex.find("condition '((axis == -1) or (axis == (rank(x) - 1)))' does not hold (axis = 1)"), std::string::npos) << ex;
  EXPECT_NE(ex.find("softmax_inner_axis"), std::string::npos) << ex;
  ir::Graph& g = doc.graph;
  ir::OpId u = g.find_op(g.root(), "unsq");
  ASSERT_TRUE(u);
  EXPECT_EQ(value_str(*g.attr(u, g.sym("axes"))), "[0]");
  EXPECT_EQ(g.inputs(u).size(), 1u);
  EXPECT_FALSE(g.find_op(g.root(), "axes")) << "the constant that fed axes is gone";
  EXPECT_EQ(r.json().find("\"ok\": false"), 1u);
}

// dtype(), shape() and rank() read the value's TypeId, the one source of truth for types in memory;
// the spelled type attributes only where no tensor TypeId is set (issue 26).
TEST(MappingExpr, PortTypesComeFromTypeIds) {
  auto reg = registry();
  auto t = table(R"(table:
  src: amanda/onnx/13
  dst: amanda/onnx/12
  rules:
    - rule_name: relu_of_half
      src: {type: Relu, input_ports: [{name: X, ref: x}]}
      when: "dtype(x) == 'float16' and shape(x) == [2, 'N'] and rank(x) == 2"
      dst: {type: Relu}
    - {rule_name: relu_other, type: Relu, unsupported: "not a float16 [2, N] input"}
)");
  const char* g_yaml = R"(graph:
  namespace: amanda/onnx/13
  name: g
  input_ports: [{name: x, attrs: {type: tensor(float), shape: [2, 3, 4]}}]
  output_ports: [{name: y}]
  ops:
    - {type: Relu, name: relu, input_ports: [X], output_ports: [Y]}
  edges:
    - {output_port: {op: g, port: x}, input_ports: {op: relu, port: X}}
    - {output_port: {op: relu, port: Y}, input_ports: {op: g, port: y}}
)";
  // As read: the TypeId comes from the attributes (float32[2, 3, 4]): the rule does not apply.
  text::Document doc = graph(g_yaml);
  EXPECT_FALSE(apply(doc, *t, *reg).ok());
  // The same attributes, the TypeId float16[2, N]: the TypeId decides.
  doc = graph(g_yaml);
  ir::Graph& g = doc.graph;
  ir::PortId x = g.inputs(g.root())[0];
  g.set_port_type(x, g.types().tensor(ir::ElemType::Float16, {ir::Dim::known(2), ir::Dim::symbol(g.sym("N"))}));
  Report r = apply(doc, *t, *reg);
  EXPECT_TRUE(r.ok()) << r.text();
  // No TypeId: the attributes speak (float32): no match again.
  doc = graph(g_yaml);
  doc.graph.set_port_type(doc.graph.inputs(doc.graph.root())[0], ir::TypeId());
  EXPECT_FALSE(apply(doc, *t, *reg).ok());
}

TEST(MappingRules, OneOpToSeveralAndPassThrough) {
  auto reg = registry();
  auto t = table(R"(table:
  src: amanda/onnx/12
  dst: amanda/onnx/13
  rules:
    - rule_name: softmax_coerced_to_2d
      src: {type: Softmax, attrs: {axis: {ref: axis}}, input_ports: [{name: input, ref: x}], output_ports: [{name: output, ref: y}]}
      dst:
        ops:
          - {id: shape, type: Shape, input_ports: [{name: data, ref: x}], output_ports: [shape]}
          - {id: flat, type: Flatten, attrs: {axis: "{axis}"}, input_ports: [{name: input, ref: x}], output_ports: [output]}
          - {id: softmax, type: Softmax, attrs: {axis: -1}, input_ports: [input], output_ports: [output]}
          - {id: back, type: Reshape, primary: true, input_ports: [data, shape], output_ports: [{name: reshaped, ref: y}]}
        edges:
          - {output_port: {op: shape, port: shape}, input_port: {op: back, port: shape}}
          - {output_port: {op: flat, port: output}, input_port: {op: softmax, port: input}}
          - {output_port: {op: softmax, port: output}, input_port: {op: back, port: data}}
    - {rule_name: relu, type: Relu}
    - rule_name: unsqueeze
      src: {type: Unsqueeze, attrs: {axes: {ref: axes}}}
      dst: {type: Unsqueeze, input_ports: [data, {name: axes, const: "{tensor(axes, 'int64')}"}]}
)");
  std::string src = kOnnxGraph;
  src.replace(src.find("amanda/onnx/13"), 14, "amanda/onnx/12");
  // opset 12's Unsqueeze: axes as an attribute
  text::Document doc = graph(R"(graph:
  namespace: amanda/onnx/12
  name: g
  input_ports: [{name: x}]
  output_ports: [{name: y}, {name: z}]
  ops:
    - {type: Softmax, name: sm, attrs: {axis: 1}, input_ports: [input], output_ports: [output]}
    - {type: Unsqueeze, name: unsq, attrs: {axes: [0]}, input_ports: [data], output_ports: [expanded]}
    - {type: Sigmoid, name: sig, input_ports: [X], output_ports: [Y]}
  edges:
    - {output_port: {op: g, port: x}, input_ports: {op: sm, port: input}}
    - {output_port: {op: sm, port: output}, input_ports: {op: g, port: y}}
    - {output_port: {op: g, port: x}, input_ports: {op: sig, port: X}}
    - {output_port: {op: sig, port: Y}, input_ports: {op: unsq, port: data}}
    - {output_port: {op: unsq, port: expanded}, input_ports: {op: g, port: z}}
)");
  ConvertOptions o;
  o.keep_unmapped = true;
  Report r = apply(doc, *t, *reg, o);
  ir::Graph& g = doc.graph;
  // Sigmoid changed in 13 only in its types and has no rule here: the schemas say it is kept.
  EXPECT_TRUE(r.unmapped.empty()) << r.text();
  EXPECT_EQ(r.passed, 1u) << r.text();
  EXPECT_EQ(g.type_str(g.find_op(g.root(), "sig")), "Sigmoid");
  ir::OpId back = g.find_op(g.root(), "sm");
  ASSERT_TRUE(back);
  EXPECT_EQ(g.type_str(back), "Reshape");
  EXPECT_FALSE(g.attr(back, g.sym("axis"))) << "Reshape has no axis: not carried";
  ir::PortId y = g.find_output(g.root(), g.sym("y"));
  EXPECT_EQ(g.port_op(g.producer(y)), back);
  ir::OpId soft = g.port_op(g.producer(g.find_input(back, g.sym("data"))));
  EXPECT_EQ(g.type_str(soft), "Softmax");
  EXPECT_EQ(g.attr(soft, g.sym("axis"))->as_int(), -1);
  ir::OpId flat = g.port_op(g.producer(g.find_input(soft, g.sym("input"))));
  EXPECT_EQ(g.type_str(flat), "Flatten");
  EXPECT_EQ(g.attr(flat, g.sym("axis"))->as_int(), 1);
  ir::OpId u = g.find_op(g.root(), "unsq");
  ASSERT_EQ(g.inputs(u).size(), 2u);
  EXPECT_EQ(g.type_str(g.port_op(g.producer(g.inputs(u)[1]))), "Constant");
  // Every op is in topological order among its siblings.
  std::vector<ir::OpId> kids = g.children(g.root());
  for (size_t i = 0; i < kids.size(); ++i)
    for (ir::PortId p : g.inputs(kids[i]))
      if (ir::PortId s = g.producer(p); s && g.port_op(s) != g.root())
        EXPECT_LT(std::find(kids.begin(), kids.end(), g.port_op(s)) - kids.begin(), ptrdiff_t(i));
}

TEST(MappingRules, InnerValueUsedOutsideIsRefusedAndTagsSelect) {
  auto reg = registry();
  auto t = table(R"(table:
  src: amanda/onnx/13
  dst: amanda/onnx/13
  rules:
    - rule_name: fuse_relu_softmax
      tags: [fuse]
      src:
        ops:
          - {type: Relu, id: r}
          - {type: Softmax, id: s}
        edges:
          - {output_port: {op: r, port: Y}, input_port: {op: s, port: input}}
      dst: {type: Softmax, name: fused}
)");
  text::Document doc = graph(kOnnxGraph);
  ConvertOptions o;
  o.explain = "relu";
  Report r = apply(doc, *t, *reg, o);  // tag not selected: nothing happens, all pass through
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.mapped, 0u);
  o.tags = {"fuse"};
  Report r2 = apply(doc, *t, *reg, o);
  EXPECT_EQ(r2.mapped, 0u) << "relu's output also feeds the Unsqueeze: the match must be refused";
  std::string ex;
  for (auto& l : r2.explain) ex += l + "\n";
  EXPECT_NE(ex.find("used outside the match"), std::string::npos) << ex;
}

TEST(MappingTables, ReversibleTableRunsBackwards) {
  auto reg = registry();
  auto t = table(R"(table:
  src: amanda/onnx/12
  dst: amanda/onnx/13
  reversible: true
  rules:
    - rule_name: unsqueeze
      src: {type: Unsqueeze, attrs: {axes: {ref: axes}}}
      dst: {type: Unsqueeze, input_ports: [data, {name: axes, const: "{tensor(axes, 'int64')}"}]}
    - {rule_name: relu, type: Relu}
)");
  auto back = reverse_table(*t);
  EXPECT_EQ(back->src, "amanda/onnx/13");
  text::Document doc = graph(kOnnxGraph);
  ConvertOptions o;
  o.keep_unmapped = true;
  Report r = apply(doc, *back, *reg, o);
  EXPECT_EQ(r.by_rule["unsqueeze"], 1u) << r.text();
  ir::Graph& g = doc.graph;
  ir::OpId u = g.find_op(g.root(), "unsq");
  EXPECT_EQ(value_str(*g.attr(u, g.sym("axes"))), "[0]");
  EXPECT_EQ(g.inputs(u).size(), 1u);
}

TEST(MappingTables, BadTablesGiveClearErrors) {
  auto reg = registry();
  auto problems = [&](const std::string& text) {
    auto t = table(text);
    Diagnostics d;
    check_table(*t, *reg, d);
    return d.str();
  };
  std::string head = "table:\n  src: amanda/onnx/13\n  dst: amanda/onnx/12\n  rules:\n";
  EXPECT_NE(problems(head + "    - {rule_name: a, type: NoSuchOp}\n").find("t.yaml:5:7: error: rule 'a': matcher op type 'NoSuchOp' is not in namespace amanda/onnx/13"),
            std::string::npos);
  EXPECT_NE(problems(head + "    - {rule_name: b, src: {type: Relu}, dst: {type: Relu, attrs: {alpha: \"{nope}\"}}}\n").find("uses ref 'nope'"),
            std::string::npos);
  EXPECT_NE(problems(head + "    - {rule_name: c, src: {type: Relu}, dst: {type: Relu, attrs: {alpha: 1}}}\n").find("has no attribute 'alpha'"),
            std::string::npos);
  EXPECT_NE(problems(head + "    - {rule_name: d, src: {type: Relu}, dst: {type: Cast}}\n").find("attribute 'to' is required"), std::string::npos);
  EXPECT_NE(problems(head + "    - {rule_name: e, src: {type: Relu, input_ports: [nope]}, dst: {type: Relu}}\n").find("has no input port 'nope'"),
            std::string::npos);
  auto parse_error = [&](const std::string& text) {
    try {
      table(text);
    } catch (const ParseError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(parse_error(head + "    - {rule_name: f, src: {type: Relu}}\n").find("rule 'f': the rule has no dst side"), std::string::npos);
  EXPECT_NE(parse_error(head + "    - {rule_name: g, when: \"1 +\", type: Relu}\n").find("t.yaml:5:"), std::string::npos);
  EXPECT_NE(parse_error(head + "    - {type: Relu}\n").find("needs a rule_name"), std::string::npos);
  EXPECT_NE(parse_error(head + "    - {rule_name: h, type: Relu}\n    - {rule_name: h, type: Relu}\n").find("declared twice"), std::string::npos);
  EXPECT_NE(parse_error("table:\n  src: amanda/onnx/13\n  rules: [\n").find("t.yaml:"), std::string::npos);
}

TEST(MappingPlanner, ShortestChainThroughOpsets) {
  TableSet set;
  set.add_folder(shipped_table_dir());
  // The steps between namespaces (a shipped rewrite table of a namespace on the way, such as
  // tables/pytorch's tagged onnx/13 rewrites, is in the plan too; convert() leaves it out when
  // none of its rules is selected)
  auto steps = [&set](const char* from, const char* to) {
    auto c = set.plan(from, to);
    std::erase_if(c, [](const Table* t) { return t->src == t->dst; });
    return c;
  };
  auto chain = steps("amanda/onnx/13", "amanda/onnx/9");
  ASSERT_EQ(chain.size(), 4u);
  EXPECT_EQ(chain[0]->dst, "amanda/onnx/12");
  EXPECT_EQ(chain[3]->dst, "amanda/onnx/9");
  EXPECT_EQ(steps("amanda/onnx/9", "amanda/onnx/17").size(), 8u);
  EXPECT_THROW(set.plan("amanda/onnx/13", "amanda/tensorflow/1.13.1"), Error);
  // Every shipped table checks clean against the ONNX namespaces.
  auto reg = registry();
  for (const auto& t : set.tables()) {
    // Built without libtorch: the PyTorch namespace is unknown, its tables cannot be checked.
    if (torch_frontend::torch_namespace_name().empty() && (t->src.starts_with("amanda/pytorch/") || t->dst.starts_with("amanda/pytorch/")))
      continue;
    Diagnostics d;
    check_table(*t, *reg, d);
    EXPECT_FALSE(d.has_errors()) << t->name() << "\n" << d.str();
  }
}

// convert() calls between_steps between two tables of its chain (and not after the last).
TEST(MappingPlanner, BetweenStepsRunsBetweenTables) {
  TableSet set;
  set.add(table("table: {src: amanda/onnx/13, dst: amanda/onnx/12, rules: []}\n"));
  set.add(table("table: {src: amanda/onnx/12, dst: amanda/onnx/11, rules: []}\n"));
  set.add(table("table: {src: amanda/onnx/11, dst: amanda/onnx/10, rules: []}\n"));
  auto reg = registry();
  text::Document doc = graph(R"(graph:
  namespace: amanda/onnx/13
  name: g
  input_ports: [{name: x}]
  output_ports: [{name: y}]
  ops:
    - {type: Relu, name: r, input_ports: [X], output_ports: [Y]}
  edges:
    - {output_port: {op: g, port: x}, input_ports: {op: r, port: X}}
    - {output_port: {op: r, port: Y}, input_ports: {op: g, port: y}}
)");
  std::vector<std::string> seen;
  ConvertOptions o;
  o.between_steps = [&](ir::Graph& g) { seen.push_back(std::string(g.str(g.graph_namespace(g.root())))); };
  Report r = convert(doc.graph, "amanda/onnx/10", set, *reg, o);
  EXPECT_TRUE(r.ok()) << r.text();
  EXPECT_EQ(seen, (std::vector<std::string>{"amanda/onnx/12", "amanda/onnx/11"}));
}

// An empty table between two opsets: every decision comes from the schemas (schema_step.h).
TEST(MappingSchemas, UnchangedTypesDefaultsAndMissingOpsDecidedFromSchemas) {
  auto reg = registry();
  auto down = table("table: {src: amanda/onnx/14, dst: amanda/onnx/13, rules: []}\n");
  // uint8 Add: opset 13's Add lacks uint8 (refused, naming the port and the allowed types);
  // float Add: kept. Trilu is new in 14: refused. GRU's layout = 0 (its default): kept, dropped.
  text::Document doc = graph(R"(graph:
  namespace: amanda/onnx/14
  name: g
  input_ports: [{name: a, attrs: {type: tensor(uint8)}}, {name: f, attrs: {type: tensor(float)}}]
  output_ports: [{name: y}, {name: z}, {name: t}]
  ops:
    - {type: Add, name: add8, input_ports: [A, B], output_ports: [C]}
    - {type: Add, name: addf, input_ports: [A, B], output_ports: [C]}
    - {type: Trilu, name: tri, input_ports: [input], output_ports: [output]}
  edges:
    - {output_port: {op: g, port: a}, input_ports: {op: add8, port: A}}
    - {output_port: {op: g, port: a}, input_ports: {op: add8, port: B}}
    - {output_port: {op: g, port: f}, input_ports: {op: addf, port: A}}
    - {output_port: {op: g, port: f}, input_ports: {op: addf, port: B}}
    - {output_port: {op: g, port: f}, input_ports: {op: tri, port: input}}
    - {output_port: {op: add8, port: C}, input_ports: {op: g, port: y}}
    - {output_port: {op: addf, port: C}, input_ports: {op: g, port: z}}
    - {output_port: {op: tri, port: output}, input_ports: {op: g, port: t}}
)");
  Report r = apply(doc, *down, *reg, {});
  EXPECT_EQ(r.passed, 1u) << r.text();
  ASSERT_EQ(r.unsupported.size(), 2u) << r.text();
  std::map<std::string, std::string> why;
  for (const auto& u : r.unsupported) why[u.type] = u.reason;
  EXPECT_NE(why["Add"].find("input 'A' is tensor(uint8)"), std::string::npos) << why["Add"];
  EXPECT_NE(why["Add"].find("tensor(float)"), std::string::npos) << why["Add"];
  EXPECT_NE(why["Trilu"].find("Trilu does not exist in amanda/onnx/13"), std::string::npos) << why["Trilu"];

  auto up = table("table: {src: amanda/onnx/13, dst: amanda/onnx/14, rules: []}\n");
  // GRU gained `layout` in 14 (default 0, opset 13's only layout): going up it is kept; going
  // down it is dropped when 0 and refused when 1.
  auto gru = [](int layout) {
    return "graph:\n  namespace: amanda/onnx/14\n  name: g\n  input_ports: [{name: x}, {name: w}, {name: r}]\n"
           "  output_ports: [{name: y}]\n  ops:\n    - {type: GRU, name: gru, attrs: {hidden_size: 2, layout: " +
           std::to_string(layout) + "}, input_ports: [X, W, R], output_ports: [Y]}\n  edges:\n"
           "    - {output_port: {op: g, port: x}, input_ports: {op: gru, port: X}}\n"
           "    - {output_port: {op: g, port: w}, input_ports: {op: gru, port: W}}\n"
           "    - {output_port: {op: g, port: r}, input_ports: {op: gru, port: R}}\n"
           "    - {output_port: {op: gru, port: Y}, input_ports: {op: g, port: y}}\n";
  };
  text::Document d0 = graph(gru(0));
  r = apply(d0, *down, *reg, {});
  EXPECT_TRUE(r.ok()) << r.text();
  ir::OpId op = d0.graph.find_op(d0.graph.root(), "gru");
  EXPECT_FALSE(d0.graph.attr(op, d0.graph.sym("layout"))) << "opset 13's GRU has no layout: dropped";
  EXPECT_EQ(d0.graph.attr(op, d0.graph.sym("hidden_size"))->as_int(), 2);
  text::Document d1 = graph(gru(1));
  r = apply(d1, *down, *reg, {});
  ASSERT_EQ(r.unsupported.size(), 1u) << r.text();
  EXPECT_NE(r.unsupported[0].reason.find("attribute 'layout' = 1 is not in amanda/onnx/13"), std::string::npos) << r.unsupported[0].reason;
  // Going up from 13 the same op (without layout) passes.
  text::Document u = graph(gru(0));
  u.graph.set_graph_namespace(u.graph.root(), u.graph.sym("amanda/onnx/13"));
  u.graph.erase_attr(u.graph.find_op(u.graph.root(), "gru"), u.graph.sym("layout"));
  r = apply(u, *up, *reg, {});
  EXPECT_TRUE(r.ok()) << r.text();
  EXPECT_EQ(r.passed, 1u);
}

// A rule's result is held to dst's type constraints, unless the rule says why not
// (types_unchecked: the ONNX writer stores an int64 Constant below opset 9 as an initializer).
TEST(MappingSchemas, RuleResultsAreTypeCheckedUnlessTheRuleSaysWhyNot) {
  auto reg = registry();
  const char* g = R"(graph:
  namespace: amanda/onnx/9
  name: g
  output_ports: [{name: y}]
  ops:
    - {type: Constant, name: c, attrs: {value: !tensor {dtype: int64, shape: [1], data: [3]}}, output_ports: [{name: output, attrs: {type: tensor(int64)}}]}
  edges:
    - {output_port: {op: c, port: output}, input_ports: {op: g, port: y}}
)";
  const std::string rule = "    - {rule_name: keep, src: {type: Constant, attrs: {value: {ref: v}}}, dst: {type: Constant, attrs: {value: \"{v}\"}}";
  auto checked = table("table:\n  src: amanda/onnx/9\n  dst: amanda/onnx/8\n  rules:\n" + rule + "}\n");
  text::Document d1 = graph(g);
  Report r = apply(d1, *checked, *reg, {});
  ASSERT_EQ(r.unsupported.size(), 1u) << r.text();
  EXPECT_NE(r.unsupported[0].reason.find("output 'output' is tensor(int64)"), std::string::npos) << r.unsupported[0].reason;
  auto unchecked = table("table:\n  src: amanda/onnx/9\n  dst: amanda/onnx/8\n  rules:\n" + rule + ", types_unchecked: written as an initializer}\n");
  text::Document d2 = graph(g);
  r = apply(d2, *unchecked, *reg, {});
  EXPECT_TRUE(r.ok()) << r.text();
  EXPECT_EQ(r.by_rule["keep"], 1u) << r.text();
}
