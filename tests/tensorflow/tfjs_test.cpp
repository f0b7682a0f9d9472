// TF.js graph models shipped in npm's @vladmandic/human@3.3.6 (tests/tensorflow/js; installed by
// scripts/install-deps.sh): every model of its models/ folder is read and written back, and the
// result must be the same model: shard bytes identical, the topology the same GraphDef
// (protobuf's MessageDifferencer on both JSON forms), every other key of model.json equal. Then bad
// inputs (a manifest pointing past its shard, a shard path with '..', a byte length that
// disagrees with the shape, truncated files) fail with a clear message, exit 1 and no output.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <chrono>
#include <filesystem>
#include <sys/stat.h>

#include <google/protobuf/util/json_util.h>
#include <google/protobuf/util/message_differencer.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "amanda/frameworks/tensorflow/graphdef.h"
#include "amanda/frameworks/tensorflow/tfjs.h"
#include "amanda/frameworks/tensorflow/namespaces.h"
#include "amanda/ir/equal.h"
#include "amanda/schema/validate.h"
#include "amanda_tf_graph.pb.h"
#include "test_files.h"

namespace amanda::tf_frontend {
namespace {

namespace fs = std::filesystem;

fs::path models_dir() {
  return fs::path(AMANDA_TEST_DATA) / "tensorflow" / "js" / "node_modules" / "@vladmandic" / "human" / "models";
}

// Every TF.js graph model of the folder (models.json is an index, not a model).
std::vector<fs::path> models() {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(models_dir(), ec))
    if (e.path().extension() == ".json" && is_tfjs_file(e.path().string())) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

tensorflow::GraphDef topology(const rapidjson::Value& v) {
  rapidjson::StringBuffer sb;
  rapidjson::Writer<rapidjson::StringBuffer> w(sb);
  v.Accept(w);
  tensorflow::GraphDef g;
  EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(std::string(sb.GetString(), sb.GetSize()), &g).ok());
  return g;
}

void expect_same_model(const std::string& a_json, const std::string& b_json) {
  rapidjson::Document a, b;
  a.Parse<rapidjson::kParseFullPrecisionFlag>(a_json.c_str());
  b.Parse<rapidjson::kParseFullPrecisionFlag>(b_json.c_str());
  ASSERT_FALSE(a.HasParseError());
  ASSERT_FALSE(b.HasParseError());
  std::string diff;
  google::protobuf::util::MessageDifferencer d;
  d.ReportDifferencesToString(&diff);
  tensorflow::GraphDef ga = topology(a["modelTopology"]), gb = topology(b["modelTopology"]);
  EXPECT_GT(ga.node_size(), 0);
  EXPECT_TRUE(d.Compare(ga, gb)) << diff.substr(0, 2000);
  std::vector<std::string> ka, kb;
  for (const auto& m : a.GetObject()) ka.push_back(m.name.GetString());
  for (const auto& m : b.GetObject()) kb.push_back(m.name.GetString());
  EXPECT_EQ(ka, kb);  // the same keys in the same order
  for (const auto& m : a.GetObject()) {
    if (std::string_view(m.name.GetString()) == "modelTopology") continue;
    ASSERT_TRUE(b.HasMember(m.name));
    if (std::string_view(m.name.GetString()) == "weightsManifest") {
      // The same groups and weights; the shard paths are the writer's own (groupG-shardIofN.bin:
      // a name read from an input never becomes a file name), as many as the input's.
      ASSERT_TRUE(m.value.IsArray() && b[m.name].IsArray());
      ASSERT_EQ(m.value.Size(), b[m.name].Size());
      for (rapidjson::SizeType g = 0; g < m.value.Size(); ++g) {
        EXPECT_TRUE(m.value[g]["weights"] == b[m.name][g]["weights"]) << g;
        const auto& pa = m.value[g]["paths"];
        const auto& pb = b[m.name][g]["paths"];
        ASSERT_EQ(pa.Size(), pb.Size());
        for (rapidjson::SizeType i = 0; i < pb.Size(); ++i)
          EXPECT_EQ(std::string(pb[i].GetString()),
                    "group" + std::to_string(g + 1) + "-shard" + std::to_string(i + 1) + "of" + std::to_string(pb.Size()) + ".bin");
      }
      continue;
    }
    EXPECT_TRUE(m.value == b[m.name]) << m.name.GetString();
  }
}

// The input's shard paths in manifest order (what the i-th written shard corresponds to).
std::vector<std::string> input_shards(const std::string& json) {
  rapidjson::Document a;
  a.Parse(json.c_str());
  std::vector<std::string> out;
  if (!a.HasMember("weightsManifest")) return out;
  for (const auto& g : a["weightsManifest"].GetArray())
    for (const auto& p : g["paths"].GetArray()) out.push_back(p.GetString());
  return out;
}

TEST(Tfjs, HumanModelsRoundTrip) {
  auto list = models();
  ASSERT_GE(list.size(), 6u) << "no TF.js models in " << models_dir() << ": run scripts/install-deps.sh";
  for (const char* named : {"emotion", "blazeface", "movenet-lightning", "faceres", "centernet", "handtrack"})
    EXPECT_TRUE(std::find(list.begin(), list.end(), models_dir() / (std::string(named) + ".json")) != list.end()) << named;
  size_t identical_bins = 0, shards = 0;
  for (const auto& m : list) {
    SCOPED_TRACE(m.filename().string());
    text::Document doc = read_tfjs(m.string());
    TfjsFiles out = export_tfjs(doc);
    expect_same_model(test_files::slurp(m), out.model_json);
    std::vector<std::string> in_shards = input_shards(test_files::slurp(m));
    ASSERT_EQ(in_shards.size(), out.shards.size());
    for (size_t si = 0; si < out.shards.size(); ++si) {
      const auto& [rel, bytes] = out.shards[si];
      ++shards;
      bool same = test_files::slurp(m.parent_path() / in_shards[si]) == bytes;
      EXPECT_TRUE(same) << rel;
      identical_bins += same;
    }
    // Read back from what was written: the same IR.
    std::map<std::string, std::string> files(out.shards.begin(), out.shards.end());
    text::Document again = import_tfjs(out.model_json, [&](const std::string& p) { return make_buffer(files.at(p)); });
    // The same IR but for the manifest's shard paths (the writer's names), and writing it again
    // gives the same files: the writer's output is a fixed point.
    std::string diff = ir::first_difference(doc.graph, again.graph);
    EXPECT_TRUE(diff.empty() || diff == "<graph>: attribute 'tfjs' differs") << diff;
    TfjsFiles out2 = export_tfjs(again);
    EXPECT_EQ(out2.model_json, out.model_json);
    EXPECT_TRUE(out2.shards == out.shards);
    // Ports are named by the registry's arguments, attributes are the registry's: the only
    // problems are attributes newer than TF 2.2's registry (explicit_paddings, TF 2.5+).
    auto reg = schema::make_default_registry();
    reg->add_provider(make_tf_namespace_provider());
    Diagnostics vd;
    auto vr = schema::validate(doc.graph, *reg, vd);
    EXPECT_EQ(vr.ops_checked, doc.graph.op_count());
    for (const auto& p : vd.items())
      EXPECT_NE(p.str().find("unknown attribute 'explicit_paddings'"), std::string::npos) << p.str();
    // And as a frozen GraphDef (.pb, weights inline): the same graph and weights again.
    text::Document pb = import_graph_bytes(export_graph_bytes(doc));
    EXPECT_EQ(export_graph_bytes(pb), export_graph_bytes(doc));
  }
  std::cout << "[ figures  ] " << list.size() << " TF.js models, " << identical_bins << "/" << shards
            << " shards byte-identical, every topology the same GraphDef\n";
}

// Quantised weights are dequantised as TF.js does: handtrack's uint8 weights (min 0, scale s) and
// movenet's float16 ones.
TEST(Tfjs, QuantisedWeightsAreDequantised) {
  fs::path m = models_dir() / "handtrack.json";
  ASSERT_TRUE(fs::exists(m)) << "run scripts/install-deps.sh";
  rapidjson::Document j;
  std::string text = test_files::slurp(m);
  j.Parse(text.c_str());
  std::string bin = test_files::slurp(models_dir() / "handtrack.bin");
  // The first uint8-quantised float weight, decoded here from the manifest by hand.
  size_t offset = 0;
  for (const auto& w : j["weightsManifest"][0]["weights"].GetArray()) {
    size_t count = 1;
    for (const auto& d : w["shape"].GetArray()) count *= d.GetUint64();
    bool q = w.HasMember("quantization");
    std::string dtype = w["dtype"].GetString();
    if (q && std::string(w["quantization"]["dtype"].GetString()) == "uint8" && dtype == "float32" && count > 4) {
      double scale = w["quantization"]["scale"].GetDouble(), min = w["quantization"]["min"].GetDouble();
      text::Document doc = read_tfjs(m.string());
      ir::OpId op = doc.graph.find_op(doc.graph.root(), w["name"].GetString());
      ASSERT_TRUE(op);
      const ir::Tensor& t = doc.graph.attr(op, doc.graph.sym("value"))->as_tensor();
      ASSERT_EQ(t.dtype, ir::DType::Float32);
      ASSERT_EQ(t.size, count * 4);
      bool nonzero = false;
      for (size_t i = 0; i < count; ++i) {
        float f;
        std::memcpy(&f, t.data + 4 * i, 4);
        EXPECT_EQ(f, static_cast<float>(static_cast<unsigned char>(bin[offset + i]) * scale + min)) << i;
        nonzero |= f != 0;
      }
      EXPECT_TRUE(nonzero);
      return;
    }
    size_t vs = q ? (std::string(w["quantization"]["dtype"].GetString()) == "uint8" ? 1 : 2) : (dtype == "bool" ? 1 : 4);
    offset += count * vs;
  }
  FAIL() << "handtrack has no uint8-quantised float weight";
}

int run(const std::string& cmd) {
  int rc = std::system(cmd.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

class BadTfjs : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("amanda-tfjs-bad-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "m");
    fs::path src = models_dir() / "emotion.json";
    ASSERT_TRUE(fs::exists(src)) << "run scripts/install-deps.sh";
    json_ = test_files::slurp(src);
    bin_ = test_files::slurp(models_dir() / "emotion.bin");
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Writes the model, runs `amanda fmt` on it; expects exit 1, `needle` in the message, no output.
  void expect_refused(const std::string& json, const std::string& bin, const std::string& needle) {
    test_files::spit(dir_ / "m" / "model.json", json);
    test_files::spit(dir_ / "m" / "emotion.bin", bin);
    fs::remove_all(dir_ / "out");
    fs::create_directories(dir_ / "out");
    int rc = run(std::string(AMANDA_BINARY) + " fmt " + (dir_ / "m" / "model.json").string() + " -o " +
                 (dir_ / "out" / "model.json").string() + " 2>" + (dir_ / "err.txt").string());
    EXPECT_EQ(rc, 1);
    std::string err = test_files::slurp(dir_ / "err.txt");
    EXPECT_NE(err.find(needle), std::string::npos) << err;
    EXPECT_TRUE(fs::is_empty(dir_ / "out"));
  }

  static std::string replace(std::string s, const std::string& from, const std::string& to) {
    size_t p = s.find(from);
    EXPECT_NE(p, std::string::npos) << from;
    if (p != std::string::npos) s.replace(p, from.size(), to);
    return s;
  }

  fs::path dir_;
  std::string json_, bin_;
};

TEST_F(BadTfjs, GoodCopyIsAccepted) {
  test_files::spit(dir_ / "m" / "model.json", json_);
  test_files::spit(dir_ / "m" / "emotion.bin", bin_);
  fs::create_directories(dir_ / "out");  // (the output's folder is not made: only the files the format defines)
  EXPECT_EQ(run(std::string(AMANDA_BINARY) + " fmt " + (dir_ / "m" / "model.json").string() + " -o " +
                (dir_ / "out" / "model.json").string()),
            0);
  EXPECT_EQ(test_files::slurp(dir_ / "out" / "group1-shard1of1.bin"), bin_);
}

// Every file under dir, relative, sorted.
std::vector<std::string> files_under(const fs::path& dir) {
  std::vector<std::string> out;
  for (auto it = fs::recursive_directory_iterator(dir); it != fs::recursive_directory_iterator(); ++it)
    out.push_back(it->path().lexically_relative(dir).string());
  std::sort(out.begin(), out.end());
  return out;
}

// Issue 32: a shard named .ssh/authorized_keys wrote OUT/.ssh/authorized_keys. The writer names
// its shards itself now: only model.json and group1-shard1of1.bin appear.
TEST_F(BadTfjs, ShardNamesOfTheInputNeverBecomeFileNames) {
  test_files::spit(dir_ / "m" / "model.json", replace(json_, "\"emotion.bin\"", "\".ssh/authorized_keys\""));
  fs::create_directories(dir_ / "m" / ".ssh");
  test_files::spit(dir_ / "m" / ".ssh" / "authorized_keys", bin_);
  fs::create_directories(dir_ / "out");
  EXPECT_EQ(run(std::string(AMANDA_BINARY) + " fmt " + (dir_ / "m" / "model.json").string() + " -o " +
                (dir_ / "out" / "model.json").string()),
            0);
  EXPECT_EQ(files_under(dir_ / "out"), (std::vector<std::string>{"group1-shard1of1.bin", "model.json"}));
  EXPECT_EQ(test_files::slurp(dir_ / "out" / "group1-shard1of1.bin"), bin_);
  EXPECT_EQ(test_files::slurp(dir_ / "out" / "model.json").find("authorized_keys"), std::string::npos);
}

TEST_F(BadTfjs, ShardThatIsASymbolicLinkOutOfTheFolder) {
  test_files::spit(dir_ / "secret.bin", bin_);
  fs::create_symlink(dir_ / "secret.bin", dir_ / "m" / "linked.bin");
  expect_refused(replace(json_, "\"emotion.bin\"", "\"linked.bin\""), bin_, "it is a symbolic link");
}

TEST_F(BadTfjs, ShardThatIsAFifoDoesNotBlock) {
  ASSERT_EQ(::mkfifo((dir_ / "m" / "fifo.bin").c_str(), 0600), 0);
  expect_refused(replace(json_, "\"emotion.bin\"", "\"fifo.bin\""), bin_, "it is a FIFO");
}

// 300,000 shard paths (the same small file): refused at once, not read 300,000 times.
TEST_F(BadTfjs, ThreeHundredThousandShards) {
  std::string many;
  for (int i = 0; i < 300000; ++i) many += std::string(i ? "," : "") + "\"emotion.bin\"";
  auto t0 = std::chrono::steady_clock::now();
  expect_refused(replace(json_, "\"emotion.bin\"", many), bin_, "more than 10000 shards");
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(20));
}

TEST_F(BadTfjs, ShardTooShort) {
  expect_refused(json_, bin_.substr(0, bin_.size() - 100), "past the end of the group's shards");
}

TEST_F(BadTfjs, ShardLongerThanTheWeights) {
  expect_refused(json_, bin_ + std::string(8, '\0'), "a weight's byte length disagrees with its shape");
}

TEST_F(BadTfjs, ShardPathWithDotDot) {
  expect_refused(replace(json_, "\"emotion.bin\"", "\"../emotion.bin\""), bin_, "leaves the model's folder");
}

TEST_F(BadTfjs, ShapeDisagreesWithItsConst) {
  // The manifest's first weight gets one more dimension than its Const node has.
  std::string j = replace(json_, "\"shape\":[", "\"shape\":[1,");
  expect_refused(j, bin_, "the manifest says");
}

TEST_F(BadTfjs, TruncatedModelJson) { expect_refused(json_.substr(0, json_.size() / 2), bin_, "not JSON"); }

TEST_F(BadTfjs, UnknownQuantisation) {
  std::string j = json_;
  j = replace(j, "\"dtype\":\"float32\"}", "\"dtype\":\"float32\",\"quantization\":{\"dtype\":\"int4\"}}");
  expect_refused(j, bin_, "unknown quantization dtype 'int4'");
}

}  // namespace
}  // namespace amanda::tf_frontend
