// Resource budgets: one per run, charged by every reader, the TorchScript interpreter and the
// table-expression evaluator, so that a hostile input is refused by a budget rather than by a
// scattering of per-site limits (a loop limit per loop does not stop two nested loops; a ratio
// check per zip entry does not stop four entries). Exceeding a budget throws BudgetExceeded,
// whose message names the budget and the tool flag that raises it. See SECURITY.md.
//
// Sizes are computed with the checked helpers below (checked_add/checked_mul): an overflowing
// size is an error, never a wrapped-around small number that passes a limit.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "amanda/support/diagnostics.h"

namespace amanda {

enum class BudgetKind {
  Memory,        // bytes of values and tensors a reader or the interpreter computes or copies
  Decompressed,  // bytes inflated from compressed archive entries, in total
  Steps,         // interpreter steps: TorchScript statements and calls; ops the reference interpreter runs
  Ops,           // graph ops the TorchScript interpreter creates
  ExprSteps,     // table-expression evaluation steps, per expression (nodes evaluated, list elements made)
  Depth,         // nesting of recursive parsers and walks
};
inline constexpr int kBudgetKinds = 6;

struct BudgetInfo {
  const char* name;  // "memory"
  const char* flag;  // "--max-memory"
  const char* unit;  // "bytes"
};
const BudgetInfo& budget_info(BudgetKind k);

// Defaults fit a 24 GB machine with room: hostile inputs stop well before the machine swaps,
// while real models (weights are borrowed from mapped files and not charged) stay far below.
struct BudgetLimits {
  uint64_t memory = uint64_t(4) << 30;        // --max-memory: 4 GiB
  uint64_t decompressed = uint64_t(2) << 30;  // --max-decompressed: 2 GiB
  uint64_t steps = 2'000'000;                 // --max-steps
  uint64_t ops = 200'000;                     // --max-ops
  uint64_t expr_steps = 1'000'000;            // --max-expr-steps (each expression evaluation)
  uint64_t depth = 500;                       // --max-depth
  uint64_t get(BudgetKind k) const {  // inline: on the hot paths that charge
    switch (k) {
      case BudgetKind::Memory: return memory;
      case BudgetKind::Decompressed: return decompressed;
      case BudgetKind::Steps: return steps;
      case BudgetKind::Ops: return ops;
      case BudgetKind::ExprSteps: return expr_steps;
      case BudgetKind::Depth: return depth;
    }
    return 0;
  }
  void set(BudgetKind k, uint64_t v);
};

class BudgetExceeded : public Error {
 public:
  BudgetExceeded(BudgetKind kind, const std::string& message) : Error(message), kind_(kind) {}
  BudgetKind kind() const { return kind_; }

 private:
  BudgetKind kind_;
};

// The run's budget. Single-threaded use (as the tool is); usage counters only grow, except
// Memory (refund when a value is freed) and Depth (a guard).
class Budget {
 public:
  constexpr Budget() = default;
  // The process's budget (what the tool's flags set).
  static Budget& run();

  void set_limits(const BudgetLimits& l) { limits_ = l; }
  const BudgetLimits& limits() const { return limits_; }
  void reset();  // usage back to zero (a new run)
  // The counters that only grow (decompressed bytes, steps, ops) back to zero, for a new read
  // in a process that reads many (tests, fuzzers, the library); Memory and Depth track what is
  // live and stay.
  void reset_counters();

  // Adds n to the usage of k; throws BudgetExceeded (naming `what`, the budget and its flag)
  // when the usage would pass the limit. Overflow of the counter counts as passing it.
  void charge(BudgetKind k, uint64_t n, std::string_view what) {
    uint64_t u = used_[int(k)] + n;
    if (u < n || u > limits_.get(k)) exceeded(k, n, what);
    used_[int(k)] = u;
  }
  // charge() without the message: false (nothing charged) when n more would pass the limit, for
  // hot paths whose message costs more than the charge (build it, then call exceeded()).
  bool try_charge(BudgetKind k, uint64_t n) {
    uint64_t u = used_[int(k)] + n;
    if (u < n || u > limits_.get(k)) return false;
    used_[int(k)] = u;
    return true;
  }
  void refund(BudgetKind k, uint64_t n) { used_[int(k)] -= n < used_[int(k)] ? n : used_[int(k)]; }
  // Throws (without charging) when n more would pass the limit: a size check before allocating.
  void check(BudgetKind k, uint64_t n, std::string_view what) const {
    uint64_t u = used_[int(k)] + n;
    if (u < n || u > limits_.get(k)) exceeded(k, n, what);
  }
  uint64_t used(BudgetKind k) const { return used_[int(k)]; }
  // Throws the BudgetExceeded of k (for budgets a caller counts itself, such as per expression).
  [[noreturn]] void exceeded(BudgetKind k, uint64_t n, std::string_view what) const;

 private:
  BudgetLimits limits_;
  uint64_t used_[kBudgetKinds] = {};
};

namespace detail {
extern Budget run_budget;  // constant-initialised: no guard on the hot paths that charge it
}
inline Budget& Budget::run() { return detail::run_budget; }

// One level of a recursive parser or walk, charged to the Depth budget while it lives.
class DepthGuard {
 public:
  explicit DepthGuard(std::string_view what) {
    Budget& b = Budget::run();
    b.charge(BudgetKind::Depth, 1, what);
  }
  ~DepthGuard() { Budget::run().refund(BudgetKind::Depth, 1); }
  DepthGuard(const DepthGuard&) = delete;
  DepthGuard& operator=(const DepthGuard&) = delete;
};

// Memory charged while an object lives (a folded tensor, a list the interpreter built).
class MemoryCharge {
 public:
  MemoryCharge() = default;
  MemoryCharge(uint64_t n, std::string_view what) : n_(n) { Budget::run().charge(BudgetKind::Memory, n, what); }
  ~MemoryCharge() { Budget::run().refund(BudgetKind::Memory, n_); }
  MemoryCharge(MemoryCharge&& o) noexcept : n_(o.n_) { o.n_ = 0; }
  MemoryCharge& operator=(MemoryCharge&& o) noexcept {
    std::swap(n_, o.n_);
    return *this;
  }

 private:
  uint64_t n_ = 0;
};

// Checked size arithmetic: throws amanda::Error("<what>: size overflows ...") instead of wrapping.
uint64_t checked_add(uint64_t a, uint64_t b, std::string_view what);
uint64_t checked_mul(uint64_t a, uint64_t b, std::string_view what);
int64_t checked_add(int64_t a, int64_t b, std::string_view what);
int64_t checked_sub(int64_t a, int64_t b, std::string_view what);
int64_t checked_mul(int64_t a, int64_t b, std::string_view what);
// The product of non-negative dims (an element count), or an error on a negative dim or overflow.
uint64_t checked_product(const int64_t* dims, size_t n, std::string_view what);

// "--max-memory 512M": a count with an optional K/M/G/T suffix (powers of 1024). False on junk.
bool parse_budget_value(std::string_view text, uint64_t& out);

}  // namespace amanda
