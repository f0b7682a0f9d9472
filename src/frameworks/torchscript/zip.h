// A read-only view of a zip archive held in memory (a mapped .pt file). TorchScript archives
// (torch.jit.save) store tensor data uncompressed and 64-byte aligned, so an entry's bytes are a
// slice of the mapping and tensors can borrow them; deflated entries (torch deflates the code/
// files, and an archive re-zipped by hand may deflate anything) are inflated with zlib into heap
// memory. Zip64 records are understood.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "amanda/support/file.h"

namespace amanda::torchscript {

struct ZipEntry {
  std::string name;
  uint16_t method = 0;           // 0 = stored, 8 = deflated
  uint64_t data_offset = 0;      // where the entry's (compressed) bytes start in the buffer
  uint64_t compressed_size = 0;
  uint64_t size = 0;             // uncompressed size
  uint32_t crc32 = 0;
};

class ZipArchive {
 public:
  // Reads the central directory. Throws amanda::Error naming `path` and the byte offset of the
  // problem for anything malformed (no end record, a record past the end of the file, an entry
  // whose bytes lie outside the file, a name that is not valid, ...). Never reads out of bounds.
  ZipArchive(std::shared_ptr<const Buffer> bytes, std::string path);

  const std::vector<ZipEntry>& entries() const { return entries_; }
  const ZipEntry* find(std::string_view name) const;  // nullptr when absent
  // The entry's bytes: a slice of the buffer for a stored entry, inflated bytes (kept alive by the
  // archive) for a deflated one. Throws amanda::Error for an unknown method or a corrupt stream.
  std::string_view data(const ZipEntry& e) const;
  // data(*find(name)); throws amanda::Error "PATH: no entry NAME in the archive" when absent.
  std::string_view read(std::string_view name) const;
  // True when data(e) is a slice of buffer() (stored entries): tensors may borrow it.
  bool borrowable(const ZipEntry& e) const { return e.method == 0; }
  const std::shared_ptr<const Buffer>& buffer() const { return bytes_; }
  const std::string& path() const { return path_; }

 private:
  std::shared_ptr<const Buffer> bytes_;
  std::string path_;
  std::vector<ZipEntry> entries_;
  std::vector<size_t> sorted_;  // indices of entries_ sorted by name, for find()
  mutable std::vector<std::unique_ptr<std::string>> inflated_;
};

}  // namespace amanda::torchscript
