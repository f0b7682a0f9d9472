// NetDef import -> export gives back the same bytes (binary) and the same message (text) for every
// net in ../shared/caffe2/models, with its init net where there is one, through the YAML form too;
// hand-made nets with every field, arguments of every kind, nested nets, in-place blobs and
// irregular arguments come back the same; detection tells NetDefs from GraphDefs; bad files fail
// with the file in the message.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>

#include <google/protobuf/text_format.h>
#include <google/protobuf/util/message_differencer.h>

#include "amanda/io/io.h"
#include "amanda/ir/verify.h"
#include "amanda/text/document.h"
#include "amanda_caffe2.pb.h"
#include "netdef.h"
#include "test_files.h"

namespace amanda::caffe2_frontend {
namespace {

namespace fs = std::filesystem;
namespace c2 = amanda_caffe2;
using test_files::slurp;

const fs::path kModels = AMANDA_CAFFE2_MODELS;

c2::NetDef parse_text(const std::string& text) {
  c2::NetDef n;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &n)) << text.substr(0, 200);
  return n;
}

c2::NetDef parse_binary(const std::string& bytes) {
  c2::NetDef n;
  EXPECT_TRUE(n.ParseFromString(bytes));
  return n;
}

bool same(const c2::NetDef& a, const c2::NetDef& b, std::string* diff) {
  google::protobuf::util::MessageDifferencer d;
  d.ReportDifferencesToString(diff);
  return d.Compare(a, b);
}

// Through the YAML form and back: what the tool's `fmt` and `convert -o x.yaml` go through.
text::Document via_yaml(const text::Document& doc) {
  std::string y = text::to_text(doc, text::Format::Yaml);
  Diagnostics diags;
  return text::parse(y, text::Format::Yaml, "<yaml>", diags);
}

TEST(Caffe2NetDef, BinaryModelsRoundTripByteIdentical) {
  int checked = 0;
  for (const char* m : {"lenet", "squeezenet"}) {
    SCOPED_TRACE(m);
    std::string predict = slurp(kModels / m / "predict_net.pb");
    std::optional<std::string> init;
    if (fs::exists(kModels / m / "init_net.pb")) init = slurp(kModels / m / "init_net.pb");
    std::optional<NetBytes> ib;
    if (init) ib = NetBytes{*init, false};
    text::Document doc = import_net({predict, false}, ib);
    Diagnostics diags;
    EXPECT_TRUE(ir::verify(doc.graph, diags)) << diags.str();
    for (int pass = 0; pass < 2; ++pass) {
      SCOPED_TRACE(pass ? "through YAML" : "in memory");
      text::Document d2 = pass ? via_yaml(doc) : text::Document();
      ExportedNet out = export_net(pass ? d2 : doc, false);
      EXPECT_EQ(out.predict.size(), predict.size());
      EXPECT_TRUE(out.predict == predict);
      ASSERT_EQ(out.init.has_value(), init.has_value());
      if (init) {
        EXPECT_EQ(out.init->size(), init->size());
        EXPECT_TRUE(*out.init == *init);
      }
    }
    ++checked;
  }
  EXPECT_EQ(checked, 2);
}

TEST(Caffe2NetDef, LenetInitNetBecomesInitializers) {
  ASSERT_TRUE(fs::exists(kModels / "lenet/predict_net.pb")) << "no Caffe2 reference models in " << kModels;
  std::string predict = slurp(kModels / "lenet/predict_net.pb"), init = slurp(kModels / "lenet/init_net.pb");
  text::Document doc = import_net({predict, false}, NetBytes{init, false});
  const ir::Graph& g = doc.graph;
  int inits = 0;
  for (ir::PortId p : g.inputs(g.root())) {
    const ir::Value* t = g.attr(p, const_cast<ir::Graph&>(g).sym("initializer"));
    if (!t) continue;
    ++inits;
    EXPECT_EQ(t->as_tensor().dtype, ir::DType::Float32);
  }
  EXPECT_EQ(inits, 8);  // the 8 GivenTensorFills: conv1 w/b, conv2 w/b, fc1 w/b, fc2 w/b
  // Only `1`, the image, is left for the caller.
  ASSERT_FALSE(g.inputs(g.root()).empty());
  EXPECT_EQ(g.port_name_str(g.input(g.root(), 0)), "1");
  EXPECT_EQ(g.port_role(g.input(g.root(), 0)), ir::PortRole::GraphInput);
}

TEST(Caffe2NetDef, TextModelsRoundTripSameMessage) {
  int checked = 0;
  for (const auto& e : fs::directory_iterator(kModels)) {
    fs::path f = e.path() / "predict_net.pbtxt";
    if (!fs::exists(f)) continue;
    SCOPED_TRACE(f.string());
    std::string text = slurp(f);
    c2::NetDef original = parse_text(text);
    text::Document doc = import_net({text, true}, std::nullopt);
    // .pbtxt -> .pb -> .pbtxt
    std::string bin = export_net(doc, false).predict;
    std::string diff;
    EXPECT_TRUE(same(parse_binary(bin), original, &diff)) << diff;
    text::Document doc2 = import_net({bin, false}, std::nullopt);
    std::string text2 = export_net(doc2, true).predict;
    EXPECT_TRUE(same(parse_text(text2), original, &diff)) << diff;
    // and binary export of the binary is byte-identical
    EXPECT_TRUE(export_net(doc2, false).predict == bin);
    EXPECT_TRUE(export_net(via_yaml(doc), false).predict == bin);
    ++checked;
  }
  EXPECT_EQ(checked, 5);
}

// Every field of every message, arguments of every kind, an in-place blob, a nested net.
const char* kEverything = R"pb(
  name: "every_field" type: "async_scheduling" num_workers: 4
  device_option { device_type: 1 device_id: 2 random_seed: 7 node_name: "n" numa_node_id: 1 extra_info: "a" extra_info: "b" }
  arg { name: "net_arg" i: 3 }
  arg { name: "net_floats" floats: 0.5 floats: -1 }
  op { input: "x" output: "x" type: "Relu" name: "" }
  op { input: "x" input: "w" output: "y" output: "y_info" name: "fc" type: "FC" engine: "CUDNN"
       arg { name: "axis" i: 1 } arg { name: "alpha" f: 0.25 } arg { name: "mode" s: "constant" }
       arg { name: "ints" ints: 1 ints: -2 } arg { name: "strs" strings: "a" strings: "\001\002" }
       arg { name: "flag" } device_option { } control_input: "x" is_gradient_op: false debug_info: "d"
       domain: "dom" op_version: 3 }
  op { input: "y" output: "x" type: "If" name: "fc"
       arg { name: "then_net" n { name: "then" op { input: "y" output: "z" type: "Relu" } external_input: "y" external_output: "z" } }
       arg { name: "nets" nets { name: "a" } nets { name: "b" } } }
  op { input: "x" output: "t" type: "Odd" arg { name: "tensor" t { dims: 2 data_type: FLOAT float_data: 1 float_data: 2 } } }
  op { input: "x" output: "u" type: "Odd" arg { name: "dup" i: 1 } arg { name: "dup" i: 2 } arg { name: "two" i: 1 f: 2 } }
  op { input: "undeclared" output: "v" type: "Relu" }
  external_input: "x" external_input: "w" external_input: "x"
  external_output: "x" external_output: "y" external_output: "never_written"
  partition_info { name: "p" device_id: 0 device_id: 1 extra_info: "e"
                   backend_options { backend_name: "b" option { key: "k" val: "v" } } }
)pb";

TEST(Caffe2NetDef, EveryFieldRoundTrips) {
  c2::NetDef n = parse_text(kEverything);
  std::string bytes;
  n.SerializeToString(&bytes);
  text::Document doc = import_net({bytes, false}, std::nullopt);
  Diagnostics diags;
  EXPECT_TRUE(ir::verify(doc.graph, diags)) << diags.str();
  for (int pass = 0; pass < 2; ++pass) {
    text::Document y = via_yaml(doc);
    ExportedNet out = export_net(pass ? y : doc, false);
    EXPECT_TRUE(out.predict == bytes) << pass;
    std::string diff;
    EXPECT_TRUE(same(parse_binary(out.predict), n, &diff)) << diff;
    EXPECT_FALSE(out.init.has_value());
  }
  // In place: Relu's output is a new value `x.1` whose blob is `x`, and the FC reads that one.
  const ir::Graph& g = doc.graph;
  ir::OpId relu = g.first_child(g.root());
  ASSERT_EQ(g.type_str(relu), "Relu");
  ir::PortId out = g.output(relu, 0);
  auto sym = [&](const char* s) { return const_cast<ir::Graph&>(g).sym(s); };
  EXPECT_EQ(g.attr(out, sym("@value"))->as_string(), "x.1");
  EXPECT_EQ(g.attr(out, sym("@blob"))->as_string(), "x");
  ir::OpId fc = g.next_sibling(relu);
  EXPECT_EQ(g.producer(g.input(fc, 0)), out);
  // The graph output `x` is the If's write, the last version.
  ir::OpId iff = g.next_sibling(fc);
  EXPECT_EQ(g.port_op(g.producer(g.output(g.root(), 0))), iff);
}

TEST(Caffe2NetDef, InitNetWithOtherOpsRoundTrips) {
  c2::NetDef predict = parse_text(R"pb(name: "p" op { input: "x" input: "w" input: "b" output: "y" type: "FC" }
                                       external_input: "x" external_input: "w" external_input: "b" external_output: "y")pb");
  c2::NetDef init = parse_text(R"pb(name: "i"
    op { output: "b" type: "ConstantFill" arg { name: "shape" ints: 2 } arg { name: "value" f: 0.5 } }
    op { output: "w" type: "GivenTensorFill" arg { name: "shape" ints: 2 ints: 2 } arg { name: "values" floats: 1 floats: 2 floats: 3 floats: 4 } }
    op { output: "unused" type: "GivenTensorIntFill" arg { name: "values" ints: 7 } arg { name: "shape" ints: 1 } }
    op { output: "w2" type: "GivenTensorInt64Fill" arg { name: "values" ints: 7 ints: 8 } arg { name: "shape" ints: 3 } }
    external_output: "w")pb");
  std::string pb, ib;
  predict.SerializeToString(&pb);
  init.SerializeToString(&ib);
  text::Document doc = import_net({pb, false}, NetBytes{ib, false});
  for (int pass = 0; pass < 2; ++pass) {
    text::Document y = via_yaml(doc);
    ExportedNet out = export_net(pass ? y : doc, false);
    EXPECT_TRUE(out.predict == pb) << pass;
    ASSERT_TRUE(out.init.has_value());
    std::string diff;
    EXPECT_TRUE(same(parse_binary(*out.init), init, &diff)) << diff;
    EXPECT_TRUE(*out.init == ib) << pass;
  }
}

TEST(Caffe2NetDef, DetectsNetDefsNotGraphDefs) {
  EXPECT_TRUE(looks_like_netdef(slurp(kModels / "lenet/predict_net.pb").substr(0, 4096), false));
  EXPECT_TRUE(looks_like_netdef(slurp(kModels / "lenet/init_net.pb").substr(0, 4096), false));
  EXPECT_TRUE(looks_like_netdef(slurp(kModels / "squeezenet/predict_net.pb").substr(0, 4096), false));
  for (const char* m : {"bvlc_alexnet", "densenet121", "inception_v1", "vgg19", "zfnet512"})
    EXPECT_TRUE(looks_like_netdef(slurp(kModels / m / "predict_net.pbtxt").substr(0, 4096), true)) << m;
  // TensorFlow GraphDefs: a NodeDef first (binary), `node {` (text).
  std::string gd("\x0a\x0f\x0a\x01x\x12\x0bPlaceholder", 17);
  EXPECT_FALSE(looks_like_netdef(gd, false));
  EXPECT_FALSE(looks_like_netdef("node { name: \"x\" op: \"Placeholder\" }\nversions { producer: 1 }\n", true));
  EXPECT_FALSE(looks_like_netdef("", false));
  EXPECT_FALSE(looks_like_netdef("hello world", false));
}

TEST(Caffe2NetDef, BadFilesFailWithTheFile) {
  std::string predict = slurp(kModels / "squeezenet/predict_net.pb");
  ImportOptions o;
  o.file_name = "sq.pb";
  try {
    import_net({std::string_view(predict).substr(0, predict.size() / 2), false}, std::nullopt, o);
    ADD_FAILURE() << "a truncated NetDef was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("sq.pb"), std::string::npos) << e.what();
  }
  o.file_name = "t.pbtxt";
  try {
    import_net({"op { type: \"Relu\" input: \"x\" \n bogus: 3 }", true}, std::nullopt, o);
    ADD_FAILURE() << "a bad text NetDef was accepted";
  } catch (const ParseError& e) {
    EXPECT_NE(std::string(e.what()).find("t.pbtxt:2:"), std::string::npos) << e.what();
  }
  try {
    import_net({"op { input: \"x\" }", true}, std::nullopt, o);
    ADD_FAILURE() << "an op without a type was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("op #0"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace amanda::caffe2_frontend

// Through the framework registry and the gates, as the tool reads and writes: a .pb NetDef is
// Caffe2's (not TensorFlow's), init_net.pb beside it is read with it, and writing predict_net.pb
// writes init_net.pb beside it, byte for byte.

namespace amanda::caffe2_frontend {
namespace {

TEST(Caffe2Framework, ReadsAndWritesThroughTheRegistry) {
  Diagnostics diags;
  text::Document doc = io::read_any((kModels / "lenet/predict_net.pb").string(), diags);
  EXPECT_EQ(doc.graph.type_str(doc.graph.root()), kCaffe2Namespace);
  size_t inits = 0;
  for (ir::PortId p : doc.graph.inputs(doc.graph.root())) inits += doc.graph.port_role(p) == ir::PortRole::Initializer;
  EXPECT_EQ(inits, 8u);
  fs::path out = fs::temp_directory_path() / ("c2_registry_" + std::to_string(::getpid()));
  fs::create_directories(out);
  io::write_document(doc, (out / "predict_net.pb").string());
  EXPECT_TRUE(test_files::slurp(out / "predict_net.pb") == test_files::slurp(kModels / "lenet/predict_net.pb"));
  EXPECT_TRUE(test_files::slurp(out / "init_net.pb") == test_files::slurp(kModels / "lenet/init_net.pb"));
  // A text zoo net too.
  text::Document z = io::read_any((kModels / "zfnet512/predict_net.pbtxt").string(), diags);
  EXPECT_EQ(z.graph.type_str(z.graph.root()), kCaffe2Namespace);
  fs::remove_all(out);
}

}  // namespace
}  // namespace amanda::caffe2_frontend
