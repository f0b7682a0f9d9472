// TensorFlow's tensor-bundle checkpoint (a SavedModel's variables/): `PREFIX.index`, a LevelDB-format
// SSTable whose "" key holds a BundleHeaderProto and every other key a BundleEntryProto, and
// `PREFIX.data-0000K-of-0000N`, the tensors' bytes. Written from the format (docs/tensorflow.md,
// "SavedModel"); no TensorFlow, no LevelDB. Everything read is checked: block and entry crc32c,
// footer magic, offsets inside their files, byte lengths against shapes.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "amanda/ir/tensor.h"
#include "amanda/support/file.h"

namespace amanda::tf_frontend::detail {

// CRC-32C (Castagnoli), and LevelDB's masking of a crc stored next to the data it covers.
uint32_t crc32c_extend(uint32_t crc, const void* data, size_t n);
inline uint32_t crc32c(const void* data, size_t n) { return crc32c_extend(0, data, n); }
inline uint32_t crc32c_mask(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xa282ead8u; }
inline uint32_t crc32c_unmask(uint32_t m) {
  uint32_t rot = m - 0xa282ead8u;
  return (rot >> 17) | (rot << 15);
}

using KeyValues = std::vector<std::pair<std::string, std::string>>;
// An SSTable of uncompressed blocks (keys must be sorted bytewise, no duplicates).
std::string write_table(const KeyValues& sorted);
// Every key and value of an SSTable; throws amanda::Error naming `file` when a block's crc, the
// footer, a handle or an entry is wrong, or the keys are not sorted. Snappy blocks are refused.
KeyValues read_table(std::string_view bytes, const std::string& file);

struct BundleTensor {
  std::string key;
  ir::Tensor value;
};

// Reads a bundle: `index` the bytes of PREFIX.index; `shard(k, n)` the bytes of data file k of n
// (PREFIX.data-0000k-of-0000n, mapped through the gate). Tensors are borrowed from the data files. Throws
// amanda::Error naming the file and the entry.
std::vector<BundleTensor> read_bundle(std::string_view index, const std::string& index_name,
                                      const std::function<std::shared_ptr<const Buffer>(int k, int n, std::string& name)>& shard);

struct BundleFiles {
  std::string index, data;  // PREFIX.index, PREFIX.data-00000-of-00001
};
// As TensorFlow's BundleWriter: one shard, entries in key order, data in that order (alignment 1).
BundleFiles write_bundle(const std::vector<std::pair<std::string, const ir::Tensor*>>& tensors);

std::string data_file_name(const std::string& prefix, int k, int n);

}  // namespace amanda::tf_frontend::detail
