// The progress reporter: silent without a sink and for work under a second, then updates and a
// final clear.
#include <gtest/gtest.h>

#include <thread>

#include "amanda/support/progress.h"

namespace amanda {
namespace {

struct Recorder final : ProgressSink {
  int updates = 0, finishes = 0;
  uint64_t last_done = 0, last_total = 0;
  void update(std::string_view, uint64_t done, uint64_t total, double) override {
    ++updates;
    last_done = done;
    last_total = total;
  }
  void finish() override { ++finishes; }
};

struct SinkGuard {
  ProgressSink* old;
  explicit SinkGuard(ProgressSink* s) : old(set_progress_sink(s)) {}
  ~SinkGuard() { set_progress_sink(old); }
};

TEST(Progress, NothingWithoutASinkOrForShortWork) {
  Recorder r;
  {
    Progress p("quick", 1000);
    for (int i = 0; i < 1000; ++i) p.advance();
  }
  SinkGuard g(&r);
  {
    Progress p("quick", 1000);
    for (int i = 0; i < 1000; ++i) p.advance();
  }
  EXPECT_EQ(r.updates, 0);
  EXPECT_EQ(r.finishes, 0);
}

TEST(Progress, WorkOverASecondIsShownThenCleared) {
  Recorder r;
  SinkGuard g(&r);
  {
    Progress p("slow", 10);
    p.advance();
    std::this_thread::sleep_for(std::chrono::milliseconds(1050));
    for (int i = 0; i < 9; ++i) p.advance();
    EXPECT_GE(r.updates, 1);
    EXPECT_EQ(r.last_total, 10u);
    EXPECT_GE(r.last_done, 2u);
    EXPECT_EQ(r.finishes, 0);
  }
  EXPECT_EQ(r.finishes, 1);
}

}  // namespace
}  // namespace amanda
