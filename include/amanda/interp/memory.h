// Where runtime tensors get their bytes. Blocks are 64-byte aligned (what the BLAS and vector
// loops like). The executor frees every value after its last use, so the bytes live at once stay
// near the largest live set; blocks of a size that was freed are kept and handed out again (a run
// of a network allocates the same sizes over and over), and a run's end returns them (trim).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace amanda::interp {

// Allocates `bytes` (may be 0); *data points at the block, which lives as long as the result.
std::shared_ptr<void> allocate_block(size_t bytes, uint8_t** data);

struct MemoryStats {
  size_t live_bytes = 0;   // bytes of tensors alive now
  size_t peak_bytes = 0;   // the most alive at once since reset_peak
  size_t cached_bytes = 0; // freed blocks kept for reuse
};
MemoryStats memory_stats();
void reset_peak();
void trim_memory();  // returns cached blocks to the system

}  // namespace amanda::interp
