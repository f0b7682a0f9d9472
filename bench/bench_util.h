// Small helpers shared by the benchmarks.
#pragma once

#include <malloc.h>

#include <cstdint>
#include <cstdlib>
#include <string>

namespace amanda::bench {

// A size from the environment (so a profiler can run a smaller instance), else the default.
inline uint32_t env_size(const char* name, uint32_t fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  return static_cast<uint32_t>(std::strtoul(v, nullptr, 10));
}

// Bytes currently allocated by malloc: small chunks (uordblks) plus chunks that glibc served
// with mmap (hblkhd). Large arrays (the graph's arenas) are mmap'd, so uordblks alone misses them.
struct HeapUse {
  size_t uordblks = 0, hblkhd = 0;
  size_t total() const { return uordblks + hblkhd; }
  static HeapUse now() {
    struct mallinfo2 m = mallinfo2();
    return {m.uordblks, m.hblkhd};
  }
};

}  // namespace amanda::bench
