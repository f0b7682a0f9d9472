#include "amanda/interp/memory.h"

#include <cstdlib>
#include <mutex>
#include <new>
#include <unordered_map>
#include <vector>

#include "amanda/support/budget.h"

namespace amanda::interp {

namespace {

// Freed blocks by exact size. Sizes repeat in a network (every conv of a stage has the same
// output), so exact matches are common and no block is handed out bigger than asked.
struct Pool {
  std::mutex mu;
  std::unordered_map<size_t, std::vector<void*>> free;
  size_t live = 0, peak = 0, cached = 0;
  // Cached bytes past this are released at once: the cache must not grow the peak by much.
  static constexpr size_t kMaxCached = size_t(64) << 20;
};

Pool& pool() {
  static Pool* p = new Pool;  // never destroyed: tensors may outlive static destruction order
  return *p;
}

size_t round_up(size_t n) { return (n + 63) & ~size_t(63); }

void release(void* p, size_t size) {
  Pool& pl = pool();
  std::lock_guard lock(pl.mu);
  pl.live -= size;
  Budget::run().refund(BudgetKind::Memory, size);
  if (pl.cached + size <= Pool::kMaxCached) {
    pl.free[size].push_back(p);
    pl.cached += size;
  } else {
    std::free(p);
  }
}

}  // namespace

std::shared_ptr<void> allocate_block(size_t bytes, uint8_t** data) {
  size_t size = round_up(bytes == 0 ? 1 : bytes);
  Pool& pl = pool();
  void* p = nullptr;
  {
    std::lock_guard lock(pl.mu);
    // Every tensor the interpreter or folding makes is charged to the run's memory budget before
    // it is allocated (ConstantOfShape, Expand, Tile, Range of a hostile size stop here, with a
    // message naming --max-memory, instead of taking the machine). Under the pool's lock: kernels
    // may allocate from several threads.
    if (!Budget::run().try_charge(BudgetKind::Memory, size)) Budget::run().exceeded(BudgetKind::Memory, size, "a tensor of the interpreter");
    if (auto it = pl.free.find(size); it != pl.free.end() && !it->second.empty()) {
      p = it->second.back();
      it->second.pop_back();
      pl.cached -= size;
    }
    pl.live += size;
    if (pl.live > pl.peak) pl.peak = pl.live;
  }
  if (!p) p = std::aligned_alloc(64, size);
  if (!p) {
    std::lock_guard lock(pool().mu);
    pool().live -= size;
    Budget::run().refund(BudgetKind::Memory, size);
    throw std::bad_alloc();
  }
  *data = static_cast<uint8_t*>(p);
  return std::shared_ptr<void>(p, [size](void* q) { release(q, size); });
}

MemoryStats memory_stats() {
  Pool& pl = pool();
  std::lock_guard lock(pl.mu);
  return {pl.live, pl.peak, pl.cached};
}

void reset_peak() {
  Pool& pl = pool();
  std::lock_guard lock(pl.mu);
  pl.peak = pl.live;
}

void trim_memory() {
  Pool& pl = pool();
  std::lock_guard lock(pl.mu);
  for (auto& [size, v] : pl.free)
    for (void* p : v) std::free(p);
  pl.free.clear();
  pl.cached = 0;
}

}  // namespace amanda::interp
