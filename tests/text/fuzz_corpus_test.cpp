// Replays every file of the fuzz corpora (fuzz/corpus/yaml, fuzz/corpus/json) through the
// property the fuzz targets check, so that CI, which has no clang, still runs them, and every
// crash a fuzzer once found (kept in the corpus) stays fixed.
#include <gtest/gtest.h>

#include "../../fuzz/roundtrip_check.h"
#include "text_test_util.h"

namespace amanda::text {
namespace {

using namespace testing;

void replay(const std::string& folder, Format f) {
  fs::path dir = test_data().parent_path() / "fuzz" / "corpus" / folder;
  ASSERT_TRUE(fs::is_directory(dir)) << dir;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file()) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  EXPECT_GE(files.size(), 10u);
  for (const fs::path& p : files) {
    std::string problem = fuzz::roundtrip_problem(slurp(p), f);
    EXPECT_EQ(problem, "") << p;
  }
}

TEST(FuzzCorpus, Yaml) { replay("yaml", Format::Yaml); }
TEST(FuzzCorpus, Json) { replay("json", Format::Json); }

// The seed corpus must exercise the whole path, not only the refusal: most of it parses.
TEST(FuzzCorpus, SeedsMostlyParse) {
  for (const auto& [folder, f] : {std::pair{"yaml", Format::Yaml}, std::pair{"json", Format::Json}}) {
    size_t parsed = 0, total = 0;
    for (const auto& e : fs::directory_iterator(test_data().parent_path() / "fuzz" / "corpus" / folder)) {
      ++total;
      Diagnostics diags;
      try {
        parse(slurp(e.path()), f, "x", diags);
        ++parsed;
      } catch (const ParseError&) {
      }
    }
    EXPECT_GE(parsed * 2, total) << folder;
  }
}

// The property itself: it must notice a broken round trip (a check that cannot fail is no check).
TEST(FuzzCorpus, CheckNoticesDifferences) {
  Document a = parse_yaml("op: {name: a, attrs: {x: 1}}\n");
  Document b = parse_yaml("op: {name: a, attrs: {x: 2}}\n");
  EXPECT_NE(fuzz::same_document(a, b), "");
  Document e1 = parse_yaml("edge: {output_port: {op: a, port: b}, input_port: {op: c, port: d}}\n");
  Document e2 = parse_yaml("edge: {output_port: {op: a, port: b}, input_port: {op: c, port: e}}\n");
  EXPECT_NE(fuzz::same_document(e1, e2), "");
  EXPECT_EQ(fuzz::same_document(e1, e1), "");
  EXPECT_EQ(fuzz::roundtrip_problem("not: [valid", Format::Yaml), "");
}

}  // namespace
}  // namespace amanda::text
