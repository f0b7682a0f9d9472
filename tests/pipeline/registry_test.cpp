// The framework registry and the pass list: detection by content before extension, writers by
// path and namespace, options, the pipeline's stage order and what a conversion's passes are.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "amanda/io/io.h"
#include "amanda/pipeline/pipeline.h"

namespace amanda {
namespace {

using pipeline::FrameworkRegistry;

std::string temp_dir() {
  std::string t = (std::filesystem::temp_directory_path() / "amanda_registry_XXXXXX").string();
  return mkdtemp(t.data());
}

TEST(FrameworkRegistry, BuiltinsAndNamespaces) {
  FrameworkRegistry& r = FrameworkRegistry::instance();
  for (const char* n : {"onnx", "pytorch", "tensorflow", "text"}) EXPECT_NE(r.find(n), nullptr) << n;
  EXPECT_EQ(r.for_namespace("amanda/onnx/13"), r.find("onnx"));
  EXPECT_EQ(r.for_namespace("amanda/tensorflow/2.2"), r.find("tensorflow"));
  EXPECT_EQ(r.for_namespace("amanda/pytorch/1.13"), r.find("pytorch"));
  EXPECT_EQ(r.for_namespace("amanda/core"), nullptr);  // a layer, not a framework
  EXPECT_EQ(r.default_target(), r.find("onnx"));
}

TEST(FrameworkRegistry, ContentBeatsExtension) {
  std::string d = temp_dir();
  // A TF.js model.json and an Amanda JSON document share the extension; the first key decides.
  std::ofstream(d + "/model.json") << R"({"format": "graph-model", "modelTopology": {}})";
  std::ofstream(d + "/doc.json") << R"({"graph": {"name": "g"}})";
  // A zip archive with an unknown extension is a TorchScript archive; a file no one claims is text.
  std::ofstream(d + "/weights.bin") << std::string("PK\x03\x04 rest", 9);
  std::ofstream(d + "/notes.txt") << "graph:\n  name: g\n";
  FrameworkRegistry& r = FrameworkRegistry::instance();
  EXPECT_EQ(r.for_reading(io::probe(d + "/model.json")), r.find("tensorflow"));
  EXPECT_EQ(r.for_reading(io::probe(d + "/doc.json")), r.find("text"));
  EXPECT_EQ(r.for_reading(io::probe(d + "/weights.bin")), r.find("pytorch"));
  EXPECT_EQ(r.for_reading(io::probe(d + "/notes.txt")), r.find("text"));
  EXPECT_EQ(r.for_reading(io::probe(d + "/m.onnx")), r.find("onnx"));  // (missing: the extension alone)
  std::filesystem::remove_all(d);
}

TEST(FrameworkRegistry, ProbeNeverBlocksOnAFifo) {
  std::string d = temp_dir();
  std::string fifo = d + "/x.pb";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  pipeline::Probe p = io::probe(fifo);  // would block forever if the FIFO were opened for reading
  EXPECT_TRUE(p.head.empty());
  EXPECT_FALSE(p.is_folder);
  std::filesystem::remove_all(d);
}

TEST(FrameworkRegistry, WritersByPathAndNamespace) {
  FrameworkRegistry& r = FrameworkRegistry::instance();
  EXPECT_EQ(r.for_writing("out.onnx", "amanda/pytorch/1.13"), r.find("onnx"));
  EXPECT_EQ(r.for_writing("out/model.json", "amanda/tensorflow/2.2"), r.find("tensorflow"));
  EXPECT_EQ(r.for_writing("out/model.json", "amanda/onnx/13"), r.find("text"));  // an Amanda JSON document
  EXPECT_EQ(r.for_writing("out.pb", "amanda/tensorflow/2.2"), r.find("tensorflow"));
  EXPECT_EQ(r.for_writing("out.yaml", "amanda/onnx/13"), r.find("text"));
}

TEST(Options, Values) {
  pipeline::Options o;
  o.add("input_shape", "1,3");
  o.add("input_shape", "N,4");
  o.set("external_data", {});
  o.set("quiet", {"false"});
  EXPECT_EQ(o.all("input_shape").size(), 2u);
  EXPECT_EQ(o.get("input_shape"), "N,4");
  EXPECT_EQ(o.get("missing", "x"), "x");
  EXPECT_TRUE(o.flag("external_data"));
  EXPECT_FALSE(o.flag("quiet"));
  EXPECT_FALSE(o.flag("missing"));
}

TEST(PassList, StageOrderThenAdditionOrder) {
  pipeline::PassList l;
  l.add({"c", pipeline::Stage::Finish, "", {}});
  l.add({"a", pipeline::Stage::Boundary, "", {}});
  l.add({"d", pipeline::Stage::Finish, "", {}});
  l.add({"b", pipeline::Stage::Prepare, "", {}});
  std::string order;
  for (const auto* p : l.ordered()) order += p->name;
  EXPECT_EQ(order, "abcd");
}

TEST(Pipeline, PassesOfAConversion) {
  auto reg = io::default_registry();
  mapping::TableSet tables;
  io::add_default_tables(tables);
  Diagnostics diags;
  pipeline::PassContext ctx(text::parse("graph:\n  name: g\n  namespace: amanda/tensorflow/2.2\n", text::Format::Yaml, "g.yaml", diags),
                            *reg, tables);
  ctx.request.to = "onnx/13";
  std::string d = pipeline::describe(pipeline::conversion_passes(ctx));
  EXPECT_EQ(ctx.info.target_ns, "amanda/onnx/13");
  // The TensorFlow -> ONNX extension's boundary before the tables, its finish after.
  size_t verify = d.find("verify"), boundary = d.find("tensorflow-onnx.boundary"), convert = d.find("convert  "),
         finish = d.find("tensorflow-onnx.finish");
  ASSERT_NE(boundary, std::string::npos) << d;
  ASSERT_NE(finish, std::string::npos) << d;
  EXPECT_LT(verify, boundary);
  EXPECT_LT(boundary, convert);
  EXPECT_LT(convert, finish);
  // Without --to and with a TF.js output, TensorFlow's own target.
  pipeline::PassContext c2(text::parse("graph:\n  name: g\n  namespace: amanda/onnx/13\n", text::Format::Yaml, "g.yaml", diags), *reg,
                           tables);
  c2.request.output = "out/model.json";
  pipeline::conversion_passes(c2);
  EXPECT_EQ(c2.info.target_ns, "amanda/tensorflow/2.2");  // a TF.js graph model
  c2.request.output = "out.pb";
  pipeline::conversion_passes(c2);
  EXPECT_EQ(c2.info.target_ns, "amanda/tensorflow/2.2");
  // An unknown optimization pass is a usage error naming it.
  c2.request.optimize = {"no_such_pass"};
  EXPECT_THROW(pipeline::conversion_passes(c2), UsageError);
}

}  // namespace
}  // namespace amanda
