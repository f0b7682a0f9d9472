// Bad ONNX input, one test per case: the library refuses it with an amanda::Error or ParseError
// whose message names the file and the place (node, tensor, location), and the tool exits 1 and
// writes no output file (not even a temporary one).
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include "amanda/frameworks/onnx/model.h"
#include "amanda/support/diagnostics.h"

#include "test_files.h"

namespace fs = std::filesystem;
using namespace amanda;

namespace {

using test_files::slurp;

onnx::ValueInfoProto vi(const std::string& name) {
  onnx::ValueInfoProto v;
  v.set_name(name);
  v.mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  return v;
}

onnx::NodeProto* node(onnx::GraphProto& g, const std::string& type, std::vector<std::string> in, std::vector<std::string> out,
                      const std::string& name) {
  auto* n = g.add_node();
  n->set_op_type(type);
  n->set_name(name);
  for (auto& i : in) n->add_input(i);
  for (auto& o : out) n->add_output(o);
  return n;
}

// x -> Relu 'relu1' -> y: the valid model every case damages.
onnx::ModelProto valid() {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  auto& g = *m.mutable_graph();
  g.set_name("main");
  *g.add_input() = vi("x");
  node(g, "Relu", {"x"}, {"y"}, "relu1");
  *g.add_output() = vi("y");
  return m;
}

onnx::TensorProto float_tensor(const std::string& name, int64_t dim, int n, bool raw) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(onnx::TensorProto::FLOAT);
  t.add_dims(dim);
  for (int i = 0; i < n; ++i) {
    float f = 0.5f + static_cast<float>(i);
    if (raw) t.mutable_raw_data()->append(reinterpret_cast<const char*>(&f), 4);
    else t.add_float_data(f);
  }
  return t;
}

// An If 'if1' (or a Loop 'loop1') whose body node 'inner' reads `name` from outside.
onnx::ModelProto body_reads(const std::string& op, const std::string& name) {
  onnx::ModelProto m = valid();
  auto& g = *m.mutable_graph();
  *g.add_input() = vi("c");
  onnx::GraphProto body;
  body.set_name("body");
  if (op == "Loop") {
    *body.add_input() = vi("i");
    *body.add_input() = vi("cond_in");
    node(body, "Identity", {"cond_in"}, {"cond_out"}, "keep");
    *body.add_output() = vi("cond_out");
  }
  node(body, "Relu", {name}, {"r"}, "inner");
  *body.add_output() = vi("r");
  onnx::NodeProto* n;
  if (op == "If") {
    n = node(g, "If", {"c"}, {"z"}, "if1");
    for (const char* b : {"then_branch", "else_branch"}) {
      auto* a = n->add_attribute();
      a->set_name(b);
      a->set_type(onnx::AttributeProto::GRAPH);
      *a->mutable_g() = body;
    }
  } else {
    n = node(g, "Loop", {"", "c"}, {"z"}, "loop1");
    auto* a = n->add_attribute();
    a->set_name("body");
    a->set_type(onnx::AttributeProto::GRAPH);
    *a->mutable_g() = body;
  }
  *g.add_output() = vi("z");
  return m;
}

onnx::ModelProto with_external(const std::string& location, uint64_t offset, uint64_t length) {
  onnx::ModelProto m = valid();
  auto& g = *m.mutable_graph();
  auto* t = g.add_initializer();
  t->set_name("W");
  t->set_data_type(onnx::TensorProto::FLOAT);
  t->add_dims(static_cast<int64_t>(length / 4));
  t->set_data_location(onnx::TensorProto::EXTERNAL);
  for (auto [k, v] : {std::pair<std::string, std::string>{"location", location}, {"offset", std::to_string(offset)},
                      {"length", std::to_string(length)}}) {
    auto* e = t->add_external_data();
    e->set_key(k);
    e->set_value(v);
  }
  node(g, "Relu", {"W"}, {"w2"}, "relu_w");
  *g.add_output() = vi("w2");
  return m;
}

class OnnxBadInput : public ::testing::Test {
 protected:
  fs::path dir;
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "amanda-onnx-bad-XXXXXX").string();
    ASSERT_TRUE(mkdtemp(tmpl.data()));
    dir = tmpl;
    fs::create_directories(dir / "sub");
    std::ofstream(dir / "w.bin", std::ios::binary) << std::string(64, '\1');   // 64 bytes, outside sub/
    std::ofstream(dir / "sub" / "w.bin", std::ios::binary) << std::string(64, '\1');
    fs::create_symlink(dir / "sub" / "w.bin", dir / "sub" / "link.bin");
  }
  void TearDown() override { fs::remove_all(dir); }

  // Writes `bytes` as sub/m.onnx; the library and the tool must both refuse it, naming `expect`
  // (every string in it) in the message.
  void refused(const std::string& bytes, const std::vector<std::string>& expect) {
    fs::path model = dir / "sub" / "m.onnx";
    std::ofstream(model, std::ios::binary) << bytes;
    std::string message;
    try {
      onnx_frontend::read_model(model.string());
      ADD_FAILURE() << "accepted";
    } catch (const ParseError& e) {
      message = e.what();
    } catch (const Error& e) {
      message = e.what();
    } catch (const std::exception& e) {
      ADD_FAILURE() << "not an amanda::Error or ParseError: " << e.what();
    }
    EXPECT_NE(message.find(model.string()), std::string::npos) << "the message does not name the file: " << message;
    for (const auto& s : expect) EXPECT_NE(message.find(s), std::string::npos) << "'" << s << "' is not in: " << message;
    // The tool: exit 1, the same message, and no output file at all.
    for (const char* out : {"out.onnx", "out.yaml"}) {
      fs::path outdir = dir / "out";
      fs::create_directories(outdir);
      std::string err = (dir / "err.txt").string();
      std::string cmd = "'" AMANDA_BINARY "' fmt '" + model.string() + "' -o '" + (outdir / out).string() + "' >/dev/null 2>'" + err + "'";
      int status = std::system(cmd.c_str());
      ASSERT_TRUE(WIFEXITED(status)) << cmd;
      EXPECT_EQ(WEXITSTATUS(status), 1) << cmd;
      std::string stderr_text = slurp(err);
      for (const auto& s : expect) EXPECT_NE(stderr_text.find(s), std::string::npos) << "'" << s << "' is not in: " << stderr_text;
      EXPECT_TRUE(fs::is_empty(outdir)) << out << ": the tool left a file behind";
      fs::remove_all(outdir);
    }
  }
  void refused(const onnx::ModelProto& m, const std::vector<std::string>& expect) { refused(m.SerializeAsString(), expect); }
};

TEST_F(OnnxBadInput, EmptyFile) { refused(std::string(), {"empty file"}); }

TEST_F(OnnxBadInput, RandomBytes) {
  std::mt19937 rng(4);
  std::string bytes;
  for (int i = 0; i < 4096; ++i) bytes.push_back(static_cast<char>(rng()));
  refused(bytes, {"not an ONNX model"});
}

TEST_F(OnnxBadInput, TruncatedModel) {
  std::string bytes = valid().SerializeAsString();
  refused(bytes.substr(0, bytes.size() - 3), {"not an ONNX model"});
}

TEST_F(OnnxBadInput, RawDataShorterThanDims) {
  onnx::ModelProto m = valid();
  *m.mutable_graph()->add_initializer() = float_tensor("W", 4, 3, true);
  refused(m, {"initializer 'W'", "12 bytes", "[4]", "16"});
}

TEST_F(OnnxBadInput, RawDataLongerThanDims) {
  onnx::ModelProto m = valid();
  *m.mutable_graph()->add_initializer() = float_tensor("W", 2, 3, true);
  refused(m, {"initializer 'W'", "12 bytes", "[2]"});
}

TEST_F(OnnxBadInput, TypedFloatDataDoesNotMatchDims) {
  onnx::ModelProto m = valid();
  *m.mutable_graph()->add_initializer() = float_tensor("W", 4, 3, false);
  refused(m, {"initializer 'W'", "[4]"});
}

TEST_F(OnnxBadInput, AttributeTensorDoesNotMatchDims) {
  for (bool raw : {true, false}) {
    SCOPED_TRACE(raw ? "raw_data" : "float_data");
    onnx::ModelProto m = valid();
    auto* c = node(*m.mutable_graph(), "Constant", {}, {"k"}, "const1");
    auto* a = c->add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    *a->mutable_t() = float_tensor("K", 5, 2, raw);
    refused(m, {"node 'const1'", "attribute 'value'", "[5]"});
  }
}

TEST_F(OnnxBadInput, ExternalDataAbsolutePath) {
  refused(with_external((dir / "w.bin").string(), 0, 16), {"external data location", "relative"});
}

TEST_F(OnnxBadInput, ExternalDataDotDot) { refused(with_external("../w.bin", 0, 16), {"'../w.bin'", "'..'"}); }

TEST_F(OnnxBadInput, ExternalDataSymlink) { refused(with_external("link.bin", 0, 16), {"'link.bin'", "symbolic link"}); }

TEST_F(OnnxBadInput, ExternalDataPastTheEnd) {
  refused(with_external("w.bin", 56, 16), {"tensor 'W'", "[56, +16)", "64 bytes"});
  refused(with_external("w.bin", 100, 4), {"tensor 'W'", "[100, +4)"});
}

TEST_F(OnnxBadInput, ExternalDataLengthDoesNotMatchDims) {
  onnx::ModelProto m = with_external("w.bin", 0, 16);
  m.mutable_graph()->mutable_initializer(0)->set_dims(0, 5);
  refused(m, {"initializer 'W'", "16 bytes", "[5]"});
}

TEST_F(OnnxBadInput, InputThatNothingProduces) {
  onnx::ModelProto m = valid();
  m.mutable_graph()->mutable_node(0)->set_input(0, "nope");
  refused(m, {"graph 'main'", "node 'relu1' (Relu)", "'nope'"});
}

TEST_F(OnnxBadInput, UnnamedNodeIsNamedByIndex) {
  onnx::ModelProto m = valid();
  m.mutable_graph()->mutable_node(0)->clear_name();
  m.mutable_graph()->mutable_node(0)->set_input(0, "nope");
  refused(m, {"node #0 (Relu)", "'nope'"});
}

TEST_F(OnnxBadInput, GraphOutputThatNothingProduces) {
  onnx::ModelProto m = valid();
  *m.mutable_graph()->add_output() = vi("ghost");
  refused(m, {"graph output 'ghost'"});
}

TEST_F(OnnxBadInput, TwoNodesProduceTheSameValue) {
  onnx::ModelProto m = valid();
  node(*m.mutable_graph(), "Sigmoid", {"x"}, {"y"}, "sig1");
  refused(m, {"'y'", "produced twice", "node 'relu1' (Relu)", "node 'sig1' (Sigmoid)"});
}

TEST_F(OnnxBadInput, NodeOverwritesAGraphInput) {
  onnx::ModelProto m = valid();
  node(*m.mutable_graph(), "Sigmoid", {"y"}, {"x"}, "sig1");
  refused(m, {"'x'", "produced twice", "graph input", "node 'sig1'"});
}

TEST_F(OnnxBadInput, IfBodyCapturesAMissingName) {
  refused(body_reads("If", "ghost"), {"node 'inner' (Relu)", "'ghost'", "node 'if1'", "enclosing"});
}

TEST_F(OnnxBadInput, LoopBodyCapturesAMissingName) {
  refused(body_reads("Loop", "ghost"), {"node 'inner' (Relu)", "'ghost'", "node 'loop1'"});
}

// The same bodies reading a name that exists are fine (the refusals above are not accidents).
TEST_F(OnnxBadInput, ValidCounterparts) {
  for (const auto& m : {valid(), body_reads("If", "x"), body_reads("Loop", "x"), with_external("w.bin", 0, 16)}) {
    fs::path model = dir / "sub" / "m.onnx";
    std::ofstream(model, std::ios::binary) << m.SerializeAsString();
    EXPECT_NO_THROW(onnx_frontend::read_model(model.string()));
  }
}

}  // namespace
