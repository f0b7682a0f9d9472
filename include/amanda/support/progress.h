// Progress of long work (reading a big model, converting, writing external data, laying out a
// view). A loop makes a Progress and ticks it; nothing is shown unless the tool installed a sink
// (it does when standard error is a terminal and -q was not given), and the sink shows nothing
// for work that ends within a second. A tick costs an add and a compare.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace amanda {

class ProgressSink {
 public:
  virtual ~ProgressSink() = default;
  // total 0: unknown. Called at most about ten times a second, and only after the first second.
  virtual void update(std::string_view label, uint64_t done, uint64_t total, double seconds) = 0;
  virtual void finish() = 0;  // the work that was shown has ended
};

// The process's sink (none by default). Returns the previous one.
ProgressSink* set_progress_sink(ProgressSink* sink);
ProgressSink* progress_sink();
// A sink that redraws one line on standard error ("\r"), and clears it when the work ends.
ProgressSink* terminal_progress();

class Progress {
 public:
  Progress(std::string_view label, uint64_t total);  // total in the loop's own unit (ops, bytes)
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  void advance(uint64_t n = 1) {
    done_ += n;
    if (sink_ && done_ >= next_) check();
  }
  void set(uint64_t done) {
    done_ = done;
    if (sink_ && done_ >= next_) check();
  }

 private:
  void check();
  ProgressSink* sink_;
  std::string label_;
  uint64_t total_, done_ = 0, next_ = 0, step_;
  std::chrono::steady_clock::time_point start_, last_;
  bool shown_ = false;
};

}  // namespace amanda
