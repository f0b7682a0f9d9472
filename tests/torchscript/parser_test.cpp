// The parser of TorchScript's serialized Python (frontends/torchscript/ast.h).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "amanda/support/diagnostics.h"
#include "frontends/torchscript/ast.h"
#include "test_files.h"

namespace amanda::torchscript {
namespace {

// Parses every code/**/*.py under AMANDA_TEST_PT_DIR (extracted torch.jit.save archives).
TEST(TorchScriptParser, RealArchives) {
  const char* dir = std::getenv("AMANDA_TEST_PT_DIR");
  if (!dir || !*dir) GTEST_SKIP() << "AMANDA_TEST_PT_DIR is not set";
  size_t files = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
    const std::string p = entry.path().generic_string();
    if (!entry.is_regular_file() || entry.path().extension() != ".py" || p.find("/code/") == std::string::npos) continue;
    ++files;
    const std::string text = test_files::slurp(entry.path());
    try {
      parse_source(text, p);
    } catch (const ParseError& e) {
      ADD_FAILURE() << e.what();
    }
  }
  EXPECT_GT(files, 0u);
}

}  // namespace
}  // namespace amanda::torchscript
