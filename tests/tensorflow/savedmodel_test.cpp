// SavedModel directories and the tensor-bundle checkpoint (docs/tensorflow.md, "SavedModel"):
// crc32c against RFC 3720's vectors; the SSTable over several blocks; every TF.js model of
// @vladmandic/human written as a frozen .pb and as a SavedModel, read back equal (IR and
// GraphDef), and through the tool; variables (float, int, string tensors) written and read back;
// bad directories (truncated saved_model.pb, an index with a wrong crc or footer, an entry past the
// data file, a size that disagrees with the shape) refused by the tool with exit 1 and no output.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

#include "../../src/frameworks/tensorflow/bundle.h"
#include "../../src/frameworks/tensorflow/tfjs_json.h"
#include "../../src/frameworks/tensorflow/values.h"

#include <google/protobuf/util/json_util.h>
#include <google/protobuf/util/message_differencer.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include "amanda/frameworks/tensorflow/graphdef.h"
#include "amanda/frameworks/tensorflow/savedmodel.h"
#include "amanda/frameworks/tensorflow/tfjs.h"
#include "amanda/ir/equal.h"
#include "amanda_tf_saved_model.pb.h"
#include "test_files.h"

namespace amanda::tf_frontend {
namespace {

namespace fs = std::filesystem;
using namespace detail;

fs::path models_dir() {
  return fs::path(AMANDA_TEST_DATA) / "tensorflow" / "js" / "node_modules" / "@vladmandic" / "human" / "models";
}

std::vector<fs::path> models() {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(models_dir(), ec))
    if (e.path().extension() == ".json" && is_tfjs_file(e.path().string())) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

int run(const std::string& cmd) {
  int rc = std::system(cmd.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

struct TempDir {
  fs::path path;
  explicit TempDir(const std::string& tag) : path(fs::temp_directory_path() / ("amanda-sm-" + tag + "-" + std::to_string(::getpid()))) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
};

TEST(Crc32c, Rfc3720Vectors) {
  std::string zeros(32, '\0'), ones(32, '\xff'), inc(32, '\0');
  for (int i = 0; i < 32; ++i) inc[i] = static_cast<char>(i);
  EXPECT_EQ(crc32c(zeros.data(), 32), 0x8a9136aau);
  EXPECT_EQ(crc32c(ones.data(), 32), 0x62a8ab43u);
  EXPECT_EQ(crc32c(inc.data(), 32), 0x46dd794eu);
  EXPECT_EQ(crc32c("123456789", 9), 0xe3069283u);
  // Extending in pieces is the crc of the whole.
  EXPECT_EQ(crc32c_extend(crc32c("12345", 5), "6789", 4), 0xe3069283u);
  for (uint32_t c : {0u, 1u, 0xe3069283u, 0xffffffffu}) {
    EXPECT_EQ(crc32c_unmask(crc32c_mask(c)), c);
    EXPECT_NE(crc32c_mask(c), c);
  }
}

TEST(Sstable, ManyBlocksRoundTrip) {
  KeyValues kv;
  kv.emplace_back("", "header");
  for (int i = 0; i < 30000; ++i) {
    char k[32];
    std::snprintf(k, sizeof k, "layer_%06d/kernel", i);
    kv.emplace_back(k, std::string(static_cast<size_t>(i % 37), static_cast<char>('a' + i % 26)));
  }
  std::string t = write_table(kv);
  EXPECT_GT(t.size(), 2u * 262144);  // more than one data block
  EXPECT_EQ(read_table(t, "t.index"), kv);
  // The 48-byte footer ends in the table magic, little-endian.
  EXPECT_EQ(static_cast<uint8_t>(t[t.size() - 8]), 0x57);
  EXPECT_EQ(static_cast<uint8_t>(t[t.size() - 1]), 0xdb);
  std::string empty = write_table({});
  EXPECT_TRUE(read_table(empty, "e.index").empty());
  // Every single flipped byte of a small table is caught (crc, footer, handles).
  KeyValues small(kv.begin(), kv.begin() + 40);
  std::string s = write_table(small);
  for (size_t i = 0; i < s.size(); ++i) {
    std::string bad = s;
    bad[i] = static_cast<char>(bad[i] ^ 0x20);
    EXPECT_THROW(read_table(bad, "bad.index"), Error) << "byte " << i;
  }
}

ir::Tensor floats(std::vector<int64_t> shape, float start) {
  size_t n = 1;
  for (auto d : shape) n *= static_cast<size_t>(d);
  std::string b(n * 4, '\0');
  for (size_t i = 0; i < n; ++i) {
    float f = start + static_cast<float>(i) * 0.5f;
    std::memcpy(b.data() + 4 * i, &f, 4);
  }
  return ir::Tensor::from_bytes(ir::DType::Float32, std::move(shape), std::move(b));
}

TEST(Bundle, TensorsRoundTrip) {
  ir::Tensor a = floats({3, 2}, 1), b = floats({}, -2), c;
  c.dtype = ir::DType::String;
  c.shape = {3};
  c.strings = {"x", "", std::string(300, 'z')};
  ir::Tensor d = ir::Tensor::from_bytes(ir::DType::Int64, {2}, std::string("\x01\0\0\0\0\0\0\0\xff\xff\xff\xff\xff\xff\xff\xff", 16));
  BundleFiles f = write_bundle({{"a", &a}, {"b", &b}, {"c/strings", &c}, {"d", &d}});
  auto data = make_buffer(f.data);
  auto back = read_bundle(f.index, "v.index", [&](int k, int n, std::string& name) {
    EXPECT_EQ(k, 0);
    EXPECT_EQ(n, 1);
    name = "v.data-00000-of-00001";
    return data;
  });
  ASSERT_EQ(back.size(), 4u);
  EXPECT_EQ(back[0].key, "a");
  EXPECT_TRUE(back[0].value == a);
  EXPECT_TRUE(back[1].value == b);
  EXPECT_TRUE(back[2].value == c);
  EXPECT_TRUE(back[3].value == d);
  // TensorFlow's layout: one shard, data in key order with no padding.
  EXPECT_EQ(f.data.size(), 24u + 4u + (1 + 1 + 2 + 4 + 1 + 300) + 16u);
  KeyValues kv = read_table(f.index, "v.index");
  tensorflow::BundleHeaderProto h;
  ASSERT_TRUE(h.ParseFromString(kv[0].second));
  EXPECT_EQ(h.num_shards(), 1);
  EXPECT_EQ(h.version().producer(), 1);
  tensorflow::BundleEntryProto e;
  ASSERT_TRUE(e.ParseFromString(kv[2].second));
  EXPECT_EQ(e.offset(), 24);  // (entry 2 is "b", after a's 24 bytes)
  EXPECT_EQ(e.size(), 4);
  EXPECT_EQ(e.crc32c(), crc32c_mask(crc32c(f.data.data() + 24, 4)));
}

void drop_saved_model_attr(text::Document& d) { d.graph.erase_attr(d.graph.root(), d.graph.sym("saved_model")); }

// Every human model: TF.js -> frozen .pb -> SavedModel -> read back: the same IR and GraphDef;
// SavedModel -> SavedModel gives the same bytes.
TEST(SavedModel, HumanModelsRoundTrip) {
  auto list = models();
  ASSERT_GE(list.size(), 6u) << "no TF.js models in " << models_dir() << ": run scripts/install-deps.sh";
  TempDir tmp("human");
  for (const auto& m : list) {
    SCOPED_TRACE(m.filename().string());
    std::string name = m.stem().string();
    std::string pb = export_graph_bytes(read_tfjs(m.string()));
    text::Document frozen = import_graph_bytes(pb);
    // export_graph_bytes splices large tensors' bytes into the output: the same bytes as the
    // deterministic serialisation of the whole GraphDef.
    tensorflow::GraphDef whole;
    export_graph(frozen, whole);
    EXPECT_EQ(serialize(whole), pb);
    EXPECT_EQ(export_graph_bytes(frozen), pb);
    // import_graph_bytes reads the nodes straight from the wire: the same IR as from protobuf's
    // parsed message.
    tensorflow::GraphDef parsed;
    ASSERT_TRUE(parsed.ParseFromString(pb));
    EXPECT_EQ(ir::first_difference(import_graph(parsed).graph, frozen.graph), "");
    fs::path dir = tmp.path / name;
    write_saved_model(frozen, dir.string() + "/");
    ASSERT_TRUE(fs::exists(dir / "saved_model.pb"));
    EXPECT_FALSE(fs::exists(dir / "variables" / "variables.index"));  // Consts stay inline
    text::Document back = read_saved_model(dir.string());
    EXPECT_EQ(export_graph_bytes(back), pb);  // the same GraphDef, byte for byte
    const ir::Value* sm = back.graph.attr(back.graph.root(), back.graph.sym("saved_model"));
    ASSERT_TRUE(sm && sm->is_map());
    const ir::Value* sig = sm->find("signature_def");
    ASSERT_TRUE(sig && sig->find("serving_default"));
    EXPECT_FALSE(sig->find("serving_default")->find("inputs")->as_map().empty());
    EXPECT_FALSE(sig->find("serving_default")->find("outputs")->as_map().empty());
    // SavedModel -> SavedModel: the same saved_model.pb.
    std::string first = test_files::slurp(dir / "saved_model.pb");
    write_saved_model(back, (tmp.path / (name + "-again") / "saved_model.pb").string());
    EXPECT_EQ(test_files::slurp(tmp.path / (name + "-again") / "saved_model.pb"), first);
    drop_saved_model_attr(back);
    EXPECT_EQ(ir::first_difference(frozen.graph, back.graph), "");
    fs::remove_all(dir);
    fs::remove_all(tmp.path / (name + "-again"));
  }
}

// The spliced serialisation against protobuf's own on the cases it treats apart: a large tensor on
// a node with debug info (after the attributes), next to a small one, several large attributes on
// one node, a large tensor in a library function (not spliced), unknown fields.
TEST(SavedModel, SplicedExportIsProtobufsSerialisation) {
  tensorflow::GraphDef g;
  auto add_const = [&](const std::string& name, size_t n, const char* key = "value") {
    auto* c = g.add_node();
    c->set_name(name);
    c->set_op("Const");
    (*c->mutable_attr())["dtype"].set_type(tensorflow::DT_FLOAT);
    auto* t = (*c->mutable_attr())[key].mutable_tensor();
    t->set_dtype(tensorflow::DT_FLOAT);
    t->mutable_tensor_shape()->add_dim()->set_size(static_cast<int64_t>(n));
    std::string b(4 * n, '\0');
    for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<char>(i * 7 + name.size());
    t->set_tensor_content(b);
    return c;
  };
  add_const("big", 300000);
  add_const("small", 3);
  add_const("debug", 1000)->mutable_experimental_debug_info()->add_original_node_names("orig");
  auto* two = add_const("two", 500);
  auto* t2 = (*two->mutable_attr())["a_second"].mutable_tensor();
  *t2 = two->attr().at("value").tensor();
  auto* f = g.mutable_library()->add_function();
  f->mutable_signature()->set_name("fn");
  f->mutable_signature()->add_output_arg()->set_name("o");
  auto* fc = f->add_node_def();
  fc->set_name("k");
  fc->set_op("Const");
  *fc->mutable_attr() = g.node(0).attr();
  (*f->mutable_ret())["o"] = "k:output:0";
  g.mutable_versions()->set_producer(99);
  g.GetReflection()->MutableUnknownFields(&g)->AddVarint(1000, 5);
  std::string whole = serialize(g);
  text::Document d = import_graph_bytes(whole);
  EXPECT_EQ(export_graph_bytes(d), whole);
}

// The TF.js topology reader (tfjs_json.cpp) against protobuf's JSON reader: the same GraphDef on
// every human model (all of them through it, none falling back), every TF.js fuzz seed, and cases
// it must leave to protobuf.
TEST(TfjsJson, SameGraphDefAsProtobufsReader) {
  auto same = [](const rapidjson::Value& topo, bool expect_fast) {
    rapidjson::StringBuffer sb;
    rapidjson::Writer<rapidjson::StringBuffer> w(sb);
    topo.Accept(w);
    tensorflow::GraphDef want, got;
    bool pb_ok = google::protobuf::util::JsonStringToMessage(std::string(sb.GetString(), sb.GetSize()), &want).ok();
    bool fast = graphdef_from_json(topo, got);
    EXPECT_EQ(fast, expect_fast) << std::string(sb.GetString(), std::min<size_t>(sb.GetSize(), 300));
    if (fast) {
      EXPECT_TRUE(pb_ok);
      std::string diff;
      google::protobuf::util::MessageDifferencer md;
      md.ReportDifferencesToString(&diff);
      EXPECT_TRUE(md.Compare(want, got)) << diff.substr(0, 600);
      EXPECT_TRUE(serialize(want) == serialize(got));
    }
  };
  auto list = models();
  ASSERT_GE(list.size(), 6u);
  for (const auto& m : list) {
    SCOPED_TRACE(m.filename().string());
    rapidjson::Document d;
    std::string text = test_files::slurp(m);
    d.Parse<rapidjson::kParseFullPrecisionFlag>(text.c_str());
    same(d["modelTopology"], true);
  }
  fs::path corpus = fs::path(AMANDA_TEST_DATA).parent_path() / "fuzz" / "corpus" / "tensorflow";
  for (const auto& e : fs::directory_iterator(corpus)) {
    std::string b = test_files::slurp(e.path());
    if (b.empty() || b[0] != 'j') continue;
    std::string json = b.substr(1, b.find('\0') == std::string::npos ? std::string::npos : b.find('\0') - 1);
    rapidjson::Document d;
    d.Parse<rapidjson::kParseFullPrecisionFlag>(json.c_str());
    if (d.IsObject() && d.HasMember("modelTopology")) same(d["modelTopology"], true);
  }
  for (const char* fallback : {R"({"node":[{"name":"a","op":"Const","experimentalDebugInfo":{}}]})",
                               R"({"node":[{"name":"a","op":"X","attr":{"f":{"f":"NaN"}}}]})",
                               R"({"node":[{"name":"a","name":"b","op":"X"}]})",
                               R"({"node":[{"name":"a","op":"X","attr":{"s":{"s":"a-_b"}}}]})",
                               R"({"library":{"function":[]}})", R"({"node":[{"name":null}]})",
                               R"({"node":[{"name":"a","op":"X","attr":{"i":{"i":"12x"}}}]})",
                               R"({"node":[{"name":"a","op":"X","attr":{"t":{"type":"DT_NOPE"}}}]})"}) {
    rapidjson::Document d;
    d.Parse(fallback);
    same(d, false);
  }
}

// The tool: model.pb -> dir/ -> back.pb gives the same bytes; inspect and verify read the folder.
TEST(SavedModel, ToolRoundTrip) {
  fs::path m = models_dir() / "emotion.json";
  ASSERT_TRUE(fs::exists(m)) << "run scripts/install-deps.sh";
  TempDir tmp("tool");
  std::string amanda = AMANDA_BINARY;
  ASSERT_EQ(run(amanda + " fmt " + m.string() + " -o " + (tmp.path / "emotion.pb").string()), 0);
  ASSERT_EQ(run(amanda + " fmt " + (tmp.path / "emotion.pb").string() + " -o " + (tmp.path / "sm").string() + "/"), 0);
  EXPECT_TRUE(fs::exists(tmp.path / "sm" / "saved_model.pb"));
  ASSERT_EQ(run(amanda + " fmt " + (tmp.path / "sm").string() + " -o " + (tmp.path / "back.pb").string()), 0);
  EXPECT_EQ(test_files::slurp(tmp.path / "back.pb"), test_files::slurp(tmp.path / "emotion.pb"));
  EXPECT_EQ(run(amanda + " verify " + (tmp.path / "sm").string() + " >/dev/null"), 0);
  EXPECT_EQ(run(amanda + " inspect " + (tmp.path / "sm" / "saved_model.pb").string() + " >/dev/null"), 0);
  // A folder named by its saved_model.pb is written the same way.
  ASSERT_EQ(run(amanda + " fmt " + (tmp.path / "sm").string() + " -o " + (tmp.path / "sm2" / "saved_model.pb").string()), 0);
  EXPECT_EQ(test_files::slurp(tmp.path / "sm2" / "saved_model.pb"), test_files::slurp(tmp.path / "sm" / "saved_model.pb"));
}

// A SavedModel with variables, a signature, another meta graph: read, written, read equal.
struct WithVariables {
  std::string pb;
  ir::Tensor kernel = floats({3, 3, 1, 4}, 0.25f), bias = floats({4}, -1), step, names;
  WithVariables() {
    step = ir::Tensor::from_bytes(ir::DType::Int64, {}, std::string("\x07\0\0\0\0\0\0\0", 8));
    names.dtype = ir::DType::String;
    names.shape = {2};
    names.strings = {"conv", "dense"};
    tensorflow::GraphDef g;
    auto* x = g.add_node();
    x->set_name("x");
    x->set_op("Placeholder");
    (*x->mutable_attr())["dtype"].set_type(tensorflow::DT_FLOAT);
    for (const char* v : {"conv/kernel", "conv/bias"}) {
      auto* h = g.add_node();
      h->set_name(v);
      h->set_op("VarHandleOp");
      (*h->mutable_attr())["dtype"].set_type(tensorflow::DT_FLOAT);
      (*h->mutable_attr())["shared_name"].set_s(v);
      auto* r = g.add_node();
      r->set_name(std::string(v) + "/Read/ReadVariableOp");
      r->set_op("ReadVariableOp");
      r->add_input(v);
      (*r->mutable_attr())["dtype"].set_type(tensorflow::DT_FLOAT);
    }
    auto* c = g.add_node();
    c->set_name("y");
    c->set_op("BiasAdd");
    c->add_input("x");
    c->add_input("conv/bias/Read/ReadVariableOp");
    (*c->mutable_attr())["T"].set_type(tensorflow::DT_FLOAT);
    g.mutable_versions()->set_producer(1234);
    tensorflow::SavedModel sm;
    sm.set_saved_model_schema_version(1);
    auto* train = sm.add_meta_graphs();
    train->mutable_meta_info_def()->add_tags("train");
    train->set_graph_def(serialize(g));
    auto* mg = sm.add_meta_graphs();
    mg->mutable_meta_info_def()->add_tags("serve");
    mg->mutable_meta_info_def()->set_tensorflow_version("2.15.0");
    mg->set_graph_def(serialize(g));
    mg->set_saver_def(std::string("\n\x10saver_filename:0", 18));
    auto& s = (*mg->mutable_signature_def())["serving_default"];
    s.set_method_name("tensorflow/serving/predict");
    auto& in = (*s.mutable_inputs())["x"];
    in.set_name("x:0");
    in.set_dtype(tensorflow::DT_FLOAT);
    in.mutable_tensor_shape()->add_dim()->set_size(-1);
    in.mutable_tensor_shape()->add_dim()->set_size(4);
    (*s.mutable_outputs())["y"].set_name("y:0");
    pb = serialize(sm);
  }
  void write(const fs::path& dir) const {
    test_files::spit(dir / "saved_model.pb", pb);
    BundleFiles f = write_bundle({{"conv/bias", &bias}, {"conv/kernel", &kernel}, {"names", &names}, {"step", &step}});
    test_files::spit(dir / "variables" / "variables.index", f.index);
    test_files::spit(dir / "variables" / "variables.data-00000-of-00001", f.data);
  }
};

TEST(SavedModel, VariablesAndSignatureRoundTrip) {
  TempDir tmp("vars");
  WithVariables w;
  w.write(tmp.path / "in");
  text::Document d = read_saved_model((tmp.path / "in").string());
  const ir::Value* sm = d.graph.attr(d.graph.root(), d.graph.sym("saved_model"));
  ASSERT_TRUE(sm);
  const ir::Value* vars = sm->find("variables");
  ASSERT_TRUE(vars && vars->is_map());
  ASSERT_EQ(vars->as_map().size(), 4u);
  EXPECT_TRUE(vars->find("conv/kernel")->as_tensor() == w.kernel);
  EXPECT_TRUE(vars->find("conv/bias")->as_tensor() == w.bias);
  EXPECT_TRUE(vars->find("step")->as_tensor() == w.step);
  EXPECT_TRUE(vars->find("names")->as_tensor() == w.names);
  const ir::Value* in = sm->find("signature_def")->find("serving_default")->find("inputs")->find("x");
  ASSERT_TRUE(in);
  EXPECT_EQ(in->find("name")->as_string(), "x:0");
  EXPECT_EQ(in->find("dtype")->as_string(), "float32");
  EXPECT_EQ(sm->find("tags")->as_list().at(0).as_string(), "serve");
  // Written back: the same saved_model.pb and the same bundle files.
  write_saved_model(d, (tmp.path / "out").string() + "/");
  EXPECT_EQ(test_files::slurp(tmp.path / "out" / "saved_model.pb"), w.pb);
  EXPECT_EQ(test_files::slurp(tmp.path / "out" / "variables" / "variables.index"),
            test_files::slurp(tmp.path / "in" / "variables" / "variables.index"));
  EXPECT_EQ(test_files::slurp(tmp.path / "out" / "variables" / "variables.data-00000-of-00001"),
            test_files::slurp(tmp.path / "in" / "variables" / "variables.data-00000-of-00001"));
  text::Document again = read_saved_model((tmp.path / "out").string());
  EXPECT_EQ(ir::first_difference(d.graph, again.graph), "");
  // Through the YAML text form (tensors and all) and back to a SavedModel: the same bytes.
  ASSERT_EQ(run(std::string(AMANDA_BINARY) + " fmt " + (tmp.path / "out").string() + " -o " + (tmp.path / "m.yaml").string()), 0);
  ASSERT_EQ(run(std::string(AMANDA_BINARY) + " fmt " + (tmp.path / "m.yaml").string() + " -o " + (tmp.path / "y").string() + "/"), 0);
  EXPECT_EQ(test_files::slurp(tmp.path / "y" / "saved_model.pb"), w.pb);
  EXPECT_EQ(test_files::slurp(tmp.path / "y" / "variables" / "variables.index"),
            test_files::slurp(tmp.path / "in" / "variables" / "variables.index"));
  // The other meta graph by tag.
  SavedModelOptions o;
  o.tag = "train";
  text::Document t = read_saved_model((tmp.path / "in").string(), o);
  EXPECT_EQ(t.graph.attr(t.graph.root(), t.graph.sym("saved_model"))->find("tags")->as_list().at(0).as_string(), "train");
  o.tag = "gpu";
  EXPECT_THROW(read_saved_model((tmp.path / "in").string(), o), Error);
}

class BadSavedModel : public ::testing::Test {
 protected:
  void SetUp() override {
    w_.write(tmp_.path / "m");
    index_ = test_files::slurp(tmp_.path / "m" / "variables" / "variables.index");
    data_ = test_files::slurp(tmp_.path / "m" / "variables" / "variables.data-00000-of-00001");
  }
  // Runs `amanda fmt m -o out/`: exit 1, `needle` (and `needle2`) in the message, no output.
  void expect_refused(const std::string& needle, const std::string& needle2 = "") {
    int rc = run(std::string(AMANDA_BINARY) + " fmt " + (tmp_.path / "m").string() + " -o " + (tmp_.path / "out").string() +
                 "/ 2>" + (tmp_.path / "err.txt").string());
    EXPECT_EQ(rc, 1);
    std::string err = test_files::slurp(tmp_.path / "err.txt");
    EXPECT_NE(err.find(needle), std::string::npos) << err;
    EXPECT_NE(err.find(needle2), std::string::npos) << err;
    EXPECT_FALSE(fs::exists(tmp_.path / "out"));
  }
  void put_index(const std::string& s) { test_files::spit(tmp_.path / "m" / "variables" / "variables.index", s); }
  void put_data(const std::string& s) { test_files::spit(tmp_.path / "m" / "variables" / "variables.data-00000-of-00001", s); }
  // The index with one entry replaced.
  std::string with_entry(const std::string& key, const std::function<void(tensorflow::BundleEntryProto&)>& change) {
    KeyValues kv = read_table(index_, "i");
    for (auto& [k, v] : kv)
      if (k == key) {
        tensorflow::BundleEntryProto e;
        EXPECT_TRUE(e.ParseFromString(v));
        change(e);
        v = e.SerializeAsString();
      }
    return write_table(kv);
  }

  TempDir tmp_{"bad"};
  WithVariables w_;
  std::string index_, data_;
};

TEST_F(BadSavedModel, GoodCopyIsAccepted) {
  EXPECT_EQ(run(std::string(AMANDA_BINARY) + " fmt " + (tmp_.path / "m").string() + " -o " + (tmp_.path / "out").string() + "/"), 0);
  EXPECT_TRUE(fs::exists(tmp_.path / "out" / "variables" / "variables.index"));
}

TEST_F(BadSavedModel, TruncatedSavedModelPb) {
  test_files::spit(tmp_.path / "m" / "saved_model.pb", w_.pb.substr(0, w_.pb.size() - 30));
  expect_refused("saved_model.pb", "not a TensorFlow SavedModel");
}

TEST_F(BadSavedModel, IndexBlockCrcWrong) {
  std::string bad = index_;
  bad[10] = static_cast<char>(bad[10] ^ 1);  // inside the first data block
  put_index(bad);
  expect_refused("variables.index", "crc32c mismatch");
}

TEST_F(BadSavedModel, IndexFooterWrong) {
  std::string bad = index_;
  bad[bad.size() - 3] = 0;
  put_index(bad);
  expect_refused("variables.index", "no table magic number");
}

TEST_F(BadSavedModel, TruncatedIndex) {
  put_index(index_.substr(0, index_.size() - 20));
  expect_refused("variables.index", "");
}

TEST_F(BadSavedModel, EntryPastTheDataFile) {
  put_data(data_.substr(0, data_.size() - 20));
  expect_refused("entry '", "past the end of");
}

TEST_F(BadSavedModel, EntryOffsetPastTheDataFile) {
  put_index(with_entry("conv/kernel", [](auto& e) { e.set_offset(1 << 20); }));
  expect_refused("entry 'conv/kernel'", "variables.data-00000-of-00001");
}

TEST_F(BadSavedModel, SizeDisagreesWithShape) {
  put_index(with_entry("conv/bias", [](auto& e) { e.mutable_shape()->mutable_dim(0)->set_size(5); }));
  expect_refused("entry 'conv/bias'", "shape [5] of float32 needs 20 bytes, the entry says 16");
}

TEST_F(BadSavedModel, DataCrcWrong) {
  std::string bad = data_;
  bad[0] = static_cast<char>(bad[0] ^ 1);
  put_data(bad);
  expect_refused("entry 'conv/bias'", "crc32c");
}

// Issue 18's bad inputs for .pb and TF.js that tfjs_test.cpp / graphdef_test.cpp do not run
// through the tool: a tensor whose byte length disagrees with its shape in a .pb, a real model's
// .pb cut short, a shard that is a symbolic link out of the folder, an absolute shard path.
class BadIssue18 : public ::testing::Test {
 protected:
  void expect_refused(const fs::path& in, const fs::path& out, const std::string& needle) {
    int rc = run(std::string(AMANDA_BINARY) + " fmt " + in.string() + " -o " + out.string() + " 2>" + (tmp_.path / "err.txt").string());
    EXPECT_EQ(rc, 1);
    std::string err = test_files::slurp(tmp_.path / "err.txt");
    EXPECT_NE(err.find(needle), std::string::npos) << err;
    EXPECT_NE(err.find(in.filename().string()), std::string::npos) << err;
    EXPECT_FALSE(fs::exists(out));
  }
  TempDir tmp_{"issue18"};
};

TEST_F(BadIssue18, PbTensorLengthDisagreesWithShape) {
  tensorflow::GraphDef g;
  auto* n = g.add_node();
  n->set_name("w");
  n->set_op("Const");
  (*n->mutable_attr())["dtype"].set_type(tensorflow::DT_FLOAT);
  auto* t = (*n->mutable_attr())["value"].mutable_tensor();
  t->set_dtype(tensorflow::DT_FLOAT);
  t->mutable_tensor_shape()->add_dim()->set_size(4);
  t->set_tensor_content(std::string(12, '\1'));
  test_files::spit(tmp_.path / "bad.pb", serialize(g));
  expect_refused(tmp_.path / "bad.pb", tmp_.path / "out.pb", "node 'w', attribute 'value': tensor_content holds 12 bytes, but shape [4] of float32 needs 16");
  expect_refused(tmp_.path / "bad.pb", tmp_.path / "out/", "tensor_content holds 12 bytes");  // (nor a SavedModel)
}

TEST_F(BadIssue18, HumanPbCutShort) {
  fs::path m = models_dir() / "blazeface.json";
  ASSERT_TRUE(fs::exists(m)) << "run scripts/install-deps.sh";
  std::string pb = export_graph_bytes(read_tfjs(m.string()));
  for (size_t cut : {size_t(100), pb.size() / 2, pb.size() - 5}) {
    test_files::spit(tmp_.path / "cut.pb", pb.substr(0, cut));
    expect_refused(tmp_.path / "cut.pb", tmp_.path / "out.pb", "cut.pb: error");
  }
}

TEST_F(BadIssue18, TfjsShardLinkOutOfTheFolder) {
  fs::path m = models_dir() / "emotion.json";
  ASSERT_TRUE(fs::exists(m)) << "run scripts/install-deps.sh";
  fs::create_directories(tmp_.path / "m");
  test_files::spit(tmp_.path / "m" / "model.json", test_files::slurp(m));
  test_files::spit(tmp_.path / "secret.bin", test_files::slurp(models_dir() / "emotion.bin"));
  fs::create_symlink(tmp_.path / "secret.bin", tmp_.path / "m" / "emotion.bin");
  expect_refused(tmp_.path / "m" / "model.json", tmp_.path / "out" / "model.json", "is refused: it is a symbolic link");
}

TEST_F(BadIssue18, TfjsAbsoluteShardPath) {
  fs::path m = models_dir() / "emotion.json";
  ASSERT_TRUE(fs::exists(m)) << "run scripts/install-deps.sh";
  std::string j = test_files::slurp(m);
  size_t p = j.find("\"emotion.bin\"");
  ASSERT_NE(p, std::string::npos);
  j.replace(p, 13, "\"" + (models_dir() / "emotion.bin").string() + "\"");
  test_files::spit(tmp_.path / "m" / "model.json", j);
  expect_refused(tmp_.path / "m" / "model.json", tmp_.path / "out" / "model.json", "leaves the model's folder");
}

}  // namespace
}  // namespace amanda::tf_frontend
