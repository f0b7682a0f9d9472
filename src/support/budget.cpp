#include "amanda/support/budget.h"

#include <limits>

namespace amanda {

namespace {

const BudgetInfo kInfo[kBudgetKinds] = {
    {"memory", "--max-memory", "bytes"},
    {"decompressed", "--max-decompressed", "bytes"},
    {"interpreter steps", "--max-steps", "steps"},
    {"ops created", "--max-ops", "ops"},
    {"expression steps (per expression)", "--max-expr-steps", "steps"},
    {"nesting depth", "--max-depth", "levels"},
};

std::string overflow(std::string_view what) { return std::string(what) + ": error: a size overflows 64 bits"; }

}  // namespace

const BudgetInfo& budget_info(BudgetKind k) { return kInfo[int(k)]; }

void BudgetLimits::set(BudgetKind k, uint64_t v) {
  switch (k) {
    case BudgetKind::Memory: memory = v; break;
    case BudgetKind::Decompressed: decompressed = v; break;
    case BudgetKind::Steps: steps = v; break;
    case BudgetKind::Ops: ops = v; break;
    case BudgetKind::ExprSteps: expr_steps = v; break;
    case BudgetKind::Depth: depth = v; break;
  }
}

namespace detail {
constinit Budget run_budget;
}

void Budget::reset() {
  for (auto& u : used_) u = 0;
}

void Budget::reset_counters() {
  for (BudgetKind k : {BudgetKind::Decompressed, BudgetKind::Steps, BudgetKind::Ops, BudgetKind::ExprSteps}) used_[int(k)] = 0;
}

void Budget::exceeded(BudgetKind k, uint64_t n, std::string_view what) const {
  const BudgetInfo& i = kInfo[int(k)];
  throw BudgetExceeded(k, std::string(what) + ": error: over the " + i.name + " budget (" + std::to_string(limits_.get(k)) + " " +
                              i.unit + ", " + std::to_string(used_[int(k)]) + " used, " + std::to_string(n) +
                              " more asked); a larger budget: " + i.flag);
}

uint64_t checked_add(uint64_t a, uint64_t b, std::string_view what) {
  uint64_t r;
  if (__builtin_add_overflow(a, b, &r)) throw Error(overflow(what));
  return r;
}
uint64_t checked_mul(uint64_t a, uint64_t b, std::string_view what) {
  uint64_t r;
  if (__builtin_mul_overflow(a, b, &r)) throw Error(overflow(what));
  return r;
}
int64_t checked_add(int64_t a, int64_t b, std::string_view what) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) throw Error(overflow(what));
  return r;
}
int64_t checked_sub(int64_t a, int64_t b, std::string_view what) {
  int64_t r;
  if (__builtin_sub_overflow(a, b, &r)) throw Error(overflow(what));
  return r;
}
int64_t checked_mul(int64_t a, int64_t b, std::string_view what) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) throw Error(overflow(what));
  return r;
}

uint64_t checked_product(const int64_t* dims, size_t n, std::string_view what) {
  uint64_t p = 1;
  for (size_t i = 0; i < n; ++i) {
    if (dims[i] < 0) throw Error(std::string(what) + ": error: a negative dimension " + std::to_string(dims[i]));
    p = checked_mul(p, static_cast<uint64_t>(dims[i]), what);
  }
  return p;
}

bool parse_budget_value(std::string_view t, uint64_t& out) {
  if (t.empty()) return false;
  uint64_t v = 0;
  size_t i = 0;
  for (; i < t.size() && t[i] >= '0' && t[i] <= '9'; ++i)
    if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, uint64_t(t[i] - '0'), &v)) return false;
  if (i == 0) return false;
  int shift = 0;
  if (i < t.size()) {
    switch (t[i] | 0x20) {
      case 'k': shift = 10; break;
      case 'm': shift = 20; break;
      case 'g': shift = 30; break;
      case 't': shift = 40; break;
      default: return false;
    }
    ++i;
    if (i < t.size() && (t[i] == 'i' || t[i] == 'I')) ++i;
    if (i < t.size() && (t[i] == 'b' || t[i] == 'B')) ++i;
  }
  if (i != t.size()) return false;
  if (shift && v > (std::numeric_limits<uint64_t>::max() >> shift)) return false;
  out = v << shift;
  return true;
}

}  // namespace amanda
