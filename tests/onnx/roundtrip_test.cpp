// Every model of Debian's libonnx-testdata: import, export, compare (protobuf field by field and
// the re-imported IR), count byte-identical results; validate the imported graph against the
// ONNX namespaces (models that onnx.checker rejects are listed in checker_rejects.txt, made by
// scripts/onnx_roundtrip_check.py; the list is empty for Debian's 1.12 test data).
#include <filesystem>
#include <fstream>
#include <set>

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

const char* kData = "/usr/share/libonnx-testdata/data";

std::vector<std::string> models() {
  std::vector<std::string> out;
  for (const char* dir : {"node", "simple", "pytorch-converted", "pytorch-operator"}) {
    fs::path d = fs::path(kData) / dir;
    if (!fs::exists(d)) continue;
    for (const auto& e : fs::directory_iterator(d))
      if (fs::exists(e.path() / "model.onnx")) out.push_back((e.path() / "model.onnx").string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::set<std::string> checker_rejects() {
  std::set<std::string> s;
  std::ifstream f(std::string(AMANDA_TEST_DATA) + "/onnx/checker_rejects.txt");
  std::string line;
  while (std::getline(f, line))
    if (!line.empty()) s.insert(std::string(kData) + "/" + line.substr(0, line.find(' ')));
  return s;
}

}  // namespace

TEST(OnnxRoundTrip, EveryTestDataModel) {
  auto paths = models();
  ASSERT_FALSE(paths.empty()) << "libonnx-testdata is not installed (scripts/install-deps.sh installs it)";
  auto rejects = checker_rejects();
  schema::Registry reg;
  reg.add_provider(onnx_frontend::make_onnx_namespace_provider());
  size_t semantic = 0, identical = 0, valid = 0, validated = 0, text_equal = 0, text_skipped = 0;
  for (const auto& path : paths) {
    SCOPED_TRACE(path);
    auto buf = map_file(path);
    onnx::ModelProto orig;
    ASSERT_TRUE(orig.ParseFromArray(buf->data(), static_cast<int>(buf->size())));
    text::Document doc = onnx_frontend::read_model(path);
    Diagnostics structure;
    ir::verify(doc.graph, structure);
    EXPECT_FALSE(structure.has_errors()) << structure.str();
    onnx::ModelProto back;
    onnx_frontend::export_model(doc, back);
    std::string bytes = back.SerializeAsString();
    // Field by field; a field set to its default counts as that default (proto2 presence aside).
    google::protobuf::util::MessageDifferencer diff;
    diff.set_message_field_comparison(google::protobuf::util::MessageDifferencer::EQUIVALENT);
    std::string report;
    diff.ReportDifferencesToString(&report);
    bool same_proto = diff.Compare(orig, back);
    EXPECT_TRUE(same_proto) << report;
    identical += bytes == buf->view();
    onnx_frontend::ImportOptions o;
    o.base_dir = fs::path(path).parent_path().string();
    text::Document again = onnx_frontend::import_model_bytes(bytes, o);
    std::string d = ir::first_difference(doc.graph, again.graph);
    EXPECT_EQ(d, "");
    semantic += same_proto && d.empty();
    // Through the YAML and JSON forms too: what `amanda fmt m.onnx -o m.yaml; amanda fmt m.yaml -o m.onnx` does.
    // The text form reads `type`/`name` in an op's attrs as the op's own type/name, so an ONNX
    // attribute of that name (Optional's `type`) cannot go through YAML yet.
    bool text_ok = true;
    doc.graph.for_each_op([&](ir::OpId op) {
      for (const auto& [k, v] : doc.graph.attrs(op))
        if (doc.graph.str(k) == "type" || doc.graph.str(k) == "name") text_ok = false;
    });
    text_skipped += !text_ok;
    if (text_ok && buf->size() < (1u << 20)) {
      Diagnostics diags;
      std::string yaml = text::to_text(doc, text::Format::Yaml);
      try {
        text::Document from_yaml = text::parse(yaml, text::Format::Yaml, path + ".yaml", diags);
        std::string td = ir::first_difference(doc.graph, from_yaml.graph);
        EXPECT_EQ(td, "");
        std::string json = text::to_text(doc, text::Format::Json);
        text::Document from_json = text::parse(json, text::Format::Json, path + ".json", diags);
        std::string jd = ir::first_difference(doc.graph, from_json.graph);
        EXPECT_EQ(jd, "");
        text_equal += td.empty() && jd.empty() && onnx_frontend::export_model_bytes(from_yaml) == bytes &&
                      onnx_frontend::export_model_bytes(from_json) == bytes;
      } catch (const std::exception& e) {
        ADD_FAILURE() << "through YAML: " << e.what();
      }
    }
    if (!rejects.count(path)) {
      ++validated;
      Diagnostics problems;
      schema::validate(doc.graph, reg, problems);
      EXPECT_FALSE(problems.has_errors()) << problems.str();
      valid += !problems.has_errors();
    }
  }
  std::printf("ONNX round trip: %zu models, %zu semantically equal, %zu byte-identical, %zu equal through YAML and JSON (%zu not tried: an attribute named type/name); "
              "validator: %zu of %zu checker-accepted models without problems\n",
              paths.size(), semantic, identical, text_equal, text_skipped, valid, validated);
  EXPECT_EQ(semantic, paths.size());
}
