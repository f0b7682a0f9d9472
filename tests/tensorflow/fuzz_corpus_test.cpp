// Replays every file of the TensorFlow fuzz corpus (fuzz/corpus/tensorflow) through the property
// the tensorflow_fuzz target checks, so every build runs it without clang.
#include <algorithm>
#include <filesystem>

#include <gtest/gtest.h>

#include "../../fuzz/tensorflow_roundtrip_check.h"
#include "test_files.h"

namespace fs = std::filesystem;
using namespace amanda;

namespace {

TEST(TensorflowFuzzCorpus, EveryFileHoldsTheProperty) {
  fs::path dir = fs::path(AMANDA_TEST_DATA).parent_path() / "fuzz" / "corpus" / "tensorflow";
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file()) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  ASSERT_GE(files.size(), 6u);
  size_t imported = 0;
  for (const fs::path& p : files) {
    EXPECT_LT(fs::file_size(p), 64u * 1024) << p << ": keep the seed corpus small";
    std::string bytes = test_files::slurp(p);
    EXPECT_EQ(fuzz::tensorflow_roundtrip_problem(bytes), "") << p;
    // The seeds are meant to import (regressions found by the fuzzer may not).
    if (p.filename().string().rfind("regress", 0) != 0) {
      std::string_view body = std::string_view(bytes).substr(1);
      try {
        if (bytes[0] == 's') {
          auto u32 = [&](size_t at) {
            uint32_t v = 0;
            for (int i = 3; i >= 0; --i) v = (v << 8) | uint8_t(body[at + i]);
            return v;
          };
          uint32_t a = u32(0), b = u32(4);
          tf_frontend::import_saved_model(body.substr(8, a), body.substr(8 + a, b), make_buffer(std::string(body.substr(8 + a + b))), "sm");
        } else if (bytes[0] == 'j') {
          size_t z = body.find('\0');
          auto shard = make_buffer(std::string(body.substr(z + 1)));
          tf_frontend::import_tfjs(body.substr(0, z), [&](const std::string&) { return shard; });
        } else if (bytes[0] == 't') {
          tf_frontend::import_graph_text(body);
        } else {
          tf_frontend::import_graph_bytes(body);
        }
        ++imported;
      } catch (const std::exception& e) {
        ADD_FAILURE() << p << ": " << e.what();
      }
    }
  }
  EXPECT_GE(imported, 9u);
}

}  // namespace
