// Replays fuzz/corpus/caffe2 through the fuzz target's property (fuzz/caffe2_roundtrip_check.h),
// and the same on mutations of it a fuzzer would try first (every byte flipped, truncations), so
// that the property runs in every build, not only in the fuzz build.
#include <gtest/gtest.h>

#include <filesystem>

#include <google/protobuf/stubs/logging.h>

#include "../../fuzz/caffe2_roundtrip_check.h"
#include "test_files.h"

namespace amanda::fuzz {
namespace {

namespace fs = std::filesystem;

std::vector<std::pair<std::string, std::string>> corpus() {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& e : fs::directory_iterator(fs::path(AMANDA_SOURCE_DIR) / "fuzz/corpus/caffe2"))
    out.emplace_back(e.path().filename().string(), test_files::slurp(e.path()));
  std::sort(out.begin(), out.end());
  return out;
}

TEST(Caffe2Fuzz, CorpusHolds) {
  google::protobuf::SetLogHandler(nullptr);
  auto c = corpus();
  ASSERT_GE(c.size(), 3u);
  for (const auto& [name, data] : c) EXPECT_EQ(caffe2_roundtrip_problem(data), "") << name;
}

TEST(Caffe2Fuzz, MutationsHold) {
  google::protobuf::SetLogHandler(nullptr);
  size_t tried = 0;
  for (const auto& [name, data] : corpus()) {
    // Every 7th byte XORed with a few patterns, and every truncation length in steps.
    for (size_t i = 1; i < data.size(); i += 7)
      for (uint8_t x : {0x01, 0x80, 0xff}) {
        std::string m = data;
        m[i] = static_cast<char>(m[i] ^ x);
        EXPECT_EQ(caffe2_roundtrip_problem(m), "") << name << " byte " << i << " ^ " << int(x);
        ++tried;
      }
    for (size_t n = 1; n < data.size(); n += 13) {
      EXPECT_EQ(caffe2_roundtrip_problem(data.substr(0, n)), "") << name << " cut at " << n;
      ++tried;
    }
  }
  EXPECT_GT(tried, 1000u);
}

}  // namespace
}  // namespace amanda::fuzz
