// The nd4j namespace (718 descriptors) and SameDiff .fb files in and out: every shipped graph
// of libnd4j's test resources reads, validates and writes back with every field equal, compared
// with flatc --json of both files (Debian's flatbuffers-compiler).
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "amanda/schema/validate.h"
#include "amanda/support/file.h"
#include "frameworks/nd4j/nd4j.h"

namespace fs = std::filesystem;
using namespace amanda;

namespace {

const std::string kShared = AMANDA_ND4J_SHARED;

std::string slurp(const std::string& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

std::string flatc_json(const std::string& fb, const std::string& dir) {
  std::string schema = std::string(AMANDA_TEST_DATA) + "/../src/frameworks/nd4j/samediff.fbs";
  std::string cmd = "flatc --json --strict-json --raw-binary -o " + dir + " " + schema + " -- " + fb + " 2>/dev/null";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  return slurp(dir + "/" + fs::path(fb).stem().string() + ".json");
}

std::vector<std::string> models() {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(kShared + "/models"))
    if (e.path().extension() == ".fb") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST(Nd4jNamespace, AllDescriptorsLoad) {
  const auto& d = nd4j::Descriptors::shipped();
  EXPECT_EQ(d.ops().size(), 718u);
  EXPECT_EQ(d.argument_count(), 4342u);
  schema::Registry reg;
  nd4j::add_to(reg);
  const schema::NamespaceSchema* ns = reg.find(nd4j::kNamespace);
  ASSERT_TRUE(ns);
  EXPECT_EQ(ns->ops.size(), 718u + 5u + 1u);  // libnd4j's five second names of ops older files use, and `constant`
  const nd4j::OpDesc* conv = d.find("conv2d");
  ASSERT_TRUE(conv);
  auto ints = conv->list(nd4j::ArgList::Int);
  ASSERT_EQ(ints.size(), 10u);
  EXPECT_EQ(ints[0]->attr, "kH");
  EXPECT_EQ(ints[9]->attr, "isNCHW");
  EXPECT_EQ(ints[9]->index, 9u);
  // One name for arguments of two types: the type is the attribute's suffix.
  const nd4j::OpDesc* range = d.find("range");
  ASSERT_TRUE(range);
  EXPECT_TRUE(range->arg_by_attr("from_double"));
  EXPECT_TRUE(range->arg_by_attr("from_int64"));
  EXPECT_EQ(d.find("stridedslice"), d.find("strided_slice"));
}

TEST(Nd4jNamespace, OpHashIsLibnd4js) {
  // opNum values of custom ops in libnd4j's own test graphs.
  EXPECT_EQ(nd4j::op_hash("add"), -5176033361941572836LL);
  EXPECT_EQ(nd4j::op_hash("conv2d"), 7325441780195652299LL);
  EXPECT_EQ(nd4j::op_hash("strided_slice"), 1604988366995123901LL);
}

TEST(Nd4jNamespace, MissingOrderedArgumentIsAnErrorWithItsPath) {
  text::Document doc;
  ir::Graph& g = doc.graph;
  g.set_graph_namespace(g.root(), g.sym(nd4j::kNamespace));
  ir::OpId op = g.create_op(g.root(), "conv2d", "c1");
  for (const char* k : {"kH", "kW", "sH", "pH"}) g.set_attr(op, g.sym(k), ir::Value(int64_t(1)));
  Diagnostics diags;
  EXPECT_EQ(nd4j::check_ordered_args(g, diags), 1u);
  ASSERT_EQ(diags.items().size(), 1u);
  EXPECT_EQ(diags.items()[0].where, "c1");
  EXPECT_NE(diags.items()[0].message.find("missing int64 argument 3 'sW' of conv2d"), std::string::npos) << diags.items()[0].message;
  EXPECT_THROW(nd4j::write_flatgraph(doc), Error);
  g.set_attr(op, g.sym("sW"), ir::Value(int64_t(1)));
  Diagnostics d2;
  EXPECT_EQ(nd4j::check_ordered_args(g, d2), 0u);
}

TEST(Nd4jFlat, ShippedGraphsRoundTripFieldByField) {
  auto files = models();
  ASSERT_EQ(files.size(), 12u);
  std::string tmp = fs::temp_directory_path() / ("nd4j_rt_" + std::to_string(::getpid()));
  fs::create_directories(tmp + "/a");
  fs::create_directories(tmp + "/b");
  schema::Registry reg;
  nd4j::add_to(reg);
  size_t equal = 0, valid = 0;
  for (const auto& f : files) {
    SCOPED_TRACE(f);
    text::Document doc = nd4j::read_flatgraph(map_file(f), f);
    EXPECT_GT(doc.graph.op_count(), 0u);
    Diagnostics diags;
    auto res = schema::validate(doc.graph, reg, diags);
    size_t arg_problems = nd4j::check_ordered_args(doc.graph, diags);
    for (const auto& d : diags.items()) ADD_FAILURE() << d.where << ": " << d.message;
    valid += res.ok() && arg_problems == 0;
    std::string out = nd4j::write_flatgraph(doc);
    std::string written = tmp + "/b/" + fs::path(f).filename().string();
    std::ofstream(written, std::ios::binary) << out;
    std::string ja = flatc_json(f, tmp + "/a"), jb = flatc_json(written, tmp + "/b");
    EXPECT_FALSE(ja.empty());
    EXPECT_EQ(ja, jb);
    equal += !ja.empty() && ja == jb;
  }
  EXPECT_EQ(valid, files.size());
  EXPECT_EQ(equal, files.size());
  fs::remove_all(tmp);
}

TEST(Nd4jFlat, HostileBytesGiveAnError) {
  std::string good = slurp(kShared + "/models/reduce_all_rank2_d0_keep.fb");
  size_t errors = 0;
  for (size_t i = 0; i < good.size(); i += 7) {
    for (int flip : {0x01, 0x80, 0xff}) {
      std::string bad = good;
      bad[i] = static_cast<char>(bad[i] ^ flip);
      try {
        text::Document doc = nd4j::read_flatgraph(make_buffer(bad), "bad.fb");
        nd4j::write_flatgraph(doc);
      } catch (const Error&) {
        ++errors;
      }
    }
  }
  EXPECT_GT(errors, 0u);
  EXPECT_THROW(nd4j::read_flatgraph(make_buffer(good.substr(0, good.size() / 2)), "cut.fb"), Error);
}

TEST(Nd4jFlat, AnOutputIndexCannotAskForMorePortsThanTheFileDescribes) {
  // A 200-byte file whose one input names output 4000 of another node: refused, not 4000 ports.
  std::string tmp = fs::temp_directory_path() / ("nd4j_ports_" + std::to_string(::getpid()));
  fs::create_directories(tmp);
  std::ofstream(tmp + "/g.json") << R"({"nodes": [{"id": 1, "opName": "add"},
      {"id": 2, "opName": "add", "inputPaired": [{"first": 1, "second": 4000}]}]})";
  std::string schema = std::string(AMANDA_TEST_DATA) + "/../src/frameworks/nd4j/samediff.fbs";
  ASSERT_EQ(std::system(("flatc -b -o " + tmp + " " + schema + " " + tmp + "/g.json 2>/dev/null").c_str()), 0);
  std::string bytes = slurp(tmp + "/g.bin");
  ASSERT_FALSE(bytes.empty());
  try {
    nd4j::read_flatgraph(make_buffer(bytes), "g.bin");
    ADD_FAILURE() << "read";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("more ports than the file can describe"), std::string::npos) << e.what();
  }
  // Output 3 is within what the file can describe.
  std::ofstream(tmp + "/h.json") << R"({"nodes": [{"id": 1, "opName": "add"},
      {"id": 2, "opName": "add", "inputPaired": [{"first": 1, "second": 3}]}]})";
  ASSERT_EQ(std::system(("flatc -b -o " + tmp + " " + schema + " " + tmp + "/h.json 2>/dev/null").c_str()), 0);
  text::Document doc = nd4j::read_flatgraph(make_buffer(slurp(tmp + "/h.bin")), "h.bin");
  EXPECT_EQ(doc.graph.op_count(), 2u);
  fs::remove_all(tmp);
}
