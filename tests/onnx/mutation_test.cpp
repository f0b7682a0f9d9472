// Damaged models: bytes flipped, cut or spliced. The importer must either refuse with an
// amanda::ParseError/Error or give a document that verifies, exports and re-imports; never crash
// (this runs under ASan in CI too).
#include <filesystem>
#include <random>

#include <gtest/gtest.h>

#include "amanda/frameworks/onnx/model.h"
#include "amanda/ir/equal.h"
#include "amanda/ir/verify.h"
#include "amanda/support/file.h"
#include "amanda/text/document.h"

namespace fs = std::filesystem;
using namespace amanda;

TEST(OnnxMutation, DamagedModelsAreRefusedOrRoundTrip) {
  std::vector<std::string> paths;
  for (const char* d : {"node/test_if", "node/test_loop11", "node/test_scan9_sum", "node/test_conv_with_strides_padding",
                        "node/test_sequence_map_add_2_sequences_expanded", "node/test_constant", "simple/test_sign_model",
                        "pytorch-converted/test_Conv2d", "node/test_if_opt", "node/test_cast_FLOAT_to_STRING"}) {
    std::string p = std::string("/usr/share/libonnx-testdata/data/") + d + "/model.onnx";
    if (fs::exists(p)) paths.push_back(p);
  }
  ASSERT_FALSE(paths.empty()) << "libonnx-testdata is not installed (scripts/install-deps.sh installs it)";
  std::mt19937 rng(777);
  size_t refused = 0, accepted = 0;
  for (const auto& path : paths) {
    std::string orig(map_file(path)->view());
    for (int round = 0; round < 300; ++round) {
      std::string b = orig;
      switch (round % 3) {
        case 0:  // flip a few bytes
          for (int k = 0; k < 1 + round % 4; ++k) b[rng() % b.size()] = static_cast<char>(rng());
          break;
        case 1:  // cut
          b.resize(rng() % b.size());
          break;
        case 2: {  // splice a copy of a piece somewhere else
          size_t from = rng() % b.size(), len = rng() % std::min<size_t>(64, b.size() - from);
          b.insert(rng() % b.size(), b.substr(from, len));
          break;
        }
      }
      SCOPED_TRACE(path + " round " + std::to_string(round));
      try {
        text::Document doc = onnx_frontend::import_model_bytes(b);
        ++accepted;
        Diagnostics problems;
        ir::verify(doc.graph, problems);  // may report problems; must not crash
        std::string out = onnx_frontend::export_model_bytes(doc);
        text::Document again = onnx_frontend::import_model_bytes(out);
        EXPECT_EQ(ir::first_difference(doc.graph, again.graph), "");
      } catch (const ParseError&) {
        ++refused;
      } catch (const Error&) {
        ++refused;
      }
    }
  }
  std::printf("damaged models: %zu refused with an error, %zu read and round-tripped\n", refused, accepted);
  EXPECT_GT(refused, 0u);
  EXPECT_GT(accepted, 0u);
}
