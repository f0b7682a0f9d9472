// Replays every file of the ONNX fuzz corpus (fuzz/corpus/onnx) through the property the
// onnx_fuzz target checks, so that every build runs it without clang, and every crash a fuzzer
// once found (kept in the corpus as regress-*) stays fixed.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include "../../fuzz/onnx_roundtrip_check.h"

#include "test_files.h"

namespace fs = std::filesystem;
using namespace amanda;

namespace {

using test_files::slurp;

std::vector<fs::path> corpus() {
  fs::path dir = fs::path(AMANDA_TEST_DATA).parent_path() / "fuzz" / "corpus" / "onnx";
  std::vector<fs::path> files;
  if (fs::is_directory(dir))
    for (const auto& e : fs::directory_iterator(dir))
      if (e.is_regular_file()) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

TEST(OnnxFuzzCorpus, EveryFileHoldsTheProperty) {
  auto files = corpus();
  EXPECT_GE(files.size(), 10u);
  size_t imported = 0;
  for (const fs::path& p : files) {
    EXPECT_LT(fs::file_size(p), 64u * 1024) << p << ": keep the seed corpus small";
    std::string bytes = slurp(p);
    EXPECT_EQ(fuzz::onnx_roundtrip_problem(bytes), "") << p;
    try {
      onnx_frontend::import_model_bytes(bytes);
      ++imported;
    } catch (const std::exception&) {
    }
  }
  // The seeds must exercise the whole path, not only the refusal.
  EXPECT_GE(imported * 2, files.size());
}

// Refusals are fine; a model without nodes round-trips.
TEST(OnnxFuzzCorpus, RefusalsAndEmptyModelsPass) {
  EXPECT_EQ(fuzz::onnx_roundtrip_problem(""), "");
  EXPECT_EQ(fuzz::onnx_roundtrip_problem("graph:\n  ops: []\n"), "");
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.mutable_graph()->set_name("g");
  EXPECT_EQ(fuzz::onnx_roundtrip_problem(m.SerializeAsString()), "");
}

}  // namespace
