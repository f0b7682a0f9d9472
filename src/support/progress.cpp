#include "amanda/support/progress.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace amanda {

namespace {

ProgressSink* g_sink = nullptr;
// Work shorter than this shows nothing. $AMANDA_PROGRESS_DELAY (seconds) changes it, so a test can
// see the line on a small input.
double g_delay = 1.0;

class TerminalProgress final : public ProgressSink {
 public:
  void update(std::string_view label, uint64_t done, uint64_t total, double seconds) override {
    char line[160];
    int n = total ? std::snprintf(line, sizeof line, "\r%.*s: %3d%% (%llu of %llu) %.0f s", int(label.size()), label.data(),
                                  int(done >= total ? 100 : done * 100 / total), (unsigned long long)done,
                                  (unsigned long long)total, seconds)
                  : std::snprintf(line, sizeof line, "\r%.*s: %llu %.0f s", int(label.size()), label.data(),
                                  (unsigned long long)done, seconds);
    if (n <= 0) return;
    std::fputs(line, stderr);
    std::fputs("\x1b[K", stderr);  // erase what a longer previous line left
    std::fflush(stderr);
  }
  void finish() override {
    std::fputs("\r\x1b[K", stderr);
    std::fflush(stderr);
  }
};

}  // namespace

ProgressSink* set_progress_sink(ProgressSink* sink) {
  ProgressSink* old = g_sink;
  g_sink = sink;
  return old;
}

ProgressSink* progress_sink() { return g_sink; }

ProgressSink* terminal_progress() {
  static TerminalProgress t;
  if (const char* d = std::getenv("AMANDA_PROGRESS_DELAY"); d && *d) g_delay = std::atof(d);
  return &t;
}

Progress::Progress(std::string_view label, uint64_t total)
    : sink_(g_sink), label_(label), total_(total), step_(total ? std::max<uint64_t>(1, total / 2000) : 256) {
  if (sink_) start_ = last_ = std::chrono::steady_clock::now();
  next_ = step_;
}

Progress::~Progress() {
  if (shown_ && sink_) sink_->finish();
}

void Progress::check() {
  next_ = done_ + step_;
  auto now = std::chrono::steady_clock::now();
  double s = std::chrono::duration<double>(now - start_).count();
  if (s < g_delay || (shown_ && now - last_ < std::chrono::milliseconds(100))) return;
  last_ = now;
  shown_ = true;
  sink_->update(label_, done_, total_, s);
}

}  // namespace amanda
