// Replays the torchscript_interp_fuzz corpus (fuzz/corpus/torchscript_interp: a module's code) in
// the archive the fuzz target builds, with the target's small budgets: nested loops, a recursion
// twice 40 deep and a doubling list end in an amanda::Error, never a crash or a hang.
#include <algorithm>
#include <filesystem>

#include <gtest/gtest.h>

#include "../../fuzz/torchscript_check.h"
#include "test_files.h"

namespace fs = std::filesystem;

namespace {

const fs::path kRepo = fs::path(AMANDA_TEST_DATA).parent_path();

class InterpCorpus : public ::testing::Test {
 protected:
  void SetUp() override {
    saved_ = amanda::Budget::run().limits();
    amanda::BudgetLimits small;
    small.memory = 64 << 20;
    small.steps = 200'000;
    small.ops = 20'000;
    amanda::Budget::run().set_limits(small);
  }
  void TearDown() override { amanda::Budget::run().set_limits(saved_); }
  amanda::BudgetLimits saved_;
  std::string ops_ = (kRepo / "namespaces" / "pytorch" / "1.13.ops").string();
};

TEST_F(InterpCorpus, EveryFileHoldsTheProperty) {
  fs::path dir = kRepo / "fuzz" / "corpus" / "torchscript_interp";
  std::vector<fs::path> files;
  if (fs::is_directory(dir))
    for (const auto& e : fs::directory_iterator(dir))
      if (e.is_regular_file()) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  ASSERT_GE(files.size(), 3u);
  for (const fs::path& p : files) {
    std::string archive = amanda::fuzz::interp_archive(amanda::test_files::slurp(p));
    EXPECT_EQ(amanda::fuzz::torchscript_problem(std::string(1, '\x02') + archive, ops_), "") << p;
  }
}

// The template archive imports a plain module (else the fuzzer starts from nothing), and the
// hostile seeds are refused by a budget, naming it.
TEST_F(InterpCorpus, TheArchiveImportsAndTheBudgetsStopTheRest) {
  const auto& ns = amanda::fuzz::torch_namespace(ops_);
  amanda::torch_frontend::ImportOptions o;
  o.input_shapes = {{1, 3, 8, 8}};
  auto import = [&](const char* seed) {
    amanda::Budget::run().reset_counters();
    std::string code = amanda::test_files::slurp(kRepo / "fuzz" / "corpus" / "torchscript_interp" / seed);
    return amanda::torchscript::import_archive(amanda::make_buffer(amanda::fuzz::interp_archive(code)), seed, o, ns);
  };
  amanda::text::Document doc = import("relu");
  size_t n = 0;
  doc.graph.for_each_op([&](amanda::ir::OpId) { ++n; });
  EXPECT_GE(n, 1u);
  for (const char* seed : {"loops", "recursion"}) {
    try {
      import(seed);
      ADD_FAILURE() << seed << " imported";
    } catch (const amanda::BudgetExceeded& e) {
      EXPECT_NE(std::string(e.what()).find("--max-"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
