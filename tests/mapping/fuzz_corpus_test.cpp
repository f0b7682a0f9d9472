// Replays the table_fuzz corpus (fuzz/corpus/table) through the property the fuzz target checks,
// so that every build runs it without clang, and every input a fuzzer once found stays fixed.
#include <algorithm>
#include <filesystem>

#include <gtest/gtest.h>

#include "../../fuzz/table_check.h"
#include "test_files.h"

namespace fs = std::filesystem;

namespace {

const fs::path kRepo = fs::path(AMANDA_TEST_DATA).parent_path();

TEST(TableFuzzCorpus, EveryFileHoldsTheProperty) {
  fs::path dir = kRepo / "fuzz" / "corpus" / "table";
  std::vector<fs::path> files;
  if (fs::is_directory(dir))
    for (const auto& e : fs::directory_iterator(dir))
      if (e.is_regular_file()) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  ASSERT_GE(files.size(), 5u) << "the seed corpus has expressions, a template and a table file";
  for (const fs::path& p : files) {
    EXPECT_LT(fs::file_size(p), 64u * 1024) << p << ": keep the seed corpus small";
    EXPECT_EQ(amanda::fuzz::table_problem(amanda::test_files::slurp(p)), "") << p;
  }
}

// The table seed must parse, not only be refused: else the fuzzer starts from nothing.
TEST(TableFuzzCorpus, TheTableSeedParses) {
  std::string bytes = amanda::test_files::slurp(kRepo / "fuzz" / "corpus" / "table" / "table_file");
  auto t = amanda::mapping::parse_table(amanda::text::parse_tree(std::string_view(bytes).substr(1), amanda::text::Format::Yaml, "t.yaml"));
  EXPECT_FALSE(t->rules.empty());
}

// The pattern seeds (first byte 3) must parse too, for the same reason.
TEST(TableFuzzCorpus, ThePatternSeedsParse) {
  for (const char* name : {"pattern_layer_norm", "pattern_attrs"}) {
    std::string bytes = amanda::test_files::slurp(kRepo / "fuzz" / "corpus" / "table" / name);
    ASSERT_FALSE(bytes.empty()) << name;
    EXPECT_EQ(bytes[0], 3) << name;
    auto p = amanda::passes::parse_pattern(std::string_view(bytes).substr(1), name);
    EXPECT_FALSE(p.names.empty()) << name;
  }
}

}  // namespace
