// The run's budgets, the checked size arithmetic, and the path policy for files a model names.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <fstream>
#include <limits>

#include <gtest/gtest.h>

#include "amanda/support/budget.h"
#include "amanda/support/path_policy.h"

namespace amanda {
namespace {

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

// Each test runs with its own limits and leaves the process's budget as it found it.
class BudgetTest : public ::testing::Test {
 protected:
  void SetUp() override { saved_ = Budget::run().limits(); }
  void TearDown() override {
    Budget::run().set_limits(saved_);
    Budget::run().reset();
  }
  BudgetLimits saved_;
};

TEST_F(BudgetTest, ChargingPastALimitNamesTheBudgetAndItsFlag) {
  BudgetLimits l;
  l.steps = 10;
  Budget::run().set_limits(l);
  Budget::run().reset();
  Budget::run().charge(BudgetKind::Steps, 10, "here");
  std::string m = message_of([] { Budget::run().charge(BudgetKind::Steps, 1, "m.pt:3:5"); });
  EXPECT_NE(m.find("m.pt:3:5: error: over the interpreter steps budget (10 steps, 10 used, 1 more asked)"), std::string::npos) << m;
  EXPECT_NE(m.find("--max-steps"), std::string::npos) << m;
  EXPECT_EQ(Budget::run().used(BudgetKind::Steps), 10u);  // a refused charge is not counted
}

TEST_F(BudgetTest, ACounterThatWouldOverflowIsOverTheLimit) {
  Budget::run().reset();
  Budget::run().charge(BudgetKind::Memory, 1, "a");
  EXPECT_THROW(Budget::run().charge(BudgetKind::Memory, std::numeric_limits<uint64_t>::max(), "b"), BudgetExceeded);
}

TEST_F(BudgetTest, MemoryAndDepthAreRefunded) {
  BudgetLimits l;
  l.memory = 100;
  l.depth = 2;
  Budget::run().set_limits(l);
  Budget::run().reset();
  {
    MemoryCharge a(60, "a");
    EXPECT_THROW(MemoryCharge(60, "b"), BudgetExceeded);
  }
  MemoryCharge c(100, "c");  // a's bytes came back
  {
    DepthGuard d1("x"), d2("y");
    EXPECT_THROW(DepthGuard("z"), BudgetExceeded);
  }
  DepthGuard d3("x");
  EXPECT_EQ(Budget::run().used(BudgetKind::Depth), 1u);
}

TEST_F(BudgetTest, ResetCountersKeepsWhatIsLive) {
  Budget::run().reset();
  MemoryCharge m(5, "m");
  Budget::run().charge(BudgetKind::Steps, 7, "s");
  Budget::run().reset_counters();
  EXPECT_EQ(Budget::run().used(BudgetKind::Steps), 0u);
  EXPECT_EQ(Budget::run().used(BudgetKind::Memory), 5u);
}

TEST(CheckedArithmetic, OverflowIsAnErrorNotAWrap) {
  EXPECT_EQ(checked_mul(uint64_t(1) << 31, uint64_t(1) << 31, "x"), uint64_t(1) << 62);
  EXPECT_THROW(checked_mul(uint64_t(1) << 32, uint64_t(1) << 32, "x"), Error);
  EXPECT_THROW(checked_add(std::numeric_limits<uint64_t>::max(), uint64_t(1), "x"), Error);
  EXPECT_THROW(checked_sub(std::numeric_limits<int64_t>::min(), int64_t(1), "x"), Error);
  EXPECT_THROW(checked_mul(std::numeric_limits<int64_t>::min(), int64_t(-1), "x"), Error);
  int64_t dims[] = {1 << 20, 1 << 20, 1 << 20, 1 << 20};
  EXPECT_THROW(checked_product(dims, 4, "shape"), Error);
  int64_t neg[] = {2, -3};
  EXPECT_NE(message_of([&] { checked_product(neg, 2, "shape"); }).find("negative dimension -3"), std::string::npos);
  EXPECT_EQ(checked_product(dims, 2, "shape"), uint64_t(1) << 40);
}

TEST(BudgetValues, SuffixesArePowersOf1024) {
  uint64_t v = 0;
  EXPECT_TRUE(parse_budget_value("512M", v));
  EXPECT_EQ(v, uint64_t(512) << 20);
  EXPECT_TRUE(parse_budget_value("2GiB", v));
  EXPECT_EQ(v, uint64_t(2) << 30);
  EXPECT_TRUE(parse_budget_value("100", v));
  EXPECT_EQ(v, 100u);
  EXPECT_FALSE(parse_budget_value("", v));
  EXPECT_FALSE(parse_budget_value("-1", v));
  EXPECT_FALSE(parse_budget_value("1X", v));
  EXPECT_FALSE(parse_budget_value("99999999999T", v));  // past 64 bits
  EXPECT_FALSE(parse_budget_value("99999999999999999999", v));
}

// ---------------------------------------------------------------- the path policy

class PathPolicy : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = std::filesystem::temp_directory_path() / ("amanda-path-policy-" + std::to_string(getpid()));
    std::filesystem::remove_all(root_);
    std::filesystem::create_directories(root_ / "model" / "sub");
    std::filesystem::create_directories(root_ / "outside");
    write(root_ / "model" / "w.bin", "weights");
    write(root_ / "model" / "sub" / "w.bin", "nested");
    write(root_ / "outside" / "secret", "secret");
  }
  void TearDown() override { std::filesystem::remove_all(root_); }
  static void write(const std::filesystem::path& p, const std::string& s) { std::ofstream(p) << s; }
  std::string model() const { return (root_ / "model").string(); }
  std::string refusal(const std::string& name) const {
    return message_of([&] { map_model_file(model(), name, "m.onnx: error: external data location"); });
  }
  std::filesystem::path root_;
};

TEST_F(PathPolicy, RegularFilesInsideTheFolderAreRead) {
  EXPECT_EQ(map_model_file(model(), "w.bin", "x")->view(), "weights");
  EXPECT_EQ(map_model_file(model(), "sub/w.bin", "x")->view(), "nested");
  EXPECT_EQ(map_model_file(model(), "./sub//w.bin", "x")->view(), "nested");
}

TEST_F(PathPolicy, EscapesAreRefusedWithTheReason) {
  EXPECT_NE(refusal("/etc/passwd").find("'/etc/passwd' is refused: it must be a relative path"), std::string::npos);
  EXPECT_NE(refusal("../outside/secret").find("contains '..'"), std::string::npos);
  EXPECT_NE(refusal("sub/../../outside/secret").find("contains '..'"), std::string::npos);
  EXPECT_NE(refusal("a\\b").find("backslash"), std::string::npos);
  EXPECT_NE(refusal("").find("relative path"), std::string::npos);
  EXPECT_NE(refusal("sub").find("a folder, not a regular file"), std::string::npos);
  EXPECT_NE(refusal("nope.bin").find("cannot be read"), std::string::npos);
}

TEST_F(PathPolicy, ASymbolicLinkInAnyComponentIsRefused) {
  std::filesystem::create_directory_symlink(root_ / "outside", root_ / "model" / "link");
  std::filesystem::create_symlink(root_ / "outside" / "secret", root_ / "model" / "file_link");
  std::filesystem::create_symlink("w.bin", root_ / "model" / "inside_link");
  EXPECT_NE(refusal("link/secret").find("goes through a symbolic link ('link')"), std::string::npos) << refusal("link/secret");
  EXPECT_NE(refusal("file_link").find("is a symbolic link"), std::string::npos);
  EXPECT_NE(refusal("inside_link").find("is a symbolic link"), std::string::npos);  // even one that stays inside
}

TEST_F(PathPolicy, AFifoIsRefusedAtOnceNotOpened) {
  ASSERT_EQ(mkfifo((root_ / "model" / "fifo").c_str(), 0600), 0);
  EXPECT_NE(refusal("fifo").find("it is a FIFO, not a regular file"), std::string::npos) << refusal("fifo");
  // The input itself: opened non-blocking, refused as not a regular file.
  EXPECT_NE(message_of([&] { map_file((root_ / "model" / "fifo").string()); }).find("not a regular file"), std::string::npos);
}

TEST_F(PathPolicy, AFileIsMappedOncePerModel) {
  ModelFiles files(model(), "x");
  auto a = files.map("w.bin");
  auto b = files.map("./w.bin");  // another spelling is another entry, but the same bytes
  auto c = files.map("w.bin");
  EXPECT_EQ(a.get(), c.get());
  EXPECT_EQ(b->view(), "weights");
}

}  // namespace
}  // namespace amanda
