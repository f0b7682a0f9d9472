// A zip archive of stored (uncompressed) entries, streamed to one AtomicFile: what torch.jit.save
// writes (PyTorchStreamWriter, miniz) and torch.jit.load reads. Each entry's data starts on a
// 64-byte boundary, padded with an extra field as torch's own writer does, so tensor bytes are
// aligned for readers that map the file (Amanda's own reader borrows them in place).
//
// Why our own and not libzip/minizip (docs/pytorch-export.md, "Zip"): the archive needs only stored
// entries, the 64-byte data alignment (an extra field of chosen length in the local header, which
// libzip does not let us size) and streaming of tensor bytes straight from a mapped model through
// the gate's AtomicFile; zlib (already linked for the reader) gives the CRC-32.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "amanda/support/file.h"

namespace amanda::torch_frontend {

class ZipWriter {
 public:
  explicit ZipWriter(AtomicFile& out) : out_(out) {}
  // One stored entry; `owner` (may be null) keeps `data` alive and lets the file page it out.
  void add(const std::string& name, const Buffer* owner, const void* data, size_t size);
  void add(const std::string& name, std::string_view bytes) { add(name, nullptr, bytes.data(), bytes.size()); }
  // Writes the central directory (Zip64 records when the archive needs them).
  void finish();

  static constexpr size_t kAlign = 64;

 private:
  struct Entry {
    std::string name;
    uint32_t crc = 0;
    uint64_t size = 0;
    uint64_t offset = 0;  // of the local header
  };
  void put(std::string_view bytes);
  AtomicFile& out_;
  uint64_t pos_ = 0;
  std::vector<Entry> entries_;
};

}  // namespace amanda::torch_frontend
