// GraphDef import -> export gives back the same GraphDef (protobuf's MessageDifferencer, and the
// same deterministic bytes), on graphs built here with every kind of attribute, tensor storage
// form, a function library with functional control flow, and a TF1 while loop; the IR they import
// to is readable and validates; bad files fail with a clear error and the tool writes nothing.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstring>
#include <filesystem>

#include <google/protobuf/text_format.h>
#include <google/protobuf/util/message_differencer.h>

#include "amanda/frameworks/tensorflow/graphdef.h"
#include "amanda/frameworks/tensorflow/namespaces.h"
#include "amanda/ir/equal.h"
#include "amanda/ir/verify.h"
#include "amanda/schema/validate.h"
#include "amanda/text/document.h"
#include "amanda_tf_graph.pb.h"
#include "test_files.h"

namespace amanda::tf_frontend {
namespace {

namespace fs = std::filesystem;
namespace tf = tensorflow;

tf::GraphDef parse_text(const std::string& text) {
  tf::GraphDef g;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &g)) << text;
  return g;
}

std::string float_bytes(std::initializer_list<float> v) {
  std::string s(v.size() * 4, '\0');
  std::memcpy(s.data(), v.begin(), s.size());
  return s;
}

// A graph with a little of everything a frozen GraphDef holds.
tf::GraphDef mixed_graph() {
  tf::GraphDef g = parse_text(R"pb(
    versions { producer: 440 min_consumer: 12 bad_consumers: 3 }
    node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "shape" value { shape { dim { size: -1 } dim { size: 4 } } } } }
    node { name: "w" op: "Const" device: "/device:CPU:0"
           attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 4 } dim { size: 2 } } } } } }
    node { name: "fill" op: "Const"
           attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } dim { size: 3 } } float_val: 0.5 } } } }
    node { name: "shape" op: "Const"
           attr { key: "dtype" value { type: DT_INT32 } }
           attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 2 } } int_val: 1 int_val: -1 } } } }
    node { name: "zeros" op: "Const"
           attr { key: "dtype" value { type: DT_HALF } }
           attr { key: "value" value { tensor { dtype: DT_HALF tensor_shape { dim { size: 3 } } } } } }
    node { name: "names" op: "Const"
           attr { key: "dtype" value { type: DT_STRING } }
           attr { key: "value" value { tensor { dtype: DT_STRING tensor_shape { dim { size: 2 } } string_val: "a" string_val: "b\000c" } } } }
    node { name: "q" op: "Const"
           attr { key: "dtype" value { type: DT_QUINT8 } }
           attr { key: "value" value { tensor { dtype: DT_QUINT8 tensor_shape { } int_val: 200 } } } }
    node { name: "mm" op: "MatMul" input: "x" input: "w:0"
           attr { key: "T" value { type: DT_FLOAT } } attr { key: "transpose_a" value { b: false } }
           attr { key: "transpose_b" value { b: false } } }
    node { name: "split" op: "Split" input: "shape" input: "mm"
           attr { key: "T" value { type: DT_FLOAT } } attr { key: "num_split" value { i: 2 } } }
    node { name: "cat" op: "ConcatV2" input: "split:1" input: "split" input: "shape:0"
           attr { key: "N" value { i: 2 } } attr { key: "T" value { type: DT_FLOAT } } attr { key: "Tidx" value { type: DT_INT32 } }
           experimental_debug_info { original_node_names: "concat" } }
    node { name: "custom" op: "MyCustomOp" input: "cat" input: "^fill" input: "^zeros"
           attr { key: "shape_attr" value { shape { dim { size: 2 } } } }
           attr { key: "types" value { list { type: DT_FLOAT type: DT_INT64 } } }
           attr { key: "floats" value { list { f: 1.5 f: -2 } } }
           attr { key: "strs" value { list { s: "p" s: "q" } } }
           attr { key: "name_dim" value { shape { dim { size: 3 name: "batch" } } } }
           attr { key: "empty" value { list { } } }
           attr { key: "unknown_rank" value { shape { unknown_rank: true } } }
           attr { key: "fn" value { func { name: "f" } } }
           attr { key: "stype" value { s: "float32" } } }
    node { name: "out" op: "Identity" input: "custom:2" attr { key: "T" value { type: DT_FLOAT } } }
  )pb");
  g.mutable_node(1)->mutable_attr()->at("value").mutable_tensor()->set_tensor_content(
      float_bytes({1, 2, 3, 4, 5, 6, 7, 8}));
  return g;
}

// If/While with their branches and bodies in the library.
tf::GraphDef functional_graph() {
  return parse_text(R"pb(
    versions { producer: 987 }
    library {
      function {
        signature { name: "then_fn" input_arg { name: "a" type: DT_FLOAT } output_arg { name: "out" type: DT_FLOAT } }
        node_def { name: "neg" op: "Neg" input: "a" attr { key: "T" value { type: DT_FLOAT } } }
        ret { key: "out" value: "neg:y:0" }
      }
      function {
        signature { name: "else_fn" input_arg { name: "a" type: DT_FLOAT } output_arg { name: "out" type: DT_FLOAT }
                    control_output: "side" }
        node_def { name: "sq" op: "Square" input: "a" attr { key: "T" value { type: DT_FLOAT } } }
        node_def { name: "parts" op: "Unpack" input: "sq:y:0"
                   attr { key: "T" value { type: DT_FLOAT } } attr { key: "num" value { i: 2 } } attr { key: "axis" value { i: 0 } } }
        node_def { name: "sum" op: "AddV2" input: "parts:output:0" input: "parts:output:1" input: "^sq"
                   attr { key: "T" value { type: DT_FLOAT } } }
        ret { key: "out" value: "sum:z:0" }
        control_ret { key: "side" value: "sq" }
        attr { key: "_noinline" value { b: true } }
      }
      gradient { function_name: "then_fn" gradient_func: "else_fn" }
    }
    node { name: "c" op: "Placeholder" attr { key: "dtype" value { type: DT_BOOL } } attr { key: "shape" value { shape { } } } }
    node { name: "v" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } attr { key: "shape" value { shape { dim { size: 2 } } } } }
    node { name: "if" op: "StatelessIf" input: "c" input: "v"
           attr { key: "Tcond" value { type: DT_BOOL } } attr { key: "Tin" value { list { type: DT_FLOAT } } }
           attr { key: "Tout" value { list { type: DT_FLOAT } } }
           attr { key: "then_branch" value { func { name: "then_fn" } } }
           attr { key: "else_branch" value { func { name: "else_fn" } } }
           attr { key: "output_shapes" value { list { } } } }
    node { name: "call" op: "then_fn" input: "if" }
    node { name: "r" op: "Identity" input: "call" attr { key: "T" value { type: DT_FLOAT } } }
  )pb");
}

// tf.while_loop in TF1: Enter -> Merge -> Switch -> body -> NextIteration -> Merge (a cycle).
tf::GraphDef tf1_loop_graph() {
  return parse_text(R"pb(
    node { name: "i0" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
           attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 0 } } } }
    node { name: "n" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
           attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 10 } } } }
    node { name: "while/Enter" op: "Enter" input: "i0" attr { key: "T" value { type: DT_INT32 } }
           attr { key: "frame_name" value { s: "while/while_context" } } attr { key: "is_constant" value { b: false } }
           attr { key: "parallel_iterations" value { i: 10 } } }
    node { name: "while/Merge" op: "Merge" input: "while/Enter" input: "while/NextIteration"
           attr { key: "N" value { i: 2 } } attr { key: "T" value { type: DT_INT32 } } }
    node { name: "while/Less" op: "Less" input: "while/Merge" input: "n" attr { key: "T" value { type: DT_INT32 } } }
    node { name: "while/LoopCond" op: "LoopCond" input: "while/Less" }
    node { name: "while/Switch" op: "Switch" input: "while/Merge" input: "while/LoopCond" attr { key: "T" value { type: DT_INT32 } } }
    node { name: "while/Identity" op: "Identity" input: "while/Switch:1" attr { key: "T" value { type: DT_INT32 } } }
    node { name: "while/add" op: "AddV2" input: "while/Identity" input: "n" attr { key: "T" value { type: DT_INT32 } } }
    node { name: "while/NextIteration" op: "NextIteration" input: "while/add" attr { key: "T" value { type: DT_INT32 } } }
    node { name: "while/Exit" op: "Exit" input: "while/Switch" attr { key: "T" value { type: DT_INT32 } } }
  )pb");
}

void expect_round_trip(const tf::GraphDef& g, const char* what) {
  SCOPED_TRACE(what);
  text::Document doc = import_graph(g);
  tf::GraphDef back;
  export_graph(doc, back);
  std::string diff;
  google::protobuf::util::MessageDifferencer d;
  d.ReportDifferencesToString(&diff);
  EXPECT_TRUE(d.Compare(g, back)) << diff;
  // The deterministic bytes of the original (what the exporter writes) come back exactly.
  std::string a, b;
  {
    google::protobuf::io::StringOutputStream s(&a);
    google::protobuf::io::CodedOutputStream c(&s);
    c.SetSerializationDeterministic(true);
    g.SerializeToCodedStream(&c);
  }
  b = export_graph_bytes(doc);
  EXPECT_EQ(a, b);
  // The bytes read by the wire fast path: the same IR as from the message.
  EXPECT_EQ(ir::first_difference(import_graph_bytes(a).graph, doc.graph), "");
  // Through the YAML form and back, too.
  std::string yaml = text::to_text(doc, text::Format::Yaml);
  Diagnostics diags;
  text::Document again = text::parse(yaml, text::Format::Yaml, "roundtrip.yaml", diags);
  EXPECT_EQ(export_graph_bytes(again), a);
}

TEST(GraphDef, MixedGraphRoundTrips) { expect_round_trip(mixed_graph(), "mixed"); }
TEST(GraphDef, FunctionalGraphRoundTrips) { expect_round_trip(functional_graph(), "functional"); }
TEST(GraphDef, Tf1LoopRoundTrips) { expect_round_trip(tf1_loop_graph(), "tf1 loop"); }

TEST(GraphDef, TextFormRoundTrips) {
  tf::GraphDef g = mixed_graph();
  std::string text;
  google::protobuf::TextFormat::PrintToString(g, &text);
  text::Document doc = import_graph_text(text);
  tf::GraphDef back = parse_text(export_graph_text(doc));
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(g, back));
}

template <class Id>
const ir::Value* attr(const ir::Graph& g, Id id, std::string_view key) {
  for (const auto& [k, v] : g.attrs(id))
    if (g.str(k) == key) return &v;
  return nullptr;
}

TEST(GraphDef, ImportIsReadable) {
  text::Document doc = import_graph(mixed_graph());
  const ir::Graph& g = doc.graph;
  EXPECT_EQ(g.type_str(g.root()), kTensorflowNamespace);
  ir::OpId mm = g.find_op(g.root(), "mm");
  ASSERT_TRUE(mm);
  ASSERT_EQ(g.inputs(mm).size(), 2u);
  EXPECT_EQ(g.port_name_str(g.inputs(mm)[0]), "a");
  EXPECT_EQ(g.port_name_str(g.inputs(mm)[1]), "b");
  EXPECT_EQ(g.port_name_str(g.outputs(mm)[0]), "product");
  EXPECT_EQ(*attr(g, mm, "T"), ir::Value("float32"));
  // "w:0" is a second spelling of output 0: kept on the port.
  EXPECT_EQ(*attr(g, g.inputs(mm)[1], "@ref"), ir::Value("w:0"));
  ir::OpId split = g.find_op(g.root(), "split");
  ASSERT_EQ(g.outputs(split).size(), 2u);
  EXPECT_EQ(g.port_name_str(g.outputs(split)[1]), "output.1");
  ir::OpId cat = g.find_op(g.root(), "cat");
  EXPECT_EQ(g.port_name_str(g.inputs(cat)[0]), "values.0");
  EXPECT_EQ(g.port_name_str(g.inputs(cat)[2]), "axis");
  EXPECT_EQ(g.producer(g.inputs(cat)[0]), g.outputs(split)[1]);
  // Const: the whole tensor; a splat (float_val: 0.5 for 6 elements) expanded, its form recorded.
  ir::OpId fill = g.find_op(g.root(), "fill");
  const ir::Tensor& t = attr(g, fill, "value")->as_tensor();
  ASSERT_EQ(t.size, 24u);
  float last;
  std::memcpy(&last, t.data + 20, 4);
  EXPECT_EQ(last, 0.5f);
  EXPECT_EQ(*attr(g, fill, "@tensor.value")->find("values"), ir::Value(int64_t{1}));
  // Kinds the value alone cannot tell, on an op no namespace declares, are recorded.
  ir::OpId custom = g.find_op(g.root(), "custom");
  const ir::Value* kinds = attr(g, custom, "@attr_kinds");
  ASSERT_TRUE(kinds);
  EXPECT_EQ(*kinds->find("shape_attr"), ir::Value("shape"));
  EXPECT_EQ(*kinds->find("types"), ir::Value("list(type)"));
  EXPECT_EQ(kinds->find("stype"), nullptr);  // a string is a string
  EXPECT_TRUE(attr(g, custom, "@attr.name_dim"));  // a named dim: kept whole
  EXPECT_EQ(*attr(g, g.root(), "versions")->find("producer"), ir::Value(int64_t{440}));
  Diagnostics d;
  ir::verify(g, d);
  EXPECT_EQ(d.error_count(), 0u);
}

TEST(GraphDef, ImportValidatesAgainstTheNamespace) {
  for (const tf::GraphDef& gd : {tf1_loop_graph(), functional_graph()}) {
    text::Document doc = import_graph(gd);
    auto reg = schema::make_default_registry();
    reg->add_provider(make_tf_namespace_provider());
    Diagnostics d;
    schema::ValidateOptions vo;
    auto r = schema::validate(doc.graph, *reg, d, vo);
    std::string problems;
    for (const auto& x : d.items()) problems += x.str() + "\n";
    // Only the direct call of a library function ("then_fn") is outside the registry.
    size_t expected = gd.library().function_size() ? 1 : 0;
    EXPECT_EQ(d.error_count(), expected) << problems;
    EXPECT_GE(r.ops_checked, static_cast<size_t>(gd.node_size()));
  }
}

TEST(GraphDef, FunctionsAreAttributeGraphs) {
  text::Document doc = import_graph(functional_graph());
  const ir::Graph& g = doc.graph;
  const ir::Value* lib = attr(g, g.root(), "library");
  ASSERT_TRUE(lib);
  const auto& fns = lib->find("function")->as_list();
  ASSERT_EQ(fns.size(), 2u);
  ir::OpId else_fn = fns[1].as_graph();
  EXPECT_EQ(g.name_str(else_fn), "else_fn");
  ASSERT_EQ(g.inputs(else_fn).size(), 1u);
  ASSERT_EQ(g.outputs(else_fn).size(), 1u);
  ir::OpId sum = g.find_op(else_fn, "sum");
  ASSERT_TRUE(sum);
  EXPECT_EQ(g.producer(g.outputs(else_fn)[0]), g.outputs(sum)[0]);
  ir::OpId parts = g.find_op(else_fn, "parts");
  EXPECT_EQ(g.producer(g.inputs(sum)[1]), g.outputs(parts)[1]);
  ir::OpId sq = g.find_op(else_fn, "sq");
  EXPECT_EQ(g.producer(g.inputs(sq)[0]), g.inputs(else_fn)[0]);
}

TEST(GraphDef, Tf1LoopKeepsItsCycle) {
  text::Document doc = import_graph(tf1_loop_graph());
  const ir::Graph& g = doc.graph;
  ir::OpId merge = g.find_op(g.root(), "while/Merge");
  ir::OpId next = g.find_op(g.root(), "while/NextIteration");
  EXPECT_EQ(g.producer(g.inputs(merge)[1]), g.outputs(next)[0]);
  EXPECT_FALSE(g.topo_order(g.root()).ok());
}

void expect_error(const tf::GraphDef& g, const std::string& needle) {
  try {
    import_graph(g);
    ADD_FAILURE() << "no error; expected one mentioning " << needle;
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(GraphDef, BadGraphsAreRefused) {
  tf::GraphDef g = mixed_graph();
  g.mutable_node(1)->mutable_attr()->at("value").mutable_tensor()->set_tensor_content(float_bytes({1, 2, 3}));
  expect_error(g, "node 'w', attribute 'value': tensor_content holds 12 bytes, but shape [4, 2] of float32 needs 32");
  g = mixed_graph();
  g.mutable_node(7)->set_input(0, "nope");
  expect_error(g, "node 'mm', input 'nope': names no node");
  g = mixed_graph();
  g.mutable_node(2)->set_name("x");
  expect_error(g, "a second node of that name");
  g = mixed_graph();
  g.mutable_node(10)->add_input("late");
  expect_error(g, "data input 'late' after a control input");
  g = mixed_graph();
  auto* t = g.mutable_node(2)->mutable_attr()->at("value").mutable_tensor();
  for (int i = 0; i < 7; ++i) t->add_float_val(1);
  expect_error(g, "tensor holds 8 values, but its shape [2, 3] has 6");
  EXPECT_THROW(import_graph_bytes(std::string("\x0a\xff\xff\x01", 4)), ParseError);
  // A name that is not UTF-8 in the text form (the text parser only logs it; found by
  // tensorflow_fuzz): refused as the binary form is.
  try {
    import_graph_text("node { name: \"a\\377\" op: \"NoOp\" }\n");
    ADD_FAILURE() << "a name that is not UTF-8 was accepted";
  } catch (const ParseError& e) {
    EXPECT_NE(std::string(e.what()).find("not valid UTF-8"), std::string::npos) << e.what();
  }
}

// The wire reader (import.cpp's fast path) on bytes it must leave to protobuf or read as protobuf
// would: hand-made encodings that protobuf's own serialiser never writes (fields out of order, a
// key twice, a oneof set twice, unpacked lists, overlong varints, ...). Each gives the same graph as
// protobuf's parsed message, and exports to protobuf's bytes of the exported message.
namespace wirebytes {
std::string varint(uint64_t v) {
  std::string out;
  while (v >= 0x80) {
    out += static_cast<char>(v | 0x80);
    v >>= 7;
  }
  out += static_cast<char>(v);
  return out;
}
std::string len(int field, const std::string& b) { return varint(static_cast<uint64_t>(field) << 3 | 2) + varint(b.size()) + b; }
std::string vint(int field, uint64_t v) { return varint(static_cast<uint64_t>(field) << 3) + varint(v); }
std::string entry(const std::string& key, const std::string& av) { return len(5, len(1, key) + len(2, av)); }
std::string type_attr(int dt) { return vint(6, static_cast<uint64_t>(dt)); }
std::string node(const std::string& fields) { return len(1, fields); }
std::string placeholder(const std::string& name) { return node(len(1, name) + len(2, "Placeholder") + entry("dtype", type_attr(1))); }
}  // namespace wirebytes

TEST(GraphDef, WireReaderAgreesWithProtobuf) {
  using namespace wirebytes;
  std::string shape23 = len(2, vint(1, 2)) + len(2, vint(1, 3));
  std::string f6(24, '\x01');
  struct Case {
    const char* what;
    std::string bytes;
  };
  std::vector<Case> cases = {
      {"fields out of order", node(entry("dtype", type_attr(1)) + len(2, "Placeholder") + len(1, "a"))},
      {"a key twice (the last wins)", node(len(1, "a") + len(2, "Placeholder") + entry("dtype", type_attr(1)) + entry("dtype", type_attr(3)))},
      {"a map entry's value before its key", node(len(1, "a") + len(2, "Placeholder") + len(5, len(2, type_attr(1)) + len(1, "dtype")))},
      {"a map entry without a value", node(len(1, "a") + len(2, "NoOp") + len(5, len(1, "x")))},
      {"a oneof set twice", node(len(1, "a") + len(2, "NoOp") + entry("x", vint(3, 7) + len(2, "s")))},
      {"a negative int", node(len(1, "a") + len(2, "NoOp") + entry("x", vint(3, static_cast<uint64_t>(-1))))},
      {"an overlong varint", node(len(1, "a") + len(2, "Placeholder") + entry("dtype", std::string("\x30\x81\x00", 3)))},
      {"an unpacked list of ints", node(len(1, "a") + len(2, "NoOp") + entry("x", len(1, vint(3, 1) + vint(3, 2))))},
      {"a packed list split in two", node(len(1, "a") + len(2, "NoOp") + entry("x", len(1, len(3, varint(1)) + len(3, varint(2)))))},
      {"an empty packed list of floats", node(len(1, "a") + len(2, "NoOp") + entry("x", len(1, len(4, ""))))},
      {"a list of two kinds", node(len(1, "a") + len(2, "NoOp") + entry("x", len(1, len(3, varint(1)) + len(2, "s"))))},
      {"a signalling NaN in a list", node(len(1, "a") + len(2, "NoOp") + entry("x", len(1, len(4, std::string("\x01\x00\xa0\x7f", 4)))))},
      {"a list of types and shapes", node(len(1, "a") + len(2, "NoOp") + entry("t", len(1, len(6, varint(1) + varint(9)))) +
                                          entry("s", len(1, len(7, shape23) + len(7, vint(3, 1)))))},
      {"a named dim", node(len(1, "a") + len(2, "Placeholder") + entry("dtype", type_attr(1)) + entry("shape", len(7, len(2, vint(1, 2) + len(2, "n")))))},
      {"an unknown dim and rank", node(len(1, "a") + len(2, "Placeholder") + entry("dtype", type_attr(1)) +
                                       entry("shape", len(7, len(2, vint(1, static_cast<uint64_t>(-1))) + len(2, "")))) +
                                  node(len(1, "b") + len(2, "Placeholder") + entry("dtype", type_attr(1)) + entry("shape", len(7, vint(3, 1))))},
      {"a tensor without a shape", node(len(1, "c") + len(2, "Const") + entry("dtype", type_attr(1)) +
                                        entry("value", len(8, vint(1, 1) + len(4, std::string(4, '\0')))))},
      {"a tensor of typed values", node(len(1, "c") + len(2, "Const") + entry("dtype", type_attr(1)) +
                                        entry("value", len(8, vint(1, 1) + len(2, shape23) + len(5, std::string(8, '\x02')))))},
      {"a tensor of content, a qint8 and a version", node(len(1, "c") + len(2, "Const") + entry("dtype", type_attr(11)) +
                                        entry("value", len(8, vint(1, 11) + len(2, shape23) + vint(3, 4) + len(4, "abcdef")))) +
                                   node(len(1, "d") + len(2, "Const") + entry("dtype", type_attr(1)) +
                                        entry("value", len(8, vint(1, 1) + len(2, shape23) + len(4, f6) + len(4, f6))))},
      {"a name in UTF-8", placeholder("\xc3\xa9t\xc3\xa9")},
      {"an unknown field of a node", node(len(1, "a") + len(2, "NoOp") + vint(99, 5))},
      {"debug info", node(len(1, "a") + len(2, "NoOp") + len(6, len(1, "orig")))},
      {"a device and inputs", placeholder("p") + node(len(1, "a") + len(2, "Identity") + len(3, "p") + len(3, "^p") + len(4, "/cpu:0") +
                                                     entry("T", type_attr(1)))},
      {"a function attribute", node(len(1, "a") + len(2, "NoOp") + entry("f", len(10, len(1, "fn"))))},
      {"an attribute of no value", node(len(1, "a") + len(2, "NoOp") + entry("x", ""))},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    tf::GraphDef parsed;
    ASSERT_TRUE(parsed.ParseFromString(c.bytes));
    text::Document want = import_graph(parsed), got = import_graph_bytes(c.bytes);
    EXPECT_EQ(ir::first_difference(want.graph, got.graph), "");
    tf::GraphDef whole;
    export_graph(got, whole);
    std::string a;
    {
      google::protobuf::io::StringOutputStream s(&a);
      google::protobuf::io::CodedOutputStream out(&s);
      out.SetSerializationDeterministic(true);
      whole.SerializeToCodedStream(&out);
    }
    EXPECT_EQ(export_graph_bytes(got), a);
  }
  // Bytes protobuf refuses are refused: a name that is not UTF-8, a truncated attribute.
  EXPECT_THROW(import_graph_bytes(placeholder("a\xff")), ParseError);
  EXPECT_THROW(import_graph_bytes(node(len(1, "a") + len(2, "NoOp") + entry("x", std::string("\x12\x05", 2)))), ParseError);
  EXPECT_THROW(import_graph_bytes(node(len(1, "a") + len(2, "NoOp") + len(5, len(1, "k\xff") + len(2, vint(3, 1))))), ParseError);
}

int run(const std::string& cmd) {
  int rc = std::system(cmd.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

TEST(GraphDef, ToolRefusesBadFilesAndWritesNothing) {
  fs::path dir = fs::temp_directory_path() / ("amanda-tf-bad-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::string good;
  mixed_graph().SerializeToString(&good);
  test_files::spit(dir / "good.pb", good);
  std::string bin = AMANDA_BINARY;
  EXPECT_EQ(run(bin + " fmt " + (dir / "good.pb").string() + " -o " + (dir / "out.pb").string() + " 2>/dev/null"), 0);
  EXPECT_EQ(test_files::slurp(dir / "out.pb"), export_graph_bytes(import_graph(mixed_graph())));
  EXPECT_EQ(run(bin + " verify " + (dir / "good.pb").string() + " >/dev/null"), 0);
  // Truncated in the middle of a node: a protobuf error or a dangling input, never a crash.
  int truncated = 0;
  for (size_t cut : {good.size() / 3, good.size() / 2, good.size() - 3}) {
    test_files::spit(dir / "bad.pb", good.substr(0, cut));
    fs::remove(dir / "bad_out.pb");
    int rc = run(bin + " fmt " + (dir / "bad.pb").string() + " -o " + (dir / "bad_out.pb").string() + " 2>" +
                 (dir / "err.txt").string());
    EXPECT_EQ(rc, 1) << "cut at " << cut;
    EXPECT_FALSE(fs::exists(dir / "bad_out.pb"));
    std::string err = test_files::slurp(dir / "err.txt");
    EXPECT_NE(err.find("bad.pb"), std::string::npos) << err;
    truncated += rc == 1;
  }
  EXPECT_EQ(truncated, 3);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace amanda::tf_frontend
