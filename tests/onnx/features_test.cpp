// Hand-built models that use every field of onnx.proto, nested captures, external data and bad
// input. The test data of libonnx (roundtrip_test.cpp) has no functions, training_info, sparse
// tensors or external data, so these cover them.
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include "amanda/frameworks/onnx/model.h"
#include "amanda/frameworks/onnx/namespaces.h"
#include "amanda/ir/equal.h"
#include "amanda/ir/verify.h"
#include "amanda/schema/validate.h"
#include "amanda/support/file.h"
#include "amanda/text/document.h"

namespace fs = std::filesystem;
using namespace amanda;

namespace {

onnx::ValueInfoProto vi(const std::string& name, int elem, std::vector<std::variant<int64_t, std::string>> dims) {
  onnx::ValueInfoProto v;
  v.set_name(name);
  auto* t = v.mutable_type()->mutable_tensor_type();
  t->set_elem_type(elem);
  auto* s = t->mutable_shape();
  for (auto& d : dims) {
    auto* x = s->add_dim();
    if (auto* i = std::get_if<int64_t>(&d)) x->set_dim_value(*i);
    else x->set_dim_param(std::get<std::string>(d));
  }
  return v;
}

onnx::TensorProto float_tensor(const std::string& name, std::vector<float> v, bool raw) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(onnx::TensorProto::FLOAT);
  t.add_dims(static_cast<int64_t>(v.size()));
  if (raw) t.set_raw_data(std::string(reinterpret_cast<const char*>(v.data()), v.size() * 4));
  else
    for (float f : v) t.add_float_data(f);
  return t;
}

onnx::NodeProto* node(onnx::GraphProto& g, const std::string& type, std::vector<std::string> in, std::vector<std::string> out,
                      const std::string& name = "") {
  auto* n = g.add_node();
  n->set_op_type(type);
  if (!name.empty()) n->set_name(name);
  for (auto& i : in) n->add_input(i);
  for (auto& o : out) n->add_output(o);
  return n;
}

void expect_round_trip(const onnx::ModelProto& m, bool through_yaml = true) {
  std::string orig = m.SerializeAsString();
  text::Document doc = onnx_frontend::import_model_bytes(orig);
  Diagnostics problems;
  ir::verify(doc.graph, problems);
  EXPECT_FALSE(problems.has_errors()) << problems.str();
  std::string back = onnx_frontend::export_model_bytes(doc);
  onnx::ModelProto m2;
  ASSERT_TRUE(m2.ParseFromString(back));
  std::string report;
  google::protobuf::util::MessageDifferencer diff;
  diff.ReportDifferencesToString(&report);
  EXPECT_TRUE(diff.Compare(m, m2)) << report;
  EXPECT_EQ(back, orig);
  if (through_yaml) {
    Diagnostics diags;
    std::string yaml = text::to_text(doc, text::Format::Yaml);
    text::Document y = text::parse(yaml, text::Format::Yaml, "m.yaml", diags);
    EXPECT_EQ(ir::first_difference(doc.graph, y.graph), "");
    EXPECT_EQ(onnx_frontend::export_model_bytes(y), orig) << yaml;
  }
}

onnx::ModelProto everything() {
  onnx::ModelProto m;
  m.set_ir_version(8);
  for (auto [d, v] : {std::pair<const char*, int>{"", 13}, {"ai.onnx.ml", 3}, {"com.example", 1}}) {
    auto* o = m.add_opset_import();
    o->set_domain(d);
    o->set_version(v);
  }
  m.set_producer_name("amanda-test");
  m.set_producer_version("0.1");
  m.set_domain("org.example");
  m.set_model_version(42);
  m.set_doc_string("a model that uses everything");
  auto* mp = m.add_metadata_props();
  mp->set_key("author");
  mp->set_value("nobody");
  auto* f = m.add_functions();
  f->set_name("MyRelu");
  f->set_domain("com.example");
  f->add_input("x");
  f->add_output("y");
  *f->add_node() = [] {
    onnx::NodeProto n;
    n.set_op_type("Relu");
    n.add_input("x");
    n.add_output("y");
    return n;
  }();
  auto* ti = m.add_training_info();
  ti->mutable_algorithm()->set_name("train");
  auto* b = ti->add_update_binding();
  b->set_key("W");
  b->set_value("W_new");

  onnx::GraphProto& g = *m.mutable_graph();
  g.set_name("main");
  g.set_doc_string("the graph");
  *g.add_input() = vi("X", 1, {std::string("N"), 3});
  g.mutable_input(0)->mutable_type()->set_denotation("IMAGE");  // not readable: kept whole
  *g.add_input() = vi("W", 1, {3});
  g.mutable_input(1)->set_doc_string("weights");
  *g.add_initializer() = float_tensor("B", {1, 2, 3}, false);  // initializer only, typed storage
  *g.add_initializer() = float_tensor("W", {4, 5, 6}, true);   // also an input; order B, W kept
  onnx::TensorProto s;
  s.set_name("S");
  s.set_data_type(onnx::TensorProto::STRING);
  s.add_dims(2);
  s.add_string_data("a");
  s.add_string_data("b");
  *g.add_initializer() = s;
  onnx::TensorProto i8;
  i8.set_name("I8");
  i8.set_data_type(onnx::TensorProto::INT8);
  i8.add_dims(2);
  i8.add_int32_data(-3);
  i8.add_int32_data(7);
  *g.add_initializer() = i8;
  auto* sp = g.add_sparse_initializer();
  *sp->mutable_values() = float_tensor("SP", {9}, true);
  sp->mutable_indices()->set_data_type(onnx::TensorProto::INT64);
  sp->mutable_indices()->add_dims(1);
  sp->mutable_indices()->add_int64_data(2);
  sp->add_dims(4);

  node(g, "Add", {"X", "W"}, {"t0"}, "dup")->set_doc_string("first");
  node(g, "Mul", {"t0", "B"}, {"t1"}, "dup");  // duplicate name
  node(g, "Relu", {"t1"}, {"t2"})->set_domain("ai.onnx");
  node(g, "MyRelu", {"t2"}, {"t3"})->set_domain("com.example");
  node(g, "Clip", {"t3", "", "B"}, {"t4"});  // omitted optional input
  auto* c = node(g, "Constant", {}, {"k"}, "every_attr");
  using A = onnx::AttributeProto;
  auto attr = [&](const char* name, A::AttributeType t) {
    auto* a = c->add_attribute();
    a->set_name(name);
    a->set_type(t);
    return a;
  };
  attr("f", A::FLOAT)->set_f(0.1f);
  attr("i", A::INT)->set_i(-7);
  attr("s", A::STRING)->set_s("text");
  *attr("t", A::TENSOR)->mutable_t() = float_tensor("", {1.5f}, true);
  auto* ga = attr("g", A::GRAPH)->mutable_g();
  ga->set_name("inner");
  *ga->add_output() = vi("X", 1, {});  // reads the outer X: a capture
  *attr("st", A::SPARSE_TENSOR)->mutable_sparse_tensor() = *sp;
  attr("tp", A::TYPE_PROTO)->mutable_tp()->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(7);
  auto* fs_ = attr("fs", A::FLOATS);
  fs_->add_floats(1.0f);
  fs_->add_floats(-0.25f);
  auto* is = attr("is", A::INTS);
  is->add_ints(1);
  is->add_ints(2);
  attr("empty_ints", A::INTS);
  attr("empty_floats", A::FLOATS);
  auto* ss = attr("ss", A::STRINGS);
  ss->add_strings("x");
  *attr("ts", A::TENSORS)->add_tensors() = float_tensor("named", {2}, false);
  auto* odd = attr("g_and_i", A::GRAPH);  // a graph attribute with another field set too
  odd->mutable_g()->set_name("odd");
  odd->set_i(3);
  auto* gs = attr("gs", A::GRAPHS);
  gs->add_graphs()->set_name("g0");
  gs->add_graphs();  // no name at all
  *attr("sts", A::SPARSE_TENSORS)->add_sparse_tensors() = *sp;
  attr("tps", A::TYPE_PROTOS)->add_type_protos()->mutable_map_type()->set_key_type(7);
  auto* doc = attr("documented", A::INT);
  doc->set_i(1);
  doc->set_doc_string("why");
  auto* ref = c->add_attribute();
  ref->set_name("ref");
  ref->set_type(A::FLOAT);
  ref->set_ref_attr_name("alpha");
  node(g, "ai.onnx.ml::Nothing", {}, {});  // odd op type
  node(g, "LinearRegressor", {"t4"}, {"r"})->set_domain("ai.onnx.ml");
  *g.add_output() = vi("r", 1, {std::string("N"), 1});
  *g.add_output() = vi("X", 1, {});  // an input read straight out
  *g.add_value_info() = vi("t2", 1, {std::string("N"), 3});
  *g.add_value_info() = vi("t0", 1, {std::string("N"), 3});  // not in node order
  auto* qa = g.add_quantization_annotation();
  qa->set_tensor_name("t0");
  auto* qp = qa->add_quant_parameter_tensor_names();
  qp->set_key("SCALE_TENSOR");
  qp->set_value("B");
  return m;
}

}  // namespace

TEST(OnnxImport, EveryFieldSurvivesTheRoundTrip) { expect_round_trip(everything()); }

TEST(OnnxImport, MappingIsReadable) {
  text::Document doc = onnx_frontend::import_model_bytes(everything().SerializeAsString());
  ir::Graph& g = doc.graph;
  EXPECT_EQ(g.name_str(g.root()), "main");
  EXPECT_EQ(g.str(g.graph_namespace(g.root())), "amanda/onnx/13");
  const ir::Value* imports = g.attr(g.root(), g.sym("imports"));
  ASSERT_TRUE(imports && imports->find("ai.onnx.ml"));
  EXPECT_EQ(imports->find("ai.onnx.ml")->as_string(), "amanda/onnx/ai.onnx.ml/3");
  ir::PortId x = g.find_input(g.root(), g.sym("X"));
  ASSERT_TRUE(x);
  EXPECT_EQ(*g.attr(x, g.sym("type")), ir::Value("tensor(float)"));
  EXPECT_EQ(*g.attr(x, g.sym("shape")), ir::Value(ir::Value::List{ir::Value("N"), ir::Value(int64_t{3})}));
  ir::PortId b = g.find_input(g.root(), g.sym("B"));
  ASSERT_TRUE(b);
  EXPECT_EQ(*g.attr(b, g.sym("graph_input")), ir::Value(false));
  EXPECT_TRUE(g.attr(b, g.sym("initializer"))->is_tensor());
  // Port names follow the schema; the first "dup" keeps its name, the second gets a generated one.
  ir::OpId add = g.find_op(g.root(), "dup");
  ASSERT_TRUE(add);
  EXPECT_EQ(g.port_name_str(g.input(add, 0)), "A");
  EXPECT_EQ(g.port_name_str(g.input(add, 1)), "B");
  auto clip = g.ops_of_type("Clip");
  ASSERT_EQ(clip.size(), 1u);
  EXPECT_EQ(g.port_name_str(g.input(clip[0], 1)), "min");
  EXPECT_FALSE(g.producer(g.input(clip[0], 1)));  // omitted optional input: a port with no edge
  EXPECT_EQ(g.ops_of_type("ai.onnx.ml::LinearRegressor").size(), 1u);
  // A model-local function: readable header, its nodes an attribute graph of the root.
  const ir::Value* fns = g.attr(g.root(), g.sym("functions"));
  ASSERT_TRUE(fns && fns->is_list() && fns->as_list().size() == 1u);
  const ir::Value& fn = fns->as_list()[0];
  ASSERT_TRUE(fn.is_map());
  EXPECT_EQ(*fn.find("name"), ir::Value("MyRelu"));
  ASSERT_TRUE(fn.find("body") && fn.find("body")->is_graph());
  ir::OpId body = fn.find("body")->as_graph();
  ASSERT_EQ(g.child_count(body), 1u);
  EXPECT_EQ(g.type_str(g.first_child(body)), "Relu");
  EXPECT_EQ(g.producer(g.input(g.first_child(body), 0)), g.input(body, 0));
  // A sparse tensor attribute is its values tensor (what the schema's sparse_tensor type expects).
  ir::OpId every = g.find_op(g.root(), "every_attr");
  ASSERT_TRUE(every);
  EXPECT_TRUE(g.attr(every, g.sym("st"))->is_tensor());
  EXPECT_EQ(*g.attr(every, g.sym("tp")), ir::Value("seq(tensor(int64))"));
  EXPECT_EQ(*g.attr(every, g.sym("f")), ir::Value(0.1));
  EXPECT_TRUE(g.attr(every, g.sym("g"))->is_graph());
  // The validator knows the '@' annotations and reports only what is really unknown.
  schema::Registry reg;
  reg.add_provider(onnx_frontend::make_onnx_namespace_provider());
  Diagnostics problems;
  schema::validate(g, reg, problems);
  for (const auto& d : problems.items()) EXPECT_EQ(d.message.find("'@"), std::string::npos) << d.str();
}

// A Loop inside an If's branch reads a value of the main graph: both owners get @capture ports.
TEST(OnnxImport, NestedCapturesAreExplicitPorts) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  auto& g = *m.mutable_graph();
  g.set_name("nest");
  *g.add_input() = vi("cond", 9, {});
  *g.add_input() = vi("X", 1, {2});
  *g.add_input() = vi("M", 7, {});
  auto* iff = node(g, "If", {"cond"}, {"y"});
  auto* then_attr = iff->add_attribute();
  then_attr->set_name("then_branch");
  then_attr->set_type(onnx::AttributeProto::GRAPH);
  auto& then_g = *then_attr->mutable_g();
  then_g.set_name("then");
  auto* loop = node(then_g, "Loop", {"M", ""}, {"ly"}, "loop");
  auto* body_attr = loop->add_attribute();
  body_attr->set_name("body");
  body_attr->set_type(onnx::AttributeProto::GRAPH);
  auto& body = *body_attr->mutable_g();
  body.set_name("body");
  *body.add_input() = vi("i", 7, {});
  *body.add_input() = vi("c", 9, {});
  node(body, "Identity", {"c"}, {"c_out"});
  node(body, "Add", {"X", "X"}, {"s"});  // X from two levels out
  *body.add_output() = vi("c_out", 9, {});
  *body.add_output() = vi("s", 1, {2});
  *then_g.add_output() = vi("ly", 1, {});
  auto* else_attr = iff->add_attribute();
  else_attr->set_name("else_branch");
  else_attr->set_type(onnx::AttributeProto::GRAPH);
  auto& else_g = *else_attr->mutable_g();
  else_g.set_name("else");
  *else_g.add_output() = vi("X", 1, {2});  // an outer value returned directly
  *g.add_output() = vi("y", 1, {});

  text::Document doc = onnx_frontend::import_model_bytes(m.SerializeAsString());
  ir::Graph& ig = doc.graph;
  ir::OpId if_op = ig.ops_of_type("If").at(0);
  ir::PortId cap_x = ig.find_input(if_op, ig.sym("@capture.X"));
  ir::PortId cap_m = ig.find_input(if_op, ig.sym("@capture.M"));
  ASSERT_TRUE(cap_x);
  ASSERT_TRUE(cap_m);
  EXPECT_EQ(ig.producer(cap_x), ig.find_input(ig.root(), ig.sym("X")));
  ir::OpId loop_op = ig.ops_of_type("Loop").at(0);
  ir::PortId loop_cap = ig.find_input(loop_op, ig.sym("@capture.X"));
  ASSERT_TRUE(loop_cap);
  EXPECT_EQ(ig.producer(loop_cap), cap_x);  // fed by the If's capture port
  EXPECT_EQ(ig.producer(ig.input(loop_op, 0)), cap_m);
  ir::OpId add = ig.ops_of_type("Add").at(0);
  EXPECT_EQ(ig.producer(ig.input(add, 0)), loop_cap);
  EXPECT_EQ(ig.producer(ig.input(add, 1)), loop_cap);
  Diagnostics problems;
  ir::verify(ig, problems);
  EXPECT_FALSE(problems.has_errors()) << problems.str();
  schema::Registry reg;
  reg.add_provider(onnx_frontend::make_onnx_namespace_provider());
  schema::validate(ig, reg, problems);
  EXPECT_FALSE(problems.has_errors()) << problems.str();
  expect_round_trip(m);
}

class OnnxExternalData : public ::testing::Test {
 protected:
  fs::path dir;
  void SetUp() override {
    dir = fs::temp_directory_path() / ("amanda_onnx_ext_" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir / "sub");
  }
  void TearDown() override { fs::remove_all(dir); }

  onnx::ModelProto model(const std::string& location, uint64_t offset = 8) {
    onnx::ModelProto m;
    m.set_ir_version(8);
    m.add_opset_import()->set_version(13);
    auto& g = *m.mutable_graph();
    g.set_name("ext");
    auto* t = g.add_initializer();
    t->set_name("W");
    t->set_data_type(onnx::TensorProto::FLOAT);
    t->add_dims(4);
    t->set_data_location(onnx::TensorProto::EXTERNAL);
    for (auto [k, v] : {std::pair<std::string, std::string>{"location", location}, {"offset", std::to_string(offset)}, {"length", "16"}}) {
      auto* e = t->add_external_data();
      e->set_key(k);
      e->set_value(v);
    }
    node(g, "Relu", {"W"}, {"y"});
    *g.add_output() = vi("y", 1, {4});
    return m;
  }
  std::string write(const onnx::ModelProto& m, const std::string& name = "m.onnx") {
    std::string p = (dir / name).string();
    std::ofstream(p, std::ios::binary) << m.SerializeAsString();
    return p;
  }
};

TEST_F(OnnxExternalData, IsMappedAndBorrowed) {
  float w[4] = {1, 2, 3, 4};
  std::string bytes(8, '\0');
  bytes.append(reinterpret_cast<const char*>(w), 16);
  std::ofstream(dir / "sub" / "w.bin", std::ios::binary) << bytes;
  text::Document doc = onnx_frontend::read_model(write(model("sub/w.bin")));
  ir::Graph& g = doc.graph;
  const ir::Value* t = g.attr(g.find_input(g.root(), g.sym("W")), g.sym("initializer"));
  ASSERT_TRUE(t && t->is_tensor());
  EXPECT_TRUE(t->as_tensor().borrowed_from_file);
  ASSERT_EQ(t->as_tensor().size, 16u);
  EXPECT_EQ(std::memcmp(t->as_tensor().data, w, 16), 0);
  // Export writes the bytes inline by default; with external_data they go to OUT.data, aligned.
  onnx::ModelProto back;
  onnx_frontend::export_model(doc, back);
  EXPECT_EQ(back.graph().initializer(0).raw_data().size(), 16u);
  std::string out = (dir / "out.onnx").string();
  onnx_frontend::ExportOptions o;
  o.external_data = true;
  o.threshold = 16;
  EXPECT_EQ(onnx_frontend::write_model(doc, out, o), out + ".data");
  text::Document again = onnx_frontend::read_model(out);
  const ir::Value* t2 = again.graph.attr(again.graph.find_input(again.graph.root(), again.graph.sym("W")), again.graph.sym("initializer"));
  ASSERT_TRUE(t2 && t2->is_tensor());
  EXPECT_EQ(t2->as_tensor(), t->as_tensor());
  EXPECT_TRUE(t2->as_tensor().borrowed_from_file);
  EXPECT_EQ(fs::file_size(out + ".data") % 4096, 16u);  // first tensor at offset 0
}

TEST_F(OnnxExternalData, UnsafePathsAreRefused) {
  std::ofstream(dir / "w.bin", std::ios::binary) << std::string(64, '\0');
  fs::create_symlink(dir / "w.bin", dir / "sub" / "link.bin");
  for (const auto& [loc, why] : {std::pair<std::string, std::string>{(dir / "w.bin").string(), "relative"},
                                 {"sub/../w.bin", "'..'"},
                                 {"sub/link.bin", "symbolic link"},
                                 {"w.bin", "outside"}}) {
    std::string p = write(model(loc, loc == "w.bin" ? 60 : 0));
    try {
      onnx_frontend::read_model(p);
      ADD_FAILURE() << loc << " was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
  }
}

// Value names a port cannot have ("", "^control": the control ports' spelling, duplicates) get
// unique port names and keep theirs in @value. (Found by the mutation test: "^x" once looped.)
TEST(OnnxImport, OddValueNames) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  auto& g = *m.mutable_graph();
  g.set_name("odd");
  for (const char* n : {"^control", "^x", "", "a"}) *g.add_input() = vi(n, 1, {});
  node(g, "Relu", {"^x"}, {"^y"});
  *g.add_output() = vi("^y", 1, {});
  *g.add_output() = vi("^y", 1, {});
  expect_round_trip(m);
  // Two graph inputs of one name are two definitions of one value (onnx.checker: not SSA): the
  // import keeps both (lossless), and the verifier reports them, so verify, fmt and convert refuse.
  *g.add_input() = vi("a", 1, {});
  text::Document doc = onnx_frontend::import_model_bytes(m.SerializeAsString());
  EXPECT_EQ(onnx_frontend::export_model_bytes(doc), m.SerializeAsString());
  Diagnostics problems;
  EXPECT_FALSE(ir::verify(doc.graph, problems));
  EXPECT_NE(problems.str().find("value 'a' is defined twice"), std::string::npos) << problems.str();
}

TEST(OnnxImport, BadInputIsAClearError) {
  onnx::ModelProto good;
  good.set_ir_version(8);
  good.mutable_graph()->set_name("g");
  std::string bytes = good.SerializeAsString();
  for (const std::string& bad : {std::string(), std::string("\x08\x07\x12\xff\xff\xff\xff\x0f", 8), bytes.substr(0, bytes.size() - 1),
                                 std::string("graph:\n  ops: []\n")}) {
    EXPECT_THROW(onnx_frontend::import_model_bytes(bad), ParseError) << bad.size();
  }
  EXPECT_NO_THROW(onnx_frontend::import_model_bytes(bytes));
}

TEST(OnnxTool, FmtDiffAndBadFiles) {
  fs::path dir = fs::temp_directory_path() / ("amanda_onnx_tool_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::string model = "/usr/share/libonnx-testdata/data/node/test_if/model.onnx";
  ASSERT_TRUE(fs::exists(model)) << model << " is missing: install libonnx-testdata (scripts/install-deps.sh)";
  std::string a = AMANDA_BINARY;
  auto run = [&](const std::string& args) { return WEXITSTATUS(std::system((a + " " + args + " >/dev/null 2>&1").c_str())); };
  std::string y = (dir / "m.yaml").string(), o = (dir / "m.onnx").string();
  EXPECT_EQ(run("fmt " + model + " --to yaml -o " + y), 0);
  EXPECT_EQ(run("fmt " + y + " -o " + o), 0);
  EXPECT_EQ(map_file(o)->view(), map_file(model)->view());
  EXPECT_EQ(run("diff " + model + " " + y), 0);
  EXPECT_EQ(run("diff " + model + " /usr/share/libonnx-testdata/data/node/test_add/model.onnx"), 1);
  EXPECT_EQ(run("validate " + model), 0);
  EXPECT_EQ(run("verify " + model), 0);
  std::ofstream(dir / "empty.onnx").close();
  std::ofstream(dir / "junk.onnx") << "\x01\x02 not a model";
  for (const char* bad : {"empty.onnx", "junk.onnx"}) {
    std::string in = (dir / bad).string(), out = (dir / "out.yaml").string();
    EXPECT_EQ(run("fmt " + in + " -o " + out), 1);
    EXPECT_FALSE(fs::exists(out));
    EXPECT_EQ(run("verify " + in), 1);
    EXPECT_EQ(run("validate " + in), 1);
    EXPECT_EQ(run("diff " + in + " " + model), 1);
  }
  fs::remove_all(dir);
}
