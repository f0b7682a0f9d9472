// Replays every file of the TorchScript fuzz corpus (fuzz/corpus/torchscript) through the
// property the torchscript_fuzz target checks, so that every build runs it without clang, and
// every crash a fuzzer once found (kept in the corpus as regress-*) stays fixed.
#include <algorithm>
#include <filesystem>

#include <gtest/gtest.h>

#include "../../fuzz/torchscript_check.h"
#include "test_files.h"

namespace fs = std::filesystem;

namespace {

const fs::path kRepo = fs::path(AMANDA_TEST_DATA).parent_path();

TEST(TorchScriptFuzzCorpus, EveryFileHoldsTheProperty) {
  fs::path dir = kRepo / "fuzz" / "corpus" / "torchscript";
  std::vector<fs::path> files;
  if (fs::is_directory(dir))
    for (const auto& e : fs::directory_iterator(dir))
      if (e.is_regular_file()) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  ASSERT_GE(files.size(), 3u) << "the seed corpus has a parser, a pickle and an archive seed";
  std::string ops = (kRepo / "namespaces" / "pytorch" / "1.13.ops").string();
  for (const fs::path& p : files) {
    EXPECT_LT(fs::file_size(p), 64u * 1024) << p << ": keep the seed corpus small";
    EXPECT_EQ(amanda::fuzz::torchscript_problem(amanda::test_files::slurp(p), ops), "") << p;
  }
}

}  // namespace

namespace {

// The archive seeds must import, not only be refused: else the fuzzer starts from nothing.
TEST(TorchScriptFuzzCorpus, ArchiveSeedsImport) {
  std::string ops = (kRepo / "namespaces" / "pytorch" / "1.13.ops").string();
  const auto& ns = amanda::fuzz::torch_namespace(ops);
  for (const char* seed : {"archive_traced_cnn", "archive_scripted"}) {
    std::string bytes = amanda::test_files::slurp(kRepo / "fuzz" / "corpus" / "torchscript" / seed);
    amanda::torch_frontend::ImportOptions o;
    o.input_shapes = {{1, 3, 8, 8}};
    amanda::text::Document doc =
        amanda::torchscript::import_archive(amanda::make_buffer(bytes.substr(1)), seed, o, ns);
    size_t ops_count = 0;
    doc.graph.for_each_op([&](amanda::ir::OpId) { ++ops_count; });
    EXPECT_GE(ops_count, 3u) << seed;
  }
}

}  // namespace
